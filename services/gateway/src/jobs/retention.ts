import { jobIdTimeMs } from '@tailor/proto'
import type { JobRecord } from './job-store.ts'

/**
 * Retention of results and job records (docs/operations.md "Retention"). Pure: the stores delete (bucket TTLs
 * distributed, a periodic sweep embedded); this decides what a poll may still answer.
 *
 * Timeline of a completed job, with the defaults:
 *   completed ── status polls hand out fresh result URLs, each valid RESULT_URL_TTL_S (1 h)
 *   + RESULT_RETENTION_S − RESULT_URL_TTL_S − RESULT_EXPIRY_MARGIN_S (55 min): polls answer job_expired
 *   + RESULT_RETENTION_S (2 h): the stored result is deleted (so every URL ever handed out stayed
 *     valid its full hour, with the margin to spare)
 *   last change + JOB_RETENTION_S (24 h): the record is deleted; a poll of its id (UUIDv7, older
 *   than JOB_RETENTION_S) still answers job_expired, an id that was never issued 404.
 */
export interface RetentionPolicy {
  resultUrlTtlS: number
  resultRetentionS: number
  resultExpiryMarginS: number
  jobRetentionS: number
}

export const EXPIRED_MESSAGE = {
  result: 'The job completed, but its result has expired and was deleted; submit the job again.',
  record:
    'The job is older than the job retention time and its record was deleted; submit the job again.',
} as const

/** When the job completed (ms); `completedAt` is recorded since retention exists, `updatedAt` before. */
const completedMs = (rec: JobRecord): number => Date.parse(rec.completedAt ?? rec.updatedAt)

/** True when a completed job's result may no longer be handed out (its URL would outlive the result). */
export function isResultExpired(rec: JobRecord, nowMs: number, p: RetentionPolicy): boolean {
  if (rec.status !== 'completed' || rec.result === null) return false
  const windowMs = (p.resultRetentionS - p.resultUrlTtlS - p.resultExpiryMarginS) * 1000
  return nowMs >= completedMs(rec) + windowMs
}

/**
 * True when an id with no record was issued long enough ago that its record may have expired
 * (UUIDv7 creation time older than JOB_RETENTION_S). Unknown newer ids, and ids that are not
 * UUIDv7, are simply not found.
 */
export function isExpiredId(id: string, nowMs: number, p: RetentionPolicy): boolean {
  const t = jobIdTimeMs(id)
  return t !== null && nowMs - t >= p.jobRetentionS * 1000
}
