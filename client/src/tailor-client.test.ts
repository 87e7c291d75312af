/**
 * The client against the real gateway app (createApp, its real routes, middleware and error
 * edge), reached through `app.request` as the client's fetch. Only our own ports are small
 * fakes (queue, cancel, results); job records and uploads use the real file adapters.
 */
import { createServer } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { JobEnvelope } from '@tailor/proto'
import { createApp } from '@tailor/gateway/src/app.ts'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createJobEventHandler } from '@tailor/gateway/src/jobs/job-events.ts'
import { openFileJobStore } from '@tailor/gateway/src/jobs/job-store-files.ts'
import type { JobStore } from '@tailor/gateway/src/jobs/job-store.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { openFileUploadStore } from '@tailor/gateway/src/uploads/upload-store-files.ts'
import type { IdempotencyStore } from '@tailor/gateway/src/idempotency/idempotency-store.ts'
import { openFileIdempotencyStore } from '@tailor/gateway/src/idempotency/idempotency-store-files.ts'
import type { UploadStore } from '@tailor/gateway/src/uploads/upload-store.ts'
import { TailorClient, TailorError, parseRetryAfter, type JobStatusDocument } from './index.ts'

const KEY = 'client-test-key-0123456789-abcde'
const BASE = 'http://tailor.test'
const RESULT = new TextEncoder().encode(
  'result bytes: not a real video, the fake result port serves them',
)
const POLL_MS = 20
const logger = createLogger('silent')

let dir: string
let jobs: JobStore
let uploads: UploadStore
let idempotency: IdempotencyStore
let published: JobEnvelope[]
let cancelled: string[]
let app: ReturnType<typeof createApp>
let client: TailorClient
let events: ReturnType<typeof createJobEventHandler>

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-client-'))
  jobs = await openFileJobStore(join(dir, 'jobs'))
  uploads = await openFileUploadStore(join(dir, 'uploads'))
  published = []
  cancelled = []
  idempotency = await openFileIdempotencyStore(join(dir, 'idempotency'), { ttlMs: 60_000 })
  app = createApp({
    config: loadConfig({
      API_KEYS: KEY,
      RESULT_URL_SECRET: 's'.repeat(32),
      PUBLIC_BASE_URL: BASE,
      TRYON_WAIT_TIMEOUT_MS: '0',
    }),
    logger,
    jobs,
    uploads,
    idempotency,
    publisher: { publish: async (j) => void published.push(j) },
    cancel: { cancel: (id) => void cancelled.push(id) },
    results: {
      size: async (key) => (key.startsWith('remove-background/') ? RESULT.length : null),
      open: async (_k, start, end) => Readable.from([Buffer.from(RESULT.subarray(start, end + 1))]),
    },
    health: () => ({ ok: true }),
  })
  events = createJobEventHandler(jobs, logger)
  client = new TailorClient({
    baseUrl: `${BASE}/`,
    apiKey: KEY,
    fetch: (input, init) => Promise.resolve(app.request(input, init)),
  })
})
afterEach(async () => {
  await uploads.close()
  await idempotency.close()
  await jobs.close()
  await rm(dir, { recursive: true, force: true })
})

