import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import { requestId, type RequestIdVariables } from 'hono/request-id'
import { matchedRoutes } from 'hono/route'
import { AppError } from '@tailor/proto'
import type { AccessControl } from './access/access-control.ts'
import { AuthFailureThrottle } from './access/auth-failure-throttle.ts'
import { createKeyAccessControl } from './access/access-control-keys.ts'
import type { JobSlots } from './access/job-slots.ts'
import { createMemoryRateBudget } from './access/rate-budget.ts'
import { RateLimiter } from './access/rate-limiter.ts'
import type { Config } from './config.ts'
import { MethodNotAllowedError, toErrorResponse } from './errors.ts'
import { allowedMethods } from './http/allowed-methods.ts'
import { clientAddress } from './http/client-address.ts'
import { drainInBackground } from './http/drain-body.ts'
import { normalizedPath } from './http/normalize-path.ts'
import type { IdempotencyStore } from './idempotency/idempotency-store.ts'
import type { JobStore } from './jobs/job-store.ts'
import type { CancelNotifier, JobPublisher } from './jobs/publisher.ts'
import type { Logger } from './logger.ts'
import type { GatewayMetrics } from './metrics.ts'
import { apiKeyAuth, type PrincipalVariables } from './middleware/api-key.ts'
import { bodyLimitByHeaders } from './middleware/body-limit.ts'
import { jsonObjectBody } from './middleware/json-body.ts'
import type { ResultReader } from './results/result-reader.ts'
import type { UploadStore } from './uploads/upload-store.ts'
import { docsRoutes } from './routes/docs.ts'
import { playgroundRoutes } from './routes/playground.ts'
import { resultRoutes } from './routes/results.ts'
import { UPLOADS_PATH, uploadRoutes } from './routes/uploads.ts'
import { tryOnRoutes } from './routes/try-on.ts'
import { isMultipartForm } from './routes/try-on-form.ts'
import { videoRemoveBackgroundRoutes } from './routes/video-remove-background.ts'

export interface GatewayDeps {
  config: Config
  logger: Logger
  /** API keys and rate limits (access/); absent: the environment's keys with in-memory limits. */
  access?: AccessControl
  /** Failed authentications per client address (shared with the gRPC API); absent: one of its own from config. */
  authThrottle?: AuthFailureThrottle
  /** Per-key concurrent-job slots; absent: no cap. */
  slots?: JobSlots
  jobs: JobStore
  publisher: JobPublisher
  cancel: CancelNotifier
  results: ResultReader
  /** Upload storage; without it POST /v1/uploads answers service_unavailable and upload URLs are refused. */
  uploads?: UploadStore
  /** Idempotency-Key claims; without it a request carrying the header answers service_unavailable. */
  idempotency?: IdempotencyStore
  /** Liveness (GET /healthz): the process serves requests. */
  health: () => { ok: boolean; [k: string]: unknown }
  /** Readiness (GET /readyz): NATS connected, job store answering (defaults to `health`). */
  ready?: () => Promise<{ ok: boolean; [k: string]: unknown }>
  /** GET /metrics (Prometheus text); absent → 404. */
  metrics?: GatewayMetrics
  /** false: /metrics is served on its own port (METRICS_PORT), and 404 here on the public port. */
  metricsOnPublicPort?: boolean
  jsonBody: MiddlewareHandler
}

/** Probe and scrape paths: logged at debug, not info (they arrive every few seconds). */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics'])

export type AppEnv = { Variables: RequestIdVariables & PrincipalVariables & { log: Logger } }

/** Runs `mw` except where `skip` says so. */
const skipWhere =
  (skip: (c: Context) => boolean, mw: MiddlewareHandler): MiddlewareHandler =>
  (c, next) =>
    skip(c) ? next() : mw(c, next)
/** Uploads and multipart try-on bodies carry media: they have their own, larger limits. */
const carriesMedia = (c: Context): boolean =>
  c.req.path === UPLOADS_PATH ||
  (c.req.path === '/v1/try-on' && isMultipartForm(c.req.header('content-type')))

