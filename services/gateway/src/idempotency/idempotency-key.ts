/**
 * The Idempotency-Key request header (IETF draft-ietf-httpapi-idempotency-key-header): validation,
 * the canonical form of a request, and the storage key.
 */
import { createHash } from 'node:crypto'
import { AppError } from '@tailor/proto'

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'
export const REPLAYED_HEADER = 'Idempotent-Replayed'
/** The same over the gRPC API (call metadata keys are lower case). */
export const IDEMPOTENCY_METADATA = 'idempotency-key'
export const REPLAYED_METADATA = 'idempotent-replayed'
export const MAX_KEY_LENGTH = 255
/** Visible ASCII (0x21–0x7E): no spaces, no control characters. */
const KEY_RE = /^[\x21-\x7e]+$/

/** The header's value, or null when absent; throws invalid_parameter when it is not 1–255 visible ASCII characters. */
export function parseIdempotencyKey(value: string | undefined): string | null {
  if (value === undefined) return null
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !KEY_RE.test(value)) {
    throw new AppError(
      'invalid_parameter',
      `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (letters, digits, punctuation; no spaces), e.g. a UUID.`,
    )
  }
  return value
}

/** JSON with object keys sorted at every level: equal values give equal strings. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/**
 * Fingerprint of a request: the operation and its body *after validation* (defaults filled in,
 * "true" and true alike, unknown fields dropped), so only a change of meaning counts as a
 * different body.
 */
export function requestFingerprint(operation: string, validatedBody: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ operation, body: validatedBody }), 'utf8')
    .digest('hex')
}

/** Storage key of a header value within one API key's scope (a digest: any header bytes, fixed length). */
export function idempotencyStorageKey(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\n${key}`, 'utf8').digest('hex')
}
