import { createHash, randomBytes } from 'node:crypto'
import { generateWebhookSecret, parseWebhookSecret } from '../webhooks/standard-webhooks.ts'

/**
 * An API key as stored: never the key itself, only its sha256. `id` is stable and public (job
 * records carry it as their owner, `tailor keys revoke` takes it); limits left out use the
 * gateway's defaults (DEFAULT_RATE_LIMIT_PER_S, DEFAULT_MAX_CONCURRENT_JOBS).
 */
export interface ApiKeyRecord {
  id: string
  name: string
  /** sha256 of the key, lowercase hex. */
  sha256: string
  createdAt: string
  revokedAt?: string
  /** Requests per second (token bucket refill; the bucket holds one second's worth). */
  rateLimitPerS?: number
  /** Jobs that may be pending or running at once; 0 = no cap. */
  maxConcurrentJobs?: number
  /** Credit budget (`tailor keys create --credits N`): one credit per job that completes. Absent: unlimited. */
  credits?: number
  /** Credits charged so far (completed jobs); absent: none. */
  creditsUsed?: number
  /**
   * Standard Webhooks signing secret (`whsec_…`) of this key's webhook deliveries, shown once by
   * `tailor keys create` / `rotate-webhook-secret`. Stored as is (signing needs it), unlike the
   * key. Absent (a key made before per-key secrets): its deliveries are signed with WEBHOOK_SECRET.
   */
  webhookSecret?: string
  /** The secret a rotation replaced: deliveries are signed with both until `previousWebhookSecretUntil`. */
  previousWebhookSecret?: string
  previousWebhookSecretUntil?: string
}

/**
 * The secrets a key's webhook deliveries are signed with at `nowMs`: its own (and the one it
 * replaced, until the rotation's overlap ends), or null when it has none of its own.
 */
export function keyWebhookSecrets(
  r: Pick<ApiKeyRecord, 'webhookSecret' | 'previousWebhookSecret' | 'previousWebhookSecretUntil'>,
  nowMs: number,
): string[] | null {
  if (r.webhookSecret === undefined) return null
  const keepOld =
    r.previousWebhookSecret !== undefined &&
    r.previousWebhookSecretUntil !== undefined &&
    Date.parse(r.previousWebhookSecretUntil) > nowMs
  return keepOld ? [r.webhookSecret, r.previousWebhookSecret!] : [r.webhookSecret]
}

/** The record with a new webhook secret; the old one (if any) keeps signing for `overlapMs` more (0: stops at once). */
export function rotateWebhookSecret(
  r: ApiKeyRecord,
  overlapMs: number,
  now = new Date(),
): { record: ApiKeyRecord; secret: string } {
  const secret = generateWebhookSecret()
  const { previousWebhookSecret: _p, previousWebhookSecretUntil: _u, ...rest } = r
  const keepOld = r.webhookSecret !== undefined && overlapMs > 0
  return {
    secret,
    record: {
      ...rest,
      webhookSecret: secret,
      ...(keepOld
        ? {
            previousWebhookSecret: r.webhookSecret,
            previousWebhookSecretUntil: new Date(now.getTime() + overlapMs).toISOString(),
          }
        : {}),
    },
  }
}

/** Credits a key has left: null when it has no budget (unlimited), else never below 0. */
export const creditsRemaining = (
  r: Pick<ApiKeyRecord, 'credits' | 'creditsUsed'>,
): number | null => (r.credits === undefined ? null : Math.max(0, r.credits - (r.creditsUsed ?? 0)))

export const KEY_PREFIX = 'tk_'
/** Key ids: `key_` + 16 base64url characters (96 random bits); safe as a KV key and a file name. */
export const KEY_ID_RE = /^key_[A-Za-z0-9_-]{16}$/
export const KEY_NAME_MAX = 100
/**
 * Largest concurrent-job cap (0 = no cap): a key's slot list is one KV entry rewritten on every
 * submission and completion (access/job-slots.ts), sized for caps up to this.
 */
export const MAX_JOB_CAP = 1000

/** A new stable key id: `key_` + 16 base64url characters (96 random bits). */
export const newKeyId = (): string => `key_${randomBytes(12).toString('base64url')}`

export const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex')

/**
 * A new plain key (`tk_` + base64url of 32 random bytes) and its record with a new webhook signing
 * secret; the key is shown once, never stored; the secret is shown once too (and stored).
 */
export function generateApiKey(o: {
  name: string
  rateLimitPerS?: number
  maxConcurrentJobs?: number
  credits?: number
  now?: Date
}): { key: string; webhookSecret: string; record: ApiKeyRecord } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`
  const webhookSecret = generateWebhookSecret()
  const record: ApiKeyRecord = {
    id: newKeyId(),
    name: o.name,
    sha256: sha256Hex(key),
    createdAt: (o.now ?? new Date()).toISOString(),
    webhookSecret,
    ...(o.rateLimitPerS === undefined ? {} : { rateLimitPerS: o.rateLimitPerS }),
    ...(o.maxConcurrentJobs === undefined ? {} : { maxConcurrentJobs: o.maxConcurrentJobs }),
    ...(o.credits === undefined ? {} : { credits: o.credits, creditsUsed: 0 }),
  }
  return { key, webhookSecret, record }
}

/**
 * The id of a key configured by environment (API_KEYS, TAILOR_API_KEY, API_KEY_SHA256): derived
 * from its hash, so it is the same on every replica and across restarts. Same form as the upload
 * owner fallback (uploads/caller-key-id.ts).
 */
export const envKeyId = (sha256: string): string => `sha256:${sha256.slice(0, 32)}`

/** Loose check of a stored record (files and KV values are read back from outside this process). */
export function isApiKeyRecord(v: unknown): v is ApiKeyRecord {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Record<string, unknown>
  const optNum = (x: unknown): boolean =>
    x === undefined || (typeof x === 'number' && Number.isFinite(x) && x >= 0)
  const optSecret = (x: unknown): boolean =>
    x === undefined || (typeof x === 'string' && parseWebhookSecret(x) !== null)
  return (
    typeof r.id === 'string' &&
    typeof r.name === 'string' &&
    typeof r.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(r.sha256) &&
    typeof r.createdAt === 'string' &&
    (r.revokedAt === undefined || typeof r.revokedAt === 'string') &&
    optNum(r.rateLimitPerS) &&
    optNum(r.maxConcurrentJobs) &&
    optNum(r.credits) &&
    optNum(r.creditsUsed) &&
    optSecret(r.webhookSecret) &&
    optSecret(r.previousWebhookSecret) &&
    (r.previousWebhookSecretUntil === undefined || typeof r.previousWebhookSecretUntil === 'string')
  )
}
