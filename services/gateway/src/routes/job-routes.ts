/**
 * What both operations share: GET /job/{id} (the status document) and POST /job/{id}/cancel
 * (ARCHITECTURE.md §2), over the use cases in jobs/job-status.ts and jobs/cancel-job.ts.
 */
import { Hono, type Context } from 'hono'
import type { JobKind } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { cancelJob } from '../jobs/cancel-job.ts'
import { getJobStatus } from '../jobs/job-status.ts'
import type { JobScope } from '../jobs/load-job.ts'

/** GET /job/{id} and POST /job/{id}/cancel for jobs of one kind; `label` names the kind in sentences. */
export function jobRoutes(deps: GatewayDeps, kind: JobKind, label: string) {
  // Only the key that submitted a job sees or cancels it; another key's job is not found.
  const scope = (c: Context<AppEnv>): JobScope => ({
    kind,
    label,
    ownerKeyId: c.get('principal').keyId,
  })
  return new Hono<AppEnv>()
    .get('/job/:id', async (c) => {
      const base = deps.config.publicBaseUrl ?? new URL(c.req.url).origin
      const { document } = await getJobStatus(deps, c.req.param('id'), scope(c), base)
      return c.json(document)
    })
    .post('/job/:id/cancel', async (c) => {
      const id = c.req.param('id')
      await cancelJob(deps, id, scope(c))
      c.get('log').info({ job_id: id, kind }, 'job cancel accepted')
      return c.json({ message: `Job ${id} was cancelled.` }, 200)
    })
}
