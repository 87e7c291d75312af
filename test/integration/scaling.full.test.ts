/**
 * Scaling on a real nats-server with three real worker processes (CONCURRENCY 1): with a backlog
 * all three are busy at once, none ever holds a second job while it runs one, and the lane's
 * max_ack_pending comes from config (JOBS_MAX_ACK_PENDING), not from each worker's concurrency.
 * Also: the pre-lanes consumer `inference` over `jobs.>` is replaced by the per-kind lanes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AckPolicy,
  jetstreamManager,
  RetentionPolicy,
  type JetStreamManager,
} from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-scaling-0123456789'
const WORKERS = 3
const JOBS = 6
const MAX_ACK_PENDING = 8
const JOB_TIMEOUT_MS = 600_000
const VIDEO_LANE = 'inference-remove-background'

let nats: NatsServer
let nc: NatsConnection
let jsm: JetStreamManager
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
const workDirs: string[] = []
let gateway: ServiceProcess
const workers: ServiceProcess[] = []
let api: ApiClient

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  jsm = await jetstreamManager(nc)
  media = await createMediaFixtures()
  // What an older release left: one consumer over every kind (a work-queue stream refuses lanes beside it).
  await jsm.streams.add({
    name: 'JOBS',
    subjects: ['jobs.>'],
    retention: RetentionPolicy.Workqueue,
    duplicate_window: 120_000_000_000,
  })
  await jsm.consumers.add('JOBS', {
    durable_name: 'inference',
    ack_policy: AckPolicy.Explicit,
    filter_subject: 'jobs.>',
    max_ack_pending: 4,
  })
  const [port, grpcPort] = [await freePort(), await freePort()]
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'scaling-test-secret-0123456789abcdefgh',
    DEFAULT_MAX_CONCURRENT_JOBS: '20',
  })
  await gateway.waitFor('gateway listening')
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
  for (let i = 0; i < WORKERS; i++) {
    const workDir = await mkdtemp(join(tmpdir(), `tailor-work-scaling-${i}-`))
    workDirs.push(workDir)
    workers.push(
      startService('services/inference/src/main.ts', {
        NATS_URL: nats.url,
        GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
        WORKER_ID: `worker-${i}`,
        TAILOR_WORK_DIR: workDir,
        TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
        ORT_EP: 'cpu',
        ORT_INTRA_OP_THREADS: '1',
        MODELS_DIR: models.dir,
        CONCURRENCY: '1',
        JOB_KINDS: 'remove-background',
        JOBS_MAX_ACK_PENDING: String(MAX_ACK_PENDING),
      }),
    )
  }
  await Promise.all(workers.map((w) => w.waitFor('inference consuming jobs')))
}, 300_000)

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()))
  await gateway?.stop()
  await nc?.close()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  for (const d of workDirs) await rm(d, { recursive: true, force: true })
})

/** A worker's job log in order: `+id` when it started a job, `-id` when that job ended. */
const jobLog = (w: ServiceProcess): string[] =>
  w
    .output()
    .split('\n')
    .flatMap((l) => {
      const m = /"job_id":"([^"]+)".*"msg":"job (started|completed|failed)"/.exec(l)
      return m === null ? [] : [`${m[2] === 'started' ? '+' : '-'}${m[1]}`]
    })

describe(`${WORKERS} workers, CONCURRENCY 1, one lane`, () => {
  it('the lanes replace the pre-lanes consumer; max_ack_pending is the configured value', async () => {
    const names: string[] = []
    for await (const c of jsm.consumers.list('JOBS')) names.push(c.name)
    expect(names).toEqual([VIDEO_LANE]) // `inference` deleted; no try-on lane (no worker runs try-on)
    const lane = await jsm.consumers.info('JOBS', VIDEO_LANE)
    expect(lane.config).toMatchObject({
      filter_subject: 'jobs.remove-background.*',
      max_ack_pending: MAX_ACK_PENDING,
    })
    expect(
      workers.filter((w) => w.output().includes('deleted the pre-lanes consumer')).length,
    ).toBeGreaterThanOrEqual(1)
  })

  it(
    `with a backlog all ${WORKERS} are busy at once, and none takes a second job while it has one`,
    async () => {
      const ids: string[] = []
      for (let i = 0; i < JOBS; i++) {
        ids.push(
          await api.start({
            video_url: `${media.baseUrl}/${i % 2 === 0 ? 'short_01.mp4' : 'short_02.mp4'}`,
            output_format: 'mp4_h264',
          }),
        )
      }
      // Sample the lane while the jobs run: running (ack pending) and waiting (pending) jobs.
      const samples: { ackPending: number; pending: number }[] = []
      const finished = Promise.all(ids.map((id) => api.wait(id, JOB_TIMEOUT_MS)))
      let done = false
      void finished.finally(() => (done = true))
      while (!done) {
        const c = await jsm.consumers.info('JOBS', VIDEO_LANE)
        samples.push({ ackPending: c.num_ack_pending, pending: c.num_pending })
        await new Promise((r) => setTimeout(r, 100))
      }
      const statuses = await finished
      for (const s of statuses) expect(s.status).toBe('completed')
      // All three busy while jobs were still waiting: the cluster-wide ceiling is not the bottleneck.
      expect(
        samples.some((s) => s.ackPending === WORKERS && s.pending > 0),
        JSON.stringify(samples.slice(0, 40)),
      ).toBe(true)
      // Never more jobs handed out than workers: nobody held a job it was not running.
      expect(Math.max(...samples.map((s) => s.ackPending))).toBe(WORKERS)
      // Each worker's own log alternates start / end: never a second job while one runs.
      const perWorker = workers.map(jobLog)
      for (const [i, log] of perWorker.entries()) {
        expect(log.length, `worker-${i} ran no job`).toBeGreaterThanOrEqual(2)
        log.forEach((e, k) =>
          expect(e[0], `worker-${i}: ${log.join(' ')}`).toBe(k % 2 === 0 ? '+' : '-'),
        )
        for (let k = 0; k < log.length; k += 2) expect(log[k + 1]).toBe(`-${log[k]!.slice(1)}`)
      }
      // Every job ran exactly once, somewhere.
      expect(
        perWorker
          .flat()
          .filter((e) => e.startsWith('+'))
          .map((e) => e.slice(1))
          .sort(),
      ).toEqual([...ids].sort())
      const lane = await jsm.consumers.info('JOBS', VIDEO_LANE)
      expect({
        ackPending: lane.num_ack_pending,
        pending: lane.num_pending,
        maxAckPending: lane.config.max_ack_pending,
      }).toEqual({ ackPending: 0, pending: 0, maxAckPending: MAX_ACK_PENDING })
    },
    JOB_TIMEOUT_MS,
  )
})
