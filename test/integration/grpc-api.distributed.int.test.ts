/**
 * The internal gRPC API in the distributed mode: two gateway replicas on one NATS (our own
 * nats-server), one inference worker reporting to replica A. A real @grpc/grpc-js client on
 * replica B submits a video job and follows it with WatchJob from pending to completed: B learns
 * of every change through the KV watch of the job record, never from the worker directly.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { status as grpcStatus } from '@grpc/grpc-js'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TailorApiClient } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'
import {
  describeError,
  keyMetadata,
  openGrpcApiClient,
  rejection,
  unary,
  watchAll,
  type WireJob,
} from '../helpers/grpc-api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'grpc-api-test-key-distributed-ab'
const SECRET = 'grpc-distributed-test-secret-0123456789abcdef'
/** How long the gateway may take to drop a watcher after its client cancelled the call. */
const WATCHER_GONE_MS = 5_000

let nats: NatsServer
let nc: NatsConnection
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gatewayA: ServiceProcess
let gatewayB: ServiceProcess
let inference: ServiceProcess
let clientA: TailorApiClient
let clientB: TailorApiClient

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-grpc-'))
  const [portA, portB, grpcPortA, grpcPortB, apiA, apiB] = await Promise.all(
    Array.from({ length: 6 }, () => freePort()),
  )
  // Submissions and WatchJob streams both take from the key's rate budget: above what these tests send back to back.
  const gatewayEnv = {
    HOST: '127.0.0.1',
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: SECRET,
    DEFAULT_RATE_LIMIT_PER_S: '50',
  }
  gatewayA = startService('services/gateway/src/main.ts', {
    ...gatewayEnv,
    PORT: String(portA),
    GRPC_PORT: String(grpcPortA),
    API_GRPC_PORT: String(apiA),
  })
  gatewayB = startService('services/gateway/src/main.ts', {
    ...gatewayEnv,
    PORT: String(portB),
    GRPC_PORT: String(grpcPortB),
    API_GRPC_PORT: String(apiB),
  })
  await Promise.all([gatewayA.waitFor('gateway listening'), gatewayB.waitFor('gateway listening')])
  inference = startService('services/inference/src/main.ts', {
    NATS_URL: nats.url,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPortA}`,
    TAILOR_WORK_DIR: workDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    // Every frame's progress is reported: the watched job streams progress steps however fast it runs.
    PROGRESS_INTERVAL_MS: '0',
  })
  await inference.waitFor('inference consuming jobs')
  clientA = await openGrpcApiClient(`127.0.0.1:${apiA}`)
  clientB = await openGrpcApiClient(`127.0.0.1:${apiB}`)
})

afterAll(async () => {
  clientA?.close()
  clientB?.close()
  await inference?.stop()
  await gatewayA?.stop()
  await gatewayB?.stop()
  await nc?.close()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

const video = (f: string) => `${media.baseUrl}/${f}`

describe('gRPC API (distributed mode, two gateway replicas)', () => {
  it('WatchJob on the replica without the worker follows a 1-second video job from pending to completed', async () => {
    // A job ahead of it keeps the worker (CONCURRENCY 1) busy, so the watched job starts pending.
    const blocker = await unary(
      clientA,
      'RemoveVideoBackground',
      { videoUrl: video('short_02.mp4') },
      API_KEY,
    )
    const { jobId } = await unary(
      clientB,
      'RemoveVideoBackground',
      { videoUrl: video('short_01.mp4'), outputFormat: 'mp4_h264' },
      API_KEY,
    )
    const { jobs, status } = await watchAll(clientB, jobId, API_KEY)
    expect(status.code).toBe(grpcStatus.OK)
    const statuses = jobs.map((j) => j.status)
    expect(statuses[0]).toBe('JOB_STATUS_PENDING')
    expect(statuses).toContain('JOB_STATUS_RUNNING')
    expect(statuses.at(-1)).toBe('JOB_STATUS_COMPLETED')
    expect(statuses.filter((s) => s === 'JOB_STATUS_COMPLETED')).toHaveLength(1)
    const progress = jobs.map((j) => j.progress)
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]!)
    }
    expect(progress.filter((p) => p > 0 && p < 1).length).toBeGreaterThanOrEqual(2)
    const last = jobs.at(-1)!
    expect(last).toMatchObject({
      jobId,
      kind: 'JOB_KIND_REMOVE_BACKGROUND',
      progress: 1,
      error: null,
    })
    const r = await fetch(last.resultUrl!)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('video/mp4')
    // Either replica answers GetJob from the shared records.
    expect(await unary(clientA, 'GetJob', { jobId }, API_KEY)).toMatchObject({
      jobId,
      status: 'JOB_STATUS_COMPLETED',
    })
    const blockerDone = await watchAll(clientA, blocker.jobId, API_KEY)
    expect(blockerDone.jobs.at(-1)).toMatchObject({ status: 'JOB_STATUS_COMPLETED' })
  })

  it('CancelJob through one replica ends a watch on the other; FAILED_PRECONDITION once finished', async () => {
    const blocker = await unary(
      clientA,
      'RemoveVideoBackground',
      { videoUrl: video('medium_01.mp4') },
      API_KEY,
    )
    const { jobId } = await unary(
      clientA,
      'RemoveVideoBackground',
      { videoUrl: video('short_02.mp4') },
      API_KEY,
    )
    const watched = watchAll(clientB, jobId, API_KEY)
    expect(await unary(clientA, 'CancelJob', { jobId }, API_KEY)).toEqual({
      message: `Job ${jobId} was cancelled.`,
    })
    const { jobs, status } = await watched
    expect(status.code).toBe(grpcStatus.OK)
    expect(jobs.at(-1)).toMatchObject({
      status: 'JOB_STATUS_FAILED',
      error: { errorCode: 'job_cancelled' },
    })
    const err = await rejection(unary(clientB, 'CancelJob', { jobId }, API_KEY))
    expect(describeError(err)).toMatchObject({
      code: grpcStatus.FAILED_PRECONDITION,
      errorCode: 'job_finished',
      reason: 'job_finished',
      domain: 'tailor',
    })
    await unary(clientA, 'CancelJob', { jobId: blocker.jobId }, API_KEY)
  })

  it('a client that cancels its WatchJob call leaves no watcher (KV consumer) behind on the gateway', async () => {
    const jsm = await jetstreamManager(nc)
    const watchers = async (): Promise<number> =>
      (await jsm.streams.info('KV_jobs')).state.consumer_count
    const blocker = await unary(
      clientA,
      'RemoveVideoBackground',
      { videoUrl: video('medium_01.mp4') },
      API_KEY,
    )
    const { jobId } = await unary(
      clientA,
      'RemoveVideoBackground',
      { videoUrl: video('short_02.mp4') },
      API_KEY,
    )
    const before = await watchers()
    const call = clientB.WatchJob({ jobId }, keyMetadata(API_KEY))
    const ended = new Promise<number>((resolve) =>
      call.on('status', (st: { code: number }) => resolve(st.code)),
    )
    call.on('error', () => undefined)
    const first = await new Promise<WireJob>((resolve) => call.once('data', resolve))
    expect(first).toMatchObject({ jobId, status: 'JOB_STATUS_PENDING' })
    // The first message is the record read before the watch opens its consumer: wait for it.
    const opened = Date.now() + WATCHER_GONE_MS
    while ((await watchers()) < before + 1 && Date.now() < opened) {
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(await watchers()).toBe(before + 1)
    call.cancel()
    expect(await ended).toBe(grpcStatus.CANCELLED)
    const deadline = Date.now() + WATCHER_GONE_MS
    while ((await watchers()) > before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(await watchers()).toBe(before)
    for (const id of [jobId, blocker.jobId]) {
      await unary(clientA, 'CancelJob', { jobId: id }, API_KEY)
    }
  })

  it('keys and validation as in the embedded mode', async () => {
    const bad = await rejection(
      unary(clientB, 'GetJob', { jobId: 'ffff0000-0000-7000-8000-000000000000' }, 'wrong-key'),
    )
    expect(describeError(bad)).toMatchObject({
      code: grpcStatus.UNAUTHENTICATED,
      errorCode: 'invalid_auth_token',
      reason: 'invalid_auth_token',
    })
    const invalid = await rejection(
      unary(
        clientB,
        'RemoveVideoBackground',
        { videoUrl: video('short_01.mp4'), backgroundColor: 'red' },
        API_KEY,
      ),
    )
    expect(describeError(invalid)).toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      errorCode: 'invalid_parameter',
      details: expect.stringContaining('background_color'),
    })
  })
})
