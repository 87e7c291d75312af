import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pino, type Logger } from 'pino'
import { jobEnvelope } from '@tailor/proto'
import {
  createFileResultReader,
  loadConfig as loadGatewayConfig,
  openFileIdempotencyStore,
  openFileJobStore,
  openFileKeyStore,
  openFileUploadStore,
  openFileWebhookQueue,
  sha256Hex,
  start as startGateway,
  startFileResultSweeper,
} from '@tailor/gateway'
import { createMetricsRegistry } from '@tailor/proto/metrics'
import {
  createFileResultStore,
  createFileUploadSource,
  loadConfig as loadInferenceConfig,
  start as startInference,
} from '@tailor/inference'
import type { Config } from './config.ts'
import { openDataDir } from './data-dir.ts'
import { ensureDefaultKey } from './default-key.ts'
import { InProcessEvents } from './in-process-events.ts'
import { InProcessQueue } from './in-process-queue.ts'

/** The data directory's file holding the URL the running service bound (read by the `tailor` CLI). */
export const SERVICE_URL_FILE = 'service-url'

export interface Embedded {
  url: string
  port: number
  /** The HTTP server's address as bound (the start-up banner names it). */
  bound: { address: string; port: number }
  /** API keys accepted now. */
  keyCount(): number
  /** Port of the internal gRPC API (tailor.v1.TailorApi; API_GRPC_PORT). */
  apiGrpcPort: number
  /** The API key created on this start (null when one was configured or created earlier). */
  createdApiKey: string | null
  /** The webhook signing secret of the key created on this start (shown once with it), else null. */
  createdWebhookSecret: string | null
  /** The file holding the generated webhook signing secret; null when WEBHOOK_SECRET is configured. */
  webhookSecretFile: string | null
  stop(): Promise<void>
}

/**
 * Embedded mode: the gateway and one inference worker in one process, joined by in-process ports
 * (queue, events) and the data directory (job records, results). No NATS; the gateway still serves
 * its internal gRPC API (API_GRPC_PORT).
 */
