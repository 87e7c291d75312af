/**
 * Port: the shared token buckets behind per-key rate limits (JetStream KV bucket `rate_limits`
 * distributed, memory embedded). A bucket holds at most `limitPerS` tokens (one second's worth)
 * and refills at `limitPerS` tokens per second. Every gateway replica withdraws from the same
 * bucket, so the sum of what all replicas admit never exceeds the key's budget.
 */
export interface RateBudgetStore {
  /** Withdraws up to `want` whole tokens; answers how many were granted and how many are left (fractional). */
  withdraw(
    keyId: string,
    want: number,
    limitPerS: number,
    nowMs: number,
  ): Promise<{ granted: number; tokens: number }>
  close(): Promise<void>
}

/** A bucket's stored state: tokens at `atMs`. */
export interface BucketState {
  tokens: number
  atMs: number
}

/** Pure bucket arithmetic shared by the adapters: refill to `nowMs`, then take up to `want`. */
export function withdrawFrom(
  s: BucketState | null,
  want: number,
  limitPerS: number,
  nowMs: number,
): { next: BucketState; granted: number } {
  const cap = limitPerS
  const elapsedMs = s === null ? Number.POSITIVE_INFINITY : Math.max(0, nowMs - s.atMs)
  const tokens = s === null ? cap : Math.min(cap, s.tokens + (elapsedMs * limitPerS) / 1000)
  const granted = Math.max(0, Math.min(want, Math.floor(tokens)))
  return { next: { tokens: tokens - granted, atMs: Math.max(nowMs, s?.atMs ?? 0) }, granted }
}

/** Adapter: buckets in this process's memory (embedded mode: one gateway). */
export function createMemoryRateBudget(): RateBudgetStore {
  const buckets = new Map<string, BucketState>()
  return {
    async withdraw(keyId, want, limitPerS, nowMs) {
      const { next, granted } = withdrawFrom(buckets.get(keyId) ?? null, want, limitPerS, nowMs)
      buckets.set(keyId, next)
      return { granted, tokens: next.tokens }
    },
    async close() {},
  }
}
