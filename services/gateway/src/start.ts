import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { followNatsStatus, safePost } from '@tailor/proto/net'
import { serve, type ServerType } from '@hono/node-server'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { listenFailure, withoutCredentials, type JobEvent, type JobEventAck } from '@tailor/proto'
import { createKeyAccessControl, openKeyAccessControl } from './access/access-control-keys.ts'
import { createJobSlots, createMemorySlotListStore, type JobSlots } from './access/job-slots.ts'
import { openKvSlotListStore } from './access/job-slots-kv.ts'
import { openKvKeyStore } from './access/key-store-kv.ts'
import type { KeyStore } from './access/key-store.ts'
import { createMemoryRateBudget } from './access/rate-budget.ts'
import { openKvRateBudget } from './access/rate-budget-kv.ts'
import { AuthFailureThrottle } from './access/auth-failure-throttle.ts'
import { RateLimiter } from './access/rate-limiter.ts'
import { holdsSlot, releaseSlotsOnFinal } from './access/release-slots-on-final.ts'
import { chargeCreditsOnFinal } from './access/charge-credits-on-final.ts'
import { createApp, SERVE_OPTIONS } from './app.ts'
import { ensureByteCaps } from './jetstream-byte-caps.ts'
import { ensureReplicas } from './jetstream-replicas.ts'
import type { Config } from './config.ts'
import { startApiGrpcServer } from './events/api-grpc-server.ts'
import { routeGrpcLogs, startJobEventsServer, type JobEventsServer } from './events/grpc-server.ts'
import { openKvIdempotencyStore } from './idempotency/idempotency-store-kv.ts'
import type { IdempotencyStore } from './idempotency/idempotency-store.ts'
import { createJobEventHandler } from './jobs/job-events.ts'
import { openKvJobStore } from './jobs/job-store-kv.ts'
import { withJobMetrics } from './jobs/job-store-metrics.ts'
import type { JobRecord, JobStore } from './jobs/job-store.ts'
import type { JobWatcher } from './jobs/job-watch.ts'
import { openJetStreamPublisher } from './jobs/publisher-jetstream.ts'
import type { CancelNotifier, JobPublisher } from './jobs/publisher.ts'
import { openJetStreamQueueDepth } from './jobs/queue-depth-jetstream.ts'
import { createLogger, type Logger } from './logger.ts'
import { bannerUrls } from './banner.ts'
import { createMetricsRegistry, type MetricsRegistry } from '@tailor/proto/metrics'
import { createGatewayMetrics } from './metrics.ts'
import { openObjectStoreResultReader } from './results/result-reader-object-store.ts'
import type { ResultReader } from './results/result-reader.ts'
import { openObjectStoreUploadStore } from './uploads/upload-store-object-store.ts'
import type { UploadStore } from './uploads/upload-store.ts'
import { createWebhookAttempt } from './webhooks/deliver-webhook.ts'
import { notifyOnFinal } from './webhooks/notify-on-final.ts'
import { openJetStreamWebhookQueue } from './webhooks/webhook-queue-jetstream.ts'
import type { WebhookQueue } from './webhooks/webhook-queue.ts'

/** A webhook receiver's answer is its status: this much of its body is read, then dropped. */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024

