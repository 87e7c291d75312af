import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { AppError, HTTP_STATUS, redactPaths, toAppError } from '@tailor/proto'
import { RateLimitError, rateLimitHeaders } from './access/rate-limit-error.ts'
import type { Logger } from './logger.ts'

/** 405 method_not_allowed with the methods the path has (the `Allow` header). */
export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    readonly allow: readonly string[],
  ) {
    super(
      'method_not_allowed',
      `${method} is not allowed here; this path answers ${allow.join(', ')}.`,
    )
  }
}

/** The one HTTP edge for errors: every 4xx/5xx is `{error, error_code}` (+ request_id). */
export function toErrorResponse(err: unknown, c: Context, log: Logger): Response {
  let e: AppError
  if (err instanceof HTTPException) {
    // Raised by hono middleware (body limit, …): map to our vocabulary.
    e =
      err.status === 413
        ? new AppError('invalid_request_body', 'The request body is too large.', { cause: err })
        : new AppError('invalid_request_body', err.message || 'The request could not be read.', {
            cause: err,
          })
  } else {
    e = toAppError(err)
  }
  const status = HTTP_STATUS[e.code] as ContentfulStatusCode
  const requestId = c.get('requestId') as string | undefined
  if (status >= 500) log.error({ err, request_id: requestId, code: e.code }, 'request failed')
  else log.debug({ request_id: requestId, code: e.code }, 'request rejected')
  const message =
    status >= 500 && e.code === 'unexpected_error'
      ? 'An unexpected error occurred; try again later.'
      : redactPaths(e.message)
  const headers: Record<string, string> =
    err instanceof RateLimitError
      ? {
          'Retry-After': String(err.retryAfterS),
          ...(err.rate === null ? {} : rateLimitHeaders(err.rate)),
        }
      : err instanceof MethodNotAllowedError
        ? { Allow: err.allow.join(', ') }
        : {}
  return c.json(
    { error: message, error_code: e.code, ...(requestId ? { request_id: requestId } : {}) },
    status,
    headers,
  )
}
