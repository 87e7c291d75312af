import { randomUUID } from 'node:crypto'
import { Hono } from 'hono'
import { zValidator } from '@hono/zod-validator'
import { z } from 'zod'
import { ALPHA_FORMATS, AppError, BACKGROUND_COLOR_RE, OUTPUT_FORMATS, type JobEnvelope, type OutputFormat } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import type { JobRecord } from '../jobs/job-store.ts'
import { isFinal } from '../jobs/job-store.ts'
import { resultUrl } from '../signing.ts'

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > 80 ? `${s.slice(0, 77)}...` : s
}
const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0
  } catch {
    return false
  }
}

/** Request body (spec 2.3). Messages say what was wrong and what is allowed. */
export const RemoveBackgroundBody = z
  .object({
    video_url: z
      .string({ error: (i) => `video_url must be a string holding an http or https URL; got ${show(i.input)}.` })
      .refine(isHttpUrl, { error: (i) => `video_url must be an absolute http or https URL; got ${show(i.input)}.` }),
    background_color: z
      .string({ error: (i) => `background_color must be a string: "transparent", #RGB or #RRGGBB; got ${show(i.input)}.` })
      .regex(BACKGROUND_COLOR_RE, { error: (i) => `background_color must be "transparent" or a hex colour #RGB or #RRGGBB; got ${show(i.input)}.` })
      .default('#000000'),
    output_format: z
      .enum(OUTPUT_FORMATS, { error: (i) => `output_format must be one of ${OUTPUT_FORMATS.join(', ')}; got ${show(i.input)}.` })
      .default('mp4_h264'),
  })
  .superRefine((b, ctx) => {
    if (b.background_color === 'transparent' && !ALPHA_FORMATS.includes(b.output_format)) {
      ctx.addIssue({
        code: 'custom',
        path: ['output_format'],
        message: `background_color "transparent" requires output_format ${ALPHA_FORMATS.join(', ')} (formats that carry alpha); got ${b.output_format}.`,
      })
    }
  })

const validateBody = zValidator('json', RemoveBackgroundBody, (result) => {
  if (result.success) return
  const raw = result.data as Record<string, unknown>
  if (raw.video_url === undefined) {
    throw new AppError('missing_parameter', 'Missing required parameter video_url: give the http or https URL of the video to process.')
  }
  const first = result.error.issues[0]
  throw new AppError('invalid_parameter', first?.message ?? 'Invalid parameters.', { cause: result.error })
})

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

export function videoRemoveBackgroundRoutes(deps: GatewayDeps) {
  const notFound = (id: string): AppError => new AppError('not_found', `No video background removal job with id ${show(id)}.`)
  const load = async (id: string): Promise<JobRecord> => {
    const rec = await deps.jobs.get(id)
    if (rec === null || rec.kind !== 'remove-background') throw notFound(id)
    return rec
  }
  return new Hono<AppEnv>()
    .post('/', deps.jsonBody, validateBody, async (c) => {
      const body = c.req.valid('json')
      const now = new Date().toISOString()
      const params = { video_url: body.video_url, background_color: body.background_color, output_format: body.output_format as OutputFormat }
      const rec: JobRecord = {
        id: randomUUID(), kind: 'remove-background', status: 'pending', progress: 0, params,
        result: null, error: null, attempts: 0, createdAt: now, updatedAt: now,
      }
      await deps.jobs.create(rec)
      const envelope: JobEnvelope = { id: rec.id, kind: 'remove-background', params, createdAt: now }
      try {
        await deps.publisher.publish(envelope)
      } catch (err) {
        await deps.jobs.update(rec.id, (r) => ({ ...r, status: 'failed', error: { code: 'service_unavailable', message: 'The job could not be queued.' }, updatedAt: new Date().toISOString() }))
        throw err
      }
      c.get('log').info({ jobId: rec.id, format: params.output_format }, 'job accepted')
      return c.json({ job_id: rec.id }, 202)
    })
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
      c.get('log').info({ jobId: id }, 'job cancel accepted')
      return c.json({ message: `Job ${id} was cancelled.` }, 200)
    })
}
