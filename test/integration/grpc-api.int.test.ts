/**
 * The internal gRPC API (tailor.v1.TailorApi) in the embedded mode, through a real @grpc/grpc-js
 * client: try-on on real photos, a video job followed by WatchJob from pending to completed,
 * GetJob, CancelJob, API keys, and validation errors with the same codes and sentences as HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { status as grpcStatus } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TailorApiClient } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'
import {
  decodeDetails,
  describeError,
  openGrpcApiClient,
  rejection,
  unary,
  watchAll,
  type WireJob,
} from '../helpers/grpc-api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const ENTRY = 'services/embedded/src/main.ts'
const MODELS = SERVICE_MODELS
const API_KEY = 'grpc-api-test-key-embedded-abcde'
/** A second key: it must not see the first key's jobs; its request budget is spent in the rate test. */
const OTHER_KEY = 'grpc-api-test-key-embedded-other'
/** Each key's request budget (submissions per second): above what the tests send, below the burst. */
const RATE_LIMIT_PER_S = 20
const BURST = 100
const JOB_TIMEOUT_MS = 120_000

let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let dataDir: string
let tailor: ServiceProcess
let client: TailorApiClient
let httpBase: string

beforeAll(async () => {
  models = await snapshotModels(MODELS)
  media = await createMediaFixtures()
  dataDir = await mkdtemp(join(tmpdir(), 'tailor-data-grpc-'))
  const [port, apiGrpcPort] = [await freePort(), await freePort()]
  tailor = startService(ENTRY, {
    PORT: String(port),
    API_GRPC_PORT: String(apiGrpcPort),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: dataDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    MODELS_DIR: models.dir,
    TAILOR_API_KEY: API_KEY,
    API_KEYS: OTHER_KEY,
    TRYON_WAIT_TIMEOUT_MS: '90000',
    DEFAULT_RATE_LIMIT_PER_S: String(RATE_LIMIT_PER_S),
    // Every frame's progress is reported, so the watched 1-second job streams progress steps
    // however fast this machine runs it (at the default 500 ms a quick run has only one).
    PROGRESS_INTERVAL_MS: '0',
  })
  await tailor.waitFor('Tailor is running at')
  httpBase = `http://127.0.0.1:${port}`
  client = await openGrpcApiClient(`127.0.0.1:${apiGrpcPort}`)
})

