import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { workLeft as jobDirsLeft } from '../helpers/work-dir.ts'
import { runFormatMatrix } from '../helpers/format-matrix.ts'
import { createMediaFixtures, probe, type MediaFixtures, type Probe } from '../helpers/media.ts'
import {
  freePort,
  jobsQueueState,
  startNatsServer,
  type NatsServer,
} from '../helpers/nats-server.ts'
import { snapshotModels } from '../helpers/models.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-distributed'
const JOB_TIMEOUT_MS = 240_000
const CANCEL_DEADLINE_MS = 1_000

let nats: NatsServer
let nc: NatsConnection
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gatewayEnv: Record<string, string>
let inferenceEnv: Record<string, string>
let gateway: ServiceProcess
let inference: ServiceProcess
let api: ApiClient
let healthPort: number
let sources: Record<string, Probe>

// Each process is assigned before it is awaited, so afterAll stops it even when its start fails.
const startGateway = async (): Promise<void> => {
  gateway = startService('services/gateway/src/main.ts', gatewayEnv)
  await gateway.waitFor('gateway listening')
}
const startInference = async (): Promise<void> => {
  inference = startService('services/inference/src/main.ts', inferenceEnv)
  await inference.waitFor('inference consuming jobs')
}
const workLeft = async (): Promise<string[]> => jobDirsLeft(workDir)

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-dist-'))
  const [port, grpcPort] = [await freePort(), await freePort()]
  healthPort = await freePort()
  gatewayEnv = {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'distributed-test-secret-0123456789abcdef',
    // The format matrix submits nine jobs in a row: the key's budget is above that (limits: access.int.test.ts).
    DEFAULT_RATE_LIMIT_PER_S: '100',
    DEFAULT_MAX_CONCURRENT_JOBS: '20',
  }
  inferenceEnv = {
    NATS_URL: nats.url,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    ACK_WAIT_MS: '3000',
    MAX_DELIVER: '3',
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    HEALTH_PORT: String(healthPort),
    HEALTH_HOST: '127.0.0.1',
  }
  await Promise.all([startGateway(), startInference()])
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
  sources = {}
  for (const f of ['short_01.mp4', 'short_02.mp4']) sources[f] = await probe(join(media.dir, f))
})

