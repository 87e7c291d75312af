import type { ErrorCode } from './errors.ts'

/**
 * What inference reports about a job (carried by proto/inference/v1/job_events.proto in the
 * distributed mode, by a function call in the embedded mode).
 */
export type JobEvent =
  | { type: 'running'; jobId: string; attempt: number }
  | {
      type: 'progress'
      jobId: string
      framesDone: number
      framesTotal: number
      /** 0: not said. */ attempt: number
    }
  | {
      type: 'completed'
      jobId: string
      resultKey: string
      contentType: string
      bytes: number
      frames: number
    }
  | { type: 'failed'; jobId: string; code: ErrorCode; message: string }

/** The gateway's answer to one event. `cancelled`: the job no longer needs work, stop it. */
export interface JobEventAck {
  cancelled: boolean
}

/** Absolute path of the job events .proto file (for @grpc/proto-loader on both sides). */
export const JOB_EVENTS_PROTO_PATH: string = new URL(
  '../inference/v1/job_events.proto',
  import.meta.url,
).pathname
export const JOB_EVENTS_PROTO_INCLUDE_DIR: string = new URL('..', import.meta.url).pathname

/** Result keys are `<kind>/<job id>.<ext>`: a redelivered job overwrites, never duplicates. */
export const RESULT_KEY_RE = /^(try-on|remove-background)\/[0-9a-f-]{36}\.[a-z0-9]{2,4}$/
