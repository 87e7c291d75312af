import { AppError } from '@tailor/proto'
import type { RateDecision } from './access-control.ts'

/**
 * 429 rate_limit_exceeded (or too_many_auth_failures: access/auth-failure-throttle.ts) with what
 * the edges add to it: Retry-After (seconds) and, for the request rate, the RateLimit-* numbers.
 * Thrown by the HTTP middleware and the submit use case (concurrent-job cap); the gRPC edge reads
 * `retryAfterS` too.
 */
export class RateLimitError extends AppError {
  constructor(
    message: string,
    readonly retryAfterS: number,
    readonly rate: RateDecision | null = null,
    code: 'rate_limit_exceeded' | 'too_many_auth_failures' = 'rate_limit_exceeded',
  ) {
    super(code, message, { retryable: true })
  }
}

/** The RateLimit-* response headers (draft-ietf-httpapi-ratelimit-headers, separate-fields form). */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetS),
  }
}
