import type { Context, MiddlewareHandler } from 'hono'
import { AppError } from '@tailor/proto'
import type { AccessControl, Principal } from '../access/access-control.ts'
import { authenticateFrom, type AuthFailureThrottle } from '../access/auth-failure-throttle.ts'
import { RateLimitError, rateLimitHeaders } from '../access/rate-limit-error.ts'

export type PrincipalVariables = { principal: Principal }

/** The 401 sentences (the OpenAPI document's example quotes the second: docs show what clients get). */
export const MISSING_API_KEY_MESSAGE = 'Missing API key: send it in the X-API-KEY header.'
export const INVALID_API_KEY_MESSAGE = 'Invalid API key in the X-API-KEY header.'

/**
 * What takes a token from the key's request budget: requests that create work (POST a job, POST
 * an upload). Status polls and cancels do not, so a client can follow several jobs at once; they
 * still carry the RateLimit-* headers.
 */
export const countsAgainstRate = (method: string, path: string): boolean =>
  method === 'POST' && !path.endsWith('/cancel')

/**
 * X-API-KEY check (header names are case-insensitive in HTTP) through the AccessControl port, then
 * the key's request budget. Sets `principal` on the context; answers 401 invalid_auth_token for a
 * missing, unknown or revoked key and 429 rate_limit_exceeded (Retry-After) over the budget.
 * `rate: false` authenticates only (e.g. the playground's sample files). With `throttle`, failed
 * authentications are counted per client address (`address`) and an address past its allowance
 * answers 429 too_many_auth_failures before its key is checked.
 */
export function apiKeyAuth(
  access: AccessControl,
  o: {
    rate?: boolean
    throttle?: { throttle: AuthFailureThrottle; address: (c: Context) => string | undefined }
  } = {},
): MiddlewareHandler<{ Variables: PrincipalVariables }> {
  return async (c, next) => {
    const key = c.req.header('x-api-key')
    if (key === undefined || key.length === 0) {
      throw new AppError('invalid_auth_token', MISSING_API_KEY_MESSAGE)
    }
    const principal =
      o.throttle === undefined
        ? await access.authenticate(key)
        : await authenticateFrom(access, o.throttle.throttle, o.throttle.address(c), key)
    if (principal === null) throw new AppError('invalid_auth_token', INVALID_API_KEY_MESSAGE)
    c.set('principal', principal)
    if (o.rate !== false) {
      const d = countsAgainstRate(c.req.method, c.req.path)
        ? await access.takeRequest(principal)
        : access.peekRequest?.(principal)
      if (d !== undefined) {
        for (const [k, v] of Object.entries(rateLimitHeaders(d))) c.header(k, v)
        if (!d.allowed) {
          throw new RateLimitError(
            `Rate limit of ${d.limit} requests per second exceeded for this API key; retry in ${d.retryAfterS} s.`,
            d.retryAfterS,
            d,
          )
        }
      }
    }
    await next()
  }
}
