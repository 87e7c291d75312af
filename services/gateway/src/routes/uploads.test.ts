import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseUploadUrl, UPLOAD_TTL_MS, type JobEnvelope } from '@tailor/proto'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import { createLogger } from '../logger.ts'
import { checkUploadRefs } from '../uploads/check-upload-refs.ts'
import { openFileUploadStore } from '../uploads/upload-store-files.ts'
import type { UploadStore } from '../uploads/upload-store.ts'

const KEY = 'upload-test-key-0123456789-abcde'
const OTHER = 'upload-other-key-0123456789-abcd'
const IMAGE_MAX = 200_000
const VIDEO_MAX = 300_000
const config = loadConfig({
  API_KEYS: `${KEY},${OTHER}`,
  RESULT_URL_SECRET: 'x'.repeat(32),
  UPLOAD_MAX_IMAGE_BYTES: String(IMAGE_MAX),
  UPLOAD_MAX_VIDEO_BYTES: String(VIDEO_MAX),
  DEFAULT_RATE_LIMIT_PER_S: '1000', // many uploads in a row (an upload counts against the key's rate limit)
})
const logger = createLogger('silent')
/** A real photo (larger than the 64 KiB JSON body limit, which must not apply to uploads). */
const PHOTO = join(import.meta.dirname, '../../../../../shared/media/garment_upper_01.jpg')

