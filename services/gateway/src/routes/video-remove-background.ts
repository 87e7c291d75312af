import { Hono } from 'hono'
import { zValidator } from '@hono/zod-validator'
import { z } from 'zod'
import { ALPHA_FORMATS, AppError, BACKGROUND_COLOR_RE, newJobId, OUTPUT_FORMATS, type JobEnvelope, type OutputFormat } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import type { JobRecord } from '../jobs/job-store.ts'
import { isHttpUrl, jobRoutes, show } from './job-routes.ts'

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

export function videoRemoveBackgroundRoutes(deps: GatewayDeps) {
  return new Hono<AppEnv>()
    .post('/', deps.jsonBody, validateBody, async (c) => {
      const body = c.req.valid('json')
      const now = new Date().toISOString()
      const params = { video_url: body.video_url, background_color: body.background_color, output_format: body.output_format as OutputFormat }
      const rec: JobRecord = {
        id: newJobId(), kind: 'remove-background', status: 'pending', progress: 0, params,
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
    .route('/', jobRoutes(deps, 'remove-background', 'video background removal'))
}
