/**
 * The gRPC edge for errors (STYLE.md §3.4): every public error code has one gRPC status, and every
 * error answer carries the code itself twice, for simple and for rich clients:
 *   - trailing metadata `error-code: <error_code>` (plus `job-id` / `retry-after` where they apply);
 *   - `grpc-status-details-bin`: google.rpc.Status {code, message, details: [google.rpc.ErrorInfo
 *     {reason: <error_code>, domain: "tailor", metadata: {job_id?}}, google.rpc.RetryInfo?]}.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js'
import { redactPaths, toAppError, type AppError, type ErrorCode } from '@tailor/proto'

/** Exhaustive by construction: a new ErrorCode without a gRPC status is a compile error. */
export const GRPC_STATUS = {
  invalid_request_body: status.INVALID_ARGUMENT,
  missing_parameter: status.INVALID_ARGUMENT,
  invalid_parameter: status.INVALID_ARGUMENT,
  unsupported_content_type: status.INVALID_ARGUMENT,
  malformed_image: status.INVALID_ARGUMENT,
  unsupported_image_format: status.INVALID_ARGUMENT,
  file_size_too_large: status.INVALID_ARGUMENT,
  resolution_too_high: status.INVALID_ARGUMENT,
  resolution_too_low: status.INVALID_ARGUMENT,
  invalid_auth_token: status.UNAUTHENTICATED,
  invalid_signature: status.PERMISSION_DENIED,
  result_url_expired: status.PERMISSION_DENIED,
  range_not_satisfiable: status.OUT_OF_RANGE,
  not_found: status.NOT_FOUND,
  job_finished: status.FAILED_PRECONDITION,
  // Reused with another request: depends on what the key did before, not on this request alone.
  idempotency_key_reused: status.FAILED_PRECONDITION,
  // Its first request is still in flight: a concurrency conflict, retry later.
  idempotency_key_in_use: status.ABORTED,
  rate_limit_exceeded: status.RESOURCE_EXHAUSTED,
  too_many_auth_failures: status.RESOURCE_EXHAUSTED,
  watch_limit_exceeded: status.RESOURCE_EXHAUSTED,
  method_not_allowed: status.UNIMPLEMENTED,
  insufficient_api_credits: status.RESOURCE_EXHAUSTED,
  upload_quota_exceeded: status.RESOURCE_EXHAUSTED,
  storage_full: status.RESOURCE_EXHAUSTED,
  unexpected_error: status.INTERNAL,
  service_unavailable: status.UNAVAILABLE,
  request_timeout: status.DEADLINE_EXCEEDED,
  worker_crashed: status.INTERNAL,
  job_expired: status.NOT_FOUND,
  job_cancelled: status.CANCELLED,
  malformed_video: status.INVALID_ARGUMENT,
  video_too_long: status.INVALID_ARGUMENT,
  video_too_many_frames: status.INVALID_ARGUMENT,
  result_too_large: status.RESOURCE_EXHAUSTED,
  input_fetch_failed: status.INVALID_ARGUMENT,
  no_person_detected: status.INVALID_ARGUMENT,
  no_garment_detected: status.INVALID_ARGUMENT,
  unsupported_pose: status.INVALID_ARGUMENT,
} as const satisfies Record<ErrorCode, status>

export const ERROR_DOMAIN = 'tailor'
export const ERROR_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.ErrorInfo'
export const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo'

/** What an error answer may add: the job it is about, seconds to wait before retrying. */
export interface ErrorExtras {
  jobId?: string
  retryAfterS?: number
}

// Protocol buffers wire format, just what google.rpc.Status needs (varints and length-delimited fields).
const varint = (n: number): number[] => {
  const out: number[] = []
  let v = Math.max(0, Math.floor(n))
  while (v > 0x7f) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
  return out
}
const int = (field: number, n: number): Buffer => Buffer.from([...varint(field << 3), ...varint(n)])
const bytes = (field: number, b: Buffer | string): Buffer => {
  const payload = typeof b === 'string' ? Buffer.from(b, 'utf8') : b
  return Buffer.concat([
    Buffer.from([...varint((field << 3) | 2), ...varint(payload.length)]),
    payload,
  ])
}
const any = (typeUrl: string, value: Buffer): Buffer =>
  Buffer.concat([bytes(1, typeUrl), bytes(2, value)])

/** google.rpc.ErrorInfo {reason = 1, domain = 2, map<string, string> metadata = 3}. */
function errorInfo(code: ErrorCode, metadata: Record<string, string>): Buffer {
  const entries = Object.entries(metadata).map(([k, v]) =>
    bytes(3, Buffer.concat([bytes(1, k), bytes(2, v)])),
  )
  return Buffer.concat([bytes(1, code), bytes(2, ERROR_DOMAIN), ...entries])
}

/** google.rpc.RetryInfo {google.protobuf.Duration retry_delay = 1 {int64 seconds = 1}}. */
const retryInfo = (seconds: number): Buffer => bytes(1, int(1, Math.ceil(seconds)))

/** google.rpc.Status {int32 code = 1, string message = 2, repeated google.protobuf.Any details = 3}. */
export function encodeStatusDetails(
  grpcCode: status,
  message: string,
  code: ErrorCode,
  x: ErrorExtras = {},
): Buffer {
  const details = [
    bytes(
      3,
      any(ERROR_INFO_TYPE_URL, errorInfo(code, x.jobId === undefined ? {} : { job_id: x.jobId })),
    ),
  ]
  if (x.retryAfterS !== undefined) {
    details.push(bytes(3, any(RETRY_INFO_TYPE_URL, retryInfo(x.retryAfterS))))
  }
  return Buffer.concat([int(1, grpcCode), bytes(2, message), ...details])
}

/** The gRPC answer for an error: status, sentence (hidden for unexpected errors, as over HTTP) and metadata. */
export function toServiceError(
  err: unknown,
  x: ErrorExtras = {},
): { e: AppError; error: Partial<ServiceError> } {
  const e = toAppError(err)
  const code = GRPC_STATUS[e.code]
  const message =
    e.code === 'unexpected_error'
      ? 'An unexpected error occurred; try again later.'
      : redactPaths(e.message)
  const metadata = new Metadata()
  metadata.set('error-code', e.code)
  if (x.jobId !== undefined) metadata.set('job-id', x.jobId)
  if (x.retryAfterS !== undefined) metadata.set('retry-after', String(Math.ceil(x.retryAfterS)))
  metadata.set('grpc-status-details-bin', encodeStatusDetails(code, message, e.code, x))
  return { e, error: { code, details: message, metadata } }
}
