import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import { withdrawFrom, type BucketState, type RateBudgetStore } from './rate-budget.ts'

export const RATE_BUCKET = 'rate_limits'
/** A bucket idle this long is full again for any limit ≥ 1/s; its entry may go. */
const RATE_ENTRY_TTL_MS = 60_000
const CAS_ATTEMPTS = 50

/** KV keys allow [-/_=.a-zA-Z0-9]: `sha256:…` ids become `sha256_…` (generated ids start with key_). */
export const kvKeyFor = (keyId: string): string => keyId.replace(/[^-_=.a-zA-Z0-9]/g, '_')

/**
 * Adapter: one KV entry per key holding its bucket ({tokens, atMs}); a withdrawal is a
 * compare-and-set on that entry, so replicas never spend the same token twice. The last revision
 * seen is kept, so an uncontended withdrawal is one round trip (the update), not two. NATS
 * failures answer service_unavailable (503, retryable).
 */
export async function openKvRateBudget(nc: NatsConnection): Promise<RateBudgetStore> {
  const kv: KV = await new Kvm(nc).create(RATE_BUCKET, { history: 1, ttl: RATE_ENTRY_TTL_MS })
  const seen = new Map<string, { state: BucketState; revision: number }>()
  const read = async (k: string): Promise<{ state: BucketState; revision: number } | null> => {
    const e = await kv.get(k)
    if (e === null) return null
    if (e.operation !== 'PUT' || e.length === 0) {
      return { state: { tokens: Number.POSITIVE_INFINITY, atMs: 0 }, revision: e.revision }
    }
    return { state: e.json<BucketState>(), revision: e.revision }
  }
  const withdraw = async (
    keyId: string,
    want: number,
    limitPerS: number,
    nowMs: number,
  ): Promise<{ granted: number; tokens: number }> => {
    const k = kvKeyFor(keyId)
    let cur = seen.get(k) ?? (await read(k))
    for (let i = 0; i < CAS_ATTEMPTS; i++) {
      // A deleted entry (Infinity) is a full bucket.
      const state = cur === null || !Number.isFinite(cur.state.tokens) ? null : cur.state
      const { next, granted } = withdrawFrom(state, want, limitPerS, nowMs)
      try {
        const revision =
          cur === null
            ? await kv.create(k, JSON.stringify(next))
            : await kv.update(k, JSON.stringify(next), cur.revision)
        seen.set(k, { state: next, revision })
        return { granted, tokens: next.tokens }
      } catch {
        // Another replica withdrew in between (or our copy was stale): read it again and retry.
        seen.delete(k)
        cur = await read(k)
      }
    }
    throw new AppError(
      'service_unavailable',
      'The rate limit bucket kept changing under us; retry shortly.',
      { retryable: true },
    )
  }
  return {
    async withdraw(keyId, want, limitPerS, nowMs) {
      try {
        return await withdraw(keyId, want, limitPerS, nowMs)
      } catch (err) {
        if (err instanceof AppError) throw err
        throw new AppError(
          'service_unavailable',
          'The rate limiter cannot reach NATS; retry shortly.',
          { cause: err, retryable: true },
        )
      }
    },
    async close() {},
  }
}
