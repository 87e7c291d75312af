import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKvIdempotencyStore } from '@tailor/gateway/src/idempotency/idempotency-store-kv.ts'
import { idempotencyStorageKey } from '@tailor/gateway/src/idempotency/idempotency-key.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'

/** The bucket's TTL; the server removes expired entries within about a second after it. */
const TTL_MS = 1_500
const EXPIRY_WAIT_MS = 4_000

let nats: NatsServer
let nc1: NatsConnection
let nc2: NatsConnection
beforeAll(async () => {
  nats = await startNatsServer()
  nc1 = await connect({ servers: nats.url })
  nc2 = await connect({ servers: nats.url })
})
afterAll(async () => {
  await nc1?.close()
  await nc2?.close()
  await nats?.stop()
})

const claim = (jobId: string) => ({ jobId, fingerprint: 'f1', createdAt: new Date().toISOString() })

describe('JetStream KV idempotency store (bucket `idempotency`)', () => {
  it('of concurrent claims from two replicas exactly one wins; the others see its claim', async () => {
    const [a, b] = [
      await openKvIdempotencyStore(nc1, { ttlMs: TTL_MS }),
      await openKvIdempotencyStore(nc2, { ttlMs: TTL_MS }),
    ]
    const key = idempotencyStorageKey('key-1', 'race')
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).claim(key, claim(`job-${i}`))),
    )
    const winners = results.flatMap((r, i) => (r === null ? [`job-${i}`] : []))
    expect(winners).toHaveLength(1)
    for (const r of results) if (r !== null) expect(r.jobId).toBe(winners[0])
  })

  it('replace is compare-and-set; release removes only its own claim', async () => {
    const s = await openKvIdempotencyStore(nc1, { ttlMs: TTL_MS })
    const key = idempotencyStorageKey('key-1', 'cas')
    expect(await s.claim(key, claim('old'))).toBeNull()
    const found = (await s.claim(key, claim('other')))!
    expect(await s.replace(key, found, claim('new'))).toBe(true)
    expect(await s.replace(key, found, claim('stale'))).toBe(false) // revision moved on
    await s.release(key, 'old') // not the holder: nothing happens
    expect((await s.claim(key, claim('x')))?.jobId).toBe('new')
    await s.release(key, 'new')
    expect(await s.claim(key, claim('after-release'))).toBeNull()
  })

  it('forgets a claim after the bucket TTL', async () => {
    const s = await openKvIdempotencyStore(nc1, { ttlMs: TTL_MS })
    const key = idempotencyStorageKey('key-1', 'ttl')
    expect(await s.claim(key, claim('first'))).toBeNull()
    await new Promise((r) => setTimeout(r, EXPIRY_WAIT_MS))
    expect(await s.claim(key, claim('second'))).toBeNull()
  })
})
