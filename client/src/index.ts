/** @tailor/client: browser-safe entry (no node: imports here or in what it re-exports). */
export {
  TailorClient,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_RATE_LIMIT_RETRIES,
} from './tailor-client.ts'
export type {
  FetchLike,
  RequestOptions,
  SubmitOptions,
  TailorClientOptions,
  UploadData,
  WaitOptions,
} from './tailor-client.ts'
export { TailorError, parseRetryAfter } from './tailor-error.ts'
export * from './types.ts'
