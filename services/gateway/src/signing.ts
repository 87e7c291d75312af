import { createHmac, timingSafeEqual } from 'node:crypto'

/** HMAC-SHA256 over the result key and the expiry (unix seconds), base64url. */
export function signResult(secret: string, key: string, expiresS: number): string {
  return createHmac('sha256', secret).update(`${key}\n${expiresS}`).digest('base64url')
}

export type SignatureCheck = 'ok' | 'expired' | 'invalid'

export function verifyResultSignature(
  secret: string,
  key: string,
  expires: string | undefined,
  sig: string | undefined,
  nowS: number,
): SignatureCheck {
  if (expires === undefined || sig === undefined || !/^\d{1,12}$/.test(expires)) return 'invalid'
  const expected = Buffer.from(signResult(secret, key, Number(expires)))
  const given = Buffer.from(sig)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid'
  return Number(expires) < nowS ? 'expired' : 'ok'
}

/** `/results/<key>?expires=…&sig=…` on `baseUrl`. */
export function resultUrl(
  baseUrl: string,
  secret: string,
  key: string,
  nowS: number,
  ttlS: number,
): string {
  const expires = nowS + ttlS
  const path = key.split('/').map(encodeURIComponent).join('/')
  return `${baseUrl}/results/${path}?expires=${expires}&sig=${signResult(secret, key, expires)}`
}
