import type { ErrorCode } from './types.ts'

/**
 * Every failure the client reports: an HTTP error answer, a job that ended `failed`, or a network
 * failure (`status` 0, `errorCode` `network_error`), or an abort (`aborted`).
 */
export class TailorError extends Error {
  /** HTTP status of the answer; 0 when no answer came (network failure, abort); for a failed job, the status its code maps to. */
  readonly status: number
  /** The service's `error_code`, or the client's own `network_error` / `aborted` / `invalid_response`. */
  readonly errorCode: ErrorCode | 'network_error' | 'aborted' | 'invalid_response'
  /** The answer's `request_id` (or X-Request-Id header), when there was one. */
  readonly requestId: string | undefined
  /** Seconds to wait before retrying (from Retry-After on 429/503), when given. */
  readonly retryAfter: number | undefined
  /** The job concerned, when the error is a job's. */
  readonly jobId: string | undefined

  constructor(
    message: string,
    o: {
      status: number
      errorCode: TailorError['errorCode']
      requestId?: string | undefined
      retryAfter?: number | undefined
      jobId?: string | undefined
      cause?: unknown
    },
  ) {
    super(message, o.cause === undefined ? undefined : { cause: o.cause })
    this.name = 'TailorError'
    this.status = o.status
    this.errorCode = o.errorCode
    this.requestId = o.requestId
    this.retryAfter = o.retryAfter
    this.jobId = o.jobId
  }

  /** Same field names as the HTTP error body. */
  get error_code(): TailorError['errorCode'] {
    return this.errorCode
  }
}

/** Retry-After as seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (v === null || v.trim() === '') return undefined
  if (/^\d+$/.test(v.trim())) return Number(v.trim())
  const t = Date.parse(v)
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - now) / 1000))
}
