import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig as loadGatewayConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start as startGateway, type Gateway } from '@tailor/gateway/src/start.ts'
import { loadConfig as loadInferenceConfig } from '@tailor/inference/src/config.ts'
import { start as startInference, type Inference } from '@tailor/inference/src/start.ts'
import { apiClient } from '../helpers/api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, TEST_JOB_EVENTS_TOKEN, type ServiceProcess } from '../helpers/processes.ts'

const JOB_TIMEOUT_MS = 180_000
/** How long a probe may take to notice NATS going away or coming back (reconnect wait is 2 s). */
const PROBE_CHANGE_TIMEOUT_MS = 20_000
const NATS_DOWN_MS = 5_000
const API_KEY = 'observability-test-key-abcdefghi'
const SECRET = 'observability-test-result-url-secret-0123456789'

type Labels = Record<string, string>
interface Sample {
  name: string
  labels: Labels
  value: number
}

/** Parses the Prometheus text format (enough of it for our own metrics). */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`not a sample line: ${line}`)
    const labels: Labels = {}
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!
    out.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return out
}
/** The one sample called `name` whose labels include `labels`; undefined when none. */
function sample(samples: Sample[], name: string, labels: Labels = {}): number | undefined {
  const hits = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )
  if (hits.length > 1) {
    throw new Error(`${name} ${JSON.stringify(labels)} matches ${hits.length} samples`)
  }
  return hits[0]?.value
}
const scrape = async (url: string): Promise<Sample[]> => {
  const r = await fetch(url)
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseMetrics(await r.text())
}
const getJson = async (url: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const r = await fetch(url)
  return { status: r.status, body: (await r.json()) as Record<string, unknown> }
}
const until = async <T>(
  what: string,
  f: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs: number,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await f()
    if (ok(v)) return v
    if (Date.now() > deadline) {
      throw new Error(`${what}: not seen within ${timeoutMs} ms (last: ${JSON.stringify(v)})`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }

beforeAll(async () => {
  models = await snapshotModels()
  media = await createMediaFixtures()
})
afterAll(async () => {
  await media?.stop()
  await models?.remove()
})

describe('observability, embedded mode (one process, as `pnpm start` runs it)', () => {
  let tailor: ServiceProcess
  let dataDir: string
  let base: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tailor-obs-'))
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    tailor = startService('services/embedded/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      TAILOR_DATA_DIR: dataDir,
      TAILOR_API_KEY: API_KEY,
      TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
      MODELS_DIR: models.dir,
    })
    await tailor.waitFor('Tailor is running at')
  })
  afterAll(async () => {
    await tailor?.stop()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  it('/readyz reports the warmed-up models and the provider in use; /healthz stays liveness', async () => {
    const ready = await getJson(`${base}/readyz`)
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({
      status: 'ready',
      mode: 'embedded',
      job_store: true,
      models_loaded: true,
      warmed_up: true,
      provider: 'cpu',
    })
    expect((await getJson(`${base}/healthz`)).status).toBe(200)
  })

  it('after a real job, /metrics counts it on both sides, and every request and job log line carries its id', async () => {
    const api = apiClient(base, API_KEY)
    const submitted = await fetch(`${base}/v1/video/remove-background`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({
        video_url: `${media.baseUrl}/short_02.mp4`,
        output_format: 'mp4_h264',
      }),
    })
    expect(submitted.status).toBe(202)
    const requestId = submitted.headers.get('x-request-id')
    expect(requestId).toBeTruthy()
    const jobId = ((await submitted.json()) as { job_id: string }).job_id
    const done = await api.wait(jobId, JOB_TIMEOUT_MS)
    expect(done.status).toBe('completed')

    const m = await scrape(`${base}/metrics`)
    const rb = { kind: 'remove-background' }
    // Gateway side.
    expect(sample(m, 'tailor_jobs_submitted_total', rb)).toBe(1)
    expect(
      sample(m, 'tailor_jobs_finished_total', { ...rb, status: 'completed', error_code: '' }),
    ).toBe(1)
    expect(sample(m, 'tailor_job_duration_seconds_count', { ...rb, status: 'completed' })).toBe(1)
    expect(
      sample(m, 'tailor_job_duration_seconds_sum', { ...rb, status: 'completed' }),
    ).toBeGreaterThan(0)
    expect(sample(m, 'tailor_queue_depth')).toBe(0)
    expect(
      sample(m, 'tailor_http_requests_total', {
        method: 'POST',
        route: '/v1/video/remove-background',
        status: '202',
      }),
    ).toBe(1)
    expect(
      sample(m, 'tailor_http_requests_total', {
        method: 'GET',
        route: '/v1/video/remove-background/job/:id',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(1)
    expect(
      sample(m, 'tailor_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/video/remove-background',
        status: '202',
      }),
    ).toBe(1)
    // Inference side, in the same registry.
    expect(
      sample(m, 'tailor_inference_jobs_total', { ...rb, status: 'completed', error_code: '' }),
    ).toBe(1)
    expect(
      sample(m, 'tailor_inference_job_duration_seconds_count', { ...rb, status: 'completed' }),
    ).toBe(1)
    const frames = sample(m, 'tailor_video_frames_total') ?? 0
    expect(frames).toBeGreaterThan(10) // 1 s of video
    expect(sample(m, 'tailor_video_frames_per_second_count')).toBe(1)
    expect(sample(m, 'tailor_video_frames_per_second_sum')).toBeGreaterThan(0)
    // Every frame ran one model (rvm-rgb, rvm-rgba or their ratio-1 twins), plus the warm-up runs.
    const runs = ['rvm-rgb', 'rvm-rgba', 'rvm-ratio1-rgb', 'rvm-ratio1-rgba']
      .map((model) => sample(m, 'tailor_model_run_duration_seconds_count', { model }) ?? 0)
      .reduce((a, b) => a + b, 0)
    expect(runs).toBeGreaterThanOrEqual(frames)
    expect(sample(m, 'tailor_inference_execution_provider', { provider: 'cpu' })).toBe(1)
    expect(sample(m, 'tailor_inference_jobs_in_flight')).toBe(0)
    expect(sample(m, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)

    // Logs: pino JSON lines on stdout.
    const lines = tailor
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const requestLines = lines.filter((l) => l.msg === 'request completed')
    expect(requestLines.length).toBeGreaterThanOrEqual(3)
    for (const l of requestLines) expect(l.request_id, JSON.stringify(l)).toMatch(/.+/)
    expect(requestLines.find((l) => l.request_id === requestId)).toMatchObject({
      method: 'POST',
      route: '/v1/video/remove-background',
      status: 202,
    })
    // Every line about this job, on either side, names it in job_id (or is a request line with its request_id).
    const aboutJob = lines.filter((l) => JSON.stringify(l).includes(jobId))
    expect(aboutJob.length).toBeGreaterThanOrEqual(3)
    for (const l of aboutJob) {
      expect(l.job_id === jobId || typeof l.request_id === 'string', JSON.stringify(l)).toBe(true)
    }
    for (const msg of ['job started', 'job completed', 'job finished']) {
      expect(
        lines.find((l) => l.msg === msg && l.job_id === jobId),
        msg,
      ).toBeDefined()
    }
  })
})

describe('observability, distributed mode (real NATS; gateway and a worker in this process)', () => {
  let nats: NatsServer
  let gateway: Gateway | undefined
  let inference: Inference | undefined
  let workDir: string
  let healthPort: number
  const logs: Record<string, unknown>[] = []
  const logger = createLogger(
    'info',
    'tailor',
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n')) {
          if (l.startsWith('{')) logs.push(JSON.parse(l) as Record<string, unknown>)
        }
        cb()
      },
    }),
  )

  beforeAll(async () => {
    nats = await startNatsServer()
    workDir = await mkdtemp(join(tmpdir(), 'tailor-obs-work-'))
    healthPort = await freePort()
  })
  afterAll(async () => {
    await inference?.stop()
    await gateway?.stop()
    await nats?.stop()
    if (workDir) await rm(workDir, { recursive: true, force: true })
  })

  it('queue depth, readiness and job metrics follow NATS, the queue and the worker', async () => {
    gateway = await startGateway(
      loadGatewayConfig({
        NATS_URL: nats.url,
        JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        GRPC_PORT: '0',
        API_GRPC_PORT: '0',
        TAILOR_API_KEY: API_KEY,
        RESULT_URL_SECRET: SECRET,
      }),
      { logger },
    )
    const gw = `http://127.0.0.1:${gateway.port}`
    expect((await getJson(`${gw}/readyz`)).body).toMatchObject({
      status: 'ready',
      mode: 'distributed',
      nats_connected: true,
      job_store: true,
    })

    // A job no worker has taken yet waits in the stream; its input is refused (loopback) once one does.
    const api = apiClient(gw, API_KEY)
    const jobId = await api.start({ video_url: `http://127.0.0.1:${await freePort()}/clip.mp4` })
    expect(sample(await scrape(`${gw}/metrics`), 'tailor_queue_depth')).toBe(1)

    inference = await startInference(
      loadInferenceConfig({
        NATS_URL: nats.url,
        JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
        GATEWAY_GRPC_ADDR: `127.0.0.1:${gateway.grpcPort}`,
        HEALTH_PORT: String(healthPort),
        HEALTH_HOST: '127.0.0.1',
        MODELS_DIR: models.dir,
        TAILOR_WORK_DIR: workDir,
        TAILOR_FETCH_ALLOW_LOOPBACK: 'false',
      }),
      { logger },
    )
    const health = `http://127.0.0.1:${healthPort}`
    expect((await getJson(`${health}/readyz`)).body).toMatchObject({
      status: 'ready',
      provider: 'cpu',
      models_loaded: true,
      warmed_up: true,
      nats_connected: true,
    })
    expect((await getJson(`${health}/healthz`)).status).toBe(200)
    expect((await getJson(`${health}/nope`)).status).toBe(404)

    const failed = await api.wait(jobId, JOB_TIMEOUT_MS)
    expect(failed.error?.error_code).toBe('input_fetch_failed')
    const g = await scrape(`${gw}/metrics`)
    expect(sample(g, 'tailor_queue_depth')).toBe(0)
    expect(sample(g, 'tailor_jobs_submitted_total', { kind: 'remove-background' })).toBe(1)
    expect(
      sample(g, 'tailor_jobs_finished_total', {
        kind: 'remove-background',
        status: 'failed',
        error_code: 'input_fetch_failed',
      }),
    ).toBe(1)
    const w = await scrape(`${health}/metrics`)
    expect(
      sample(w, 'tailor_inference_jobs_total', {
        kind: 'remove-background',
        status: 'failed',
        error_code: 'input_fetch_failed',
      }),
    ).toBe(1)
    expect(
      sample(w, 'tailor_model_run_duration_seconds_count', { model: 'rvm-rgb' }),
    ).toBeGreaterThan(0) // the warm-up runs
    expect(sample(w, 'tailor_inference_execution_provider', { provider: 'cpu' })).toBe(1)
    expect(sample(w, 'tailor_jobs_submitted_total')).toBeUndefined() // each process serves its own
    for (const l of logs.filter((x) => JSON.stringify(x).includes(jobId))) {
      expect(l.job_id === jobId || typeof l.request_id === 'string', JSON.stringify(l)).toBe(true)
    }

    // NATS goes away: both turn unready (liveness unaffected), and ready again once it is back.
    const restarted = nats.restart({ downMs: NATS_DOWN_MS })
    // Unready because NATS is gone: the job store's probe can fail a moment before the client has
    // noticed the disconnect (a first 503 with nats_connected still true), so wait for the state
    // the outage settles in rather than the first 503.
    const notReady = (r: { status: number; body: Record<string, unknown> }): boolean =>
      r.status === 503 && r.body['nats_connected'] === false
    const gDown = await until(
      'gateway unready',
      () => getJson(`${gw}/readyz`),
      notReady,
      PROBE_CHANGE_TIMEOUT_MS,
    )
    expect(gDown.body).toMatchObject({ status: 'unavailable', nats_connected: false })
    const wDown = await until(
      'worker unready',
      () => getJson(`${health}/readyz`),
      notReady,
      PROBE_CHANGE_TIMEOUT_MS,
    )
    expect(wDown.body).toMatchObject({ status: 'unavailable', nats_connected: false })
    expect((await getJson(`${health}/healthz`)).status).toBe(200)
    expect((await getJson(`${gw}/healthz`)).status).toBe(200)
    await restarted
    const isReady = (r: { status: number }): boolean => r.status === 200
    await until(
      'gateway ready again',
      () => getJson(`${gw}/readyz`),
      isReady,
      PROBE_CHANGE_TIMEOUT_MS,
    )
    await until(
      'worker ready again',
      () => getJson(`${health}/readyz`),
      isReady,
      PROBE_CHANGE_TIMEOUT_MS,
    )
  })
})
