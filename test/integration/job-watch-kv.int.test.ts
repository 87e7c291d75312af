/**
 * The KV job store's watch (gRPC WatchJob in the distributed mode) against a real nats-server:
 * a replica sees the changes another replica writes, in order, and a watch that stops leaves no
 * consumer behind on the bucket's stream.
 */
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newJobId } from '@tailor/proto'
import { openKvJobStore } from '@tailor/gateway/src/jobs/job-store-kv.ts'
import type { JobRecord } from '@tailor/gateway/src/jobs/job-store.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'

/** How long an ordered consumer may take to go away after its watch stops. */
const CONSUMER_GONE_MS = 5_000

let nats: NatsServer
let nc: NatsConnection
let ncB: NatsConnection
beforeAll(async () => {
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  ncB = await connect({ servers: nats.url }) // the other replica has its own connection
})
afterAll(async () => {
  await ncB?.close()
  await nc?.close()
  await nats?.stop()
})

const pending = (): JobRecord => {
  const now = new Date().toISOString()
  return {
    id: newJobId(),
    kind: 'remove-background',
    status: 'pending',
    progress: 0,
    params: {
      video_url: 'https://example.com/v.mp4',
      background_color: '#000000',
      output_format: 'mp4_h264',
    },
    result: null,
    error: null,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  }
}

const consumers = async (): Promise<number> => {
  const jsm = await jetstreamManager(nc)
  return (await jsm.streams.info('KV_jobs')).state.consumer_count
}

describe('KV job store: watch', () => {
  it('replica B follows what replica A writes: the record now, then every change in order, until stopped', async () => {
    const a = await openKvJobStore(nc)
    const b = await openKvJobStore(ncB)
    const rec = pending()
    await a.create(rec)
    const before = await consumers()
    const ac = new AbortController()
    const seen: (JobRecord | null)[] = []
    let watching!: () => void
    const first = new Promise<void>((r) => (watching = r))
    const done = (async () => {
      for await (const r of b.watch(rec.id, ac.signal)) {
        seen.push(r)
        watching() // the watch is in place: what A writes from now on must all arrive
        if (r?.status === 'completed') ac.abort()
      }
    })()
    await first
    await a.update(rec.id, (r) => ({ ...r, status: 'running' }))
    for (const progress of [0.25, 0.5, 0.75]) await a.update(rec.id, (r) => ({ ...r, progress }))
    await a.update(rec.id, (r) => ({ ...r, status: 'completed', progress: 1 }))
    await done
    expect(seen.map((r) => [r?.status, r?.progress])).toEqual([
      ['pending', 0],
      ['running', 0],
      ['running', 0.25],
      ['running', 0.5],
      ['running', 0.75],
      ['completed', 1],
    ])
    const deadline = Date.now() + CONSUMER_GONE_MS
    while ((await consumers()) > before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(await consumers()).toBe(before)
  })

  it('an idle watch ends when its signal aborts; an id that is not a job id yields nothing', async () => {
    const a = await openKvJobStore(nc)
    const rec = pending()
    await a.create(rec)
    const ac = new AbortController()
    const seen: unknown[] = []
    const done = (async () => {
      for await (const r of a.watch(rec.id, ac.signal)) seen.push(r)
    })()
    await new Promise((r) => setTimeout(r, 200))
    ac.abort()
    await done
    expect(seen).toHaveLength(1)
    const none: unknown[] = []
    for await (const r of a.watch('../../etc', new AbortController().signal)) none.push(r)
    expect(none).toEqual([])
  })
})