afterAll(async () => {
  await inference?.stop()
  await gateway?.stop()
  await nc?.close()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

describe('distributed: gateway and inference as separate processes (NATS JetStream + gRPC)', () => {
  it('reports health: the gateway sees the worker, inference names its execution provider', async () => {
    const g = await fetch(`http://127.0.0.1:${gatewayEnv.PORT}/healthz`)
    expect(g.status).toBe(200)
    expect(await g.json()).toMatchObject({
      status: 'ok',
      mode: 'distributed',
      workers_connected: 1,
    })
    const i = await fetch(`http://127.0.0.1:${healthPort}/healthz`)
    expect(i.status).toBe(200)
    expect(await i.json()).toMatchObject({ status: 'ok', provider: 'cpu', in_flight: 0 })
  })

  it('runs all nine output formats end to end', async () => {
    await runFormatMatrix({ api, baseUrl: media.baseUrl, sources, timeoutMs: JOB_TIMEOUT_MS })
    expect(await workLeft()).toEqual([])
  })

  it('serves results with ranges, and refuses tampered URLs', async () => {
    const id = await api.start({
      video_url: `${media.baseUrl}/short_02.mp4`,
      output_format: 'mp4_h264',
    })
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    const head = await fetch(s.result_url!, { headers: { range: 'bytes=0-99' } })
    expect(head.status).toBe(206)
    expect(head.headers.get('content-length')).toBe('100')
    expect(head.headers.get('content-range')).toMatch(/^bytes 0-99\/\d+$/)
    expect((await head.arrayBuffer()).byteLength).toBe(100)
    const total = Number(head.headers.get('content-range')!.split('/')[1])
    const tail = await fetch(s.result_url!, { headers: { range: `bytes=${total - 10}-` } })
    expect((await tail.arrayBuffer()).byteLength).toBe(10)
    const bad = new URL(s.result_url!)
    bad.searchParams.set('sig', `${bad.searchParams.get('sig')!.slice(0, -2)}AA`)
    const r = await fetch(bad)
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ error_code: 'invalid_signature' })
  })

  describe('bad inputs', () => {
    it.each([
      ['not a video', 'not-a-video.mp4', 'malformed_video'],
      ['a truncated file', 'truncated.mp4', 'malformed_video'],
      ['zero bytes', 'empty.mp4', 'malformed_video'],
      ['an over-long video (65 s > 60 s)', 'long.mp4', 'video_too_long'],
      ['a missing file (HTTP 404)', 'no-such-file.mp4', 'input_fetch_failed'],
    ])('%s → failed %s, nothing left behind', async (_name, file, code) => {
      const id = await api.start({ video_url: `${media.baseUrl}/${file}` })
      const s = await api.wait(id, JOB_TIMEOUT_MS)
      expect(s).toMatchObject({
        status: 'failed',
        result_url: null,
        error: { error_code: code, message: expect.any(String) },
      })
      expect(await workLeft()).toEqual([])
    })

    it('an unreachable URL → failed input_fetch_failed', async () => {
      const closed = await freePort()
      const s = await api.wait(
        await api.start({ video_url: `http://127.0.0.1:${closed}/v.mp4` }),
        JOB_TIMEOUT_MS,
      )
      expect(s).toMatchObject({ status: 'failed', error: { error_code: 'input_fetch_failed' } })
      expect(s.error!.message).toMatch(/ECONNREFUSED/)
      expect(await workLeft()).toEqual([])
    })

    it.each([
      'http://10.0.0.1/v.mp4',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/v.mp4',
      'http://192.168.0.10/v.mp4',
    ])('a private-address URL %s → failed input_fetch_failed without connecting', async (url) => {
      const s = await api.wait(await api.start({ video_url: url }), JOB_TIMEOUT_MS)
      expect(s).toMatchObject({
        status: 'failed',
        error: {
          error_code: 'input_fetch_failed',
          message: expect.stringMatching(/does not point at a publicly reachable host/),
        },
      })
      expect(await workLeft()).toEqual([])
    })

    it.each([
      ['wrong field types', { video_url: 12, output_format: true }, 'invalid_parameter'],
      [
        'transparent with mp4_h264',
        {
          video_url: 'http://127.0.0.1/v.mp4',
          background_color: 'transparent',
          output_format: 'mp4_h264',
        },
        'invalid_parameter',
      ],
      ['no video_url', { output_format: 'gif' }, 'missing_parameter'],
    ])('%s → 400 %s, no job', async (_name, body, code) => {
      const r = await api.submit(body)
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ error_code: code, error: expect.any(String) })
    })
  })

  it('cancels a running job within a second and frees its work dir', async () => {
    const id = await api.start({
      video_url: `${media.baseUrl}/medium_01.mp4`,
      output_format: 'mkv_vp9',
    })
    await api.waitUntil(id, (s) => s.status === 'running' && s.progress > 0, JOB_TIMEOUT_MS)
    const before = inference.output().length
    const t0 = Date.now()
    const c = await api.cancel(id)
    expect(c.status).toBe(200)
    expect(await api.status(id)).toMatchObject({
      status: 'failed',
      error: { error_code: 'job_cancelled' },
    })
    await inference.waitFor('"msg":"job cancelled"', 10_000)
    expect(inference.output().slice(before)).toContain(id)
    expect(Date.now() - t0).toBeLessThan(CANCEL_DEADLINE_MS + 500)
    expect(await workLeft()).toEqual([])
    expect((await api.cancel(id)).status).toBe(409)
  })

  it('redelivers a job whose worker was killed, and completes it once', async () => {
    const id = await api.start({
      video_url: `${media.baseUrl}/medium_01.mp4`,
      output_format: 'mp4_h264',
      background_color: '#fff',
    })
    await api.waitUntil(id, (s) => s.status === 'running' && s.progress >= 0.2, JOB_TIMEOUT_MS)
    await inference.stop('SIGKILL')
    const stalled = await api.status(id)
    expect(stalled.status).toBe('running')
    const leftovers = await workLeft()
    expect(leftovers.some((n) => n.includes(`/${id}-`))).toBe(true) // the killed worker's scratch files
    await startInference()
    expect((await workLeft()).filter((n) => leftovers.includes(n))).toEqual([]) // swept at start-up
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    expect(s).toMatchObject({ status: 'completed', progress: 1 })
    expect(inference.output()).toContain(`"job_id":"${id}","kind":"remove-background","attempt":2`) // redelivered by JetStream
    const jsm = await jetstreamManager(nc)
    const q = await jobsQueueState(nc)
    expect(q.ackPending, q.detail).toBe(0)
    expect(q.messages, q.detail).toBe(0)
    const objects = await jsm.streams.info('OBJ_results', { subjects_filter: '$O.results.M.>' })
    const names = Object.keys(objects.state.subjects ?? {}).map((k) =>
      Buffer.from(k.slice('$O.results.M.'.length), 'base64url').toString(),
    )
    expect(names.filter((n) => n.includes(id))).toEqual([`remove-background/${id}.mp4`])
  })

  it('keeps serving a job status across a gateway restart, and the job completes', async () => {
    const id = await api.start({
      video_url: `${media.baseUrl}/medium_01.mp4`,
      output_format: 'webm_vp9',
      background_color: 'transparent',
    })
    await api.waitUntil(id, (s) => s.status === 'running', JOB_TIMEOUT_MS)
    const queued = await api.start({
      video_url: `${media.baseUrl}/short_02.mp4`,
      output_format: 'mp4_h264',
    }) // waits behind it
    await gateway.stop()
    await startGateway()
    const s1 = await api.status(id)
    expect(['running', 'completed']).toContain(s1.status)
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    expect(s).toMatchObject({ status: 'completed', progress: 1 })
    expect((await fetch(s.result_url!)).status).toBe(200)
    // Nothing lost: the job queued before the restart completes too, each with exactly one result.
    expect(await api.wait(queued, JOB_TIMEOUT_MS)).toMatchObject({
      status: 'completed',
      progress: 1,
    })
    const jsm = await jetstreamManager(nc)
    const objects = await jsm.streams.info('OBJ_results', { subjects_filter: '$O.results.M.>' })
    const names = Object.keys(objects.state.subjects ?? {}).map((k) =>
      Buffer.from(k.slice('$O.results.M.'.length), 'base64url').toString(),
    )
    expect(names.filter((n) => n.includes(id) || n.includes(queued)).sort()).toEqual(
      [`remove-background/${id}.webm`, `remove-background/${queued}.mp4`].sort(),
    )
  })
})
