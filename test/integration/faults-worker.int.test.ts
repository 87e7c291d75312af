/**
 * Worker faults with real processes (nats-server, gateway, inference, ffmpeg): a hung ffmpeg, a
 * job that kills its worker on every delivery, SIGTERM with jobs in flight, and leftovers of a
 * killed worker. The SIGKILL-mid-video and gateway-restart cases live in distributed.int.test.ts.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { deadWorkerDir, workLeft as jobDirsLeft } from '../helpers/work-dir.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import {
  freePort,
  jobsQueueState,
  startNatsServer,
  type NatsServer,
} from '../helpers/nats-server.ts'
import { childProcesses, startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-faults-abcd'
const JOB_TIMEOUT_MS = 120_000
/** Short limits via config so each fault resolves in seconds. */
const ACK_WAIT_MS = 1_000
const MAX_DELIVER = 2
/** Above any normal job of this file on a loaded CPU (1 s clips), so only the hung one reaches it. */
const VIDEO_JOB_TIMEOUT_S = 20
const SHORT_SHUTDOWN_TIMEOUT_MS = 200
/** Generous bounds for a loaded 2-core machine. */
const TIMEOUT_SLACK_MS = 10_000
const EXIT_BOUND_MS = SHORT_SHUTDOWN_TIMEOUT_MS + 15_000

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
const timings: Record<string, number> = {}

/** Starts the worker (stopping a running one first: one worker at a time in this file). */
const startInference = async (extra: Record<string, string> = {}): Promise<void> => {
  await inference?.stop()
  inference = startService('services/inference/src/main.ts', { ...inferenceEnv, ...extra })
  await inference.waitFor('inference consuming jobs')
}
const workLeft = async (): Promise<string[]> => jobDirsLeft(workDir)
const ffmpegChildren = async (): Promise<number[]> =>
  (await childProcesses(inference.proc.pid!))
    .filter((p) => p.comm === 'ffmpeg' || p.comm === 'ffprobe')
    .map((p) => p.pid)
/** Waits until the worker runs `n` ffmpeg processes (a video job's decoder and encoder). */
async function waitForFfmpeg(n: number, timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ff = (await childProcesses(inference.proc.pid!))
      .filter((p) => p.comm === 'ffmpeg')
      .map((p) => p.pid)
    if (ff.length >= n) return ff
    if (Date.now() > deadline) {
      throw new Error(`${n} ffmpeg processes not seen within ${timeoutMs} ms`)
    }
    await new Promise((r) => setTimeout(r, 20))
  }
}
const video = (file: string, format = 'mp4_h264'): Record<string, string> => ({
  video_url: `${media.baseUrl}/${file}`,
  output_format: format,
})

/** The stored result objects whose name mentions `id` (exactly one after any fault). */
async function storedResults(id: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc)
  const objects = await jsm.streams.info('OBJ_results', { subjects_filter: '$O.results.M.>' })
  return Object.keys(objects.state.subjects ?? {})
    .map((k) => Buffer.from(k.slice('$O.results.M.'.length), 'base64url').toString())
    .filter((n) => n.includes(id))
}
/** Log lines of the current worker about job `id` on delivery `attempt` (pino JSON, any field order). */
const linesOf = (id: string, attempt: number, msg?: string): string[] =>
  inference
    .output()
    .split('\n')
    .filter(
      (l) =>
        l.includes(id) &&
        l.includes(`"attempt":${attempt},`) &&
        (msg === undefined || l.includes(`"msg":"${msg}"`)),
    )
async function waitForAttempt(id: string, attempt: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (linesOf(id, attempt).length === 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `delivery ${attempt} of ${id} not seen within ${timeoutMs} ms\n${inference.output().slice(-3000)}`,
      )
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}
async function queueDrained(): Promise<void> {
  const q = await jobsQueueState(nc)
  expect(q.ackPending, q.detail).toBe(0)
  expect(q.messages, q.detail).toBe(0)
}

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-faults-'))
  const [port, grpcPort] = [await freePort(), await freePort()]
  gatewayEnv = {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'faults-test-secret-0123456789abcdefgh',
  }
  inferenceEnv = {
    NATS_URL: nats.url,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    ACK_WAIT_MS: String(ACK_WAIT_MS),
    MAX_DELIVER: String(MAX_DELIVER),
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    VIDEO_JOB_TIMEOUT_S: String(VIDEO_JOB_TIMEOUT_S),
    SHUTDOWN_TIMEOUT_MS: '60000',
  }
  gateway = startService('services/gateway/src/main.ts', gatewayEnv)
  await gateway.waitFor('gateway listening')
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
})

afterAll(async () => {
  await inference?.stop('SIGKILL')
  await gateway?.stop()
  await nc?.close()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
  console.info(`fault timings (ms): ${JSON.stringify(timings)}`)
})

