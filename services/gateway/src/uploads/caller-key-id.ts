import { createHash } from 'node:crypto'
import type { Context } from 'hono'

/**
 * The id of the calling API key, recorded as an upload's owner: the principal's keyId set by the
 * auth middleware. Where no principal is set (an app built without access control), a stable
 * digest of the presented key stands in, so ownership still separates keys.
 */
export function callerKeyId(c: Context): string {
  const p = (c.var as { principal?: { keyId: string } }).principal
  if (p !== undefined) return p.keyId
  const key = c.req.header('x-api-key') ?? ''
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32)}`
}
