import type { Context } from 'hono'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import {
  IDEMPOTENCY_KEY_HEADER,
  parseIdempotencyKey,
  requestFingerprint,
} from './idempotency-key.ts'
import type { IdempotentRequest } from './submit-once.ts'

/**
 * The HTTP edge's Idempotency-Key: null without the header; invalid_parameter when it is not
 * 1–255 visible ASCII characters. Scoped to the calling API key (its principal keyId).
 */
export function idempotentRequest(
  c: Context,
  operation: string,
  validatedBody: unknown,
): IdempotentRequest | null {
  const key = parseIdempotencyKey(c.req.header(IDEMPOTENCY_KEY_HEADER))
  if (key === null) return null
  return { scope: callerKeyId(c), key, fingerprint: requestFingerprint(operation, validatedBody) }
}
