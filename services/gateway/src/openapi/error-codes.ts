/**
 * One sentence per public error code, for the OpenAPI document (`ErrorCode` schema) and so /docs.
 * A code missing here is still listed (with its HTTP status); openapi-document.test.ts fails until
 * it is described, so a new code cannot ship undocumented.
 */
import type { ErrorCode } from '@tailor/proto'

export const ERROR_CODE_DOCS: Partial<Record<ErrorCode, string>> = {
  invalid_request_body: 'The body is not a JSON object, is too large, or an upload is empty.',
  missing_parameter: 'A required field is missing.',
  invalid_parameter:
    'A field has the wrong type or value (e.g. `transparent` with a format without alpha, a bad colour, an unknown format, a bad URL).',
  unsupported_content_type:
    'Content-Type is not `application/json` (`POST /v1/try-on` also takes `multipart/form-data`; for an upload: not an accepted media type).',
  malformed_image: 'An input image could not be decoded.',
  unsupported_image_format:
    'An input is not an image format the service reads (also an HTML page, SVG, PDF).',
  file_size_too_large: 'An input or upload is larger than its limit.',
  resolution_too_high: 'An input is larger than the allowed resolution.',
  resolution_too_low: 'An input is smaller than the allowed resolution.',
  invalid_auth_token: 'The `X-API-KEY` header is missing or the key is unknown.',
  invalid_signature: 'A result URL was tampered with or has no signature.',
  result_url_expired:
    'A result URL is older than its validity; poll the job again for a fresh one.',
  range_not_satisfiable: 'A `Range` lies outside the result.',
  not_found: 'No such job, upload or endpoint (or it belongs to another API key).',
  job_finished: 'Cancel of a job that has already ended.',
  idempotency_key_reused: 'An `Idempotency-Key` was sent again with a different request.',
  idempotency_key_in_use:
    'The first request with this `Idempotency-Key` is still being processed; retry shortly.',
  insufficient_api_credits:
    "The API key's credit budget is spent (`GET /v1/credits` answers 0): no job is accepted until its operator grants more.",
  method_not_allowed:
    'The path exists but not with this method; the `Allow` header lists the methods it has.',
  rate_limit_exceeded: 'Too many requests for this API key; wait `Retry-After` seconds.',
  too_many_auth_failures:
    'Too many unknown or revoked API keys were sent from this client address (`AUTH_FAILURE_LIMIT` per `AUTH_FAILURE_WINDOW_S`); no key from it is checked before `Retry-After` seconds.',
  watch_limit_exceeded:
    'gRPC only (RESOURCE_EXHAUSTED): this API key already holds the most WatchJob streams one gateway allows (`GRPC_MAX_WATCHES_PER_KEY`); end one, or poll GetJob.',
  upload_quota_exceeded:
    "This API key's unexpired uploads already hold its byte or count quota; retry once some expire (an hour after each was made).",
  storage_full:
    'The service has no room for more uploads or results right now (a storage cap is reached); retry later.',
  unexpected_error: 'A bug on our side; the job is retried where that is safe.',
  service_unavailable: 'Models not loaded or the queue unreachable; try again later.',
  request_timeout: "The job ran past its kind's time limit.",
  worker_crashed: 'The worker running the job died on every delivery.',
  job_expired: "The job's result or record was removed after its retention time.",
  job_cancelled: "The job was cancelled at the client's request.",
  malformed_video: 'The video is truncated, corrupt, or not a container/codec the service reads.',
  video_too_long: 'The video is longer than the allowed duration.',
  video_too_many_frames:
    'The video has more frames than allowed (counted at the capped frame rate).',
  result_too_large:
    'The result would be larger than the allowed size; choose a smaller format or a shorter or smaller input.',
  input_fetch_failed:
    'An input URL could not be fetched (refused address, HTTP error, timeout, too large).',
  no_person_detected: 'Try-on found no person with both shoulders visible.',
  no_garment_detected: 'Try-on found no garment in the garment photo.',
  unsupported_pose:
    'Try-on found a person in a pose it cannot dress plausibly (seated, crouching, lying or bending over, seen from the side or the back, arms crossed over the torso); the message says what was found.',
}
