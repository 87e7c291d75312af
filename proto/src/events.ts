import type { ErrorCode } from './errors.ts'
import type { OutputFormat } from './jobs.ts'

/**
 * What inference reports about a job (carried by proto/inference/v1/job_events.proto in the
 * distributed mode, by a function call in the embedded mode).
 */
export type JobEvent =
  | { type: 'running'; jobId: string; attempt: number }
  | { type: 'progress'; jobId: string; framesDone: number; framesTotal: number; /** 0: not said. */ attempt: number }
  | { type: 'completed'; jobId: string; resultKey: string; contentType: string; bytes: number; frames: number }
  | { type: 'failed'; jobId: string; code: ErrorCode; message: string }

/** The gateway's answer to one event. `cancelled`: the job no longer needs work, stop it. */
export interface JobEventAck {
  cancelled: boolean
}

/** Absolute path of the job events .proto file (for @grpc/proto-loader on both sides). */
export const JOB_EVENTS_PROTO_PATH: string = new URL('../inference/v1/job_events.proto', import.meta.url).pathname
export const JOB_EVENTS_PROTO_INCLUDE_DIR: string = new URL('..', import.meta.url).pathname

/** Where a remove-background result lives in the result store; the same for every delivery. */
export const RESULT_EXTENSIONS = {
  mp4_h264: 'mp4', mp4_h265: 'mp4', webm_vp9: 'webm', mov_h265: 'mov', mov_proresks: 'mov',
  mkv_h264: 'mkv', mkv_h265: 'mkv', mkv_vp9: 'mkv', gif: 'gif',
} as const satisfies Record<OutputFormat, string>

export const CONTENT_TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime', mkv: 'video/x-matroska', gif: 'image/gif', jpg: 'image/jpeg',
}

/** Content type of a result key, from its extension; octet-stream when unknown. */
export function contentTypeForKey(key: string): string {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase()
  return CONTENT_TYPES_BY_EXTENSION[ext] ?? 'application/octet-stream'
}

/** Result keys are `<kind>/<job id>.<ext>`: a redelivered job overwrites, never duplicates. */
export const RESULT_KEY_RE = /^(try-on|remove-background)\/[0-9a-f-]{36}\.[a-z0-9]{2,4}$/
