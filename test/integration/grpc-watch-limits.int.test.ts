/**
 * gRPC WatchJob is bounded per API key (issue 11 §5): a key holds at most
 * GRPC_MAX_WATCHES_PER_KEY streams on one gateway (one more answers RESOURCE_EXHAUSTED
 * watch_limit_exceeded, another key is not affected, an ended stream frees its place), and opening
 * a stream takes one request from the key's rate budget (RESOURCE_EXHAUSTED rate_limit_exceeded
 * past it). Real nats-server, a gateway in this process, a real @grpc/grpc-js client; the jobs stay
 * pending (no worker), which is what keeps the streams open.
 */
import * as grpc from '@grpc/grpc-js'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TailorApiClient } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'
import { generateApiKey } from '@tailor/gateway/src/access/api-key.ts'
import { openKvKeyStore } from '@tailor/gateway/src/access/key-store-kv.ts'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start as startGateway, type Gateway } from '@tailor/gateway/src/start.ts'
import {
  describeError,
  keyMetadata,
  openGrpcApiClient,
  rejection,
  unary,
  type WireJob,
} from '../helpers/grpc-api.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { TEST_JOB_EVENTS_TOKEN } from '../helpers/processes.ts'

const MAX_WATCHES = 3
const SETTLE_MS = 10_000

let nats: NatsServer
let nc: NatsConnection
let gateway: Gateway
let client: TailorApiClient
/** Generous budgets: only the watch cap limits these two. */
let keyA: string
let keyB: string
/** One request per second: its budget is what the charge test spends. */
let keySlow: string
const calls: grpc.ClientReadableStream<WireJob>[] = []

beforeAll(async () => {
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  const keys = await openKvKeyStore(nc)
  const make = async (name: string, rateLimitPerS: number): Promise<string> => {
    const { key, record } = generateApiKey({ name, rateLimitPerS, maxConcurrentJobs: 0 })
    await keys.create(record)
    return key
  }
  keyA = await make('a', 1000)
  keyB = await make('b', 1000)
  keySlow = await make('slow', 1)
  gateway = await startGateway(
    loadConfig({
      NATS_URL: nats.url,
      JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_PORT: '0',
      API_GRPC_PORT: '0',
      RESULT_URL_SECRET: 'r'.repeat(40),
      GRPC_MAX_WATCHES_PER_KEY: String(MAX_WATCHES),
    }),
    { logger: createLogger('silent') },
  )
  client = await openGrpcApiClient(`127.0.0.1:${gateway.apiGrpcPort}`)
})

afterAll(async () => {
  for (const c of calls) c.cancel()
  client?.close()
  await gateway?.stop()
  await nc?.close()
  await nats?.stop()
})

/** A pending job of `key` (no worker takes it). */
const submit = async (key: string): Promise<string> =>
  (await unary(client, 'RemoveVideoBackground', { videoUrl: 'https://example.com/v.mp4' }, key))
    .jobId

/** Opens a WatchJob stream: resolves with its first message (the stream stays open), or rejects with the error that ended it. */
function openWatch(
  jobId: string,
  key: string,
): Promise<{ call: grpc.ClientReadableStream<WireJob>; first: WireJob }> {
  const call = client.WatchJob({ jobId }, keyMetadata(key))
  calls.push(call)
  return new Promise((resolve, reject) => {
    call.once('data', (first: WireJob) => resolve({ call, first }))
    call.on('error', reject)
  })
}

describe('gRPC WatchJob limits per API key', () => {
  it(`a key holds at most ${MAX_WATCHES} streams: one more is RESOURCE_EXHAUSTED watch_limit_exceeded; another key still watches; an ended stream frees a place`, async () => {
    const jobA = await submit(keyA)
    const open = await Promise.all(Array.from({ length: MAX_WATCHES }, () => openWatch(jobA, keyA)))
    for (const o of open) {
      expect(o.first).toMatchObject({ jobId: jobA, status: 'JOB_STATUS_PENDING' })
    }

    const err = await rejection(openWatch(jobA, keyA))
    expect(describeError(err)).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      errorCode: 'watch_limit_exceeded',
      reason: 'watch_limit_exceeded',
      domain: 'tailor',
    })
    expect(err.details).toContain(`at most ${MAX_WATCHES}`)

    const jobB = await submit(keyB)
    expect((await openWatch(jobB, keyB)).first).toMatchObject({
      jobId: jobB,
      status: 'JOB_STATUS_PENDING',
    })

    // The client ends one stream: the gateway sees the cancel and gives the place back.
    open[0]!.call.cancel()
    const deadline = Date.now() + SETTLE_MS
    for (;;) {
      try {
        expect((await openWatch(jobA, keyA)).first.jobId).toBe(jobA)
        break
      } catch (e) {
        if (
          Date.now() > deadline ||
          (e as grpc.ServiceError).metadata?.get('error-code')[0] !== 'watch_limit_exceeded'
        ) {
          throw e
        }
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  })

  it("opening a stream takes a request from the key's rate budget: a burst of 60 at 1 request/s is refused with rate_limit_exceeded", async () => {
    const job = await submit(keySlow) // spends the key's one-second budget
    const started = Date.now()
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, () => openWatch(job, keySlow)),
    )
    const elapsedS = (Date.now() - started) / 1000
    const refused = outcomes
      .filter((o): o is PromiseRejectedResult => o.status === 'rejected')
      .map((o) => o.reason as grpc.ServiceError)
    // Streams admitted beyond the budget are refused by the watch cap instead; none may pass uncharged.
    const codes = new Set(refused.map((e) => String(e.metadata.get('error-code')[0])))
    expect(codes.has('rate_limit_exceeded'), `${[...codes].join(',')} after ${elapsedS} s`).toBe(
      true,
    )
    const rateRefusals = refused.filter(
      (e) => e.metadata.get('error-code')[0] === 'rate_limit_exceeded',
    )
    // Fixed bound: 1 request/s refills at most a handful of tokens while 60 calls are opened.
    expect(rateRefusals.length).toBeGreaterThanOrEqual(60 - MAX_WATCHES - 10)
    const e = rateRefusals[0]!
    expect(describeError(e)).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      errorCode: 'rate_limit_exceeded',
    })
    expect(Number(e.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1)
  })
})
