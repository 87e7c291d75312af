/**
 * The public request and response shapes as the client sends and receives them. Type-only imports
 * from @tailor/proto (the shared vocabulary), so nothing node-only reaches a browser bundle.
 */
import type { ErrorCode, JobKind, JobStatus, OutputFormat } from '@tailor/proto'

export type { ErrorCode, JobKind, JobStatus, OutputFormat }

/** A URL the service accepts as an input: http(s), or `tailor://uploads/<id>` from {@link UploadResponse}. */
export type InputUrl = string
export type BoolString = 'true' | 'false' | boolean

/** POST /v1/try-on (spec 2.1). */
export interface TryOnRequest {
  person_image_url: InputUrl
  garment_image_url: InputUrl
  /** Deprecated: overrides category detection. */
  garment_mode?: 'auto' | 'upper' | 'lower' | 'full'
  preprocess_garment?: BoolString
  remove_background?: BoolString
  wait_for_result?: BoolString
}

/** 200 (finished within the server's wait) carries result_url; 202 only job_id. */
export interface TryOnResponse {
  job_id: string
  result_url?: string
}

/** POST /v1/video/remove-background (spec 2.3). */
export interface RemoveBackgroundRequest {
  video_url: InputUrl
  /** `transparent`, `#RGB` or `#RRGGBB`; default `#000000`. */
  background_color?: string
  output_format?: OutputFormat
}

export interface JobAccepted {
  job_id: string
}

/** GET /v1/<kind>/job/{id}. */
export interface JobStatusDocument {
  job_id: string
  status: JobStatus
  /** 0..1 */
  progress: number
  result_url: string | null
  error: { message: string; error_code: ErrorCode } | null
  created_at: string
  updated_at: string
}

/** POST /v1/uploads → 201. */
export interface UploadResponse {
  upload_id: string
  /** `tailor://uploads/<id>`: pass it wherever an input URL is accepted. */
  url: string
  expires_at: string
}

/** The HTTP error body (every 4xx/5xx). */
export interface ErrorBody {
  error: string
  error_code: ErrorCode
  request_id?: string
  job_id?: string
}