describe('TailorClient', () => {
  it('removeVideoBackground → waitForJob (progress reported) → downloadResult', async () => {
    const { job_id } = await client.removeVideoBackground({
      video_url: 'https://example.com/v.mp4',
      background_color: 'transparent',
      output_format: 'webm_vp9',
    })
    expect(published[0]).toMatchObject({
      id: job_id,
      params: { output_format: 'webm_vp9', background_color: 'transparent' },
    })
    expect(await client.getJob('remove-background', job_id)).toMatchObject({
      job_id,
      status: 'pending',
      progress: 0,
    })

    const seen: JobStatusDocument[] = []
    const waiting = client.waitForJob('remove-background', job_id, {
      pollIntervalMs: POLL_MS,
      onProgress: (d) => seen.push(d),
    })
    await events({ type: 'running', jobId: job_id, attempt: 1 })
    await new Promise((r) => setTimeout(r, POLL_MS * 3))
    await events({ type: 'progress', jobId: job_id, framesDone: 5, framesTotal: 10, attempt: 1 })
    await new Promise((r) => setTimeout(r, POLL_MS * 3))
    await events({
      type: 'completed',
      jobId: job_id,
      resultKey: `remove-background/${job_id}.webm`,
      contentType: 'video/webm',
      bytes: RESULT.length,
      frames: 10,
    })
    const done = await waiting
    expect(done).toMatchObject({
      status: 'completed',
      progress: 1,
      result_url: expect.stringContaining(`${BASE}/results/remove-background/${job_id}.webm?`),
    })
    expect(seen.map((d) => d.progress)).toContain(0.5)
    expect(seen.at(-1)?.status).toBe('completed')

    const res = await client.downloadResult(done.result_url!)
    expect(res.headers.get('content-type')).toBe('video/webm')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(RESULT)
  })

  it("a failed job: waitForJob throws TailorError with the job's error_code, its HTTP status and job id", async () => {
    const { job_id } = await client.removeVideoBackground({
      video_url: 'https://example.com/v.mp4',
    })
    await events({
      type: 'failed',
      jobId: job_id,
      code: 'malformed_video',
      message: 'The file is not a video.',
    })
    const err = await client
      .waitForJob('remove-background', job_id, { pollIntervalMs: POLL_MS })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TailorError)
    expect(err).toMatchObject({
      errorCode: 'malformed_video',
      error_code: 'malformed_video',
      status: 400,
      jobId: job_id,
      message: 'The file is not a video.',
    })
  })

  it('HTTP errors become TailorError with status, error_code, message and request id', async () => {
    const bad = new TailorClient({
      baseUrl: BASE,
      apiKey: 'wrong-key',
      fetch: (i, init) => Promise.resolve(app.request(i, init)),
    })
    const e1 = await bad.getJob('try-on', 'x').catch((e: unknown) => e)
    expect(e1).toMatchObject({
      name: 'TailorError',
      status: 401,
      errorCode: 'invalid_auth_token',
      requestId: expect.stringMatching(/\S/),
    })
    const e2 = await client
      .removeVideoBackground({
        video_url: 'https://e.com/v',
        background_color: 'transparent',
        output_format: 'mp4_h264',
      })
      .catch((e: unknown) => e)
    expect(e2).toMatchObject({
      status: 400,
      errorCode: 'invalid_parameter',
      message: expect.stringMatching(/transparent/),
    })
    const e3 = await client
      .getJob('remove-background', '00000000-0000-4000-8000-000000000000')
      .catch((e: unknown) => e)
    expect(e3).toMatchObject({ status: 404, errorCode: 'not_found' })
  })

  it('cancelJob cancels a pending job; a second cancel is job_finished (409)', async () => {
    const { job_id } = await client.removeVideoBackground({
      video_url: 'https://example.com/v.mp4',
    })
    expect(await client.cancelJob('remove-background', job_id)).toMatchObject({
      message: expect.stringContaining(job_id),
    })
    expect(cancelled).toEqual([job_id])
    await expect(client.cancelJob('remove-background', job_id)).rejects.toMatchObject({
      status: 409,
      errorCode: 'job_finished',
    })
    await expect(client.waitForJob('remove-background', job_id)).rejects.toMatchObject({
      errorCode: 'job_cancelled',
    })
  })

  it('upload → tailor://uploads/<id>, accepted as an input URL; a wrong content type is unsupported_content_type', async () => {
    const up = await client.upload(new Blob([new Uint8Array(1000).fill(1)]), 'video/mp4')
    expect(up).toMatchObject({
      upload_id: expect.any(String),
      url: `tailor://uploads/${up.upload_id}`,
      expires_at: expect.any(String),
    })
    const up2 = await client.upload(new Uint8Array(10), 'image/png')
    expect(up2.url).toMatch(/^tailor:\/\/uploads\//)
    const { job_id } = await client.removeVideoBackground({ video_url: up.url })
    expect(published.find((j) => j.id === job_id)?.params).toMatchObject({ video_url: up.url })
    await expect(client.upload(new Uint8Array(10), 'text/plain')).rejects.toMatchObject({
      status: 400,
      errorCode: 'unsupported_content_type',
    })
  })

  it('idempotencyKey: the same submission sent twice with one key is one job; another body with it is 422', async () => {
    const body = { video_url: 'https://example.com/v.mp4' }
    const a = await client.removeVideoBackground(body, { idempotencyKey: 'order-42' })
    const b = await client.removeVideoBackground(body, { idempotencyKey: 'order-42' })
    expect(b.job_id).toBe(a.job_id)
    expect(published).toHaveLength(1)
    await expect(
      client.removeVideoBackground(
        { video_url: 'https://example.com/w.mp4' },
        { idempotencyKey: 'order-42' },
      ),
    ).rejects.toMatchObject({ status: 422, errorCode: 'idempotency_key_reused' })
    const t = await client.tryOn(
      {
        person_image_url: 'https://e.com/p.jpg',
        garment_image_url: 'https://e.com/g.jpg',
        wait_for_result: 'false',
      },
      { idempotencyKey: 'order-43' },
    )
    expect(
      (
        await client.tryOn(
          {
            person_image_url: 'https://e.com/p.jpg',
            garment_image_url: 'https://e.com/g.jpg',
            wait_for_result: 'false',
          },
          { idempotencyKey: 'order-43' },
        )
      ).job_id,
    ).toBe(t.job_id)
    await expect(
      client.removeVideoBackground(body, { idempotencyKey: 'bad key' }),
    ).rejects.toMatchObject({ status: 400, errorCode: 'invalid_parameter' })
  })

  it('getCredits: GET /v1/credits ({credits_remaining, unlimited}); a wrong key is invalid_auth_token', async () => {
    expect(await client.getCredits()).toEqual({ credits_remaining: null, unlimited: true })
    const bad = new TailorClient({
      baseUrl: BASE,
      apiKey: 'tk_wrong',
      fetch: (i, init) => Promise.resolve(app.request(i, init)),
    })
    await expect(bad.getCredits()).rejects.toMatchObject({
      status: 401,
      errorCode: 'invalid_auth_token',
      message: 'Invalid API key in the X-API-KEY header.',
    })
  })

  it('waitForJob timeoutMs: a job still pending ends the wait with request_timeout (status 0, its job id); the job goes on', async () => {
    const { job_id } = await client.removeVideoBackground({
      video_url: 'https://example.com/v.mp4',
    })
    const polled: string[] = []
    const err = await client
      .waitForJob('remove-background', job_id, {
        pollIntervalMs: POLL_MS,
        timeoutMs: POLL_MS * 3,
        onProgress: (d) => polled.push(d.status),
      })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TailorError)
    expect(err).toMatchObject({
      errorCode: 'request_timeout',
      status: 0,
      jobId: job_id,
      message: expect.stringContaining(job_id),
    })
    expect(polled.length).toBeGreaterThanOrEqual(1)
    expect(polled.every((s) => s === 'pending')).toBe(true)
    expect(await client.getJob('remove-background', job_id)).toMatchObject({ status: 'pending' })
  })

  it('tryOn with wait_for_result "false" answers {job_id}', async () => {
    const r = await client.tryOn({
      person_image_url: 'https://e.com/p.jpg',
      garment_image_url: 'https://e.com/g.jpg',
      wait_for_result: 'false',
    })
    expect(r).toEqual({ job_id: expect.any(String) })
    expect(published[0]).toMatchObject({ kind: 'try-on', id: r.job_id })
  })

  it('an abort ends waitForJob at once with TailorError aborted; an unreachable service is network_error', async () => {
    const { job_id } = await client.removeVideoBackground({
      video_url: 'https://example.com/v.mp4',
    })
    const ac = new AbortController()
    const t0 = Date.now()
    setTimeout(() => ac.abort(), 50)
    await expect(
      client.waitForJob('remove-background', job_id, { signal: ac.signal, pollIntervalMs: 10_000 }),
    ).rejects.toMatchObject({ errorCode: 'aborted' })
    expect(Date.now() - t0).toBeLessThan(5_000)

    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    const offline = new TailorClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY })
    await expect(offline.getJob('try-on', 'x')).rejects.toMatchObject({
      status: 0,
      errorCode: 'network_error',
    })
  })

  it('429 rate_limit_exceeded: sent again after Retry-After (rateLimitRetries), else a TailorError with retryAfter', async () => {
    // The real access control with a budget of 1 request per second for the key.
    const limited = createApp({
      config: loadConfig({
        API_KEYS: KEY,
        RESULT_URL_SECRET: 's'.repeat(32),
        PUBLIC_BASE_URL: BASE,
        DEFAULT_RATE_LIMIT_PER_S: '1',
      }),
      logger,
      jobs,
      uploads,
      publisher: { publish: async (j) => void published.push(j) },
      cancel: { cancel: () => undefined },
      results: { size: async () => null, open: async () => Readable.from([]) },
      health: () => ({ ok: true }),
    })
    const fetchLimited = (i: string, init?: RequestInit) =>
      Promise.resolve(limited.request(i, init))
    const strict = new TailorClient({
      baseUrl: BASE,
      apiKey: KEY,
      fetch: fetchLimited,
      rateLimitRetries: 0,
    })
    await strict.removeVideoBackground({ video_url: 'https://example.com/1.mp4' })
    const e = await strict
      .removeVideoBackground({ video_url: 'https://example.com/2.mp4' })
      .catch((x: unknown) => x)
    expect(e).toMatchObject({
      status: 429,
      errorCode: 'rate_limit_exceeded',
      retryAfter: expect.any(Number),
    })
    expect((e as TailorError).retryAfter).toBeGreaterThanOrEqual(1)

    const patient = new TailorClient({ baseUrl: BASE, apiKey: KEY, fetch: fetchLimited })
    const t0 = Date.now()
    const r = await patient.removeVideoBackground({ video_url: 'https://example.com/3.mp4' })
    expect(r.job_id).toEqual(expect.any(String))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500) // it waited for the budget
    expect(published.map((j) => (j.params as { video_url: string }).video_url)).toEqual([
      'https://example.com/1.mp4',
      'https://example.com/3.mp4',
    ])
  })

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3)
    expect(parseRetryAfter(null)).toBeUndefined()
    expect(
      parseRetryAfter(
        new Date(Date.parse('2030-01-01T00:00:10Z')).toUTCString(),
        Date.parse('2030-01-01T00:00:00Z'),
      ),
    ).toBe(10)
    expect(parseRetryAfter('soon')).toBeUndefined()
  })

  it('refuses a baseUrl that is not http(s) and an empty key', () => {
    expect(() => new TailorClient({ baseUrl: 'localhost:8080', apiKey: KEY })).toThrow(/baseUrl/)
    expect(() => new TailorClient({ baseUrl: BASE, apiKey: '' })).toThrow(/apiKey/)
  })
})

describe('browser-safe entry', () => {
  it('no module of the client imports node: builtins, and @tailor/proto only for types (or its dependency-free errors module)', async () => {
    const { readdir, readFile } = await import('node:fs/promises')
    const files = (await readdir(import.meta.dirname)).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
    )
    expect(files).toContain('index.ts')
    for (const f of files) {
      const src = await readFile(join(import.meta.dirname, f), 'utf8')
      for (const m of src.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) {
        const [, , typeOnly, spec] = m
        const ok =
          spec!.startsWith('./') ||
          spec === '@tailor/proto/errors' ||
          (spec === '@tailor/proto' && typeOnly !== undefined)
        expect(ok, `${f}: ${m[0].trim()}`).toBe(true)
      }
    }
  })
})
