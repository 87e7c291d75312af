/**
 * Storage quotas (issue 11 §1): one API key fills its upload quota and is refused
 * (429 upload_quota_exceeded) while another key still uploads, submits and completes a job — in
 * the embedded mode, a real process with a data dir. Then the shared caps: the NATS Object Store
 * buckets get their byte caps at gateway start (max_bytes, discard new) and a full bucket answers
 * storage_full instead of filling the server's file store; the data dir's uploads/ cap likewise.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError, UPLOAD_TTL_MS, UPLOADS_BUCKET } from '@tailor/proto'
import { ensureByteCaps } from '@tailor/gateway/src/jetstream-byte-caps.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { openObjectStoreUploadStore } from '@tailor/gateway/src/uploads/upload-store-object-store.ts'
import { openFileUploadStore } from '@tailor/gateway/src/uploads/upload-store-files.ts'
import { openObjectStoreResultStore } from '@tailor/inference/src/results/result-store-object-store.ts'
import { createFileResultStore } from '@tailor/inference/src/results/result-store-files.ts'
import { apiClient } from '../helpers/api.ts'
import { ffmpeg } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const KEY_A = 'quota-key-a-0123456789abcdef0123456789'
const KEY_B = 'quota-key-b-0123456789abcdef0123456789'
const QUOTA_BYTES = 60_000
const JOB_TIMEOUT_MS = 120_000

const body = (n: number, seed: number): Buffer => Buffer.alloc(n, seed)
const bytes = (n: number, seed = 1): ReadableStream<Uint8Array> =>
  new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(body(n, seed))), c.close()) })
const meta = (owner: string) => {
  const now = Date.now()
  return {
    id: crypto.randomUUID(),
    ownerKeyId: owner,
    contentType: 'image/png',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + UPLOAD_TTL_MS).toISOString(),
  }
}

describe('embedded: one key at its upload quota, another key unaffected', () => {
  let dir: string
  let models: { dir: string; remove(): Promise<void> }
  let tailor: ServiceProcess | undefined
  let base: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-quota-'))
    models = await snapshotModels()
    // A 0.5 s 96x96 clip: key B's job.
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=96x96:rate=10',
      '-t',
      '0.5',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      join(dir, 'clip.mp4'),
    ])
    const port = await freePort()
    tailor = startService('services/embedded/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      TAILOR_DATA_DIR: join(dir, 'data'),
      MODELS_DIR: models.dir,
      API_KEYS: `${KEY_A},${KEY_B}`,
      TAILOR_API_KEY: KEY_A,
      UPLOAD_QUOTA_BYTES: String(QUOTA_BYTES),
      UPLOAD_QUOTA_COUNT: '3',
      DEFAULT_RATE_LIMIT_PER_S: '100',
    })
    await tailor.waitFor('Tailor is running at')
    base = `http://127.0.0.1:${port}`
  }, 120_000)
  afterAll(async () => {
    await tailor?.stop()
    await models?.remove()
    await rm(dir, { recursive: true, force: true })
  })

  const upload = async (key: string, data: Uint8Array, type = 'image/png') => {
    const r = await fetch(`${base}/v1/uploads`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': type },
      body: new Uint8Array(data),
    })
    return { status: r.status, body: (await r.json()) as Record<string, string> }
  }

  it(
    'key A: uploads until its byte quota, then 429 upload_quota_exceeded (declared or streamed); count quota too; key B uploads and completes a job',
    async () => {
      expect((await upload(KEY_A, body(25_000, 1))).status).toBe(201)
      expect((await upload(KEY_A, body(25_000, 2))).status).toBe(201)
      // 50 000 of 60 000 held: a 25 000-byte upload does not fit.
      const refused = await upload(KEY_A, body(25_000, 3))
      expect(refused.status).toBe(429)
      expect(refused.body.error_code).toBe('upload_quota_exceeded')
      expect(refused.body.error).toMatch(/quota is 3 uploads and 0\.1 MB per key/)
      // Chunked (no Content-Length): written, counted, then deleted — nothing kept.
      const chunked = await fetch(`${base}/v1/uploads`, {
        method: 'POST',
        headers: { 'x-api-key': KEY_A, 'content-type': 'image/png' },
        body: bytes(25_000),
        duplex: 'half',
      } as RequestInit)
      expect(chunked.status).toBe(429)
      expect(((await chunked.json()) as { error_code: string }).error_code).toBe(
        'upload_quota_exceeded',
      )
      const files = await readdir(join(dir, 'data', 'uploads'))
      expect(files.filter((f) => f.endsWith('.json'))).toHaveLength(2)
      // Count: a third small upload fits, a fourth does not.
      expect((await upload(KEY_A, body(100, 4))).status).toBe(201)
      const fourth = await upload(KEY_A, body(100, 5))
      expect([fourth.status, fourth.body.error_code]).toEqual([429, 'upload_quota_exceeded'])

      // Key B is not touched by A's quota: upload a clip, remove its background.
      const clip = await upload(KEY_B, await readFile(join(dir, 'clip.mp4')), 'video/mp4')
      expect(clip.status, JSON.stringify(clip.body)).toBe(201)
      const api = apiClient(base, KEY_B)
      const id = await api.start({ video_url: clip.body.url, output_format: 'mp4_h264' })
      const done = await api.wait(id, JOB_TIMEOUT_MS)
      expect(done.status, JSON.stringify(done.error)).toBe('completed')
    },
    JOB_TIMEOUT_MS + 30_000,
  )
})

describe('shared byte caps', () => {
  let nats: NatsServer
  let nc: NatsConnection
  beforeAll(async () => {
    nats = await startNatsServer()
    nc = await connect({ servers: nats.url })
  })
  afterAll(async () => {
    await nc?.close()
    await nats?.stop()
  })

  it("NATS: the gateway sets each bucket's max_bytes (discard new); a full uploads bucket answers storage_full, a full results bucket too", async () => {
    const uploads = await openObjectStoreUploadStore(nc)
    const results = await openObjectStoreResultStore(nc, { maxResultBytes: 1_000_000 })
    await ensureByteCaps(
      nc,
      { uploadsMaxBytes: 300_000, resultsMaxBytes: 300_000, streamMaxBytes: 1_000_000 },
      createLogger('silent'),
    )
    const jsm = await jetstreamManager(nc)
    const info = await jsm.streams.info(`OBJ_${UPLOADS_BUCKET}`)
    expect([info.config.max_bytes, info.config.discard]).toEqual([300_000, 'new'])
    // Two keys share the bucket: once it is full, the next write fails storage_full, nothing of it kept.
    await uploads.put(meta('k1'), bytes(120_000, 1), 10_000_000)
    await uploads.put(meta('k2'), bytes(120_000, 2), 10_000_000)
    await expect(uploads.put(meta('k2'), bytes(120_000, 3), 10_000_000)).rejects.toMatchObject({
      code: 'storage_full',
      retryable: true,
    })
    expect(await uploads.usage('k1')).toMatchObject({ count: 1, bytes: 120_000 })
    expect(await uploads.usage('k2')).toMatchObject({ count: 1, bytes: 120_000 })
    // Results: one over RESULT_MAX_BYTES is refused before it is sent; the bucket's cap gives storage_full.
    const tmp = await mkdtemp(join(tmpdir(), 'tailor-quota-res-'))
    try {
      await writeFile(join(tmp, 'big'), body(1_000_001, 7))
      await expect(
        results.put('remove-background/a.webm', join(tmp, 'big'), 'video/webm'),
      ).rejects.toMatchObject({ code: 'result_too_large' })
      await writeFile(join(tmp, 'r'), body(200_000, 8))
      await results.put('remove-background/b.webm', join(tmp, 'r'), 'video/webm')
      await expect(
        results.put('remove-background/c.webm', join(tmp, 'r'), 'video/webm'),
      ).rejects.toMatchObject({ code: 'storage_full', retryable: true })
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
  })

  it('embedded data dir: uploads/ and results/ have the same caps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tailor-quota-dir-'))
    try {
      const uploads = await openFileUploadStore(join(dir, 'uploads'), { maxTotalBytes: 300_000 })
      await uploads.put(meta('k1'), bytes(120_000), 10_000_000)
      await uploads.put(meta('k2'), bytes(120_000), 10_000_000)
      const err = await uploads.put(meta('k2'), bytes(120_000), 10_000_000).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code).toBe('storage_full')
      expect((await readdir(join(dir, 'uploads'))).filter((f) => f.endsWith('.partial'))).toEqual(
        [],
      )
      await uploads.close()
      const results = createFileResultStore(join(dir, 'results'), {
        maxResultBytes: 1_000_000,
        maxTotalBytes: 300_000,
      })
      await writeFile(join(dir, 'r'), body(200_000, 8))
      await results.put(
        'remove-background/0190f3a0-0000-7000-8000-00000000000a.webm',
        join(dir, 'r'),
        'video/webm',
      )
      // The same key again (a redelivered job) replaces its file: fits.
      await results.put(
        'remove-background/0190f3a0-0000-7000-8000-00000000000a.webm',
        join(dir, 'r'),
        'video/webm',
      )
      await expect(
        results.put(
          'remove-background/0190f3a0-0000-7000-8000-00000000000b.webm',
          join(dir, 'r'),
          'video/webm',
        ),
      ).rejects.toMatchObject({ code: 'storage_full' })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
