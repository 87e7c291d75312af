import type { AddressInfo } from 'node:net'
import { safePost } from '@tailor/proto/net'
import { serve, type ServerType } from '@hono/node-server'
import { listenFailure, withoutCredentials, type JobEvent, type JobEventAck } from '@tailor/proto'
import {
  createMetricsRegistry,
  startMetricsServer,
  type MetricsRegistry,
} from '@tailor/proto/metrics'
import { createKeyAccessControl, openKeyAccessControl } from './access/access-control-keys.ts'
import { createJobSlots, type SlotListStore } from './access/job-slots.ts'
import type { KeyStore } from './access/key-store.ts'
import type { RateBudgetStore } from './access/rate-budget.ts'
import { AuthFailureThrottle } from './access/auth-failure-throttle.ts'
import { RateLimiter } from './access/rate-limiter.ts'
import { holdsSlot, releaseSlotsOnFinal } from './access/release-slots-on-final.ts'
import { chargeCreditsOnFinal } from './access/charge-credits-on-final.ts'
import { createApp, SERVE_OPTIONS } from './app.ts'
import { bannerUrls } from './banner.ts'
import type { Config } from './config.ts'
import { startApiGrpcServer } from './events/api-grpc-server.ts'
import { routeGrpcLogs } from './events/grpc-server.ts'
import type { IdempotencyStore } from './idempotency/idempotency-store.ts'
import { createJobEventHandler } from './jobs/job-events.ts'
import { withJobMetrics } from './jobs/job-store-metrics.ts'
import type { JobRecord, JobStore } from './jobs/job-store.ts'
import type { JobWatcher } from './jobs/job-watch.ts'
import type { CancelNotifier, JobPublisher } from './jobs/publisher.ts'
import { createLogger, type Logger } from './logger.ts'
import { createGatewayMetrics } from './metrics.ts'
import type { ResultReader } from './results/result-reader.ts'
import type { UploadStore } from './uploads/upload-store.ts'
import { createWebhookAttempt } from './webhooks/deliver-webhook.ts'
import { notifyOnFinal } from './webhooks/notify-on-final.ts'
import type { WebhookQueue } from './webhooks/webhook-queue.ts'

/** A webhook receiver's answer is its status: this much of its body is read, then dropped. */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024

/**
 * What the gateway composes over (STYLE.md §3.2: business logic reaches the world only through
 * ports). Opened by an adapter: `openNatsPorts` (distributed: NATS JetStream, KV, Object Store and
 * the job events gRPC server) or `inProcessPorts` (embedded: the data dir's files and in-process
 * queues, from services/embedded).
 */
export interface GatewayPorts {
  /** Job records, and their change notification (gRPC WatchJob). */
  jobs: JobStore & JobWatcher
  publisher: JobPublisher
  cancel: CancelNotifier
  results: ResultReader
  uploads: UploadStore
  idempotency: IdempotencyStore
  webhooks: WebhookQueue
  /** API keys made by `tailor keys`; absent: only the environment's keys. */
  keys?: KeyStore
  /** Jobs waiting for a worker, for the tailor_queue_depth gauge. */
  queueDepth?: () => Promise<number | null>
  /** Per-key job slot lists (access/job-slots.ts). */
  slotLists: SlotListStore
  /** Per-key request budgets (access/rate-limiter.ts). */
  rateBudget: RateBudgetStore
  transport: GatewayTransport
}

/** How inference's job events reach the gateway, and the connection's life. */
export interface GatewayTransport {
  mode: 'embedded' | 'distributed'
  /** NATS connected now (readiness); null without NATS. */
  natsConnected(): boolean | null
  /** False once the connection is closed for good (health). */
  healthy(): boolean
  /** The job events gRPC server (distributed), else null. */
  events: { port: number; connectedWorkers(): number } | null
  /** Gives the job events to the gateway's handler; compose calls it once, before serving. */
  handleJobEventsWith(handle: (e: JobEvent) => Promise<JobEventAck>): void
  /** Stops receiving job events (before the stores close). */
  stopEvents(timeoutMs: number): Promise<void>
  /** Closes the connection (NATS drain), last. */
  close(): Promise<void>
}