afterAll(async () => {
  client?.close()
  await tailor?.stop()
  await media?.stop()
  await models?.remove()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

const video = (f: string) => `${media.baseUrl}/${f}`
const shared = (f: string) => `${media.baseUrl}/shared/${f}`
const getJob = (jobId: string, key: string | null = API_KEY) =>
  unary(client, 'GetJob', { jobId }, key)
const removeBg = (
  req: { videoUrl?: string; backgroundColor?: string; outputFormat?: string },
  key: string | null = API_KEY,
) => unary(client, 'RemoveVideoBackground', req, key)

/** Waits for a job to end by polling GetJob. */
async function settle(jobId: string): Promise<WireJob> {
  const deadline = Date.now() + JOB_TIMEOUT_MS
  for (;;) {
    const j = await getJob(jobId)
    if (j.status === 'JOB_STATUS_COMPLETED' || j.status === 'JOB_STATUS_FAILED') return j
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${j.status}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('gRPC API (embedded mode)', () => {
  it('TryOn on real photos waits for the result (wait_for_result defaults to true) and answers a signed result_url', async () => {
    const res = await unary(
      client,
      'TryOn',
      { personImageUrl: shared('person_01.jpg'), garmentImageUrl: shared('garment_upper_01.jpg') },
      API_KEY,
    )
    expect(res.jobId).toMatch(/^[0-9a-f-]{36}$/)
    expect(res.resultUrl).toMatch(
      new RegExp(`^${httpBase}/results/try-on/${res.jobId}\\.jpg\\?expires=\\d+&sig=`),
    )
    const r = await fetch(res.resultUrl!)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/jpeg')
    expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(10_000)
    const job = await getJob(res.jobId)
    expect(job).toMatchObject({
      jobId: res.jobId,
      kind: 'JOB_KIND_TRY_ON',
      status: 'JOB_STATUS_COMPLETED',
      progress: 1,
      attempt: 1,
      error: null,
    })
  })

  it('TryOn with wait_for_result false answers the job id at once, the job still to run', async () => {
    const res = await unary(
      client,
      'TryOn',
      {
        personImageUrl: shared('person_02.jpg'),
        garmentImageUrl: shared('garment_lower_01.jpg'),
        waitForResult: false,
      },
      API_KEY,
    )
    expect(res.resultUrl).toBeUndefined()
    const now = await getJob(res.jobId)
    expect(now).toMatchObject({ jobId: res.jobId, kind: 'JOB_KIND_TRY_ON', error: null })
    expect(['JOB_STATUS_PENDING', 'JOB_STATUS_RUNNING']).toContain(now.status)
    await unary(client, 'CancelJob', { jobId: res.jobId }, API_KEY) // (the try-on itself ran in the test above)
    expect(await getJob(res.jobId)).toMatchObject({
      status: 'JOB_STATUS_FAILED',
      error: { errorCode: 'job_cancelled' },
    })
  })

  it('WatchJob follows a 1-second video job from pending through running and progress to completed, then ends', async () => {
    // Another job first: the worker (CONCURRENCY 1) is busy with it for seconds, so the watched job
    // is still queued (pending) when the watch starts a few milliseconds later.
    const blocker = await removeBg({ videoUrl: video('short_02.mp4') })
    const { jobId } = await removeBg({
      videoUrl: video('short_01.mp4'),
      outputFormat: 'mp4_h264',
      backgroundColor: '#00ff00',
    })
    const { jobs, status } = await watchAll(client, jobId, API_KEY)
    expect(status.code).toBe(grpcStatus.OK)
    const statuses = jobs.map((j) => j.status)
    expect(statuses[0]).toBe('JOB_STATUS_PENDING')
    expect(statuses.at(-1)).toBe('JOB_STATUS_COMPLETED')
    expect(statuses).toContain('JOB_STATUS_RUNNING')
    // Order: pending…, then running…, then completed once; progress never goes back.
    const firstRunning = statuses.indexOf('JOB_STATUS_RUNNING')
    expect(statuses.slice(0, firstRunning).every((s) => s === 'JOB_STATUS_PENDING')).toBe(true)
    expect(statuses.slice(firstRunning, -1).every((s) => s === 'JOB_STATUS_RUNNING')).toBe(true)
    const progress = jobs.map((j) => j.progress)
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]!)
    }
    expect(progress.filter((p) => p > 0 && p < 1).length).toBeGreaterThanOrEqual(2) // progress steps streamed
    const last = jobs.at(-1)!
    expect(last).toMatchObject({
      jobId,
      kind: 'JOB_KIND_REMOVE_BACKGROUND',
      progress: 1,
      attempt: 1,
      error: null,
    })
    expect(last.resultUrl).toMatch(/\/results\/remove-background\/.+\.mp4\?expires=/)
    const r = await fetch(last.resultUrl!)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('video/mp4')
    // Watching a finished job: its final state, then the end.
    const again = await watchAll(client, jobId, API_KEY)
    expect(again.status.code).toBe(grpcStatus.OK)
    expect(again.jobs.map((j) => j.status)).toEqual(['JOB_STATUS_COMPLETED'])
    expect((await settle(blocker.jobId)).status).toBe('JOB_STATUS_COMPLETED')
  })

  it('CancelJob cancels a queued job; a second cancel is FAILED_PRECONDITION job_finished', async () => {
    const blocker = await removeBg({ videoUrl: video('medium_01.mp4') })
    const { jobId } = await removeBg({ videoUrl: video('short_02.mp4') })
    const watched = watchAll(client, jobId, API_KEY)
    const res = await unary(client, 'CancelJob', { jobId }, API_KEY)
    expect(res.message).toBe(`Job ${jobId} was cancelled.`)
    const { jobs, status } = await watched
    expect(status.code).toBe(grpcStatus.OK)
    expect(jobs.at(-1)).toMatchObject({
      status: 'JOB_STATUS_FAILED',
      error: { errorCode: 'job_cancelled' },
    })
    expect(await getJob(jobId)).toMatchObject({
      status: 'JOB_STATUS_FAILED',
      error: { errorCode: 'job_cancelled', message: expect.any(String) },
    })
    const err = await rejection(unary(client, 'CancelJob', { jobId }, API_KEY))
    expect(describeError(err)).toEqual({
      code: grpcStatus.FAILED_PRECONDITION,
      details: expect.stringContaining('has already finished'),
      errorCode: 'job_finished',
      reason: 'job_finished',
      domain: 'tailor',
    })
    await unary(client, 'CancelJob', { jobId: blocker.jobId }, API_KEY)
  })

  it('refuses a missing or wrong API key with UNAUTHENTICATED invalid_auth_token, on every method', async () => {
    for (const key of [null, 'not-the-key']) {
      for (const call of [
        () => getJob('00000000-0000-7000-8000-000000000000', key),
        () => removeBg({ videoUrl: video('short_01.mp4') }, key),
        () =>
          unary(
            client,
            'TryOn',
            {
              personImageUrl: shared('person_01.jpg'),
              garmentImageUrl: shared('garment_upper_01.jpg'),
            },
            key,
          ),
        () => unary(client, 'CancelJob', { jobId: '00000000-0000-7000-8000-000000000000' }, key),
        () =>
          watchAll(client, '00000000-0000-7000-8000-000000000000', key).then(({ status }) =>
            Promise.reject(Object.assign(new Error(status.details), status)),
          ),
      ]) {
        const err = await rejection(call())
        expect(err.code).toBe(grpcStatus.UNAUTHENTICATED)
        expect(err.metadata.get('error-code')).toEqual(['invalid_auth_token'])
      }
    }
  })

  it('validates like HTTP: INVALID_ARGUMENT with the same error_code and sentence, in metadata and ErrorInfo', async () => {
    const cases: [
      Record<string, unknown>,
      { videoUrl?: string; backgroundColor?: string; outputFormat?: string },
      string,
    ][] = [
      [
        { video_url: 'ftp://example.com/a.mp4' },
        { videoUrl: 'ftp://example.com/a.mp4' },
        'invalid_parameter',
      ],
      [
        { video_url: video('short_01.mp4'), output_format: 'avi' },
        { videoUrl: video('short_01.mp4'), outputFormat: 'avi' },
        'invalid_parameter',
      ],
      [
        { video_url: video('short_01.mp4'), background_color: 'transparent' },
        { videoUrl: video('short_01.mp4'), backgroundColor: 'transparent' },
        'invalid_parameter',
      ],
      [{}, {}, 'missing_parameter'],
    ]
    for (const [httpBody, grpcReq, code] of cases) {
      const http = await fetch(`${httpBase}/v1/video/remove-background`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify(httpBody),
      })
      const httpErr = (await http.json()) as { error: string; error_code: string }
      expect(httpErr.error_code).toBe(code)
      const err = await rejection(removeBg(grpcReq))
      expect(describeError(err)).toEqual({
        code: grpcStatus.INVALID_ARGUMENT,
        details: httpErr.error,
        errorCode: code,
        reason: code,
        domain: 'tailor',
      })
    }
    const tryOn = await rejection(
      unary(
        client,
        'TryOn',
        { personImageUrl: shared('person_01.jpg'), garmentMode: 'sideways' },
        API_KEY,
      ),
    )
    expect(describeError(tryOn)).toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      errorCode: 'missing_parameter',
      details: expect.stringContaining('garment_image_url'),
    })
    const photoType = await rejection(
      unary(
        client,
        'TryOn',
        {
          personImageUrl: shared('person_01.jpg'),
          garmentImageUrl: shared('garment_upper_01.jpg'),
          garmentPhotoType: 'mannequin',
        },
        API_KEY,
      ),
    )
    expect(describeError(photoType)).toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      errorCode: 'invalid_parameter',
      details: expect.stringContaining('garment_photo_type must be one of auto, flat-lay, model'),
    })
  })

  it("another key's job is NOT_FOUND, as an unknown id", async () => {
    // (a job that fails at once: nothing listens on port 9 of loopback)
    const { jobId } = await removeBg({ videoUrl: 'http://127.0.0.1:9/nothing.mp4' })
    for (const err of [
      await rejection(getJob(jobId, OTHER_KEY)),
      await rejection(unary(client, 'CancelJob', { jobId }, OTHER_KEY)),
      await rejection(
        watchAll(client, jobId, OTHER_KEY).then(({ status }) =>
          Promise.reject(Object.assign(new Error(status.details), status)),
        ),
      ),
    ]) {
      expect(describeError(err)).toMatchObject({
        code: grpcStatus.NOT_FOUND,
        errorCode: 'not_found',
        details: `No job with id "${jobId}".`,
      })
    }
    expect(await settle(jobId)).toMatchObject({
      status: 'JOB_STATUS_FAILED',
      error: { errorCode: 'input_fetch_failed' },
    })
  })

  it("a burst of submissions past the key's rate: RESOURCE_EXHAUSTED rate_limit_exceeded with retry-after and RetryInfo", async () => {
    const calls = Array.from({ length: BURST }, () =>
      rejection(removeBg({ videoUrl: 'ftp://example.com/never-queued.mp4' }, OTHER_KEY)),
    )
    const errs = await Promise.all(calls)
    const limited = errs.filter((e) => e.code === grpcStatus.RESOURCE_EXHAUSTED)
    expect(limited.length).toBeGreaterThan(0)
    expect(
      errs
        .filter((e) => e.code !== grpcStatus.RESOURCE_EXHAUSTED)
        .every((e) => e.code === grpcStatus.INVALID_ARGUMENT),
    ).toBe(true)
    const e = limited[0]!
    expect(describeError(e)).toMatchObject({
      errorCode: 'rate_limit_exceeded',
      reason: 'rate_limit_exceeded',
      domain: 'tailor',
    })
    const retryAfter = Number(e.metadata.get('retry-after')[0])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(decodeDetails(e).retryDelayS).toBe(retryAfter)
    // Reading is not charged: the same key still reads at once.
    expect(
      describeError(await rejection(getJob('ffff0000-0000-7000-8000-000000000000', OTHER_KEY))),
    ).toMatchObject({ errorCode: 'not_found' })
  })

  it('GetJob / WatchJob / CancelJob of an unknown id: NOT_FOUND not_found; an empty id: INVALID_ARGUMENT missing_parameter', async () => {
    const id = 'ffff0000-0000-7000-8000-000000000000' // a UUIDv7 from the far future: never issued
    for (const err of [
      await rejection(getJob(id)),
      await rejection(unary(client, 'CancelJob', { jobId: id }, API_KEY)),
      await rejection(
        watchAll(client, id, API_KEY).then(({ status }) =>
          Promise.reject(Object.assign(new Error(status.details), status)),
        ),
      ),
    ]) {
      expect(describeError(err)).toEqual({
        code: grpcStatus.NOT_FOUND,
        details: `No job with id "${id}".`,
        errorCode: 'not_found',
        reason: 'not_found',
        domain: 'tailor',
      })
    }
    expect(describeError(await rejection(getJob('')))).toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      errorCode: 'missing_parameter',
    })
  })
})
