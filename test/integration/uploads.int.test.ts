/**
 * Uploads end to end, in both modes: a real photo pair is uploaded (POST /v1/uploads), the
 * tailor://uploads/<id> URLs are used in a try-on, and inference reads them from upload storage
 * (the data dir embedded; the NATS Object Store bucket `uploads` distributed, with its 1 h TTL).
 * Another key's upload is refused at submission.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UPLOAD_TTL_MS } from '@tailor/proto'
import { decodeImage } from '@tailor/inference/src/media/image.ts'
import { ffmpeg, probe, SHARED_MEDIA_DIR } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'
import { workLeft } from '../helpers/work-dir.ts'

const KEY_A = 'uploads-int-key-a-0123456789-abc'
const KEY_B = 'uploads-int-key-b-0123456789-abc'
const MODELS = SERVICE_MODELS
const JOB_TIMEOUT_MS = 180_000

interface Mode {
  base: string
  /** Where the gateway stored an upload, as this mode sees it. */
  stored(id: string): Promise<boolean>
  /** The work dir(s) inference uses: empty after each job. */
  workDir: string
}

const upload = async (base: string, key: string, file: string, type: string) => {
  const r = await fetch(`${base}/v1/uploads`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': type },
    body: await readFile(join(SHARED_MEDIA_DIR, file)),
  })
  return {
    status: r.status,
    body: (await r.json()) as {
      upload_id: string
      url: string
      expires_at: string
      error_code?: string
    },
  }
}
const tryOn = async (base: string, key: string, body: unknown) => {
  const r = await fetch(`${base}/v1/try-on`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: r.status, body: (await r.json()) as Record<string, unknown> }
}

/** The same scenario in each mode. */
function scenario(mode: () => Mode): void {
  it(
    "a real photo pair uploaded by key A dresses the person: 200 result_url, JPEG at the person photo's size, not uniform",
    async () => {
      const m = mode()
      const person = await upload(m.base, KEY_A, 'person_02.jpg', 'image/jpeg')
      const garment = await upload(m.base, KEY_A, 'garment_upper_01.jpg', 'image/jpeg')
      expect(person.status, JSON.stringify(person.body)).toBe(201)
      expect(garment.status).toBe(201)
      expect(person.body.url).toBe(`tailor://uploads/${person.body.upload_id}`)
      expect(Date.parse(person.body.expires_at) - Date.now()).toBeGreaterThan(
        UPLOAD_TTL_MS - 60_000,
      )
      expect(await m.stored(person.body.upload_id)).toBe(true)

      const r = await tryOn(m.base, KEY_A, {
        person_image_url: person.body.url,
        garment_image_url: garment.body.url,
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const res = await fetch(r.body.result_url as string)
      expect(res.headers.get('content-type')).toBe('image/jpeg')
      const dir = await mkdtemp(join(tmpdir(), 'tailor-upl-int-'))
      try {
        await writeFile(join(dir, 'r.jpg'), Buffer.from(await res.arrayBuffer()))
        const img = await decodeImage(join(dir, 'r.jpg'), { what: 'result' })
        expect([img.width, img.height]).toEqual([768, 1024])
        let min = 255
        let max = 0
        for (let i = 0; i < img.rgb.length; i += 97) {
          min = Math.min(min, img.rgb[i]!)
          max = Math.max(max, img.rgb[i]!)
        }
        expect(max - min).toBeGreaterThan(100)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
      expect(await workLeft(m.workDir)).toEqual([])
    },
    JOB_TIMEOUT_MS,
  )

  it("key B cannot use key A's upload: 400 invalid_parameter at submission; an unknown upload likewise", async () => {
    const m = mode()
    const a = await upload(m.base, KEY_A, 'garment_lower_01.jpg', 'image/jpeg')
    const b = await upload(m.base, KEY_B, 'person_04.jpg', 'image/jpeg')
    const r = await tryOn(m.base, KEY_B, {
      person_image_url: b.body.url,
      garment_image_url: a.body.url,
      wait_for_result: 'false',
    })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({
      error_code: 'invalid_parameter',
      error: expect.stringMatching(/garment_image_url.*another API key/),
    })
    const u = await tryOn(m.base, KEY_A, {
      person_image_url: 'tailor://uploads/00000000-0000-4000-8000-000000000000',
      garment_image_url: a.body.url,
    })
    expect(u.body).toMatchObject({
      error_code: 'invalid_parameter',
      error: expect.stringMatching(/does not exist or has expired/),
    })
  })

  it('a file that is not an image or video is refused before storing: unsupported_content_type', async () => {
    const m = mode()
    const r = await fetch(`${m.base}/v1/uploads`, {
      method: 'POST',
      headers: { 'x-api-key': KEY_A, 'content-type': 'text/markdown' },
      body: await readFile(join(SHARED_MEDIA_DIR, 'SOURCES.md')),
    })
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ error_code: 'unsupported_content_type' })
  })
}

describe('uploads, embedded (data dir)', () => {
  let tailor: ServiceProcess
  let models: { dir: string; remove(): Promise<void> }
  let dataDir: string
  let base = ''
  beforeAll(async () => {
    models = await snapshotModels(MODELS)
    dataDir = await mkdtemp(join(tmpdir(), 'tailor-upl-data-'))
    const port = await freePort()
    tailor = startService('services/embedded/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      TAILOR_DATA_DIR: dataDir,
      MODELS_DIR: models.dir,
      TAILOR_API_KEY: KEY_A,
      API_KEYS: KEY_B,
      TRYON_WAIT_TIMEOUT_MS: '150000',
    })
    await tailor.waitFor('Tailor is running at')
    base = `http://127.0.0.1:${port}`
  })
  afterAll(async () => {
    await tailor?.stop()
    await models?.remove()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })
  scenario(() => ({
    base,
    workDir: join(dataDir, 'work'),
    stored: async (id) => (await readdir(join(dataDir, 'uploads'))).includes(id),
  }))
})

