import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { JobEnvelope } from '@tailor/proto'
import { createApp } from './app.ts'
import { loadConfig } from './config.ts'
import { createJobEventHandler } from './jobs/job-events.ts'
import { openFileJobStore } from './jobs/job-store-files.ts'
import type { JobStore } from './jobs/job-store.ts'
import { createLogger } from './logger.ts'
import type { ResultReader } from './results/result-reader.ts'
import { signResult } from './signing.ts'

const KEY = 'test-key-0123456789-abcdefghijkl'
const config = loadConfig({
  API_KEYS: `other-key-0123456789abcdefghijklm,${KEY}`,
  RESULT_URL_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'http://tailor.test',
})
const logger = createLogger('silent')
const RESULT = Buffer.from('0123456789abcdefghij')

let dir: string
let jobs: JobStore
let published: JobEnvelope[]
let cancelled: string[]
let app: ReturnType<typeof createApp>

/** Small hand-written fakes of our own ports (STYLE 3.8); the job store is the real file adapter. */
const results: ResultReader = {
  size: async (key) => (key.startsWith('remove-background/') ? RESULT.length : null),
  open: async (_key, start, end) => Readable.from([RESULT.subarray(start, end + 1)]),
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-gw-'))
  jobs = await openFileJobStore(dir)
  published = []
  cancelled = []
  app = createApp({
    config,
    logger,
    jobs,
    results,
    publisher: { publish: async (j) => void published.push(j) },
    cancel: { cancel: (id) => void cancelled.push(id) },
    health: () => ({ ok: true }),
  })
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.request('/v1/video/remove-background', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const get = (path: string, headers: Record<string, string> = { 'X-Api-Key': KEY }) =>
  app.request(path, { headers })

describe('auth', () => {
  it('rejects a missing or wrong key with 401 invalid_auth_token', async () => {
    for (const h of [{}, { 'x-api-key': 'nope' }, { 'x-api-key': '' }] as Record<
      string,
      string
    >[]) {
      const r = await get('/v1/video/remove-background/job/x', h)
      expect(r.status).toBe(401)
      expect(await r.json()).toMatchObject({
        error_code: 'invalid_auth_token',
        error: expect.stringMatching(/X-API-KEY/),
      })
    }
  })
  it('accepts the header in any case, for every configured key', async () => {
    for (const h of [
      { 'X-API-KEY': KEY },
      { 'x-api-key': KEY },
      { 'X-Api-Key': 'other-key-0123456789abcdefghijklm' },
    ] as Record<string, string>[]) {
      expect(
        (await get('/v1/video/remove-background/job/00000000-0000-4000-8000-000000000000', h))
          .status,
      ).toBe(404)
    }
  })
  it('keeps /healthz open', async () => {
    const r = await app.request('/healthz')
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({ status: 'ok' })
  })
})

describe('POST /v1/video/remove-background', () => {
  it('accepts a job: 202 {job_id}, record pending, envelope published with defaults', async () => {
    const r = await post({ video_url: 'https://example.com/v.mp4' })
    expect(r.status).toBe(202)
    const { job_id } = (await r.json()) as { job_id: string }
    expect(job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(published).toEqual([
      {
        id: job_id,
        kind: 'remove-background',
        createdAt: expect.any(String),
        params: {
          video_url: 'https://example.com/v.mp4',
          background_color: '#000000',
          output_format: 'mp4_h264',
        },
      },
    ])
    const s = await get(`/v1/video/remove-background/job/${job_id}`)
    expect(await s.json()).toEqual({
      job_id,
      status: 'pending',
      progress: 0,
      attempt: 0,
      result_url: null,
      error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
  })

  it.each([
    ['missing video_url', {}, 'missing_parameter', /video_url/],
    ['video_url null', { video_url: null }, 'invalid_parameter', /video_url must be a string/],
    [
      'video_url number',
      { video_url: 42 },
      'invalid_parameter',
      /video_url must be a string.*got 42/,
    ],
    [
      'video_url not a URL',
      { video_url: 'not a url' },
      'invalid_parameter',
      /absolute http or https URL/,
    ],
    [
      'video_url ftp',
      { video_url: 'ftp://example.com/v.mp4' },
      'invalid_parameter',
      /http or https/,
    ],
    [
      'bad colour',
      { video_url: 'https://e.com/v', background_color: '#12' },
      'invalid_parameter',
      /#RGB or #RRGGBB.*"#12"/,
    ],
    [
      'colour name',
      { video_url: 'https://e.com/v', background_color: 'red' },
      'invalid_parameter',
      /transparent/,
    ],
    [
      'colour type',
      { video_url: 'https://e.com/v', background_color: 7 },
      'invalid_parameter',
      /background_color must be a string/,
    ],
    [
      'unknown format',
      { video_url: 'https://e.com/v', output_format: 'avi' },
      'invalid_parameter',
      /one of mp4_h264, .*gif; got "avi"/,
    ],
    [
      'format type',
      { video_url: 'https://e.com/v', output_format: ['gif'] },
      'invalid_parameter',
      /output_format must be one of/,
    ],
    [
      'transparent + mp4_h264',
      { video_url: 'https://e.com/v', background_color: 'transparent', output_format: 'mp4_h264' },
      'invalid_parameter',
      /requires output_format webm_vp9, mov_proresks, gif.*got mp4_h264/,
    ],
    [
      'transparent + default format',
      { video_url: 'https://e.com/v', background_color: 'transparent' },
      'invalid_parameter',
      /transparent/,
    ],
    ['array body', [1], 'invalid_request_body', /JSON object/],
    ['JSON null', 'null', 'invalid_request_body', /JSON object/],
    ['not JSON', '{"video_url": ', 'invalid_request_body', /not valid JSON/],
  ])('%s → 400 %s', async (_name, body, code, message) => {
    const r = await post(body)
    expect(r.status).toBe(400)
    const b = (await r.json()) as { error: string; error_code: string }
    expect(b.error_code).toBe(code)
    expect(b.error).toMatch(message)
    expect(published).toEqual([])
  })

  it.each(['webm_vp9', 'mov_proresks', 'gif'])('accepts transparent with %s', async (f) => {
    expect(
      (
        await post({
          video_url: 'http://e.com/v',
          background_color: 'transparent',
          output_format: f,
        })
      ).status,
    ).toBe(202)
  })

  it('accepts #RGB and #RRGGBB colours', async () => {
    expect((await post({ video_url: 'http://e.com/v', background_color: '#0f0' })).status).toBe(202)
    expect(
      (
        await post({
          video_url: 'http://e.com/v',
          background_color: '#00FF00',
          output_format: 'mkv_vp9',
        })
      ).status,
    ).toBe(202)
  })

  it('rejects a non-JSON content type with unsupported_content_type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const r = await post({ video_url: 'http://e.com/v' }, { 'content-type': type })
      expect(r.status).toBe(400)
      expect(await r.json()).toMatchObject({
        error_code: 'unsupported_content_type',
        error: expect.stringMatching(/application\/json/),
      })
    }
    expect(
      (
        await post(
          { video_url: 'http://e.com/v' },
          { 'content-type': 'application/json; charset=utf-8' },
        )
      ).status,
    ).toBe(202)
  })

  it('rejects an oversized body', async () => {
    const r = await post({ video_url: `http://e.com/${'a'.repeat(70_000)}` })
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ error_code: 'invalid_request_body' })
  })

  it('fails the record and answers 503 when the queue is down', async () => {
    app = createApp({
      config,
      logger,
      jobs,
      results,
      cancel: { cancel() {} },
      health: () => ({ ok: true }),
      publisher: {
        publish: async () => {
          const { AppError } = await import('@tailor/proto')
          throw new AppError('service_unavailable', 'queue down')
        },
      },
    })
    const r = await post({ video_url: 'http://e.com/v' })
    expect(r.status).toBe(503)
    expect(await r.json()).toMatchObject({ error_code: 'service_unavailable' })
  })
})

describe('job status, events and cancel', () => {
  const start = async (): Promise<string> =>
    (
      (await (await post({ video_url: 'http://e.com/v', output_format: 'webm_vp9' })).json()) as {
        job_id: string
      }
    ).job_id

  it("shows a retry: attempt goes up and progress restarts from 0; an earlier attempt's progress is dropped", async () => {
    const id = await start()
    const handle = createJobEventHandler(jobs, logger)
    const doc = async (): Promise<Record<string, unknown>> =>
      (await (await get(`/v1/video/remove-background/job/${id}`)).json()) as Record<string, unknown>
    expect(await doc()).toMatchObject({ status: 'pending', attempt: 0, progress: 0 })
    await handle({ type: 'running', jobId: id, attempt: 1 })
    await handle({ type: 'progress', jobId: id, framesDone: 60, framesTotal: 100, attempt: 1 })
    expect(await doc()).toMatchObject({ status: 'running', attempt: 1, progress: 0.6 })
    await handle({ type: 'running', jobId: id, attempt: 2 }) // redelivered: the first worker died
    expect(await doc()).toMatchObject({ status: 'running', attempt: 2, progress: 0 })
    await handle({ type: 'progress', jobId: id, framesDone: 70, framesTotal: 100, attempt: 1 }) // the first worker, not dead after all
    expect(await doc()).toMatchObject({ attempt: 2, progress: 0 })
    await handle({ type: 'progress', jobId: id, framesDone: 10, framesTotal: 100, attempt: 2 })
    await handle({ type: 'running', jobId: id, attempt: 1 }) // late: changes nothing
    expect(await doc()).toMatchObject({ status: 'running', attempt: 2, progress: 0.1 })
  })

  it('follows running → progress → completed with a signed result_url', async () => {
    const id = await start()
    const handle = createJobEventHandler(jobs, logger)
    expect(await handle({ type: 'running', jobId: id, attempt: 1 })).toEqual({ cancelled: false })
    await handle({ type: 'progress', jobId: id, framesDone: 25, framesTotal: 100, attempt: 1 })
    let s = (await (await get(`/v1/video/remove-background/job/${id}`)).json()) as Record<
      string,
      unknown
    >
    expect(s).toMatchObject({ status: 'running', progress: 0.25, result_url: null, error: null })
    await handle({
      type: 'completed',
      jobId: id,
      resultKey: `remove-background/${id}.webm`,
      contentType: 'video/webm',
      bytes: 20,
      frames: 100,
    })
    s = (await (await get(`/v1/video/remove-background/job/${id}`)).json()) as Record<
      string,
      unknown
    >
    expect(s).toMatchObject({ status: 'completed', progress: 1, error: null })
    const url = new URL(s.result_url as string)
    expect(url.origin).toBe('http://tailor.test')
    expect(url.pathname).toBe(`/results/remove-background/${id}.webm`)
    const exp = Number(url.searchParams.get('expires'))
    expect(exp - Date.now() / 1000).toBeGreaterThan(3590)
    expect(exp - Date.now() / 1000).toBeLessThanOrEqual(3600)

    // The result itself: no API key needed, signature is.
    const r = await app.request(url.pathname + url.search)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('video/webm')
    expect(r.headers.get('content-length')).toBe('20')
    expect(r.headers.get('accept-ranges')).toBe('bytes')
    expect(Buffer.from(await r.arrayBuffer())).toEqual(RESULT)

    const head = await app.request(url.pathname + url.search, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe('20')
    expect((await head.arrayBuffer()).byteLength).toBe(0)

    const part = await app.request(url.pathname + url.search, { headers: { range: 'bytes=5-9' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe('bytes 5-9/20')
    expect(part.headers.get('content-length')).toBe('5')
    expect(await part.text()).toBe('56789')
    const tail = await app.request(url.pathname + url.search, { headers: { range: 'bytes=-3' } })
    expect(await tail.text()).toBe('hij')
    expect(
      (
        await app.request(url.pathname + url.search, { headers: { range: 'bytes=15-' } })
      ).headers.get('content-range'),
    ).toBe('bytes 15-19/20')
    const bad = await app.request(url.pathname + url.search, { headers: { range: 'bytes=20-' } })
    expect(bad.status).toBe(416)
    expect(bad.headers.get('content-range')).toBe('bytes */20')
    expect(await bad.json()).toMatchObject({ error_code: 'range_not_satisfiable' })

    // Tampered and expired URLs.
    const tampered = new URL(url)
    tampered.searchParams.set('expires', String(exp + 1000))
    const t = await app.request(tampered.pathname + tampered.search)
    expect(t.status).toBe(403)
    expect(await t.json()).toMatchObject({ error_code: 'invalid_signature' })
    const otherKey = `/results/remove-background/00000000-0000-4000-8000-000000000000.webm${url.search}`
    expect((await app.request(otherKey)).status).toBe(403)
    const past = Math.floor(Date.now() / 1000) - 10
    const key = `remove-background/${id}.webm`
    const e = await app.request(
      `/results/${key}?expires=${past}&sig=${signResult(config.resultUrlSecret, key, past)}`,
    )
    expect(e.status).toBe(403)
    expect(await e.json()).toMatchObject({ error_code: 'result_url_expired' })
    expect((await app.request(`/results/${key}`)).status).toBe(403)

    // A finished job cannot be cancelled.
    const c = await app.request(`/v1/video/remove-background/job/${id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
    })
    expect(c.status).toBe(409)
    expect(await c.json()).toMatchObject({ error_code: 'job_finished' })
  })

  it('cancels a running job: failed job_cancelled, worker told to stop, later events answered cancelled', async () => {
    const id = await start()
    const handle = createJobEventHandler(jobs, logger)
    await handle({ type: 'running', jobId: id, attempt: 1 })
    const c = await app.request(`/v1/video/remove-background/job/${id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
    })
    expect(c.status).toBe(200)
    expect(await c.json()).toEqual({ message: expect.stringContaining(id) })
    expect(cancelled).toEqual([id])
    const s = await (await get(`/v1/video/remove-background/job/${id}`)).json()
    expect(s).toMatchObject({
      status: 'failed',
      result_url: null,
      error: { error_code: 'job_cancelled', message: expect.any(String) },
    })
    expect(
      await handle({ type: 'progress', jobId: id, framesDone: 1, framesTotal: 2, attempt: 1 }),
    ).toEqual({ cancelled: true })
    expect(
      await handle({
        type: 'completed',
        jobId: id,
        resultKey: `remove-background/${id}.webm`,
        contentType: 'video/webm',
        bytes: 1,
        frames: 1,
      }),
    ).toEqual({ cancelled: true })
    expect(await (await get(`/v1/video/remove-background/job/${id}`)).json()).toMatchObject({
      status: 'failed',
    })
    expect(
      (
        await app.request(`/v1/video/remove-background/job/${id}/cancel`, {
          method: 'POST',
          headers: { 'x-api-key': KEY },
        })
      ).status,
    ).toBe(409)
  })

  it('reports a failed job with its error code', async () => {
    const id = await start()
    await createJobEventHandler(
      jobs,
      logger,
    )({ type: 'failed', jobId: id, code: 'malformed_video', message: 'The input is not a video.' })
    expect(await (await get(`/v1/video/remove-background/job/${id}`)).json()).toMatchObject({
      status: 'failed',
      error: { error_code: 'malformed_video', message: 'The input is not a video.' },
    })
  })

  it('keeps the first result when a redelivered job completes twice', async () => {
    const id = await start()
    const handle = createJobEventHandler(jobs, logger)
    await handle({
      type: 'completed',
      jobId: id,
      resultKey: `remove-background/${id}.webm`,
      contentType: 'video/webm',
      bytes: 20,
      frames: 3,
    })
    expect(await handle({ type: 'running', jobId: id, attempt: 2 })).toEqual({ cancelled: false })
    expect((await jobs.get(id))?.status).toBe('completed')
  })

  it('answers 404 not_found for unknown ids and unknown routes', async () => {
    for (const p of [
      '/v1/video/remove-background/job/00000000-0000-4000-8000-000000000000',
      '/v1/video/remove-background/job/..%2F..%2Fetc',
      '/v1/nothing',
    ]) {
      const r = await get(p)
      expect(r.status).toBe(404)
      expect(await r.json()).toMatchObject({ error_code: 'not_found' })
    }
    const r = await app.request(
      '/v1/video/remove-background/job/00000000-0000-4000-8000-000000000000/cancel',
      { method: 'POST', headers: { 'x-api-key': KEY } },
    )
    expect(r.status).toBe(404)
  })
})
