import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKvJobStore } from '@tailor/gateway/src/jobs/job-store-kv.ts'
import type { JobRecord } from '@tailor/gateway/src/jobs/job-store.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'

let nats: NatsServer
let nc: NatsConnection
beforeAll(async () => {
  nats = await startNatsServer()
  nc = await connect({ servers: nats.url })
})
afterAll(async () => {
  await nc?.close()
  await nats?.stop()
})

const record = (id: string): JobRecord => ({
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
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
})

describe('JetStream KV job store (bucket `jobs`)', () => {
  it('creates, reads and compare-and-sets concurrent updates without losing one', async () => {
    const a = await openKvJobStore(nc)
    const b = await openKvJobStore(nc) // a second gateway replica
    const id = '11111111-2222-4333-8444-555555555555'
    await a.create(record(id))
    expect(await b.get(id)).toEqual(record(id))
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).update(id, (r) => ({ ...r, attempts: r.attempts + 1 })),
      ),
    )
    expect((await a.get(id))?.attempts).toBe(10)
    expect(await a.update(id, () => null)).toMatchObject({ attempts: 10 })
    expect(await a.get('99999999-2222-4333-8444-555555555555')).toBeNull()
    expect(await a.update('99999999-2222-4333-8444-555555555555', (r) => r)).toBeNull()
    expect(await a.get('../../etc')).toBeNull()
    expect((await a.listUnfinished()).map((r) => r.id)).toEqual([id])
  })

  it('keeps records across a reconnect (a gateway restart loses nothing)', async () => {
    const id = '66666666-2222-4333-8444-555555555555'
    await (await openKvJobStore(nc)).create(record(id))
    const nc2 = await connect({ servers: nats.url })
    try {
      expect((await (await openKvJobStore(nc2)).get(id))?.id).toBe(id)
    } finally {
      await nc2.close()
    }
  })
})