describe('uploads, distributed (NATS Object Store `uploads`)', () => {
  let nats: NatsServer
  let gateway: ServiceProcess
  let inference: ServiceProcess
  let models: { dir: string; remove(): Promise<void> }
  let workDir: string
  let base = ''
  beforeAll(async () => {
    models = await snapshotModels(MODELS)
    nats = await startNatsServer()
    workDir = await mkdtemp(join(tmpdir(), 'tailor-upl-work-'))
    const [port, grpcPort] = [await freePort(), await freePort()]
    gateway = startService('services/gateway/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPort),
      NATS_URL: nats.url,
      API_KEYS: `${KEY_A},${KEY_B}`,
      RESULT_URL_SECRET: 'uploads-distributed-secret-0123456789abcdef',
      TRYON_WAIT_TIMEOUT_MS: '150000',
    })
    inference = startService('services/inference/src/main.ts', {
      NATS_URL: nats.url,
      GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
      TAILOR_WORK_DIR: workDir,
      ORT_EP: 'cpu',
      MODELS_DIR: models.dir,
    })
    await Promise.all([
      gateway.waitFor('gateway listening'),
      inference.waitFor('inference consuming jobs'),
    ])
    base = `http://127.0.0.1:${port}`
  })
  afterAll(async () => {
    await inference?.stop()
    await gateway?.stop()
    await nats?.stop()
    await models?.remove()
    if (workDir) await rm(workDir, { recursive: true, force: true })
  })
  it('an upload over the image limit sent without Content-Length is cut off while streaming: file_size_too_large, no chunks left in the bucket', async () => {
    const nc = await connect({ servers: nats.url })
    try {
      const jsm = await jetstreamManager(nc)
      const before = (await jsm.streams.info('OBJ_uploads')).state.messages
      let left = 26 * 1024 * 1024 // over UPLOAD_MAX_IMAGE_BYTES (25 MiB)
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (left <= 0) return ctrl.close()
          const n = Math.min(left, 256 * 1024)
          left -= n
          ctrl.enqueue(new Uint8Array(n).fill(1))
        },
      })
      const r = await fetch(`${base}/v1/uploads`, {
        method: 'POST',
        headers: { 'x-api-key': KEY_A, 'content-type': 'image/png' },
        body,
        duplex: 'half',
      } as RequestInit)
      expect(r.status).toBe(400)
      expect(await r.json()).toMatchObject({ error_code: 'file_size_too_large' })
      expect((await jsm.streams.info('OBJ_uploads')).state.messages).toBe(before)
    } finally {
      await nc.close()
    }
  })
  it(
    'an uploaded video (a 1 s cut of a real clip) goes through the JOBS stream: remove-bg completes from the upload',
    async () => {
      const tmp = await mkdtemp(join(tmpdir(), 'tailor-upl-clip-'))
      const clip = join(tmp, 'clip.mp4')
      await ffmpeg([
        '-i',
        join(SHARED_MEDIA_DIR, 'video_02.mp4'),
        '-t',
        '1',
        '-an',
        '-vf',
        'scale=-2:180',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        clip,
      ])
      try {
        const up = await fetch(`${base}/v1/uploads`, {
          method: 'POST',
          headers: { 'x-api-key': KEY_A, 'content-type': 'video/mp4' },
          body: await readFile(clip),
        })
        expect(up.status).toBe(201)
        const { url } = (await up.json()) as { url: string }
        const headers = { 'x-api-key': KEY_A, 'content-type': 'application/json' }
        const r = await fetch(`${base}/v1/video/remove-background`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            video_url: url,
            output_format: 'webm_vp9',
            background_color: 'transparent',
          }),
        })
        expect(r.status).toBe(202)
        const { job_id } = (await r.json()) as { job_id: string }
        let doc: { status: string; result_url: string | null; error: unknown } = {
          status: 'pending',
          result_url: null,
          error: null,
        }
        const deadline = Date.now() + JOB_TIMEOUT_MS / 2
        while (doc.status !== 'completed' && doc.status !== 'failed' && Date.now() < deadline) {
          await new Promise((res) => setTimeout(res, 250))
          doc = (await (
            await fetch(`${base}/v1/video/remove-background/job/${job_id}`, { headers })
          ).json()) as typeof doc
        }
        expect(doc, JSON.stringify(doc)).toMatchObject({ status: 'completed' })
        const out = join(tmp, 'out.webm')
        await writeFile(out, Buffer.from(await (await fetch(doc.result_url!)).arrayBuffer()))
        const v = (await probe(out)).streams.find((st) => st.codec_type === 'video')
        expect(v?.codec_name).toBe('vp9')
      } finally {
        await rm(tmp, { recursive: true, force: true })
      }
    },
    JOB_TIMEOUT_MS,
  )

  scenario(() => ({
    base,
    workDir,
    stored: async (id) => {
      const nc = await connect({ servers: nats.url })
      try {
        const jsm = await jetstreamManager(nc)
        const si = await jsm.streams.info('OBJ_uploads')
        expect(si.config.max_age).toBe(UPLOAD_TTL_MS * 1_000_000) // the bucket's TTL: the server drops uploads after 1 h
        const msg = await jsm.streams
          .getMessage('OBJ_uploads', {
            last_by_subj: `$O.uploads.M.${Buffer.from(id).toString('base64url')}`,
          })
          .catch(() => null)
        return msg !== null
      } finally {
        await nc.close()
      }
    },
  }))
})