/** Readiness details; `ok` false answers /readyz with 503. */
export type Readiness = { ok: boolean; [k: string]: unknown }

/** A job id in the issued format that is never issued: reading it proves the job store answers. */
const PROBE_JOB_ID = '00000000-0000-7000-8000-000000000000'
const READY_PROBE_TIMEOUT_MS = 2_000

export interface Gateway {
  url: string
  port: number
  /** The HTTP server's address as bound (the start-up banner names it). */
  bound: { address: string; port: number }
  /** API keys accepted now (key store and environment). */
  keyCount(): number
  /** gRPC port for inference job events (distributed mode), else null. */
  grpcPort: number | null
  /** Port of GET /metrics when METRICS_PORT is set (then not on the public port), else null. */
  metricsPort: number | null
  /** Port of the internal gRPC API (tailor.v1.TailorApi), both modes. */
  apiGrpcPort: number
  /** Applies an inference event to the job records (the embedded mode calls it directly). */
  handleJobEvent: (e: JobEvent) => Promise<JobEventAck>
  jobs: JobStore
  /** Reads the key store now (the embedded mode's first-start key, created once start-up succeeded). */
  reloadKeys(): Promise<void>
  stop(): Promise<void>
}

export interface ComposeOptions {
  logger?: Logger
  /** Metrics registry shared with other services in this process (embedded); else one of its own. */
  registry?: MetricsRegistry
  /** More readiness conditions (embedded: the in-process inference worker). */
  readiness?: () => Readiness
  /** The request budgets' clock (tests: stopped during a burst, so no refill blurs the bound); default Date.now. */
  rateClock?: () => number
  /** A key will be added once start-up succeeded (embedded first start): no "no API key" warning. */
  keyAddedAfterStart?: boolean
}

/**
 * The gateway over its ports: one path for both modes (the adapters differ, not the wiring).
 * Wraps the job store (metrics → webhooks on final → slots released → credits charged), builds
 * access control, the HTTP app, the metrics port and the internal gRPC API.
 */
