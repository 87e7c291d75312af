/**
 * What both operations share: GET /job/{id} (the status document) and POST /job/{id}/cancel
 * (ARCHITECTURE.md §2), over the use cases in jobs/job-status.ts and jobs/cancel-job.ts.
 */
import { Hono } from 'hono'
import type { JobKind } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { cancelJob } from '../jobs/cancel-job.ts'
import { getJobStatus } from '../jobs/job-status.ts'

/** GET /job/{id} and POST /job/{id}/cancel for jobs of one kind; `label` names the kind in sentences. */
export function jobRoutes(deps: GatewayDeps, kind: JobKind, label: string) {
  const scope = { kind, label }
  return new Hono<AppEnv>()
    .get('/job/:id', async (c) => {
      const base = deps.config.publicBaseUrl ?? new URL(c.req.url).origin
      const { document } = await getJobStatus(deps, c.req.param('id'), scope, base)
      return c.json(document)
    })
    .post('/job/:id/cancel', async (c) => {
      const id = c.req.param('id')
      await cancelJob(deps, id, scope)
      c.get('log').info({ job_id: id, kind }, 'job cancel accepted')
      return c.json({ message: `Job ${id} was cancelled.` }, 200)
    })
}
