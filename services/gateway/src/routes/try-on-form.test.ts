import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseUploadUrl, type JobEnvelope } from '@tailor/proto'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileIdempotencyStore } from '../idempotency/idempotency-store-files.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import { createLogger } from '../logger.ts'
import { openFileUploadStore } from '../uploads/upload-store-files.ts'
import type { UploadStore } from '../uploads/upload-store.ts'

const KEY = 'form-test-key-0123456789-abcdefg'
const IMAGE_MAX = 400_000
const config = loadConfig({
  API_KEYS: KEY,
  RESULT_URL_SECRET: 'x'.repeat(32),
  UPLOAD_MAX_IMAGE_BYTES: String(IMAGE_MAX),
  DEFAULT_RATE_LIMIT_PER_S: '1000',
})
const logger = createLogger('silent')
/** Real photos, both larger than the 64 KiB JSON body limit (which must not apply to a form). */
const MEDIA = join(import.meta.dirname, '../../../../../shared/media')

let dir: string
let uploads: UploadStore
let published: JobEnvelope[]
let app: ReturnType<typeof createApp>

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-form-'))
  uploads = await openFileUploadStore(join(dir, 'uploads'))
  published = []
  app = createApp({
    config,
    logger,
    uploads,
    jobs: await openFileJobStore(join(dir, 'jobs')),
    idempotency: await openFileIdempotencyStore(join(dir, 'idem'), { ttlMs: 60_000 }),
    results: { size: async () => null, open: async () => Readable.from([]) },
    publisher: { publish: async (j) => void published.push(j) },
    cancel: { cancel: () => undefined },
    health: () => ({ ok: true }),
  })
})
afterEach(async () => {
  await uploads.close()
  await rm(dir, { recursive: true, force: true })
})

const photo = async (name: string, type = 'image/jpeg'): Promise<Blob> =>
  new Blob([await readFile(join(MEDIA, name))], { type })
const send = (form: FormData, headers: Record<string, string> = {}) =>
  app.request('/v1/try-on', {
    method: 'POST',
    headers: { 'x-api-key': KEY, ...headers },
    body: form,
  })
const storedUploads = async (): Promise<string[]> =>
  (await readdir(join(dir, 'uploads')).catch(() => [])).filter(
    (f) => !f.endsWith('.json') && !f.startsWith('.'),
  )

describe('POST /v1/try-on as multipart/form-data', () => {
  it('takes the image files as parts person_image / garment_image, stored as uploads of the caller', async () => {
    const form = new FormData()
    form.set('person_image', await photo('person_01.jpg'), 'me.jpg')
    // A part sent without a media type (as some clients do) is recognised by its bytes.
    form.set('garment_image', await photo('garment_upper_01.jpg', ''), 'shirt.jpg')
    form.set('wait_for_result', 'false')
    form.set('preprocess_garment', 'false')
    const r = await send(form)
    expect(r.status).toBe(202)
    expect(published).toHaveLength(1)
    const p = published[0]!.params as Record<string, unknown>
    expect(p).toMatchObject({ preprocess_garment: false, garment_mode: 'auto' })
    const personId = parseUploadUrl(String(p.person_image_url))
    const garmentId = parseUploadUrl(String(p.garment_image_url))
    expect(personId).not.toBeNull()
    expect(garmentId).not.toBeNull()
    const person = await uploads.info(personId!)
    expect(person).toMatchObject({
      contentType: 'image/jpeg',
      bytes: (await readFile(join(MEDIA, 'person_01.jpg'))).length,
    })
    expect(await uploads.info(garmentId!)).toMatchObject({ contentType: 'image/jpeg' })
    expect(person!.ownerKeyId).toMatch(/^sha256:/)
  })

  it('takes URL fields as text parts, exactly like the JSON body', async () => {
    const form = new FormData()
    form.set('person_image_url', 'https://cdn.example.com/p.jpg')
    form.set('garment_image_url', 'https://cdn.example.com/g.jpg')
    form.set('wait_for_result', 'false')
    form.set('garment_mode', 'upper')
    const r = await send(form)
    expect(r.status).toBe(202)
    expect(r.headers.get('deprecation')).not.toBeNull()
    expect(published[0]!.params).toMatchObject({
      person_image_url: 'https://cdn.example.com/p.jpg',
      garment_mode: 'upper',
    })
  })

  it('refuses a bad form with the documented codes and stores nothing', async () => {
    const cases: [FormData, number, string, RegExp][] = []
    const missing = new FormData()
    missing.set('person_image', await photo('person_01.jpg'))
    cases.push([
      missing,
      400,
      'missing_parameter',
      /garment_image_url \(or a file part garment_image\)/,
    ])
    const both = new FormData()
    both.set('person_image', await photo('person_01.jpg'))
    both.set('person_image_url', 'https://cdn.example.com/p.jpg')
    both.set('garment_image_url', 'https://cdn.example.com/g.jpg')
    cases.push([
      both,
      400,
      'invalid_parameter',
      /either the file part person_image or the field person_image_url/,
    ])
    const text = new FormData()
    text.set('person_image', new Blob(['hello, not an image'], { type: 'text/plain' }))
    text.set('garment_image_url', 'https://cdn.example.com/g.jpg')
    cases.push([text, 400, 'unsupported_image_format', /person_image is not an image/])
    const bad = new FormData()
    bad.set('person_image', await photo('person_01.jpg'))
    bad.set('garment_image', await photo('garment_upper_01.jpg'))
    bad.set('garment_mode', 'sideways')
    cases.push([bad, 400, 'invalid_parameter', /garment_mode must be one of/])
    const stray = new FormData()
    stray.set('photo', await photo('person_01.jpg'))
    cases.push([stray, 400, 'invalid_parameter', /Unexpected file part "photo"/])
    const big = new FormData()
    big.set(
      'person_image',
      new Blob([new Uint8Array(IMAGE_MAX + 1).fill(0xff)], { type: 'image/jpeg' }),
    )
    big.set('garment_image_url', 'https://cdn.example.com/g.jpg')
    cases.push([big, 400, 'file_size_too_large', /./])
    for (const [form, status, code, message] of cases) {
      const r = await send(form)
      const b = (await r.json()) as { error: string; error_code: string }
      expect({ status: r.status, code: b.error_code }).toEqual({ status, code })
      expect(b.error).toMatch(message)
    }
    const broken = await app.request('/v1/try-on', {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: 'not a form at all',
    })
    expect(broken.status).toBe(400)
    expect(((await broken.json()) as { error_code: string }).error_code).toBe(
      'invalid_request_body',
    )
    expect(published).toEqual([])
    expect(await storedUploads()).toEqual([])
  })

  it('an Idempotency-Key replay of the same form (same files) answers the first job', async () => {
    const form = async () => {
      const f = new FormData()
      f.set('person_image', await photo('person_01.jpg'))
      f.set('garment_image', await photo('garment_upper_01.jpg'))
      f.set('wait_for_result', 'false')
      return f
    }
    const a = await send(await form(), { 'idempotency-key': 'form-1' })
    const b = await send(await form(), { 'idempotency-key': 'form-1' })
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(((await b.json()) as { job_id: string }).job_id).toBe(
      ((await a.json()) as { job_id: string }).job_id,
    )
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const other = new FormData()
    other.set('person_image', await photo('person_02.jpg'))
    other.set('garment_image', await photo('garment_upper_01.jpg'))
    other.set('wait_for_result', 'false')
    const c = await send(other, { 'idempotency-key': 'form-1' })
    expect(c.status).toBe(422)
  })
})
