/**
 * What both operations share: the job status document, GET /job/{id} and POST /job/{id}/cancel
 * (ARCHITECTURE.md §2), and the helpers their request schemas use.
 */
import { Hono } from 'hono'
import { AppError, jobIdTimeMs, type JobKind } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { isFinal, type JobRecord } from '../jobs/job-store.ts'
import { EXPIRED_MESSAGE, isExpiredId, isResultExpired } from '../jobs/retention.ts'
import { resultUrl } from '../signing.ts'

/** A value as JSON, cut to 80 characters, for error sentences. */
export const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > 80 ? `${s.slice(0, 77)}...` : s
}

export const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0
  } catch {
    return false
  }
}

/** Public status document. */
export function statusDocument(rec: JobRecord, baseUrl: string, secret: string, ttlS: number, nowS: number) {
  return {
    job_id: rec.id,
    status: rec.status,
    progress: rec.progress,
    result_url: rec.status === 'completed' && rec.result !== null ? resultUrl(baseUrl, secret, rec.result.key, nowS, ttlS) : null,
    error: rec.status === 'failed' && rec.error !== null ? { message: rec.error.message, error_code: rec.error.code } : null,
    created_at: rec.createdAt,
    updated_at: rec.updatedAt,
  }
}

/**
 * What a poll of an expired job answers (200, not an HTTP error: the job existed and is over).
 * `rec` is null when the record itself has expired; its creation time then comes from the UUIDv7 id.
 */
export function expiredStatusDocument(id: string, rec: JobRecord | null, nowMs: number) {
  const created = rec?.createdAt ?? new Date(jobIdTimeMs(id) ?? nowMs).toISOString()
  return {
    job_id: id,
    status: 'failed' as const,
    progress: rec?.progress ?? 0,
    result_url: null,
    error: { message: rec === null ? EXPIRED_MESSAGE.record : EXPIRED_MESSAGE.result, error_code: 'job_expired' as const },
    created_at: created,
    updated_at: rec?.updatedAt ?? created,
  }
}

/** GET /job/{id} and POST /job/{id}/cancel for jobs of one kind; `label` names the kind in sentences. */
export function jobRoutes(deps: GatewayDeps, kind: JobKind, label: string) {
  const notFound = (id: string): AppError => new AppError('not_found', `No ${label} job with id ${show(id)}.`)
  const expired = (id: string): AppError =>
    new AppError('job_finished', `Job ${id} has expired; only pending or running jobs can be cancelled.`)
  /** The record, or 'expired' for an id whose record was removed after JOB_RETENTION_S. */
  const load = async (id: string): Promise<JobRecord | 'expired'> => {
    const rec = await deps.jobs.get(id)
    if (rec === null && isExpiredId(id, Date.now(), deps.config)) return 'expired'
    if (rec === null || rec.kind !== kind) throw notFound(id)
    return rec
  }
  return new Hono<AppEnv>()
    .get('/job/:id', async (c) => {
      const id = c.req.param('id')
      const rec = await load(id)
      const nowMs = Date.now()
      if (rec === 'expired' || isResultExpired(rec, nowMs, deps.config)) {
        return c.json(expiredStatusDocument(id, rec === 'expired' ? null : rec, nowMs))
      }
      const base = deps.config.publicBaseUrl ?? new URL(c.req.url).origin
      return c.json(statusDocument(rec, base, deps.config.resultUrlSecret, deps.config.resultUrlTtlS, Math.floor(Date.now() / 1000)))
    })
    .post('/job/:id/cancel', async (c) => {
      const id = c.req.param('id')
      if ((await load(id)) === 'expired') throw expired(id)
      let finished = false
      const rec = await deps.jobs.update(id, (r) => {
        if (isFinal(r.status)) {
          finished = true
          return null
        }
        return { ...r, status: 'failed', error: { code: 'job_cancelled', message: 'The job was cancelled at the client\'s request.' }, updatedAt: new Date().toISOString() }
      })
      if (rec === null) throw notFound(id)
      if (finished) throw new AppError('job_finished', `Job ${id} has already finished (${rec.status}); only pending or running jobs can be cancelled.`)
      deps.cancel.cancel(id)
      c.get('log').info({ jobId: id, kind }, 'job cancel accepted')
      return c.json({ message: `Job ${id} was cancelled.` }, 200)
    })
}
