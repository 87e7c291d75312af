import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { JobEnvelope } from '@tailor/proto'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import type { JobStore } from '../jobs/job-store.ts'
import { createLogger } from '../logger.ts'
import type { ResultReader } from '../results/result-reader.ts'
import { GARMENT_MODE_DEPRECATION } from './try-on.ts'

const KEY = 'test-key-0123456789-abcdefghijkl'
const WAIT_MS = 400
const config = loadConfig({
  API_KEYS: KEY,
  RESULT_URL_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'http://tailor.test',
  TRYON_WAIT_TIMEOUT_MS: String(WAIT_MS),
})
const logger = createLogger('silent')
const RESULT = Buffer.from('jpeg bytes')
const PERSON = 'https://cdn.example.com/person.jpg'
const GARMENT = 'https://cdn.example.com/garment.jpg'

let dir: string
let jobs: JobStore
let published: JobEnvelope[]
let cancelled: string[]
/** What the fake worker does with a published job (nothing: the job stays pending). */
let worker: (job: JobEnvelope) => Promise<void>
let app: ReturnType<typeof createApp>

const results: ResultReader = {
  size: async (key) => (key.startsWith('try-on/') ? RESULT.length : null),
  open: async (_key, start, end) => Readable.from([RESULT.subarray(start, end + 1)]),
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-gw-tryon-'))
  jobs = await openFileJobStore(dir)
  published = []
  cancelled = []
  worker = async () => {}
  app = createApp({
    config,
    logger,
    jobs,
    results,
    publisher: {
      publish: async (j) => {
        published.push(j)
        setTimeout(() => void worker(j), 20)
      },
    },
    cancel: { cancel: (id) => void cancelled.push(id) },
    health: () => ({ ok: true }),
  })
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.request('/v1/try-on', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const get = (path: string) => app.request(path, { headers: { 'X-API-Key': KEY } })
const complete = async (j: JobEnvelope) => {
  await jobs.update(j.id, (r) => ({
    ...r,
    status: 'completed',
    progress: 1,
    result: { key: `try-on/${j.id}.jpg`, contentType: 'image/jpeg', bytes: RESULT.length },
  }))
}

describe('POST /v1/try-on', () => {
  it('waits for the result by default: 200 {result_url}, a signed JPEG URL', async () => {
    worker = complete
    const r = await post({ person_image_url: PERSON, garment_image_url: GARMENT })
    expect(r.status).toBe(200)
    const b = (await r.json()) as { result_url: string; job_id: string }
    expect(b.result_url).toMatch(
      /^http:\/\/tailor\.test\/results\/try-on\/[0-9a-f-]{36}\.jpg\?expires=\d+&sig=/,
    )
    expect(r.headers.get('deprecation')).toBeNull()
    expect(published).toEqual([
      {
        id: b.job_id,
        kind: 'try-on',
        createdAt: expect.any(String),
        params: {
          person_image_url: PERSON,
          garment_image_url: GARMENT,
          garment_mode: 'auto',
          garment_photo_type: 'auto',
          preprocess_garment: true,
          remove_background: false,
        },
      },
    ])
    const path = new URL(b.result_url).pathname + new URL(b.result_url).search
    const res = await app.request(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/jpeg')
  })

  it('answers 202 {job_id} when the wait passes the configured timeout, and the job can be polled', async () => {
    const t0 = Date.now()
    const r = await post({
      person_image_url: PERSON,
      garment_image_url: GARMENT,
      wait_for_result: 'true',
    })
    expect(r.status).toBe(202)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(WAIT_MS - 50)
    const { job_id } = (await r.json()) as { job_id: string }
    const s = await get(`/v1/try-on/job/${job_id}`)
    expect(await s.json()).toMatchObject({
      job_id,
      status: 'pending',
      result_url: null,
      error: null,
    })
  })

  it('answers 202 {job_id} at once with wait_for_result "false" (or false)', async () => {
    for (const wait of ['false', false]) {
      const t0 = Date.now()
      const r = await post({
        person_image_url: PERSON,
        garment_image_url: GARMENT,
        wait_for_result: wait,
      })
      expect(r.status).toBe(202)
      expect(Date.now() - t0).toBeLessThan(WAIT_MS)
      expect(await r.json()).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    }
  })

  it("returns a failed job's error with its status while waiting (422 no_person_detected)", async () => {
    worker = async (j) => {
      await jobs.update(j.id, (r) => ({
        ...r,
        status: 'failed',
        error: { code: 'no_person_detected', message: 'No person was found in the person image.' },
      }))
    }
    const r = await post({ person_image_url: PERSON, garment_image_url: GARMENT })
    expect(r.status).toBe(422)
    expect(await r.json()).toMatchObject({
      error_code: 'no_person_detected',
      error: 'No person was found in the person image.',
    })
  })

  it('takes "true"/"false" strings and JSON booleans, normalised to booleans in the job', async () => {
    const r = await post({
      person_image_url: PERSON,
      garment_image_url: GARMENT,
      preprocess_garment: 'false',
      remove_background: true,
      wait_for_result: 'false',
    })
    expect(r.status).toBe(202)
    expect(published[0]?.params).toMatchObject({
      preprocess_garment: false,
      remove_background: true,
    })
  })

  it('carries garment_photo_type (flat-lay / model) to the job', async () => {
    for (const t of ['flat-lay', 'model'] as const) {
      published.length = 0
      const r = await post({
        person_image_url: PERSON,
        garment_image_url: GARMENT,
        garment_photo_type: t,
        wait_for_result: 'false',
      })
      expect(r.status).toBe(202)
      expect(published[0]?.params).toMatchObject({ garment_photo_type: t })
    }
  })

  it('honours the deprecated garment_mode and says so in a Deprecation header', async () => {
    const r = await post({
      person_image_url: PERSON,
      garment_image_url: GARMENT,
      garment_mode: 'lower',
      wait_for_result: 'false',
    })
    expect(r.status).toBe(202)
    expect(r.headers.get('deprecation')).toBe(GARMENT_MODE_DEPRECATION)
    expect(published[0]?.params).toMatchObject({ garment_mode: 'lower' })
  })

  it.each([
    ['no fields', {}, 'missing_parameter', /person_image_url and garment_image_url/],
    ['no garment', { person_image_url: PERSON }, 'missing_parameter', /garment_image_url/],
    [
      'person URL not a URL',
      { person_image_url: 'person.jpg', garment_image_url: GARMENT },
      'invalid_parameter',
      /person_image_url must be an absolute http or https URL/,
    ],
    [
      'garment URL ftp',
      { person_image_url: PERSON, garment_image_url: 'ftp://x/g.jpg' },
      'invalid_parameter',
      /garment_image_url/,
    ],
    [
      'boolean as "yes"',
      { person_image_url: PERSON, garment_image_url: GARMENT, wait_for_result: 'yes' },
      'invalid_parameter',
      /wait_for_result must be "true" or "false"; got "yes"/,
    ],
    [
      'boolean as "TRUE"',
      { person_image_url: PERSON, garment_image_url: GARMENT, remove_background: 'TRUE' },
      'invalid_parameter',
      /remove_background/,
    ],
    [
      'boolean as 1',
      { person_image_url: PERSON, garment_image_url: GARMENT, preprocess_garment: 1 },
      'invalid_parameter',
      /preprocess_garment/,
    ],
    [
      'unknown garment_mode',
      { person_image_url: PERSON, garment_image_url: GARMENT, garment_mode: 'shoes' },
      'invalid_parameter',
      /garment_mode must be one of auto, full, upper, lower/,
    ],
    [
      'unknown garment_photo_type',
      { person_image_url: PERSON, garment_image_url: GARMENT, garment_photo_type: 'mannequin' },
      'invalid_parameter',
      /garment_photo_type must be one of auto, flat-lay, model; got "mannequin"/,
    ],
    ['not JSON', '{"person_image_url": ', 'invalid_request_body', /not valid JSON/],
  ])('%s → 400 %s', async (_name, body, code, message) => {
    const r = await post(body)
    expect(r.status).toBe(400)
    const b = (await r.json()) as { error: string; error_code: string }
    expect(b.error_code).toBe(code)
    expect(b.error).toMatch(message)
    expect(published).toEqual([])
  })

  it('requires the API key', async () => {
    const r = await app.request('/v1/try-on', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(r.status).toBe(401)
  })
})

describe('GET /v1/try-on/job/{id} and cancel', () => {
  it('404 for an unknown id, and for a remove-background job id', async () => {
    expect((await get('/v1/try-on/job/00000000-0000-4000-8000-000000000000')).status).toBe(404)
    const v = await app.request('/v1/video/remove-background', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ video_url: 'https://e.com/v.mp4' }),
    })
    const { job_id } = (await v.json()) as { job_id: string }
    expect(await (await get(`/v1/try-on/job/${job_id}`)).json()).toMatchObject({
      error_code: 'not_found',
    })
  })

  it('cancels a pending job (failed job_cancelled), then 409 job_finished', async () => {
    const r = await post({
      person_image_url: PERSON,
      garment_image_url: GARMENT,
      wait_for_result: 'false',
    })
    const { job_id } = (await r.json()) as { job_id: string }
    const c = await app.request(`/v1/try-on/job/${job_id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
    })
    expect(c.status).toBe(200)
    expect(cancelled).toEqual([job_id])
    expect(await (await get(`/v1/try-on/job/${job_id}`)).json()).toMatchObject({
      status: 'failed',
      error: { error_code: 'job_cancelled' },
    })
    const again = await app.request(`/v1/try-on/job/${job_id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
    })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ error_code: 'job_finished' })
  })

  it('shows a completed job with a fresh result_url', async () => {
    worker = complete
    const r = await post({
      person_image_url: PERSON,
      garment_image_url: GARMENT,
      wait_for_result: 'false',
    })
    const { job_id } = (await r.json()) as { job_id: string }
    // The fake worker completes the job asynchronously: poll (not a fixed sleep, which a loaded machine outlasts).
    let doc: { status?: string } = {}
    for (let i = 0; i < 200 && doc.status !== 'completed'; i++) {
      if (i > 0) await new Promise((res) => setTimeout(res, 50))
      doc = (await (await get(`/v1/try-on/job/${job_id}`)).json()) as { status?: string }
    }
    expect(doc).toMatchObject({
      status: 'completed',
      result_url: expect.stringMatching(/try-on\/.*\.jpg\?expires=/),
    })
  })
})
