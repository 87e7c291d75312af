/**
 * POST /v1/try-on (spec 2.1, 4.1), GET /v1/try-on/job/{id}, POST /v1/try-on/job/{id}/cancel.
 *
 * - Booleans (`preprocess_garment`, `remove_background`, `wait_for_result`) take the strings
 *   "true" / "false" as the spec says, and also JSON true / false (clients send both; accepting
 *   them cannot change the meaning of a valid request). Anything else is `invalid_parameter`.
 * - `wait_for_result` "true" (default): the request waits for the job up to the configured
 *   `TRYON_WAIT_TIMEOUT_MS`; completed → 200 {result_url}; failed → the job's error with its HTTP
 *   status (e.g. 422 no_person_detected); still running → 202 {job_id} to poll.
 *   "false": 202 {job_id} at once.
 * - `garment_mode` (deprecated) still overrides category detection; a request that sends it gets
 *   `Deprecation` response header (RFC 9745 form: `@<unix seconds>`).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Hono, type Context } from 'hono'
import { zValidator } from '@hono/zod-validator'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { AppError, HTTP_STATUS, newJobId, type JobEnvelope } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { isFinal, type JobRecord } from '../jobs/job-store.ts'
import { resultUrl } from '../signing.ts'
import { isHttpUrl, jobRoutes, show } from './job-routes.ts'

export const GARMENT_MODES = ['auto', 'full', 'upper', 'lower'] as const
/** RFC 9745 `Deprecation` value: the moment garment_mode was deprecated (2025-01-01T00:00:00Z). */
export const GARMENT_MODE_DEPRECATION = '@1735689600'
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000
/** How often a waiting request re-reads the job record. */
export const WAIT_POLL_MS = 100

const url = (name: string) =>
  z
    .string({ error: (i) => `${name} must be a string holding an http or https URL; got ${show(i.input)}.` })
    .refine(isHttpUrl, { error: (i) => `${name} must be an absolute http or https URL; got ${show(i.input)}.` })

/** "true" / "false" (the spec's form) or a JSON boolean → boolean. */
const stringBool = (name: string, dflt: boolean) =>
  z
    .union([z.enum(['true', 'false']), z.boolean()], { error: (i) => `${name} must be "true" or "false"; got ${show(i.input)}.` })
    .default(dflt)
    .transform((v) => v === true || v === 'true')

/** Request body (spec 2.1). Unknown fields are ignored. */
export const TryOnBody = z.object({
  person_image_url: url('person_image_url'),
  garment_image_url: url('garment_image_url'),
  garment_mode: z
    .enum(GARMENT_MODES, { error: (i) => `garment_mode must be one of ${GARMENT_MODES.join(', ')}; got ${show(i.input)}.` })
    .optional(),
  preprocess_garment: stringBool('preprocess_garment', true),
  remove_background: stringBool('remove_background', false),
  wait_for_result: stringBool('wait_for_result', true),
})
export type TryOnBody = z.infer<typeof TryOnBody>

const validateBody = zValidator('json', TryOnBody, (result) => {
  if (result.success) return
  const raw = result.data as Record<string, unknown>
  const missing = ['person_image_url', 'garment_image_url'].filter((k) => raw[k] === undefined)
  if (missing.length > 0) {
    throw new AppError('missing_parameter', `Missing required parameter ${missing.join(' and ')}: give the http or https URL of the ${missing.map((m) => m.replace('_image_url', '')).join(' and the ')} image.`)
  }
  const first = result.error.issues[0]
  throw new AppError('invalid_parameter', first?.message ?? 'Invalid parameters.', { cause: result.error })
})

export interface TryOnRouteOptions {
  /** Longest time a wait_for_result request holds the connection before answering 202. */
  waitTimeoutMs: number
}

/** Polls the job record until it is final, the timeout passes or the client goes away. */
async function waitForFinal(deps: GatewayDeps, id: string, timeoutMs: number, signal: AbortSignal): Promise<JobRecord | null> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rec = await deps.jobs.get(id)
    if (rec !== null && isFinal(rec.status)) return rec
    const left = deadline - Date.now()
    if (left <= 0 || signal.aborted) return rec
    await sleep(Math.min(WAIT_POLL_MS, left)).catch(() => undefined)
  }
}

export function tryOnRoutes(deps: GatewayDeps, o: TryOnRouteOptions) {
  const baseUrl = (c: Context<AppEnv>) => deps.config.publicBaseUrl ?? new URL(c.req.url).origin
  return new Hono<AppEnv>()
    .post('/', deps.jsonBody, validateBody, async (c) => {
      const body = c.req.valid('json')
      if (body.garment_mode !== undefined) {
        c.header('Deprecation', GARMENT_MODE_DEPRECATION)
      }
      const now = new Date().toISOString()
      const params = {
        person_image_url: body.person_image_url,
        garment_image_url: body.garment_image_url,
        garment_mode: body.garment_mode ?? 'auto',
        preprocess_garment: body.preprocess_garment,
        remove_background: body.remove_background,
      }
      const rec: JobRecord = {
        id: newJobId(), kind: 'try-on', status: 'pending', progress: 0, params,
        result: null, error: null, attempts: 0, createdAt: now, updatedAt: now,
      }
      await deps.jobs.create(rec)
      const envelope: JobEnvelope = { id: rec.id, kind: 'try-on', params, createdAt: now }
      try {
        await deps.publisher.publish(envelope)
      } catch (err) {
        await deps.jobs.update(rec.id, (r) => ({ ...r, status: 'failed', error: { code: 'service_unavailable', message: 'The job could not be queued.' }, updatedAt: new Date().toISOString() }))
        throw err
      }
      c.get('log').info({ jobId: rec.id, wait: body.wait_for_result, garmentMode: params.garment_mode }, 'try-on job accepted')
      if (!body.wait_for_result) return c.json({ job_id: rec.id }, 202)

      const done = await waitForFinal(deps, rec.id, o.waitTimeoutMs, c.req.raw.signal)
      if (done?.status === 'completed' && done.result !== null) {
        const result_url = resultUrl(baseUrl(c), deps.config.resultUrlSecret, done.result.key, Math.floor(Date.now() / 1000), deps.config.resultUrlTtlS)
        return c.json({ result_url, job_id: rec.id }, 200)
      }
      if (done?.status === 'failed' && done.error !== null) {
        const status = HTTP_STATUS[done.error.code] as ContentfulStatusCode
        return c.json({ error: done.error.message, error_code: done.error.code, job_id: rec.id, request_id: c.get('requestId') }, status)
      }
      return c.json({ job_id: rec.id }, 202)
    })
    .route('/', jobRoutes(deps, 'try-on', 'try-on'))
}
