/**
 * Use case: a job's public status document (ARCHITECTURE.md §2), for GET …/job/{id} and the gRPC
 * API's GetJob / WatchJob.
 */
import { jobIdTimeMs, type JobKind, type JobStatusDocument } from '@tailor/proto'
import { resultUrl } from '../signing.ts'
import type { JobRecord } from './job-store.ts'
import { loadJob, type JobScope, type LoadJobDeps } from './load-job.ts'
import { EXPIRED_MESSAGE, isResultExpired, type RetentionPolicy } from './retention.ts'

/** Public status document; `result_url` is signed for `baseUrl` and valid `ttlS` from `nowS`. */
export function statusDocument(
  rec: JobRecord,
  baseUrl: string,
  secret: string,
  ttlS: number,
  nowS: number,
): JobStatusDocument {
  return {
    job_id: rec.id,
    status: rec.status,
    progress: rec.progress,
    attempt: rec.attempts,
    result_url:
      rec.status === 'completed' && rec.result !== null
        ? resultUrl(baseUrl, secret, rec.result.key, nowS, ttlS)
        : null,
    error:
      rec.status === 'failed' && rec.error !== null
        ? { message: rec.error.message, error_code: rec.error.code }
        : null,
    created_at: rec.createdAt,
    updated_at: rec.updatedAt,
  }
}

/**
 * What a poll of an expired job answers (200, not an HTTP error: the job existed and is over).
 * `rec` is null when the record itself has expired; its creation time then comes from the UUIDv7 id.
 */
export function expiredStatusDocument(
  id: string,
  rec: JobRecord | null,
  nowMs: number,
): JobStatusDocument {
  const created = rec?.createdAt ?? new Date(jobIdTimeMs(id) ?? nowMs).toISOString()
  return {
    job_id: id,
    status: 'failed' as const,
    progress: rec?.progress ?? 0,
    attempt: rec?.attempts ?? 0,
    result_url: null,
    error: {
      message: rec === null ? EXPIRED_MESSAGE.record : EXPIRED_MESSAGE.result,
      error_code: 'job_expired' as const,
    },
    created_at: created,
    updated_at: rec?.updatedAt ?? created,
  }
}

export interface JobStatusDeps extends LoadJobDeps {
  config: RetentionPolicy & { resultUrlSecret: string }
}

/** A record's document, expiry included (an expired result is reported as failed job_expired). */
export function documentFor(
  rec: JobRecord,
  deps: JobStatusDeps,
  baseUrl: string,
  nowMs = Date.now(),
): JobStatusDocument {
  if (isResultExpired(rec, nowMs, deps.config)) return expiredStatusDocument(rec.id, rec, nowMs)
  return statusDocument(
    rec,
    baseUrl,
    deps.config.resultUrlSecret,
    deps.config.resultUrlTtlS,
    Math.floor(nowMs / 1000),
  )
}

/**
 * The status of job `id` within `scope`: its kind (null when its record has expired) and document.
 * Throws not_found for an unknown id or a job outside the scope.
 */
export async function getJobStatus(
  deps: JobStatusDeps,
  id: string,
  scope: JobScope,
  baseUrl: string,
): Promise<{ kind: JobKind | null; document: JobStatusDocument; record: JobRecord | null }> {
  const rec = await loadJob(deps, id, scope)
  const nowMs = Date.now()
  if (rec === 'expired') {
    return { kind: null, document: expiredStatusDocument(id, null, nowMs), record: null }
  }
  return { kind: rec.kind, document: documentFor(rec, deps, baseUrl, nowMs), record: rec }
}
