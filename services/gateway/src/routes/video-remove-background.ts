import { Hono } from 'hono'
import { zValidator } from '@hono/zod-validator'
import { RemoveBackgroundBody, removeBackgroundBodyError } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { idempotentRequest } from '../idempotency/idempotency-http.ts'
import { REPLAYED_HEADER } from '../idempotency/idempotency-key.ts'
import { submitOnce } from '../idempotency/submit-once.ts'
import { removeBackgroundSubmission, submitJob } from '../jobs/submit-job.ts'
import { checkUploadRefs } from '../uploads/check-upload-refs.ts'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import { webhookForRequest } from '../webhooks/webhook-request.ts'
import { jobRoutes } from './job-routes.ts'

/** Request body: RemoveBackgroundBody (@tailor/proto, spec 2.3); its errors are the same at every edge. */
const validateBody = zValidator('json', RemoveBackgroundBody, (result) => {
  if (result.success) return
  throw removeBackgroundBodyError(result.data as Record<string, unknown>, result.error)
})

export function videoRemoveBackgroundRoutes(deps: GatewayDeps) {
  return new Hono<AppEnv>()
    .post('/', deps.jsonBody, validateBody, async (c) => {
      const body = c.req.valid('json')
      await checkUploadRefs(deps.uploads, { video_url: body.video_url }, callerKeyId(c))
      const job = removeBackgroundSubmission(body)
      const webhook = webhookForRequest(
        deps.config,
        c.get('principal'),
        body.webhook_url,
        deps.config.publicBaseUrl ?? new URL(c.req.url).origin,
      )
      const { job: rec, replayed } = await submitOnce(
        deps,
        idempotentRequest(c, 'remove-background', body),
        (id) => submitJob(deps, job, { id, webhook, owner: c.get('principal') }),
      )
      if (replayed) c.header(REPLAYED_HEADER, 'true')
      c.get('log').info(
        { job_id: rec.id, format: job.params.output_format, replayed },
        'job accepted',
      )
      return c.json({ job_id: rec.id }, 202)
    })
    .route('/', jobRoutes(deps, 'remove-background', 'video background removal'))
}