describe('worker faults (real processes)', () => {
  it("start-up sweeps the work dir: a dead predecessor's files are gone", async () => {
    const dead = deadWorkerDir(workDir) // w-<host>-<a pid no longer running>-…
    await mkdir(join(dead, '0190c0de-dead-7000-8000-000000000000-abc123'), { recursive: true })
    await writeFile(
      join(dead, '0190c0de-dead-7000-8000-000000000000-abc123', 'input'),
      'stale download',
    )
    await writeFile(join(dead, 'stray.partial'), 'stale')
    await startInference()
    expect(await workLeft()).toEqual([])
    expect((await readdir(workDir)).filter((n) => join(workDir, n) === dead)).toEqual([])
  })

  it("a hung ffmpeg → request_timeout after the kind's limit, every ffmpeg killed, no temp files, next job runs", async () => {
    const id = await api.start(video('medium_01.mp4'))
    const hung = await waitForFfmpeg(2, JOB_TIMEOUT_MS) // the decoder and the encoder
    for (const pid of hung) process.kill(pid, 'SIGSTOP')
    await expect
      .poll(async () =>
        (await childProcesses(inference.proc.pid!))
          .filter((p) => hung.includes(p.pid))
          .map((p) => p.state)
          .join(''),
      )
      .toBe('TT')
    const t0 = Date.now()
    const s = await api.wait(id, VIDEO_JOB_TIMEOUT_S * 1000 + TIMEOUT_SLACK_MS)
    timings.hungFfmpegToFailedMs = Date.now() - t0
    expect(s).toMatchObject({
      status: 'failed',
      result_url: null,
      error: { error_code: 'request_timeout', message: expect.stringMatching(/longer than 20 s/) },
    })
    await inference.waitFor('"msg":"job failed"', 10_000)
    expect(await ffmpegChildren()).toEqual([])
    for (const pid of hung) expect(() => process.kill(pid, 0)).toThrow() // gone, not merely detached
    expect(await workLeft()).toEqual([])
    expect(await storedResults(id)).toEqual([])
    // The worker is free again.
    const next = await api.wait(await api.start(video('short_02.mp4')), JOB_TIMEOUT_MS)
    expect(next).toMatchObject({ status: 'completed' })
    await queueDrained() // the timed-out job was terminated, not delivered again
    expect(linesOf(id, 2)).toEqual([])
  })

  it(`a job that kills its worker on every delivery → failed worker_crashed after MAX_DELIVER (${MAX_DELIVER}), not a loop; the next job completes`, async () => {
    const id = await api.start(video('medium_01.mp4'))
    const t0 = Date.now()
    for (let attempt = 1; attempt <= MAX_DELIVER; attempt++) {
      await waitForAttempt(id, attempt, JOB_TIMEOUT_MS)
      await inference.stop('SIGKILL') // the "crash"
      await startInference()
    }
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    timings.poisonToFailedMs = Date.now() - t0
    expect(s).toMatchObject({
      status: 'failed',
      result_url: null,
      error: { error_code: 'worker_crashed', message: expect.stringMatching(/delivered 2 times/) },
    })
    // Delivery MAX_DELIVER + 1 recorded the failure without running the job, and terminated the message.
    expect(linesOf(id, MAX_DELIVER + 1, 'job gave up after too many deliveries')).toHaveLength(1)
    expect(linesOf(id, MAX_DELIVER + 1, 'job started')).toEqual([])
    expect(await storedResults(id)).toEqual([])
    const next = await api.wait(await api.start(video('short_02.mp4')), JOB_TIMEOUT_MS)
    expect(next).toMatchObject({ status: 'completed' })
    expect(await workLeft()).toEqual([])
    await queueDrained()
  })

  it('SIGTERM with a job in flight and time to finish it: the job completes on this worker, then the process exits', async () => {
    const id = await api.start(video('short_01.mp4'))
    await api.waitUntil(id, (s) => s.status === 'running', JOB_TIMEOUT_MS)
    const t0 = Date.now()
    await inference.stop('SIGTERM')
    timings.sigtermFinishExitMs = Date.now() - t0
    expect(inference.proc.exitCode).toBe(0)
    expect(await api.status(id)).toMatchObject({ status: 'completed' })
    expect(inference.output()).toContain('"msg":"job completed"')
    expect(inference.output()).toContain('"msg":"inference stopped"')
    expect(await storedResults(id)).toHaveLength(1)
    await queueDrained()
  })

  it('SIGTERM with a job in flight past SHUTDOWN_TIMEOUT_MS: handed back (nak) within SHUTDOWN_TIMEOUT_MS, the process exits within a bound, another worker completes it once', async () => {
    await startInference({ SHUTDOWN_TIMEOUT_MS: String(SHORT_SHUTDOWN_TIMEOUT_MS) })
    const id = await api.start(video('short_01.mp4'))
    const running = await waitForFfmpeg(2, JOB_TIMEOUT_MS)
    const t0 = Date.now()
    await inference.stop('SIGTERM')
    timings.sigtermHandBackExitMs = Date.now() - t0
    expect(inference.proc.exitCode).toBe(0)
    expect(timings.sigtermHandBackExitMs).toBeLessThan(EXIT_BOUND_MS)
    expect(inference.output()).toContain('job interrupted by shutdown; released for redelivery')
    for (const pid of running) expect(() => process.kill(pid, 0)).toThrow() // killed, not orphaned
    expect(await api.status(id)).toMatchObject({ status: 'running' }) // not failed: handed back
    expect(await workLeft()).toEqual([])
    await startInference()
    const t1 = Date.now()
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    timings.handedBackCompletedMs = Date.now() - t1
    expect(s).toMatchObject({ status: 'completed', progress: 1 })
    // The worker logs 'job completed' after the record says completed and the message is acked
    // (consume-jobs.ts), so the line can come a moment after api.wait returns: wait for it.
    await inference.waitFor('"msg":"job completed"', 10_000)
    // Completed once, by the new worker, on a later delivery (2, or 3 when the stopping worker's
    // last pull caught the handed-back message and handed it back again).
    const done = inference
      .output()
      .split('\n')
      .filter((l) => l.includes(id) && l.includes('"msg":"job completed"'))
    expect(done).toHaveLength(1)
    expect(done[0]).not.toContain('"attempt":1,')
    expect(await storedResults(id)).toEqual([`remove-background/${id}.mp4`])
    await queueDrained()
  })
})
