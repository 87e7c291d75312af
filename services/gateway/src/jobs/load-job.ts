import { AppError, show, type JobKind } from '@tailor/proto'
import type { JobRecord, JobStore } from './job-store.ts'
import { isExpiredId, type RetentionPolicy } from './retention.ts'

export interface LoadJobDeps {
  jobs: JobStore
  config: RetentionPolicy
}

/** Which jobs a lookup may see: one kind (the HTTP routes) or any (the gRPC API); `label` names it in sentences. */
export interface JobScope {
  kind?: JobKind
  /** e.g. "try-on" → "No try-on job with id …"; without it "No job with id …". */
  label?: string
  /** The calling key: another key's job is not found (404, as an unknown id: its existence is not revealed). */
  ownerKeyId?: string
}

export const jobNotFound = (id: string, scope: JobScope): AppError =>
  new AppError(
    'not_found',
    `No ${scope.label === undefined ? '' : `${scope.label} `}job with id ${show(id)}.`,
  )

/**
 * Whether `keyId` may see the record: its owner only. A record without an owner (a bug, or one
 * written by hand) is not found for every key, never visible to all of them.
 */
export const ownedBy = (rec: JobRecord, keyId: string | undefined): boolean =>
  keyId === undefined || (rec.ownerKeyId !== undefined && rec.ownerKeyId === keyId)

/**
 * The job's record, or 'expired' for an id whose record was removed after JOB_RETENTION_S.
 * Throws not_found for an unknown id or a job outside the scope.
 */
export async function loadJob(
  deps: LoadJobDeps,
  id: string,
  scope: JobScope,
): Promise<JobRecord | 'expired'> {
  const rec = await deps.jobs.get(id)
  if (rec === null && isExpiredId(id, Date.now(), deps.config)) return 'expired'
  if (rec === null || (scope.kind !== undefined && rec.kind !== scope.kind)) {
    throw jobNotFound(id, scope)
  }
  if (!ownedBy(rec, scope.ownerKeyId)) throw jobNotFound(id, scope)
  return rec
}