export async function start(config: Config, opts: { logger?: Logger } = {}): Promise<Embedded> {
  const logger = opts.logger ?? pino({ name: 'tailor', level: config.logLevel })
  const data = await openDataDir(config.dataDir)
  // API keys: the data dir's key store (`pnpm tailor keys …`); a "default" key is created on first start.
  const keys = openFileKeyStore(config.dataDir)
  // The first start's key is created only once everything started (below): a start that fails
  // (a port in use) creates none, so the next start still creates and prints one.
  const firstStart = !config.apiKeyConfigured && (await keys.list()).length === 0
  const env = { ...config.env, NATS_URL: undefined, GATEWAY_GRPC_ADDR: undefined }
  const gatewayConfig = loadGatewayConfig({
    ...env,
    PORT: String(config.port),
    HOST: config.host,
    RESULT_URL_SECRET: data.resultUrlSecret,
    // Webhooks are on in the embedded mode: signed with WEBHOOK_SECRET, or the data dir's own secret.
    WEBHOOK_SECRET: config.env.WEBHOOK_SECRET ?? data.webhookSecret,
  })
  // METRICS_PORT is the gateway's here: one registry, both services' metrics on it.
  const inferenceConfig = loadInferenceConfig({
    ...env,
    METRICS_PORT: undefined,
    TAILOR_WORK_DIR: config.env.TAILOR_WORK_DIR ?? data.workDir,
  })

  const queue = new InProcessQueue()
  const events = new InProcessEvents()
  // Retention as in the distributed buckets: records JOB_RETENTION_S after their last change,
  // results RESULT_RETENTION_S after they were written (swept every minute; crash leftovers at once).
  const jobs = await openFileJobStore(data.jobsDir, {
    retentionMs: gatewayConfig.jobRetentionS * 1000,
  })
  const resultSweeper = await startFileResultSweeper(data.resultsDir, {
    retentionMs: gatewayConfig.resultRetentionS * 1000,
    onSwept: (paths) => logger.info({ files: paths.length }, 'expired results deleted'),
  })
  // One metrics registry for the process: the gateway's /metrics shows both services' metrics,
  // and /readyz waits for the worker's models too.
  const registry = createMetricsRegistry()
  let inference: Awaited<ReturnType<typeof startInference>> | undefined
  const gateway = await startGateway(gatewayConfig, {
    logger: logger.child({ service: 'gateway' }),
    registry,
    readiness: () => inference?.ready() ?? { ok: false, models_loaded: false },
    keyAddedAfterStart: firstStart,
    ports: {
      jobs,
      publisher: queue,
      cancel: events,
      results: createFileResultReader(data.resultsDir),
      uploads: await openFileUploadStore(data.uploadsDir, {
        maxTotalBytes: gatewayConfig.storageCaps.uploadsMaxBytes,
      }),
      queueDepth: () => Promise.resolve(queue.depth()),
      keys,
      idempotency: await openFileIdempotencyStore(data.idempotencyDir, {
        ttlMs: gatewayConfig.idempotencyTtlS * 1000,
      }),
      webhooks: await openFileWebhookQueue(data.webhooksDir, {
        logger: logger.child({ service: 'gateway' }),
        slots: {
          concurrency: gatewayConfig.webhookConcurrency,
          perKey: gatewayConfig.webhookMaxInFlightPerKey,
        },
      }),
    },
  }).catch((err: unknown) => {
    resultSweeper.stop()
    throw err
  })
  events.connect(gateway.handleJobEvent)
  try {
    inference = await startInference(inferenceConfig, {
      registry,
      logger: logger.child({ service: 'inference' }),
      ports: {
        source: queue,
        events,
        results: createFileResultStore(data.resultsDir, {
          maxResultBytes: inferenceConfig.RESULT_MAX_BYTES,
          maxTotalBytes: gatewayConfig.storageCaps.resultsMaxBytes,
        }),
        uploads: createFileUploadSource(data.uploadsDir),
      },
    })
  } catch (err) {
    resultSweeper.stop()
    await gateway.stop()
    throw err
  }
  // Jobs that were pending or running when the process last stopped run again.
  const unfinished = await jobs.listUnfinished()
  for (const rec of unfinished) {
    await queue.publish(jobEnvelope(rec.id, rec, rec.createdAt), rec.attempts)
  }
  if (unfinished.length > 0) logger.info({ jobs: unfinished.length }, 'requeued unfinished jobs')
  const createdApiKey = config.apiKeyConfigured
    ? null
    : await ensureDefaultKey(keys, data.legacyApiKeyHash)
  // Its own webhook signing secret (api-key.ts generateApiKey), shown once beside it.
  const createdWebhookSecret =
    createdApiKey === null
      ? null
      : ((await keys.list()).find((r) => r.sha256 === sha256Hex(createdApiKey))?.webhookSecret ??
        null)
  await gateway.reloadKeys() // accepted from this moment, not at the key file's next poll
  const inf = inference
  // Where the CLI finds this service when TAILOR_URL is not set (cli/src/service.ts serviceUrl): the
  // URL actually bound, so a non-default PORT needs no configuration; removed again on stop.
  const serviceUrlFile = join(config.dataDir, SERVICE_URL_FILE)
  await writeFile(serviceUrlFile, `${gateway.url}\n`)
  return {
    url: gateway.url,
    port: gateway.port,
    bound: gateway.bound,
    keyCount: gateway.keyCount,
    apiGrpcPort: gateway.apiGrpcPort,
    createdApiKey,
    createdWebhookSecret,
    webhookSecretFile: config.env.WEBHOOK_SECRET === undefined ? data.webhookSecretFile : null,
    async stop() {
      await rm(serviceUrlFile, { force: true })
      await queue.close()
      await inf.stop()
      await gateway.stop()
      resultSweeper.stop()
    },
  }
}
