/**
 * The public error vocabulary (ARCHITECTURE.md §2). HTTP statuses live beside each code so that a
 * new code without a status is a compile error.
 */
export const HTTP_STATUS = {
  invalid_request_body: 400,
  missing_parameter: 400,
  invalid_parameter: 400,
  unsupported_content_type: 400,
  malformed_image: 400,
  unsupported_image_format: 400,
  file_size_too_large: 400,
  resolution_too_high: 400,
  resolution_too_low: 400,
  invalid_auth_token: 401,
  // Result URLs (signed, valid for a limited time).
  invalid_signature: 403,
  /** The API key's credit budget (`tailor keys create --credits N`) is spent. */
  insufficient_api_credits: 403,
  result_url_expired: 403,
  range_not_satisfiable: 416,
  not_found: 404,
  /** The path exists, not with this method: the answer's `Allow` header lists those it has. */
  method_not_allowed: 405,
  job_finished: 409,
  /** Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header): reused with another body → 422, its first request still in flight → 409. */
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
  rate_limit_exceeded: 429,
  /** Too many unknown or revoked keys from one client address (AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_S): refused before the key is checked until `Retry-After`. */
  too_many_auth_failures: 429,
  /** gRPC only: the key already holds GRPC_MAX_WATCHES_PER_KEY WatchJob streams on this gateway (RESOURCE_EXHAUSTED). */
  watch_limit_exceeded: 429,
  /** The key's outstanding uploads (bytes or count, UPLOAD_QUOTA_BYTES / UPLOAD_QUOTA_COUNT) are used up until some expire. */
  upload_quota_exceeded: 429,
  /** A storage bucket (or the embedded data dir's share) is at its byte cap: nothing more fits until retention frees some. */
  storage_full: 507,
  unexpected_error: 500,
  service_unavailable: 503,
  // Job-only codes (carried in a failed job's `error`, not as an HTTP status of the POST).
  request_timeout: 504,
  /** The job was delivered MAX_DELIVER times and its worker stopped (crashed, was killed) every time. */
  worker_crashed: 500,
  job_expired: 410,
  job_cancelled: 409,
  malformed_video: 400,
  video_too_long: 400,
  /** More frames than VIDEO_MAX_FRAMES (after the frame rate is capped at VIDEO_MAX_FPS). */
  video_too_many_frames: 400,
  /** The result would be larger than RESULT_MAX_BYTES (encoding is stopped there). */
  result_too_large: 413,
  input_fetch_failed: 400,
  no_person_detected: 422,
  no_garment_detected: 422,
  /** Try-on found a person in a pose it cannot dress plausibly (seated, crouching, lying or bending over, side or back view, arms crossed over the torso). */
  unsupported_pose: 422,
} as const

export type ErrorCode = keyof typeof HTTP_STATUS
export const ERROR_CODES = Object.keys(HTTP_STATUS) as ErrorCode[]

export class AppError extends Error {
  readonly retryable: boolean
  constructor(
    readonly code: ErrorCode,
    message: string,
    o: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, { cause: o.cause })
    this.name = 'AppError'
    this.retryable = o.retryable ?? false
  }
}

/**
 * Start-up refused for a reason the operator fixes (a port in use, a bad work dir, a provider that
 * did not load): each service's main prints its message as one line, without a stack trace.
 */
export class StartupError extends Error {
  constructor(message: string, o: { cause?: unknown } = {}) {
    super(message, { cause: o.cause })
    this.name = 'StartupError'
  }
}

/**
 * A failed listen as the StartupError the operator acts on, one line naming the variable to
 * change: the port is in use (EADDRINUSE; grpc-js says so only in its message), or not allowed
 * (EACCES), or HOST is not an address of this machine (EADDRNOTAVAIL). Anything else as it was.
 */
export function listenFailure(err: unknown, variable: string, host: string, port: number): unknown {
  // `code` as Node's system errors carry it (typed structurally: this module is also in the
  // browser client's declarations, which have no Node types).
  const code = (err as { code?: unknown } | null | undefined)?.code
  const text = `${typeof code === 'string' ? code : ''} ${err instanceof Error ? err.message : String(err)}`
  const at = `${variable}=${port}`
  if (/EADDRINUSE/.test(text)) {
    return new StartupError(
      `${at}: port ${port} on ${host} is already in use; set ${variable} to a free port (or stop what is using it).`,
      { cause: err },
    )
  }
  if (/EACCES/.test(text)) {
    return new StartupError(
      `${at}: not allowed to listen on port ${port}; set ${variable} to a port above 1023.`,
      { cause: err },
    )
  }
  if (/EADDRNOTAVAIL/.test(text)) {
    return new StartupError(
      `HOST=${host}: not an address of this machine; set HOST to one of its addresses (or 0.0.0.0).`,
      { cause: err },
    )
  }
  return err
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError
}

/** Anything thrown becomes an AppError; unknown errors are `unexpected_error` and retryable. */
export function toAppError(e: unknown): AppError {
  if (e instanceof AppError) return e
  return new AppError('unexpected_error', e instanceof Error ? e.message : String(e), {
    cause: e,
    retryable: true,
  })
}

/**
 * Absolute file-system paths: POSIX ones of two segments or more (not inside a URL: a path right
 * after a word character or one of `.:/\\=?&%#~-` is left alone) and Windows drive paths.
 */
const ABS_PATH_RE = /(?<![\w.:/\\=?&%#~-])(?:\/[\w.@+-]+){2,}\/?|\b[A-Za-z]:\\(?:[\w.@+-]+\\?)*/g

/**
 * A message a client will see, with every absolute file-system path reduced to its last segment
 * (`/srv/data/work/<id>-x/input: Invalid argument` → `input: Invalid argument`): where the
 * service keeps its files is nobody's business but the operator's (the logs keep the full cause).
 */
export function redactPaths(message: string): string {
  return message.replace(
    ABS_PATH_RE,
    (p) =>
      p
        .replace(/[\\/]+$/, '')
        .split(/[\\/]/)
        .at(-1) ?? '',
  )
}
