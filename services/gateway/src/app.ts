import { Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requestId, type RequestIdVariables } from 'hono/request-id'
import { AppError } from '@tailor/proto'
import type { Config } from './config.ts'
import { toErrorResponse } from './errors.ts'
import type { JobStore } from './jobs/job-store.ts'
import type { CancelNotifier, JobPublisher } from './jobs/publisher.ts'
import type { Logger } from './logger.ts'
import { apiKeyAuth } from './middleware/api-key.ts'
import { jsonObjectBody } from './middleware/json-body.ts'
import type { ResultReader } from './results/result-reader.ts'
import type { UploadStore } from './uploads/upload-store.ts'
import { resultRoutes } from './routes/results.ts'
import { UPLOADS_PATH, uploadRoutes } from './routes/uploads.ts'
import { tryOnRoutes } from './routes/try-on.ts'
import { videoRemoveBackgroundRoutes } from './routes/video-remove-background.ts'

export interface GatewayDeps {
  config: Config
  logger: Logger
  jobs: JobStore
  publisher: JobPublisher
  cancel: CancelNotifier
  results: ResultReader
  /** Upload storage; without it POST /v1/uploads answers service_unavailable and upload URLs are refused. */
  uploads?: UploadStore
  health: () => { ok: boolean; [k: string]: unknown }
  jsonBody: MiddlewareHandler
}

export type AppEnv = { Variables: RequestIdVariables & { log: Logger } }

/** Runs `mw` except on `path` itself. */
const skipFor = (path: string, mw: MiddlewareHandler): MiddlewareHandler => (c, next) => (c.req.path === path ? next() : mw(c, next))

/** The HTTP surface; no I/O here beyond the ports in `deps`. */
export function createApp(d: Omit<GatewayDeps, 'jsonBody'>) {
  const deps: GatewayDeps = { ...d, jsonBody: jsonObjectBody() }
  return new Hono<AppEnv>()
    .use(requestId())
    .use(async (c, next) => {
      c.set('log', deps.logger.child({ requestId: c.get('requestId') }))
      await next()
    })
    .get('/healthz', (c) => {
      const { ok, ...details } = deps.health()
      return c.json({ status: ok ? 'ok' : 'unavailable', ...details }, ok ? 200 : 503)
    })
    .use('/v1/*', apiKeyAuth(deps.config.apiKeyHashes))
    .use('/v1/*', skipFor(UPLOADS_PATH, bodyLimit({ maxSize: deps.config.maxBodyBytes }))) // uploads have their own, larger limits
    .route(UPLOADS_PATH, uploadRoutes(deps))
    .route('/v1/try-on', tryOnRoutes(deps, { waitTimeoutMs: deps.config.tryOnWaitTimeoutMs }))
    .route('/v1/video/remove-background', videoRemoveBackgroundRoutes(deps))
    .route('/results', resultRoutes(deps))
    .notFound(() => {
      throw new AppError('not_found', 'No such endpoint.')
    })
    .onError((err, c) => toErrorResponse(err, c, deps.logger))
}
export type App = ReturnType<typeof createApp>