export async function compose(
  config: Config,
  ports: GatewayPorts,
  opts: ComposeOptions = {},
): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.logLevel)
  routeGrpcLogs(logger)
  const metrics = createGatewayMetrics({
    registry: opts.registry ?? createMetricsRegistry(),
    queueDepth: () => ports.queueDepth?.() ?? Promise.resolve(null),
  })
  const transport = ports.transport
  // Per-key job slots: a record that becomes final gives its slot back (access/release-slots-on-final.ts).
  const slots = createJobSlots(ports.slotLists, holdsSlot(ports.jobs))
  const slotReleaseFailed = (err: unknown, rec: JobRecord): void =>
    logger.warn({ err, job_id: rec.id }, 'job slot release failed; reclaimed at the next check')
  // A job that completes charges its owner's credit budget, if it has one (access/charge-credits-on-final.ts).
  const keyStore = ports.keys
  const chargeFailed = (err: unknown, rec: JobRecord): void =>
    logger.error({ err, job_id: rec.id, owner: rec.ownerKeyId }, 'credit charge failed')
  const charged = <S extends JobStore>(j: S): S =>
    keyStore === undefined ? j : chargeCreditsOnFinal(j, keyStore, chargeFailed)
  // Every record that becomes final queues its webhook (webhooks/notify-on-final.ts).
  const jobs = charged(
    releaseSlotsOnFinal(
      notifyOnFinal(withJobMetrics(ports.jobs, metrics), ports.webhooks),
      slots,
      slotReleaseFailed,
    ),
  )
  const watcher: JobWatcher = ports.jobs
  const handleJobEvent = createJobEventHandler(jobs, logger, { onFinalRepeated: jobs.requeue })
  transport.handleJobEventsWith(handleJobEvent)
  const limiter = new RateLimiter(
    ports.rateBudget,
    opts.rateClock === undefined ? {} : { now: opts.rateClock },
  )
  const limits = {
    rateLimitPerS: config.rateLimitPerS,
    maxConcurrentJobs: config.maxConcurrentJobs,
  }
  const access =
    keyStore === undefined
      ? createKeyAccessControl({ envHashes: config.apiKeyHashes, limits, limiter })
      : await openKeyAccessControl({
          keys: keyStore,
          envHashes: config.apiKeyHashes,
          limits,
          limiter,
          onWatchError: (err) => logger.error({ err }, 'API key watch failed'),
        })
  if (access.keyCount() === 0 && opts.keyAddedAfterStart !== true) {
    logger.warn(`no API key is accepted yet: create one with \`${keyCreateCommand(config)}\``)
  }
  // Webhook deliveries: signed with the job's key's own secret (tailor keys), else WEBHOOK_SECRET.
  const post = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) =>
    safePost(url, body, {
      timeoutMs,
      allowLoopback: config.allowLoopback,
      maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
      headers,
      label: 'webhook_url',
    })
  ports.webhooks.start(
    createWebhookAttempt({
      post,
      secretsFor: (keyId) => access.webhookSecretsFor(keyId, config.webhookSecrets),
      resultUrlSecret: config.resultUrlSecret,
      resultUrlTtlS: config.resultUrlTtlS,
      retryDelaysMs: config.webhookRetryDelaysMs,
      logger,
      timeouts: {
        timeoutMs: config.webhookTimeoutMs,
        failingTimeoutMs: config.webhookFailingTimeoutMs,
        failingAfter: config.webhookFailingAfter,
      },
    }),
  )
  logger.info(
    {
      attempts: config.webhookRetryDelaysMs.length + 1,
      timeoutMs: config.webhookTimeoutMs,
      globalSecrets: config.webhookSecrets.length,
      concurrency: config.webhookConcurrency,
      perKey: config.webhookMaxInFlightPerKey,
    },
    config.webhookSecrets.length > 0
      ? 'webhooks enabled'
      : 'webhooks enabled for keys with their own signing secret (WEBHOOK_SECRET is not set: keys from the environment cannot ask for webhooks)',
  )
  const jobStore = jobs
  let stopping = false
  const probeJobStore = (): Promise<boolean> =>
    new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), READY_PROBE_TIMEOUT_MS)
      jobStore.get(PROBE_JOB_ID).then(
        () => (clearTimeout(t), resolve(true)),
        () => (clearTimeout(t), resolve(false)),
      )
    })
  // Failed authentications per client address: one allowance for HTTP and the gRPC API.
  const authThrottle = new AuthFailureThrottle({
    maxFailures: config.authFailureLimit,
    windowMs: config.authFailureWindowMs,
  })
  const app = createApp({
    config,
    logger,
    ...ports,
    jobs,
    access,
    authThrottle,
    slots,
    metrics,
    metricsOnPublicPort: config.metricsPort === undefined,
    ready: async () => {
      const nats = transport.natsConnected()
      const jobStoreOk = await probeJobStore()
      const extra = opts.readiness?.() ?? { ok: true }
      const { ok: extraOk, ...extraDetails } = extra
      return {
        ok: !stopping && nats !== false && jobStoreOk && extraOk,
        mode: transport.mode,
        ...(nats === null ? {} : { nats_connected: nats }),
        job_store: jobStoreOk,
        ...(stopping ? { stopping: true } : {}),
        ...extraDetails,
      }
    },
    health: () => ({
      ok: transport.healthy(),
      mode: transport.mode,
      ...(transport.events ? { workers_connected: transport.events.connectedWorkers() } : {}),
    }),
  })
  // A port that cannot be had ends start-up with one line naming its variable (listenFailure); what
  // is already open is closed first, so an in-process caller is left with nothing running.
  const opened: (() => Promise<unknown>)[] = [
    () => transport.close(),
    () => access.close(),
    () => slots.close(),
    () => ports.webhooks.close(),
    () => transport.stopEvents(0),
  ]
  const failStart = async (err: unknown, variable: string, port: number): Promise<never> => {
    for (const close of opened.reverse()) await close().catch(() => undefined)
    throw listenFailure(err, variable, config.host, port)
  }
  const server: ServerType = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      { fetch: app.fetch, port: config.port, hostname: config.host, ...SERVE_OPTIONS },
      () => {
        s.off('error', reject)
        resolve(s)
      },
    )
    s.once('error', reject)
  }).catch((err: unknown) => failStart(err, 'PORT', config.port))
  opened.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const bound = server.address() as AddressInfo
  const port = bound.port
  // /metrics on its own port (never routed by the Ingress that publishes PORT).
  const metricsServer =
    config.metricsPort === undefined
      ? null
      : await startMetricsServer({
          host: config.host,
          port: config.metricsPort,
          metrics: {
            contentType: metrics.registry.contentType,
            text: () => metrics.registry.metrics(),
          },
        }).catch((err: unknown) => failStart(err, 'METRICS_PORT', config.metricsPort ?? 0))
  if (metricsServer !== null) opened.push(() => metricsServer.stop())
  const metricsPort = metricsServer?.port ?? null
  const url = bannerUrls({ address: bound.address, port }).local
  // The internal gRPC API: same use cases and access control (access/) as HTTP.
  const apiGrpc = await startApiGrpcServer(
    {
      config,
      logger,
      access,
      ...ports,
      jobs,
      slots,
      watcher,
      authThrottle,
      baseUrl: () => config.publicBaseUrl ?? url,
    },
    { host: config.host, port: config.apiGrpcPort },
  ).catch((err: unknown) => failStart(err, 'API_GRPC_PORT', config.apiGrpcPort))
  logger.info(
    {
      port,
      metricsPort,
      grpcPort: transport.events?.port,
      apiGrpcPort: apiGrpc.port,
      mode: transport.mode,
      keys: access.keyCount(),
    },
    'gateway listening',
  )
  return {
    url,
    port,
    bound: { address: bound.address, port },
    keyCount: () => access.keyCount(),
    grpcPort: transport.events?.port ?? null,
    metricsPort,
    apiGrpcPort: apiGrpc.port,
    handleJobEvent,
    jobs,
    async reloadKeys() {
      if (keyStore !== undefined) access.setStoredKeys(await keyStore.list())
    },
    async stop() {
      stopping = true
      // No new webhook attempts from here on (a retry falling due during the drain is left to a
      // replica or the next start); those in flight finish before the store closes.
      const webhooksClosed = ports.webhooks.close()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Long downloads must not hold shutdown forever.
        setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections()
        }, config.shutdownTimeoutMs).unref()
      })
      await metricsServer?.stop()
      await apiGrpc.stop(config.shutdownTimeoutMs)
      await transport.stopEvents(config.shutdownTimeoutMs)
      await webhooksClosed
      await jobs.close()
      await ports.uploads.close()
      await ports.idempotency.close()
      await access.close()
      await slots.close()
      await transport.close()
      logger.info('gateway stopped')
    },
  }
}

/**
 * The command that makes an API key this gateway accepts: in the KV bucket of its NATS server
 * (distributed; `--nats-url`, without credentials: add NATS_USER / NATS_PASSWORD as the gateway has
 * them), else the default data dir's file.
 */
export function keyCreateCommand(config: Pick<Config, 'natsUrl'>): string {
  return config.natsUrl === undefined
    ? 'pnpm tailor keys create --name NAME'
    : `pnpm tailor keys create --name NAME --nats-url ${withoutCredentials(config.natsUrl)}`
}
