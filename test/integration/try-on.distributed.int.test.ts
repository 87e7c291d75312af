/**
 * Try-on through the distributed path: gateway and inference as separate processes joined by a real
 * nats-server (JetStream work queue `jobs.try-on.v1`, job records in KV, result in the Object Store)
 * and the gRPC job event stream. Sync answer, async polling, and one failure code end to end.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '@tailor/inference/src/media/image.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'
import { workLeft } from '../helpers/work-dir.ts'

const API_KEY = 'integration-test-key-tryon-distributed'
const MODELS = SERVICE_MODELS
const JOB_TIMEOUT_MS = 120_000
const POLL_MS = 250

let nats: NatsServer
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gateway: ServiceProcess
let inference: ServiceProcess
let base: string
const headers = { 'content-type': 'application/json', 'x-api-key': API_KEY }

beforeAll(async () => {
  models = await snapshotModels(MODELS)
  nats = await startNatsServer()
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-tryon-dist-'))
  const [port, grpcPort, healthPort] = [await freePort(), await freePort(), await freePort()]
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'tryon-distributed-secret-0123456789abcdef',
    TRYON_WAIT_TIMEOUT_MS: '90000',
  })
  inference = startService('services/inference/src/main.ts', {
    NATS_URL: nats.url,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    HEALTH_PORT: String(healthPort),
    HEALTH_HOST: '127.0.0.1',
  })
  await Promise.all([
    gateway.waitFor('gateway listening'),
    inference.waitFor('inference consuming jobs'),
  ])
  expect(inference.output()).toContain('try-on engine ready')
  base = `http://127.0.0.1:${port}`
})

afterAll(async () => {
  await inference?.stop()
  await gateway?.stop()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

const post = async (body: unknown) => {
  const r = await fetch(`${base}/v1/try-on`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })
  return { status: r.status, body: (await r.json()) as Record<string, unknown> }
}
const shared = (f: string) => `${media.baseUrl}/shared/${f}`

describe('try-on, distributed (NATS JetStream + gRPC events)', () => {
  it(
    "sync: 200 {result_url} from the Object Store, a JPEG at the person photo's size",
    async () => {
      const r = await post({
        person_image_url: shared('person_02.jpg'),
        garment_image_url: shared('garment_lower_01.jpg'),
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const res = await fetch(r.body.result_url as string)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/jpeg')
      const dir = await mkdtemp(join(tmpdir(), 'tailor-tryon-dist-'))
      await writeFile(join(dir, 'r.jpg'), Buffer.from(await res.arrayBuffer()))
      const img = await decodeImage(join(dir, 'r.jpg'), { what: 'result' })
      expect([img.width, img.height]).toEqual([768, 1024])
      await rm(dir, { recursive: true, force: true })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'async: 202 {job_id}, polled to completed',
    async () => {
      const r = await post({
        person_image_url: shared('person_04.jpg'),
        garment_image_url: shared('garment_upper_01.jpg'),
        wait_for_result: 'false',
      })
      expect(r.status).toBe(202)
      const id = r.body.job_id as string
      const deadline = Date.now() + JOB_TIMEOUT_MS
      let s: Record<string, unknown> = {}
      do {
        await new Promise((res) => setTimeout(res, POLL_MS))
        s = (await (await fetch(`${base}/v1/try-on/job/${id}`, { headers })).json()) as Record<
          string,
          unknown
        >
      } while (s.status !== 'completed' && s.status !== 'failed' && Date.now() < deadline)
      expect(s, JSON.stringify(s)).toMatchObject({
        status: 'completed',
        result_url: expect.stringContaining(`/results/try-on/${id}.jpg`),
      })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'a person photo with no person: 422 no_person_detected, recorded on the job, nothing left in the work dir',
    async () => {
      const r = await post({
        person_image_url: shared('garment_lower_02.jpg'),
        garment_image_url: shared('garment_upper_01.jpg'),
      })
      expect(r.status, JSON.stringify(r.body)).toBe(422)
      expect(r.body).toMatchObject({ error_code: 'no_person_detected' })
      expect(await workLeft(workDir)).toEqual([])
    },
    JOB_TIMEOUT_MS,
  )
})
