/**
 * The public request and response shapes, from the shared zod schemas in @tailor/proto
 * (proto/src/api.ts, proto/src/uploads.ts). Type-only imports: nothing of proto's runtime (nor
 * anything node-only) reaches a browser bundle through them.
 */
import type {
  CancelAccepted,
  ErrorBody,
  ErrorCode,
  JobAccepted,
  JobKind,
  JobStatus,
  JobStatusDocument,
  OutputFormat,
  RemoveBackgroundBodyInput,
  TryOnBodyInput,
  TryOnCompleted,
  UploadAccepted,
} from '@tailor/proto'

export type {
  CancelAccepted,
  ErrorBody,
  ErrorCode,
  JobAccepted,
  JobKind,
  JobStatus,
  JobStatusDocument,
  OutputFormat,
}

/** POST /v1/try-on body (spec 2.1): input URLs are http(s) or `tailor://uploads/<id>`. */
export type TryOnRequest = TryOnBodyInput
/** 200 (finished within the server's wait) carries result_url; 202 only job_id. */
export type TryOnResponse = JobAccepted & Partial<Pick<TryOnCompleted, 'result_url'>>
/** POST /v1/video/remove-background body (spec 2.3). */
export type RemoveBackgroundRequest = RemoveBackgroundBodyInput
/** POST /v1/uploads → 201. */
export type UploadResponse = UploadAccepted
/** GET /v1/credits → 200: each completed job costs one credit of a key with a budget (`tailor keys create --credits N`). */
export interface Credits {
  /** Credits left; null for a key without a budget (unlimited). */
  credits_remaining: number | null
  unlimited: boolean
}
