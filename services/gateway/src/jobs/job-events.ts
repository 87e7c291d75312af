import type { JobEvent, JobEventAck } from '@tailor/proto'
import type { Logger } from '../logger.ts'
import { isFinal, type JobRecord, type JobStore } from './job-store.ts'

const stamp = (r: JobRecord, patch: Partial<JobRecord>): JobRecord => ({ ...r, ...patch, updatedAt: new Date().toISOString() })

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
    const rec = await store.update(e.jobId, (r) => {
      repeated = (e.type === 'completed' || e.type === 'failed') && r.status === e.type
      if (r.status === 'failed') {
        stop = true
        return null
      }
      if (r.status === 'completed') return null // duplicate after a redelivery: keep the first result
      switch (e.type) {
        case 'running':
          return stamp(r, { status: 'running', attempts: Math.max(r.attempts, e.attempt) })
        case 'progress': {
          const p = e.framesTotal > 0 ? Math.min(1, e.framesDone / e.framesTotal) : 0
          return stamp(r, { status: 'running', progress: Math.round(p * 1000) / 1000 })
        }
        case 'completed':
          return stamp(r, {
            status: 'completed', progress: 1, result: { key: e.resultKey, contentType: e.contentType, bytes: e.bytes }, completedAt: new Date().toISOString(),
          })
        case 'failed':
          return stamp(r, { status: 'failed', error: { code: e.code, message: e.message } })
      }
    })
    if (rec === null) {
      log.warn({ job_id: e.jobId, event: e.type }, 'event for an unknown job')
      return { cancelled: true }
    }
    if (repeated && o.onFinalRepeated) await o.onFinalRepeated(rec)
    if (e.type !== 'progress' && isFinal(rec.status)) log.info({ job_id: e.jobId, status: rec.status, code: rec.error?.code }, 'job finished')
    return { cancelled: stop }
  }
}