/** The HTTP surface; no I/O here beyond the ports in `deps`. */
export function createApp(d: Omit<GatewayDeps, 'jsonBody'>) {
  const deps: GatewayDeps = { ...d, jsonBody: jsonObjectBody() }
  const access =
    deps.access ??
    createKeyAccessControl({
      envHashes: deps.config.apiKeyHashes,
      limits: {
        rateLimitPerS: deps.config.rateLimitPerS,
        maxConcurrentJobs: deps.config.maxConcurrentJobs,
      },
      limiter: new RateLimiter(createMemoryRateBudget()),
    })
  const throttle = {
    throttle:
      deps.authThrottle ??
      new AuthFailureThrottle({
        maxFailures: deps.config.authFailureLimit,
        windowMs: deps.config.authFailureWindowMs,
      }),
    address: (c: Context) => clientAddress(c, deps.config.trustProxyHops),
  }
  const auth = apiKeyAuth(access, { throttle })
  // Doubled and trailing slashes are ignored (http/normalize-path.ts); a known path asked with
  // another method answers 405 + Allow (http/allowed-methods.ts).
  let allowed: ((path: string) => string[]) | undefined
  // A body left unread by an early answer is read to its end afterwards, so the client gets that answer (http/drain-body.ts).
  const drain = {
    maxBytes: Math.max(DRAIN_MIN_BYTES, 2 * deps.config.uploadMaxVideoBytes),
    idleMs: DRAIN_IDLE_MS,
  }
  const app = new Hono<AppEnv>({ getPath: normalizedPath })
    .use(requestId())
    .use(async (c, next) => {
      // Every log line of a request carries its request_id (also in error bodies and X-Request-Id).
      const log = deps.logger.child({ request_id: c.get('requestId') })
      c.set('log', log)
      const t0 = performance.now()
      await next() // errors are answered by onError before this returns
      const seconds = (performance.now() - t0) / 1000
      const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL')?.path ?? 'unmatched'
      const status = c.res.status
      deps.metrics?.httpRequest({ method: c.req.method, route, status, seconds })
      const line = {
        method: c.req.method,
        route,
        path: c.req.path,
        status,
        ms: Math.round(seconds * 1000),
      }
      if (QUIET_PATHS.has(c.req.path)) log.debug(line, 'request completed')
      else log.info(line, 'request completed')
    })
    .use(
      '*',
      deps.config.corsOrigins.length === 0
        ? (_c, next) => next()
        : cors({
            origin: deps.config.corsOrigins.includes('*') ? '*' : [...deps.config.corsOrigins],
            allowMethods: ['GET', 'HEAD', 'POST'],
            allowHeaders: ['X-API-KEY', 'Content-Type', 'Idempotency-Key', 'Range'],
            exposeHeaders: CORS_EXPOSED_HEADERS,
            maxAge: 600,
          }),
    )
    .get('/healthz', (c) => {
      const { ok, ...details } = deps.health()
      return c.json({ status: ok ? 'ok' : 'unavailable', ...details }, ok ? 200 : 503)
    })
    .get('/readyz', async (c) => {
      const { ok, ...details } = await (deps.ready ?? (() => Promise.resolve(deps.health())))()
      return c.json({ status: ok ? 'ready' : 'unavailable', ...details }, ok ? 200 : 503)
    })
    .get('/metrics', async (c) => {
      if (deps.metrics === undefined || deps.metricsOnPublicPort === false) {
        throw new AppError('not_found', 'No such endpoint.')
      }
      const body = await deps.metrics.registry.metrics()
      return c.body(body, 200, { 'content-type': deps.metrics.registry.contentType })
    })
    .use('/v1/*', auth)
    .use('/playground/samples/*', apiKeyAuth(access, { rate: false, throttle })) // the operator's sample media: key holders only
    .use('/v1/*', skipWhere(carriesMedia, bodyLimitByHeaders(deps.config.maxBodyBytes)))
    .route(UPLOADS_PATH, uploadRoutes(deps))
    .get('/v1/credits', (c) => {
      // Pixelcut's GET /v1/credits; the balance as this replica last saw it (key store watch: within a second).
      const left = c.get('principal').creditsRemaining
      return c.json({ credits_remaining: left, unlimited: left === null })
    })
    .route('/v1/try-on', tryOnRoutes(deps, { waitTimeoutMs: deps.config.tryOnWaitTimeoutMs }))
    .route('/v1/video/remove-background', videoRemoveBackgroundRoutes(deps))
    .route('/results', resultRoutes(deps))
    .route('/', docsRoutes(deps))
    .route(
      '/',
      playgroundRoutes({
        dir: deps.config.playgroundDir,
        samplesDir: deps.config.playgroundSamplesDir ?? null,
        logger: deps.logger,
      }),
    )
    .notFound((c) => {
      allowed ??= allowedMethods(app.routes)
      const methods = allowed(c.req.path)
      if (methods.length > 0) throw new MethodNotAllowedError(c.req.method, methods)
      throw new AppError('not_found', 'No such endpoint.')
    })
    .onError((err, c) => {
      drainInBackground(c, drain)
      return toErrorResponse(err, c, deps.logger)
    })
  return app
}

/**
 * Options for @hono/node-server's `serve` of this app: its own clean-up of unread bodies closes
 * the socket 500 ms after the answer, under a client still sending (http/drain-body.ts does it instead).
 */
export const SERVE_OPTIONS = { autoCleanupIncoming: false } as const

/** Response headers a browser page may read (CORS_ORIGINS). */
const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Idempotent-Replayed',
  'Deprecation',
  'Content-Length',
  'Content-Range',
  'Accept-Ranges',
]
/** An early answer waits for the rest of the body up to this much (at least twice the largest upload) … */
const DRAIN_MIN_BYTES = 64 * 1024 * 1024
/** … and while it keeps arriving (this long without data: the connection is closed instead). */
const DRAIN_IDLE_MS = 5_000
export type App = ReturnType<typeof createApp>
