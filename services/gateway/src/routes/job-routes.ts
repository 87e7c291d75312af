/**
 * What both operations share: the job status document, GET /job/{id} and POST /job/{id}/cancel
 * (ARCHITECTURE.md §2), and the helpers their request schemas use.
 */
import { Hono } from 'hono'
import { AppError, type JobKind } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { isFinal, type JobRecord } from '../jobs/job-store.ts'
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

/** GET /job/{id} and POST /job/{id}/cancel for jobs of one kind; `label` names the kind in sentences. */
export function jobRoutes(deps: GatewayDeps, kind: JobKind, label: string) {
  const notFound = (id: string): AppError => new AppError('not_found', `No ${label} job with id ${show(id)}.`)
  const load = async (id: string): Promise<JobRecord> => {
    const rec = await deps.jobs.get(id)
    if (rec === null || rec.kind !== kind) throw notFound(id)
    return rec
  }
  return new Hono<AppEnv>()
    .get('/job/:id', async (c) => {
      const rec = await load(c.req.param('id'))
      const base = deps.config.publicBaseUrl ?? new URL(c.req.url).origin
      return c.json(statusDocument(rec, base, deps.config.resultUrlSecret, deps.config.resultUrlTtlS, Math.floor(Date.now() / 1000)))
    })
    .post('/job/:id/cancel', async (c) => {
      const id = c.req.param('id')
      await load(id)
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
