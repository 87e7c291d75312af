/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256(secret, "<webhook-id>.<webhook-timestamp>.<body>")>`, the secret being
 * the bytes behind `whsec_<base64>`. Pure; the secret comes from config.
 */
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'
/** Standard Webhooks recommends secrets of 24 to 64 random bytes. */
export const MIN_SECRET_BYTES = 24
export const MAX_SECRET_BYTES = 64

/** The secret's bytes, or null when `s` is not `whsec_` + base64 of 24–64 bytes. */
export function parseWebhookSecret(s: string): Buffer | null {
  if (!s.startsWith(SECRET_PREFIX)) return null
  const b64 = s.slice(SECRET_PREFIX.length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null
  const bytes = Buffer.from(b64, 'base64')
  return bytes.length >= MIN_SECRET_BYTES && bytes.length <= MAX_SECRET_BYTES ? bytes : null
}

/** A new secret in `whsec_` form (32 random bytes). */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

/** One `v1,<base64 HMAC>` signature. */
export function signWebhook(
  secret: Buffer,
  webhookId: string,
  timestampS: number,
  body: string,
): string {
  const mac = createHmac('sha256', secret)
    .update(`${webhookId}.${timestampS}.${body}`, 'utf8')
    .digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one signature per secret, space separated (rotation). */
export function webhookSignatureHeader(
  secrets: readonly Buffer[],
  webhookId: string,
  timestampS: number,
  body: string,
): string {
  return secrets.map((s) => signWebhook(s, webhookId, timestampS, body)).join(' ')
}
