import { AppError, type TryOnBody } from '@tailor/proto'
import type { Config } from '../config.ts'
import type { SubmitOnceResult } from '../idempotency/submit-once.ts'
import type { Logger } from '../logger.ts'
import { resultUrl } from '../signing.ts'
import { checkUploadRefs } from '../uploads/check-upload-refs.ts'
import type { UploadStore } from '../uploads/upload-store.ts'
import type { JobStore } from './job-store.ts'
import { tryOnSubmission, type TryOnSubmission } from './submit-job.ts'
import { waitForFinal } from './wait-for-job.ts'

export interface TryOnAndWaitDeps {
  config: Pick<Config, 'resultUrlSecret' | 'resultUrlTtlS'>
  jobs: Pick<JobStore, 'get'>
  uploads?: UploadStore | undefined
}

export interface TryOnAndWaitOptions {
  /** The calling key's id: upload references must be its own. */
  callerKeyId: string
  /** Creates and queues the job (under the edge's Idempotency-Key, idempotency/submit-once.ts). */
  submit: (job: TryOnSubmission) => Promise<SubmitOnceResult>
  /** Longest wait for a wait_for_result request before it answers with the job id only. */
  waitTimeoutMs: number
  /** Origin of the result URL. */
  baseUrl: string
  /** Aborts the wait (the client went away). */
  signal: AbortSignal
  log: Logger
}

/** How a try-on request is answered: the job id, with its result or its error when it ended within the wait. */
export type TryOnAnswer = { jobId: string; replayed: boolean } & (
  | { status: 'accepted' }
  | { status: 'completed'; resultUrl: string }
  | { status: 'failed'; error: AppError }
)

/**
 * Use case: a try-on submitted and, with wait_for_result, waited for (spec 2.1) — one path for the
 * HTTP route and the gRPC API. Completed within the wait: its signed result URL; failed: its
 * error; still running (or not waited for): accepted, to poll.
 */
export async function tryOnAndWait(
  deps: TryOnAndWaitDeps,
  body: TryOnBody,
  o: TryOnAndWaitOptions,
): Promise<TryOnAnswer> {
  await checkUploadRefs(
    deps.uploads,
    { person_image_url: body.person_image_url, garment_image_url: body.garment_image_url },
    o.callerKeyId,
  )
  const job = tryOnSubmission(body)
  const { job: rec, replayed } = await o.submit(job)
  o.log.info(
    { job_id: rec.id, wait: body.wait_for_result, garmentMode: job.params.garment_mode, replayed },
    'try-on job accepted',
  )
  const accepted = { jobId: rec.id, replayed }
  if (!body.wait_for_result) return { ...accepted, status: 'accepted' }
  const done = await waitForFinal(deps.jobs, rec.id, o.waitTimeoutMs, o.signal)
  if (done?.status === 'completed' && done.result !== null) {
    const url = resultUrl(
      o.baseUrl,
      deps.config.resultUrlSecret,
      done.result.key,
      Math.floor(Date.now() / 1000),
      deps.config.resultUrlTtlS,
    )
    return { ...accepted, status: 'completed', resultUrl: url }
  }
  if (done?.status === 'failed' && done.error !== null) {
    return {
      ...accepted,
      status: 'failed',
      error: new AppError(done.error.code, done.error.message),
    }
  }
  return { ...accepted, status: 'accepted' }
}
