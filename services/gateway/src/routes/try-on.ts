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
import { Hono, type Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { HTTP_STATUS, parseTryOnBody } from '@tailor/proto'
import { bodyLimitByHeaders } from '../middleware/body-limit.ts'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { idempotentRequest } from '../idempotency/idempotency-http.ts'
import { REPLAYED_HEADER } from '../idempotency/idempotency-key.ts'
import { submitOnce } from '../idempotency/submit-once.ts'
import { submitJob } from '../jobs/submit-job.ts'
import { tryOnAndWait } from '../jobs/try-on-and-wait.ts'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import { webhookForRequest } from '../webhooks/webhook-request.ts'
import { jobRoutes } from './job-routes.ts'
import { isMultipartForm, readTryOnForm, tryOnFormMaxBytes } from './try-on-form.ts'

/** RFC 9745 `Deprecation` value: the moment garment_mode was deprecated (2025-01-01T00:00:00Z). */
export const GARMENT_MODE_DEPRECATION = '@1735689600'
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000

export interface TryOnRouteOptions {
  /** Longest time a wait_for_result request holds the connection before answering 202. */
  waitTimeoutMs: number
}

export function tryOnRoutes(deps: GatewayDeps, o: TryOnRouteOptions) {
  const baseUrl = (c: Context<AppEnv>) => deps.config.publicBaseUrl ?? new URL(c.req.url).origin
  const formLimit = bodyLimitByHeaders(tryOnFormMaxBytes(deps))
  return new Hono<AppEnv>()
    .post(
      '/',
      (c, next) =>
        isMultipartForm(c.req.header('content-type')) ? formLimit(c, next) : deps.jsonBody(c, next),
      async (c) => {
        // Request body: TryOnBody (@tailor/proto, spec 2.1) as JSON, or the same fields as a form (routes/try-on-form.ts).
        const { body, fingerprint } = isMultipartForm(c.req.header('content-type'))
          ? await readTryOnForm(c, deps)
          : ((b) => ({ body: b, fingerprint: b }))(
              parseTryOnBody(await c.req.json<Record<string, unknown>>()),
            )
        const a = await tryOnAndWait(deps, body, {
          callerKeyId: callerKeyId(c),
          submit: (job) => {
            if (body.garment_mode !== undefined) {
              c.header('Deprecation', GARMENT_MODE_DEPRECATION)
            }
            const webhook = webhookForRequest(
              deps.config,
              c.get('principal'),
              body.webhook_url,
              baseUrl(c),
            )
            // A replay (same Idempotency-Key and body) answers like the first request, from the job's current state.
            return submitOnce(deps, idempotentRequest(c, 'try-on', fingerprint), (id) =>
              submitJob(deps, job, { id, webhook, owner: c.get('principal') }),
            )
          },
          waitTimeoutMs: o.waitTimeoutMs,
          baseUrl: baseUrl(c),
          signal: c.req.raw.signal,
          log: c.get('log'),
        })
        if (a.replayed) c.header(REPLAYED_HEADER, 'true')
        switch (a.status) {
          case 'completed':
            return c.json({ result_url: a.resultUrl, job_id: a.jobId }, 200)
          case 'failed':
            return c.json(
              {
                error: a.error.message,
                error_code: a.error.code,
                job_id: a.jobId,
                request_id: c.get('requestId'),
              },
              HTTP_STATUS[a.error.code] as ContentfulStatusCode,
            )
          case 'accepted':
            return c.json({ job_id: a.jobId }, 202)
        }
      },
    )
    .route('/', jobRoutes(deps, 'try-on', 'try-on'))
}
