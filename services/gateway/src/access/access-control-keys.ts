import { createHash, timingSafeEqual } from 'node:crypto'
import type { AccessControl, Principal, RateDecision } from './access-control.ts'
import { parseWebhookSecret } from '../webhooks/standard-webhooks.ts'
import {
  creditsRemaining,
  envKeyId,
  KEY_ID_RE,
  keyWebhookSecrets,
  type ApiKeyRecord,
} from './api-key.ts'
import type { KeyStore, KeyWatch } from './key-store.ts'
import type { RateLimiter } from './rate-limiter.ts'

/** How long a request with an unknown key waits for the key store to catch up before its 401. */
export const CATCH_UP_MS = 1_000

/** `p`, or a rejection after `ms` (the timer does not hold the process open). */
const withTimeout = (p: Promise<void>, ms: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)
    t.unref()
    p.then(resolve, reject).finally(() => clearTimeout(t))
  })

export interface AccessLimits {
  /** DEFAULT_RATE_LIMIT_PER_S: keys without their own limit. */
  rateLimitPerS: number
  /** DEFAULT_MAX_CONCURRENT_JOBS (0 = no cap): keys without their own cap. */
  maxConcurrentJobs: number
}

interface Entry {
  hash: Buffer
  principal: Principal
  revoked: boolean
}

/**
 * AccessControl over the key store (records kept in memory, current through `KeyStore.watch`:
 * a revoke reaches every replica within a second) and the keys configured by environment
 * (API_KEYS / TAILOR_API_KEY / API_KEY_SHA256, principals with the default limits, id
 * `sha256:<first 32 hex digits>`). A presented key is hashed (sha256), its record found by that
 * digest, and the digests compared in constant time. Rate limits come from `limiter`.
 */
export type KeyAccessControl = AccessControl & {
  peekRequest(p: Principal): RateDecision
  /** Keys accepted now (environment + store, revoked excluded). */
  keyCount(): number
  /** Replaces the store's records (what `KeyStore.watch` reports). */
  setStoredKeys(all: ApiKeyRecord[]): void
  /**
   * The secrets that sign webhook deliveries of `keyId`'s jobs now: a stored key's own (its
   * previous one too during a rotation's overlap); else, for keys from the environment, keys made
   * before per-key secrets, or deliveries queued without an owner, `fallback` (WEBHOOK_SECRET; may
   * be empty). A stored key's id whose record is gone gets none (the delivery is dropped).
   */
  webhookSecretsFor(keyId: string | undefined, fallback: readonly Buffer[]): readonly Buffer[]
}

/** The environment's keys only, until `setStoredKeys` (no I/O: an app can be built without a store). */
export function createKeyAccessControl(o: {
  envHashes: readonly Buffer[]
  limits: AccessLimits
  limiter: RateLimiter
  onClose?: () => void
  /**
   * Brings the stored keys up to date with the store (`KeyWatch.catchUp`): asked when a presented
   * key is not known, so that a key created a moment ago works on its first request.
   */
  catchUp?: () => Promise<void>
}): KeyAccessControl {
  const envEntries = new Map<string, Entry>()
  for (const h of o.envHashes) {
    const hex = h.toString('hex')
    const keyId = envKeyId(hex)
    envEntries.set(hex, {
      hash: h,
      revoked: false,
      principal: {
        keyId,
        name: keyId,
        rateLimitPerS: o.limits.rateLimitPerS,
        maxConcurrentJobs: o.limits.maxConcurrentJobs,
        creditsRemaining: null,
      },
    })
  }
  let stored = new Map<string, Entry>()
  let byId = new Map<string, ApiKeyRecord>()
  const toEntry = (r: ApiKeyRecord): Entry => ({
    hash: Buffer.from(r.sha256, 'hex'),
    revoked: r.revokedAt !== undefined,
    principal: {
      keyId: r.id,
      name: r.name,
      rateLimitPerS: r.rateLimitPerS ?? o.limits.rateLimitPerS,
      maxConcurrentJobs: r.maxConcurrentJobs ?? o.limits.maxConcurrentJobs,
      creditsRemaining: creditsRemaining(r),
      ownWebhookSecret: r.webhookSecret !== undefined,
    },
  })
  return {
    async authenticate(presentedKey) {
      const h = createHash('sha256').update(presentedKey, 'utf8').digest()
      const hex = h.toString('hex')
      // Found by digest (the digest of an unknown key tells nothing about a known one), then compared in constant time.
      const find = (): Entry | undefined => stored.get(hex) ?? envEntries.get(hex)
      let e = find()
      if (e === undefined && o.catchUp !== undefined) {
        // Not known yet: it may have been created since the watch last reported. The store is
        // asked (one request shared by every miss meanwhile), for CATCH_UP_MS at most.
        await withTimeout(o.catchUp(), CATCH_UP_MS).catch(() => undefined)
        e = find()
      }
      if (e === undefined || !timingSafeEqual(e.hash, h) || e.revoked) return null
      return e.principal
    },
    takeRequest: (p) => o.limiter.take(p.keyId, p.rateLimitPerS),
    peekRequest: (p) => o.limiter.peek(p.keyId, p.rateLimitPerS),
    keyCount: () => envEntries.size + [...stored.values()].filter((e) => !e.revoked).length,
    setStoredKeys(all) {
      stored = new Map(all.map((r) => [r.sha256, toEntry(r)]))
      byId = new Map(all.map((r) => [r.id, r]))
    },
    webhookSecretsFor(keyId, fallback) {
      const r = keyId === undefined ? undefined : byId.get(keyId)
      // A stored key's record that is gone: nothing signs for it (not the secret other keys share).
      if (r === undefined && keyId !== undefined && KEY_ID_RE.test(keyId)) return []
      const own = r === undefined ? null : keyWebhookSecrets(r, Date.now())
      if (own === null) return fallback
      return own.map((s) => parseWebhookSecret(s)).filter((b): b is Buffer => b !== null)
    },
    async close() {
      o.onClose?.()
    },
  }
}

/** Over a key store: every record loaded before this resolves, then kept current by its watch. */
export async function openKeyAccessControl(o: {
  keys: KeyStore
  envHashes: readonly Buffer[]
  limits: AccessLimits
  limiter: RateLimiter
  onWatchError?: (err: unknown) => void
}): Promise<KeyAccessControl> {
  let watch: KeyWatch | null = null
  const ac = createKeyAccessControl({
    ...o,
    onClose: () => watch?.stop(),
    catchUp: () => watch?.catchUp() ?? Promise.resolve(),
  })
  watch = await o.keys.watch(
    (all) => ac.setStoredKeys(all),
    (err) => o.onWatchError?.(err),
  )
  return ac
}
