import { redactPaths, type JobEvent, type JobEventAck } from '@tailor/proto'
import type { Logger } from '../logger.ts'
import { isFinal, type JobRecord, type JobState, type JobStore } from './job-store.ts'

/**
 * A worker may name only this job's own result: `<kind>/<job id>.<ext>`. Anything else (another
 * job's result, a key elsewhere in the bucket) would get a signed URL for something that is not
 * this job's output.
 */
export function isResultKeyOf(r: Pick<JobRecord, 'id' | 'kind'>, key: string): boolean {
  const head = `${r.kind}/${r.id}.`
  return key.startsWith(head) && /^[a-z0-9]{1,8}$/.test(key.slice(head.length))
}

const stamp = (r: JobRecord, patch: Partial<JobState>): JobRecord => ({
  ...r,
  ...patch,
  updatedAt: new Date().toISOString(),
})

/**
 * Use case: apply one event from inference to the job record. The answer tells inference whether
 * to keep going: a job that was cancelled (or is unknown, or already failed) needs no more work.
 * Events are idempotent: a redelivered job may report `running` and `completed` twice.
 */
export function createJobEventHandler(
  store: JobStore,
  log: Logger,
  o: {
    /**
     * A final event for a record already final with that status: inference repeats it when the
     * gateway stopped before answering, perhaps before the record's webhook was queued.
     */
    onFinalRepeated?: (rec: JobRecord) => Promise<void>
  } = {},
): (e: JobEvent) => Promise<JobEventAck> {
  return async (e) => {
    let stop = false
    let repeated = false
    let foreignKey = false
    const rec = await store.update(e.jobId, (r) => {
      repeated = (e.type === 'completed' || e.type === 'failed') && r.status === e.type
      if (r.status === 'failed') {
        stop = true
        return null
      }
      if (r.status === 'completed') return null // duplicate after a redelivery: keep the first result
      switch (e.type) {
        case 'running':
          // A new attempt (a redelivery: its worker died, or a retryable error) starts again from 0,
          // visibly: the status document's `attempt` goes up and its progress restarts.
          if (e.attempt > r.attempts) {
            return stamp(r, { status: 'running', attempts: e.attempt, progress: 0 })
          }
          return r.status === 'running' ? null : stamp(r, { status: 'running' })
        case 'progress': {
          if (e.attempt > 0 && e.attempt < r.attempts) return null // an earlier attempt's worker, presumed dead, still reporting
          const p = e.framesTotal > 0 ? Math.min(1, e.framesDone / e.framesTotal) : 0
          return stamp(r, { status: 'running', progress: Math.round(p * 1000) / 1000 })
        }
        case 'completed':
          if (!isResultKeyOf(r, e.resultKey)) {
            foreignKey = true
            return stamp(r, {
              status: 'failed',
              error: {
                code: 'unexpected_error',
                message: "The job failed: its worker reported a result that is not this job's.",
              },
            })
          }
          return stamp(r, {
            status: 'completed',
            progress: 1,
            result: { key: e.resultKey, contentType: e.contentType, bytes: e.bytes },
            completedAt: new Date().toISOString(),
          })
        case 'failed':
          return stamp(r, {
            status: 'failed',
            error: { code: e.code, message: redactPaths(e.message) },
          })
      }
    })
    if (rec === null) {
      log.warn({ job_id: e.jobId, event: e.type }, 'event for an unknown job')
      return { cancelled: true }
    }
    if (foreignKey && e.type === 'completed') {
      log.error(
        { job_id: e.jobId, result_key: e.resultKey },
        'a worker reported a result key not of the form <kind>/<job id>.<ext>; job failed',
      )
    }
    if (repeated && o.onFinalRepeated) await o.onFinalRepeated(rec)
    if (e.type !== 'progress' && isFinal(rec.status)) {
      log.info({ job_id: e.jobId, status: rec.status, code: rec.error?.code }, 'job finished')
    }
    return { cancelled: stop }
  }
}
