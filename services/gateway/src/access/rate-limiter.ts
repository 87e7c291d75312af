import type { RateDecision } from './access-control.ts'
import type { RateBudgetStore } from './rate-budget.ts'

/**
 * A gateway replica's local allowance, leased from the shared buckets (RateBudgetStore).
 *
 * A request is admitted from the local allowance without any I/O; when it is empty the replica
 * withdraws the next lease: `leaseMs` worth of the key's rate (at least one token, more when
 * requests are waiting). Leased tokens have left the shared bucket, so the sum admitted by all
 * replicas never exceeds the key's budget (a burst of `limit`, then `limit` per second). The
 * tolerance is the other way: tokens a replica leased but did not spend within `leaseTtlMs` are
 * dropped, so a key may be refused up to one lease per replica early (5 % of its rate per
 * replica with the default 50 ms lease). At 5 req/s a lease is one token: every admission is one
 * compare-and-set. A replica that found the bucket empty refuses locally until the bucket can
 * hold a token again (other replicas only ever take tokens out), so a client hammering a spent
 * key costs no round trips.
 */
export interface RateLimiterOptions {
  leaseMs?: number
  leaseTtlMs?: number
  now?: () => number
}

interface KeyState {
  /** Tokens leased and not spent yet, valid until `leaseUntilMs`. */
  local: number
  leaseUntilMs: number
  /** Shared bucket level seen at the last withdrawal, and when. */
  shared: number
  sharedAtMs: number
  /** The shared bucket holds no whole token before this. */
  emptyUntilMs: number
  waiting: number
  inflight: Promise<void> | null
}

export const DEFAULT_LEASE_MS = 50
export const DEFAULT_LEASE_TTL_MS = 1_000

export class RateLimiter {
  readonly #store: RateBudgetStore
  readonly #leaseMs: number
  readonly #leaseTtlMs: number
  readonly #now: () => number
  readonly #keys = new Map<string, KeyState>()

  constructor(store: RateBudgetStore, o: RateLimiterOptions = {}) {
    this.#store = store
    this.#leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS
    this.#leaseTtlMs = o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS
    this.#now = o.now ?? Date.now
  }

  #state(keyId: string, limit: number): KeyState {
    let s = this.#keys.get(keyId)
    if (s === undefined) {
      s = {
        local: 0,
        leaseUntilMs: 0,
        shared: limit,
        sharedAtMs: 0,
        emptyUntilMs: 0,
        waiting: 0,
        inflight: null,
      }
      this.#keys.set(keyId, s)
    }
    return s
  }

  /** The decision's numbers as this replica sees them (remaining is an estimate across replicas). */
  #decision(s: KeyState, limit: number, allowed: boolean, now: number): RateDecision {
    const local = now < s.leaseUntilMs ? s.local : 0
    const shared = Math.min(limit, s.shared + (Math.max(0, now - s.sharedAtMs) * limit) / 1000)
    const level = Math.min(limit, local + shared)
    const remaining = Math.max(0, Math.floor(level))
    const resetS = Math.ceil((limit - level) / limit)
    const retryAfterS = allowed
      ? 0
      : Math.max(1, Math.ceil((Math.max(s.emptyUntilMs, now) - now) / 1000))
    return { allowed, limit, remaining, resetS, retryAfterS }
  }

  /** Numbers for the RateLimit-* headers of a request that takes nothing from the budget. */
  peek(keyId: string, limit: number): RateDecision {
    return this.#decision(this.#state(keyId, limit), limit, true, this.#now())
  }

  /** Takes one token for `keyId` (limit: tokens per second and bucket size). */
  async take(keyId: string, limit: number): Promise<RateDecision> {
    const s = this.#state(keyId, limit)
    for (;;) {
      const now = this.#now()
      if (s.local >= 1 && now < s.leaseUntilMs) {
        s.local -= 1
        return this.#decision(s, limit, true, now)
      }
      if (now < s.emptyUntilMs) return this.#decision(s, limit, false, now)
      if (s.inflight === null) {
        // This caller fetches; callers arriving meanwhile wait on the same lease.
        s.inflight = this.#lease(s, keyId, limit).finally(() => (s.inflight = null))
        s.waiting += 1
        try {
          await s.inflight
        } finally {
          s.waiting -= 1
        }
      } else {
        s.waiting += 1
        try {
          await s.inflight
        } finally {
          s.waiting -= 1
        }
      }
      // Lease fetched (or the bucket found empty): decide again from local state.
      const after = this.#now()
      if (!(s.local >= 1 && after < s.leaseUntilMs) && after < s.emptyUntilMs) {
        return this.#decision(s, limit, false, after)
      }
    }
  }

  async #lease(s: KeyState, keyId: string, limit: number): Promise<void> {
    const want = Math.min(
      Math.max(1, Math.ceil((limit * this.#leaseMs) / 1000), s.waiting + 1),
      Math.max(1, Math.floor(limit)),
    )
    const now = this.#now()
    const { granted, tokens } = await this.#store.withdraw(keyId, want, limit, now)
    s.local = (now < s.leaseUntilMs ? s.local : 0) + granted
    s.leaseUntilMs = now + this.#leaseTtlMs
    s.shared = tokens
    s.sharedAtMs = now
    s.emptyUntilMs = granted > 0 ? 0 : now + Math.ceil(((1 - tokens) * 1000) / limit)
  }
}
