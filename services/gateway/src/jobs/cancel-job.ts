/** Use case: cancel a pending or running job (POST …/job/{id}/cancel, gRPC CancelJob). */
import { AppError } from '@tailor/proto'
import type { CancelNotifier } from './publisher.ts'
import { isFinal, type JobRecord } from './job-store.ts'
import { jobNotFound, loadJob, type JobScope, type LoadJobDeps } from './load-job.ts'

export interface CancelJobDeps extends LoadJobDeps {
  cancel: CancelNotifier
}

export const CANCELLED_MESSAGE = "The job was cancelled at the client's request."

/**
 * Marks the job failed job_cancelled and tells its worker to stop; returns the cancelled record.
 * Throws not_found (unknown id, outside the scope) or job_finished (completed, failed, expired).
 */
export async function cancelJob(
  deps: CancelJobDeps,
  id: string,
  scope: JobScope,
): Promise<JobRecord> {
  if ((await loadJob(deps, id, scope)) === 'expired') {
    throw new AppError(
      'job_finished',
      `Job ${id} has expired; only pending or running jobs can be cancelled.`,
    )
  }
  let finished = false
  const rec = await deps.jobs.update(id, (r) => {
    if (isFinal(r.status)) {
      finished = true
      return null
    }
    return {
      ...r,
      status: 'failed',
      error: { code: 'job_cancelled', message: CANCELLED_MESSAGE },
      updatedAt: new Date().toISOString(),
    }
  })
  if (rec === null) throw jobNotFound(id, scope)
  if (finished) {
    throw new AppError(
      'job_finished',
      `Job ${id} has already finished (${rec.status}); only pending or running jobs can be cancelled.`,
    )
  }
  deps.cancel.cancel(id)
  return rec
}
