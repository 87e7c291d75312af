import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newJobId } from '@tailor/proto'
import { openKvJobStore } from '@tailor/gateway/src/jobs/job-store-kv.ts'
import type { JobRecord } from '@tailor/gateway/src/jobs/job-store.ts'
import { openObjectStoreResultReader } from '@tailor/gateway/src/results/result-reader-object-store.ts'
import { openObjectStoreResultStore } from '@tailor/inference/src/results/result-store-object-store.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'

/** Short retention so the server's own expiry is observed; generous bound for a loaded machine. */
const TTL_MS = 1_500
const EXPIRY_BOUND_MS = 15_000

let nats: NatsServer
let nc: NatsConnection
let dir: string
beforeAll(async () => {
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
  dir = await mkdtemp(join(tmpdir(), 'tailor-retention-int-'))
})
afterAll(async () => {
  await nc?.close()
  await nats?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const record = (id: string): JobRecord => {
  const now = new Date().toISOString()
  return {
    id,
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

async function until(what: string, pred: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now()
  while (!(await pred())) {
    if (Date.now() - t0 > EXPIRY_BOUND_MS) {
      throw new Error(`${what} not within ${EXPIRY_BOUND_MS} ms`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return Date.now() - t0
}

describe('retention in distributed mode (bucket TTLs on a real nats-server)', () => {
  it('job records: a bucket made without a TTL gets it, and a record goes that long after its last change', async () => {
    await new Kvm(nc).create('jobs', { history: 1 }) // as before retention existed
    const jsm = await jetstreamManager(nc)
    expect((await jsm.streams.info('KV_jobs')).config.max_age).toBe(0)
    const store = await openKvJobStore(nc, { ttlMs: TTL_MS })
    expect((await jsm.streams.info('KV_jobs')).config.max_age).toBe(TTL_MS * 1_000_000)
    const id = newJobId()
    await store.create(record(id))
    await new Promise((r) => setTimeout(r, TTL_MS / 2))
    await store.update(id, (r) => ({ ...r, status: 'running' })) // the clock restarts at each change
    const t0 = Date.now()
    expect((await store.get(id))?.status).toBe('running')
    await until('record expiry', async () => (await store.get(id)) === null)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TTL_MS - 200)
    // Opening again with the same TTL changes nothing; another value is applied.
    await openKvJobStore(nc, { ttlMs: TTL_MS })
    await openKvJobStore(nc, { ttlMs: 86_400_000 })
    expect((await jsm.streams.info('KV_jobs')).config.max_age).toBe(86_400_000 * 1_000_000)
  })

  it('results: the gateway sets the Object Store TTL even when inference made the bucket; a result is gone after it', async () => {
    const put = await openObjectStoreResultStore(nc) // inference starts first: bucket without TTL
    const jsm = await jetstreamManager(nc)
    expect((await jsm.streams.info('OBJ_results')).config.max_age).toBe(0)
    const reader = await openObjectStoreResultReader(nc, { ttlMs: TTL_MS })
    expect((await jsm.streams.info('OBJ_results')).config.max_age).toBe(TTL_MS * 1_000_000)
    const file = join(dir, 'result.mp4')
    await writeFile(file, Buffer.alloc(300_000, 7)) // several chunks
    const key = `remove-background/${newJobId()}.mp4`
    await put.put(key, file, 'video/mp4')
    expect(await reader.size(key)).toBe(300_000)
    await until('result expiry', async () => (await reader.size(key)) === null)
    // Chunks go too, not only the metadata.
    const info = await jsm.streams.info('OBJ_results')
    expect(info.state.messages).toBe(0)
  })
})
