import type { AccessControl, Principal } from './access-control.ts'
import { RateLimitError } from './rate-limit-error.ts'

/**
 * Failed authentications per client address (issue 11 §6): a bucket of `maxFailures` that refills
 * at `maxFailures` per `windowMs`. Each unknown or revoked key takes one; an address whose bucket
 * is empty is refused before its key is even looked at (429 too_many_auth_failures, Retry-After),
 * so guessing keys from one address runs at most `maxFailures` per window. Valid keys take
 * nothing. Per gateway replica, in memory (N replicas: at most N × the rate); a full bucket is
 * forgotten, and at most `maxAddresses` are tracked (the oldest goes first).
 */
export interface AuthFailureThrottleOptions {
  maxFailures: number
  windowMs: number
  maxAddresses?: number
  now?: () => number
}

interface Bucket {
  level: number
  atMs: number
}

export const DEFAULT_MAX_TRACKED_ADDRESSES = 100_000

export class AuthFailureThrottle {
  readonly #max: number
  readonly #perMs: number
  readonly #maxAddresses: number
  readonly #now: () => number
  readonly #buckets = new Map<string, Bucket>()

  constructor(o: AuthFailureThrottleOptions) {
    this.#max = o.maxFailures
    this.#perMs = o.maxFailures / o.windowMs
    this.#maxAddresses = o.maxAddresses ?? DEFAULT_MAX_TRACKED_ADDRESSES
    this.#now = o.now ?? Date.now
  }

  /** The bucket's level now (refilled), dropping it once full. */
  #level(address: string, now: number): number {
    const b = this.#buckets.get(address)
    if (b === undefined) return this.#max
    const level = Math.min(this.#max, b.level + (now - b.atMs) * this.#perMs)
    if (level >= this.#max) this.#buckets.delete(address)
    return level
  }

  /** Whole seconds until `address` may try a key again; 0 when it may now. */
  blockedForS(address: string): number {
    const level = this.#level(address, this.#now())
    return level >= 1 ? 0 : Math.max(1, Math.ceil((1 - level) / this.#perMs / 1000 - 1e-9))
  }

  /** Records one failed authentication from `address`. */
  fail(address: string): void {
    const now = this.#now()
    const level = Math.max(0, this.#level(address, now) - 1)
    this.#buckets.delete(address) // re-inserted last: the Map's order is oldest change first
    if (this.#buckets.size >= this.#maxAddresses) {
      const oldest = this.#buckets.keys().next()
      if (oldest.done !== true) this.#buckets.delete(oldest.value)
    }
    this.#buckets.set(address, { level, atMs: now })
  }

  /** Addresses tracked now (tests). */
  get size(): number {
    return this.#buckets.size
  }
}

/**
 * Authenticates `key` for a caller at `address` under the throttle: throws 429
 * too_many_auth_failures while the address is blocked, else answers the principal or null (and
 * counts the failure). `address` undefined (an in-process request, no socket): not throttled.
 */
export async function authenticateFrom(
  access: AccessControl,
  throttle: AuthFailureThrottle,
  peer: string | undefined,
  key: string,
): Promise<Principal | null> {
  // One client, one address: an IPv4 peer seen as IPv4-mapped IPv6 (a dual-stack socket) is the IPv4 address.
  const address = peer?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  if (address !== undefined) {
    const waitS = throttle.blockedForS(address)
    if (waitS > 0) {
      throw new RateLimitError(
        `Too many failed authentications from this address; retry in ${waitS} s.`,
        waitS,
        null,
        'too_many_auth_failures',
      )
    }
  }
  const principal = await access.authenticate(key)
  if (principal === null && address !== undefined) throttle.fail(address)
  return principal
}
