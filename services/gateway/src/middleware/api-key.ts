import { createHash, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import { AppError } from '@tailor/proto'

/**
 * X-API-KEY check (header names are case-insensitive in HTTP). Keys are known only by their
 * sha256; the presented key is hashed and compared to every accepted hash in constant time.
 */
export function apiKeyAuth(hashes: readonly Buffer[]): MiddlewareHandler {
  return async (c, next) => {
    const key = c.req.header('x-api-key')
    if (key === undefined || key.length === 0) {
      throw new AppError('invalid_auth_token', 'Missing API key: send it in the X-API-KEY header.')
    }
    const h = createHash('sha256').update(key, 'utf8').digest()
    let ok = false
    for (const want of hashes) ok = timingSafeEqual(h, want) || ok
    if (!ok) throw new AppError('invalid_auth_token', 'Invalid API key in the X-API-KEY header.')
    await next()
  }
}