/** In-process ports for the embedded mode; without them the gateway uses NATS + gRPC. */
export interface GatewayPorts {
  /** Job records, and their change notification (gRPC WatchJob). */
  jobs: JobStore & JobWatcher
  publisher: JobPublisher
  cancel: CancelNotifier
  results: ResultReader
  uploads: UploadStore
  idempotency: IdempotencyStore
  webhooks: WebhookQueue
  /** API keys made by `tailor keys` (the data dir's api-keys.json); absent: only the environment's keys. */
  keys?: KeyStore
  /** Jobs waiting for a worker, for the tailor_queue_depth gauge (the in-process queue's length). */
  queueDepth?: () => Promise<number | null>
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

/** The only composition root of the gateway. */
export async function start(
  config: Config,
  opts: {
    ports?: GatewayPorts
    logger?: Logger
    /** Metrics registry shared with other services in this process (embedded); else one of its own. */
    registry?: MetricsRegistry
    /** More readiness conditions (embedded: the in-process inference worker). */
    readiness?: () => Readiness
    /** The request budgets' clock (tests: stopped during a burst, so no refill blurs the bound); default Date.now. */
    rateClock?: () => number
    /** A key will be added once start-up succeeded (embedded first start): no "no API key" warning. */
    keyAddedAfterStart?: boolean
  } = {},
): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.logLevel)
  routeGrpcLogs(logger)
  let queueDepth: (() => Promise<number | null>) | undefined
  const metrics = createGatewayMetrics({ registry: opts.registry ?? createMetricsRegistry(), queueDepth: () => queueDepth?.() ?? Promise.resolve(null) })
  let natsConnected = true
  let nc: NatsConnection | null = null
  let grpcServer: JobEventsServer | null = null
  let ports: Omit<GatewayPorts, 'jobs'> & { jobs: JobStore }
  let watcher: JobWatcher
  let handleJobEvent: (e: JobEvent) => Promise<JobEventAck>
  // Per-key job slots: a record that becomes final gives its slot back (access/release-slots-on-final.ts).
  let slots: JobSlots
  const slotReleaseFailed = (err: unknown, rec: JobRecord): void => logger.warn({ err, jobId: rec.id }, 'job slot release failed; reclaimed at the next check')
  // API keys (access/): the KV bucket api_keys distributed (shared by every replica), the data dir's key file embedded.
  let keyStore: KeyStore | undefined
  // A job that completes charges its owner's credit budget, if it has one (access/charge-credits-on-final.ts).
  const chargeFailed = (err: unknown, rec: JobRecord): void => logger.error({ err, jobId: rec.id, owner: rec.ownerKeyId }, 'credit charge failed')
  const charged = <S extends JobStore>(j: S): S => (keyStore === undefined ? j : chargeCreditsOnFinal(j, keyStore, chargeFailed))
  if (opts.ports !== undefined) {
    // Every record that becomes final queues its webhook (webhooks/notify-on-final.ts).
    // One process: the slot lists live in memory, rebuilt from the unfinished records at start.
    const held = new Map<string, string[]>()
    for (const r of await opts.ports.jobs.listUnfinished()) if (r.ownerKeyId !== undefined) held.set(r.ownerKeyId, [...(held.get(r.ownerKeyId) ?? []), r.id])
    slots = createJobSlots(createMemorySlotListStore(held), holdsSlot(opts.ports.jobs))
    keyStore = opts.ports.keys
    const jobs = charged(releaseSlotsOnFinal(notifyOnFinal(withJobMetrics(opts.ports.jobs, metrics), opts.ports.webhooks), slots, slotReleaseFailed))
    watcher = opts.ports.jobs
    ports = { ...opts.ports, jobs }
    queueDepth = opts.ports.queueDepth
    handleJobEvent = createJobEventHandler(jobs, logger, { onFinalRepeated: jobs.requeue })
  } else {
    if (config.natsUrl === undefined) throw new Error('NATS_URL is required to run the gateway on its own (or use the embedded mode)')
    // noAsyncTraces: no Error (with its stack) built up front for every request/publish; errors
    // keep their message and cause. A measurable share of a submission's CPU (`pnpm bench:load`).
    nc = await connect({ ...config.natsClient, servers: config.natsUrl, name: 'tailor-gateway', maxReconnectAttempts: -1, noAsyncTraces: true })
    followNatsStatus(nc.status(), logger, (connected) => {
      natsConnected = connected
    })
    queueDepth = await openJetStreamQueueDepth(nc)
    const webhooks = await openJetStreamWebhookQueue(nc, {
      attemptTimeoutMs: config.webhookTimeoutMs, logger, slots: { concurrency: config.webhookConcurrency, perKey: config.webhookMaxInFlightPerKey },
    })
    const kvJobs = await openKvJobStore(nc, { ttlMs: config.jobRetentionS * 1000 })
    watcher = kvJobs
    slots = createJobSlots(await openKvSlotListStore(nc), holdsSlot(kvJobs))
    keyStore = await openKvKeyStore(nc)
    const jobs = charged(releaseSlotsOnFinal(notifyOnFinal(withJobMetrics(kvJobs, metrics), webhooks), slots, slotReleaseFailed))
    handleJobEvent = createJobEventHandler(jobs, logger, { onFinalRepeated: jobs.requeue })
    if (config.jobEventsToken === undefined) throw new Error('JOB_EVENTS_TOKEN is required with NATS_URL')
    grpcServer = await startJobEventsServer({
      host: config.host, port: config.grpcPort, handle: handleJobEvent, logger, token: config.jobEventsToken, ...(config.jobEventsTls ? { tls: config.jobEventsTls } : {}),
    }).catch(async (err: unknown) => {
      await nc?.close()
      throw listenFailure(err, 'GRPC_PORT', config.host, config.grpcPort)
    })
    ports = {
      jobs, publisher: await openJetStreamPublisher(nc), cancel: grpcServer, uploads: await openObjectStoreUploadStore(nc),
      results: await openObjectStoreResultReader(nc, { ttlMs: config.resultRetentionS * 1000 }),
      idempotency: await openKvIdempotencyStore(nc, { ttlMs: config.idempotencyTtlS * 1000 }), webhooks,
    }
  }
  // Rate limits (access/): the KV bucket rate_limits distributed (shared by every replica), memory embedded.
  const limiter = new RateLimiter(nc === null ? createMemoryRateBudget() : await openKvRateBudget(nc), opts.rateClock === undefined ? {} : { now: opts.rateClock })
  if (nc !== null) {
    await ensureReplicas(nc, config.natsReplicas, logger)
    await ensureByteCaps(nc, config.storageCaps, logger)
  }
  const limits = { rateLimitPerS: config.rateLimitPerS, maxConcurrentJobs: config.maxConcurrentJobs }
  const access =
    keyStore === undefined
      ? createKeyAccessControl({ envHashes: config.apiKeyHashes, limits, limiter })
      : await openKeyAccessControl({ keys: keyStore, envHashes: config.apiKeyHashes, limits, limiter, onWatchError: (err) => logger.error({ err }, 'API key watch failed') })
  if (access.keyCount() === 0 && opts.keyAddedAfterStart !== true) logger.warn(`no API key is accepted yet: create one with \`${keyCreateCommand(config)}\``)
  // Webhook deliveries: signed with the job's key's own secret (tailor keys), else WEBHOOK_SECRET.
  const post = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) =>
    safePost(url, body, { timeoutMs, allowLoopback: config.allowLoopback, maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES, headers, label: 'webhook_url' })
  ports.webhooks.start(createWebhookAttempt({
    post, secretsFor: (keyId) => access.webhookSecretsFor(keyId, config.webhookSecrets), resultUrlSecret: config.resultUrlSecret, resultUrlTtlS: config.resultUrlTtlS,
    retryDelaysMs: config.webhookRetryDelaysMs, logger,
    timeouts: { timeoutMs: config.webhookTimeoutMs, failingTimeoutMs: config.webhookFailingTimeoutMs, failingAfter: config.webhookFailingAfter },
  }))
  logger.info(
    { attempts: config.webhookRetryDelaysMs.length + 1, timeoutMs: config.webhookTimeoutMs, globalSecrets: config.webhookSecrets.length, concurrency: config.webhookConcurrency, perKey: config.webhookMaxInFlightPerKey },
    config.webhookSecrets.length > 0 ? 'webhooks enabled' : 'webhooks enabled for keys with their own signing secret (WEBHOOK_SECRET is not set: keys from the environment cannot ask for webhooks)',
  )
  const conn = nc
  const grpcSrv = grpcServer
  const jobStore = ports.jobs
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
  const authThrottle = new AuthFailureThrottle({ maxFailures: config.authFailureLimit, windowMs: config.authFailureWindowMs })
  const app = createApp({
    config,
    logger,
    ...ports,
    access,
    authThrottle,
    slots,
    metrics,
    metricsOnPublicPort: config.metricsPort === undefined,
    ready: async () => {
      const nats = conn === null ? null : natsConnected && !conn.isClosed()
      const jobStoreOk = await probeJobStore()
      const extra = opts.readiness?.() ?? { ok: true }
      const { ok: extraOk, ...extraDetails } = extra
      return {
        ok: !stopping && nats !== false && jobStoreOk && extraOk,
        mode: conn === null ? 'embedded' : 'distributed',
        ...(nats === null ? {} : { nats_connected: nats }),
        job_store: jobStoreOk,
        ...(stopping ? { stopping: true } : {}),
        ...extraDetails,
      }
    },
    health: () => ({
      ok: conn === null || !conn.isClosed(),
      mode: conn === null ? 'embedded' : 'distributed',
      ...(grpcSrv ? { workers_connected: grpcSrv.connectedWorkers() } : {}),
    }),
  })
  // A port that cannot be had ends start-up with one line naming its variable (listenFailure); what
  // is already open is closed first, so an in-process caller is left with nothing running.
  const opened: (() => Promise<unknown>)[] = [
    async () => conn?.close(), () => access.close(), () => slots.close(), () => ports.webhooks.close(), async () => grpcServer?.stop(0),
  ]
  const failStart = async (err: unknown, variable: string, port: number): Promise<never> => {
    for (const close of opened.reverse()) await close().catch(() => undefined)
    throw listenFailure(err, variable, config.host, port)
  }
  const server: ServerType = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host, ...SERVE_OPTIONS }, () => {
      s.off('error', reject)
      resolve(s)
    })
    s.once('error', reject)
  }).catch((err: unknown) => failStart(err, 'PORT', config.port))
  opened.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const bound = server.address() as AddressInfo
  const port = bound.port
  // /metrics on its own port (never routed by the Ingress that publishes PORT).
  const metricsServer =
    config.metricsPort === undefined
      ? null
      : await new Promise<Server>((resolve, reject) => {
          const m = createServer((req, res) => {
            if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/metrics') {
              metrics.registry.metrics().then(
                (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
                () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Metrics could not be collected.', error_code: 'unexpected_error' })),
              )
              return
            }
            res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'No such endpoint.', error_code: 'not_found' }))
          })
          m.once('error', reject)
          m.listen(config.metricsPort, config.host, () => resolve(m))
        }).catch((err: unknown) => failStart(err, 'METRICS_PORT', config.metricsPort ?? 0))
  if (metricsServer !== null) opened.push(() => new Promise<void>((resolve) => metricsServer.close(() => resolve())))
  const metricsPort = metricsServer === null ? null : (metricsServer.address() as AddressInfo).port
  const url = bannerUrls({ address: bound.address, port }).local
  // The internal gRPC API: same use cases and access control (access/) as HTTP.
  const apiGrpc = await startApiGrpcServer(
    { config, logger, access, ...ports, slots, watcher, authThrottle, baseUrl: () => config.publicBaseUrl ?? url },
    { host: config.host, port: config.apiGrpcPort },
  ).catch((err: unknown) => failStart(err, 'API_GRPC_PORT', config.apiGrpcPort))
  logger.info({ port, metricsPort, grpcPort: grpcServer?.port, apiGrpcPort: apiGrpc.port, mode: nc ? 'distributed' : 'embedded', keys: access.keyCount() }, 'gateway listening')
  return {
    url,
    port,
    bound: { address: bound.address, port },
    keyCount: () => access.keyCount(),
    grpcPort: grpcServer?.port ?? null,
    metricsPort,
    apiGrpcPort: apiGrpc.port,
    handleJobEvent,
    jobs: ports.jobs,
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
      await new Promise<void>((resolve) => (metricsServer === null ? resolve() : metricsServer.close(() => resolve())))
      await apiGrpc.stop(config.shutdownTimeoutMs)
      await grpcSrv?.stop(config.shutdownTimeoutMs)
      await webhooksClosed
      await ports.jobs.close()
      await ports.uploads.close()
      await ports.idempotency.close()
      await access.close()
      await slots.close()
      if (conn !== null) await conn.drain()
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
