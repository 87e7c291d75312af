import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import { ensureStreamMaxAge } from '../jobs/job-store-kv.ts'
import type { IdempotencyClaim, IdempotencyStore, StoredClaim } from './idempotency-store.ts'

export const IDEMPOTENCY_BUCKET = 'idempotency'
const CREATE_ATTEMPTS = 5

/**
 * Adapter: JetStream KV bucket `idempotency` whose TTL is IDEMPOTENCY_TTL_S. `claim` is the KV
 * `create` (fails when the key holds a value): the server decides which of two racing gateways won.
 */
export async function openKvIdempotencyStore(
  nc: NatsConnection,
  o: { ttlMs: number },
): Promise<IdempotencyStore> {
  const kv: KV = await new Kvm(nc).create(IDEMPOTENCY_BUCKET, { history: 1, ttl: o.ttlMs })
  await ensureStreamMaxAge(nc, `KV_${IDEMPOTENCY_BUCKET}`, o.ttlMs)
  const read = async (key: string): Promise<StoredClaim | null> => {
    const e = await kv.get(key)
    if (e === null || e.operation !== 'PUT' || e.length === 0) return null
    return { ...e.json<IdempotencyClaim>(), revision: e.revision }
  }
  return {
    async claim(key, claim) {
      for (let i = 0; ; i++) {
        try {
          await kv.create(key, JSON.stringify(claim))
          return null
        } catch (err) {
          const found = await read(key)
          if (found !== null) return found
          // Deleted between our create and read (a released claim): try again.
          if (i >= CREATE_ATTEMPTS - 1) {
            throw new AppError('service_unavailable', 'the idempotency store is unavailable', {
              cause: err,
              retryable: true,
            })
          }
        }
      }
    },
    async replace(key, found, next) {
      try {
        await kv.update(key, JSON.stringify(next), found.revision)
        return true
      } catch {
        return false
      }
    },
    async release(key, jobId) {
      const found = await read(key)
      if (found?.jobId === jobId) {
        await kv.delete(key, { previousSeq: found.revision }).catch(() => undefined)
      }
    },
    async close() {},
  }
}