let dir: string
let uploads: UploadStore
let published: JobEnvelope[]
let app: ReturnType<typeof createApp>

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-uploads-'))
  uploads = await openFileUploadStore(join(dir, 'uploads'))
  published = []
  app = createApp({
    config,
    logger,
    uploads,
    jobs: await openFileJobStore(join(dir, 'jobs')),
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

const upload = (body: BodyInit | null, headers: Record<string, string>, init: RequestInit = {}) =>
  app.request('/v1/uploads', {
    method: 'POST',
    headers: { 'x-api-key': KEY, ...headers },
    body,
    ...init,
  })

/** A body sent without Content-Length (chunked), `n` bytes in 16 KiB pieces. */
const chunked = (n: number): ReadableStream<Uint8Array> => {
  let left = n
  return new ReadableStream({
    pull(ctrl) {
      if (left <= 0) return ctrl.close()
      const k = Math.min(left, 16 * 1024)
      left -= k
      ctrl.enqueue(new Uint8Array(k).fill(7))
    },
  })
}

describe('POST /v1/uploads', () => {
  it('stores a real photo (over the JSON body limit): 201 {upload_id, url, expires_at}, bytes intact, owner recorded', async () => {
    const photo = await readFile(PHOTO)
    expect(photo.length).toBeGreaterThan(config.maxBodyBytes)
    const before = Date.now()
    const r = await upload(photo, { 'content-type': 'image/jpeg' })
    expect(r.status).toBe(201)
    const b = (await r.json()) as { upload_id: string; url: string; expires_at: string }
    expect(b.url).toBe(`tailor://uploads/${b.upload_id}`)
    expect(parseUploadUrl(b.url)).toBe(b.upload_id)
    const exp = Date.parse(b.expires_at)
    expect(exp).toBeGreaterThanOrEqual(before + UPLOAD_TTL_MS - 1000)
    expect(exp).toBeLessThanOrEqual(Date.now() + UPLOAD_TTL_MS)
    expect((await readFile(join(dir, 'uploads', b.upload_id))).equals(photo)).toBe(true)
    const meta = await uploads.info(b.upload_id)
    expect(meta).toMatchObject({ id: b.upload_id, contentType: 'image/jpeg', bytes: photo.length })
    expect(meta?.ownerKeyId).toMatch(/\S/)
  })

  it('accepts every listed image and video type (parameters ignored, case-insensitive)', async () => {
    for (const t of [
      'image/png',
      'image/webp',
      'IMAGE/JPEG; charset=binary',
      'video/mp4',
      'video/quicktime',
      'video/webm',
      'video/x-matroska',
      'image/gif',
    ]) {
      const r = await upload(new Uint8Array(100), { 'content-type': t })
      expect(r.status, t).toBe(201)
    }
  })

  it('refuses other content types with 400 unsupported_content_type, naming the accepted ones', async () => {
    for (const h of [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/html' },
      { 'content-type': 'application/octet-stream' },
      {},
    ] as Record<string, string>[]) {
      const r = await upload(
        h['content-type'] === 'application/json' ? '{}' : new Uint8Array(10),
        h,
      )
      expect(r.status).toBe(400)
      const b = (await r.json()) as { error: string; error_code: string }
      expect(b.error_code).toBe('unsupported_content_type')
      expect(b.error).toContain('image/jpeg')
    }
    expect(await readdir(join(dir, 'uploads'))).toEqual([])
  })

  it("applies the media kind's size limit: by Content-Length at once, and while streaming a chunked body; nothing kept", async () => {
    const big = await upload(new Uint8Array(IMAGE_MAX + 1), { 'content-type': 'image/png' })
    expect(big.status).toBe(400)
    expect(await big.json()).toMatchObject({ error_code: 'file_size_too_large' })
    // The video limit is larger: the same size passes as a video.
    expect(
      (await upload(new Uint8Array(IMAGE_MAX + 1), { 'content-type': 'video/mp4' })).status,
    ).toBe(201)
    const streamed = await upload(chunked(VIDEO_MAX + 50_000), { 'content-type': 'video/mp4' }, {
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(400)
    expect(await streamed.json()).toMatchObject({ error_code: 'file_size_too_large' })
    const left = await readdir(join(dir, 'uploads'))
    expect(left.filter((f) => !f.endsWith('.json'))).toHaveLength(1) // only the accepted video
  })

  it('refuses an empty body with invalid_request_body, and a missing key with 401', async () => {
    const empty = await upload(new Uint8Array(0), { 'content-type': 'image/jpeg' })
    expect(empty.status).toBe(400)
    expect(await empty.json()).toMatchObject({ error_code: 'invalid_request_body' })
    const anon = await app.request('/v1/uploads', {
      method: 'POST',
      headers: { 'content-type': 'image/jpeg' },
      body: new Uint8Array(10),
    })
    expect(anon.status).toBe(401)
    expect(await anon.json()).toMatchObject({ error_code: 'invalid_auth_token' })
  })
})

describe('upload URLs at job submission', () => {
  const uploadAs = async (key: string): Promise<string> => {
    const r = await upload(new Uint8Array(64), { 'content-type': 'video/mp4', 'x-api-key': key })
    return ((await r.json()) as { url: string }).url
  }
  const submit = (body: unknown, key = KEY) =>
    app.request('/v1/video/remove-background', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    })

  it("accepts the uploader's own tailor://uploads/<id> as video_url and passes it on unchanged", async () => {
    const url = await uploadAs(KEY)
    const r = await submit({ video_url: url })
    expect(r.status, await r.clone().text()).toBe(202)
    expect(published[0]?.params).toMatchObject({ video_url: url })
  })

  it("refuses another key's upload, an unknown or malformed upload URL with invalid_parameter and creates no job", async () => {
    const theirs = await uploadAs(OTHER)
    for (const [video_url, msg] of [
      [theirs, /another API key/],
      ['tailor://uploads/00000000-0000-4000-8000-000000000000', /does not exist or has expired/],
      ['tailor://uploads/../../etc/passwd', /tailor:\/\/uploads\/<upload_id>/],
      ['tailor://elsewhere/x', /tailor:\/\/uploads\/<upload_id>/],
    ] as const) {
      const r = await submit({ video_url })
      expect(r.status, video_url).toBe(400)
      const b = (await r.json()) as { error: string; error_code: string }
      expect(b.error_code).toBe('invalid_parameter')
      expect(b.error).toMatch(msg)
    }
    expect(published).toHaveLength(0)
  })

  it('refuses an expired upload', async () => {
    const t0 = Date.now()
    const store = await openFileUploadStore(join(dir, 'uploads-expiry'), { now: () => t0 })
    const meta = await store.put(
      {
        id: '11111111-1111-4111-8111-111111111111',
        ownerKeyId: 'k',
        contentType: 'image/jpeg',
        createdAt: new Date(t0).toISOString(),
        expiresAt: new Date(t0 + 1000).toISOString(),
      },
      new Blob([new Uint8Array(10)]).stream(),
      100,
    )
    await expect(
      checkUploadRefs(store, { person_image_url: `tailor://uploads/${meta.id}` }, 'k'),
    ).resolves.toBeUndefined()
    const later = await openFileUploadStore(join(dir, 'uploads-expiry'), { now: () => t0 + 2000 })
    await expect(
      checkUploadRefs(later, { person_image_url: `tailor://uploads/${meta.id}` }, 'k'),
    ).rejects.toMatchObject({ code: 'invalid_parameter' })
    // The sweep at open removed it.
    expect(await readdir(join(dir, 'uploads-expiry'))).toEqual([])
    await store.close()
    await later.close()
  })
})
