import { StartupError } from '@tailor/proto'
import type { Config } from './config.ts'
import { consumeJobs, type Consumer } from './consumer/consume-jobs.ts'
import type { JobSource } from './consumer/job-source.ts'
import { cpuLimit } from './engine/cpu-limit.ts'
import { openMattingEngine } from './engine/matting-engine.ts'
import { ortLogSeverity, type ExecutionProvider } from './engine/session.ts'
import { openTryOnEngine } from './engine/tryon/tryon-engine.ts'
import {
  openTryOnEngineInWorker,
  type OpenTryOnWorkerOptions,
  type TryOnWorkerEngine,
} from './engine/tryon/tryon-worker.ts'
import type { JobEventSink } from './events/job-event-sink.ts'
import { safeFetchToFile } from '@tailor/proto/net'
import { startHealthServer, type HealthServer, type Report } from './health/health-server.ts'
import {
  PROGRESS_INTERVAL_MS,
  removeBackground,
  type MattingEngine,
} from './jobs/remove-background.ts'
import { runJob } from './jobs/run-job.ts'
import { createLogger, type Logger } from './logger.ts'
import { openWorkDir, type WorkDir } from './work-dir.ts'
import { DEFAULT_IMAGE_LIMITS } from './media/image.ts'
import {
  createMetricsRegistry,
  startMetricsServer,
  type MetricsRegistry,
} from '@tailor/proto/metrics'
import { createInferenceMetrics } from './metrics.ts'
import type { ResultStore } from './results/result-store.ts'
import { createInputFetcher } from './uploads/input-fetcher.ts'
import type { UploadSource } from './uploads/upload-source.ts'

/** Start-up refused for a reason the operator fixes (printed as one line, no stack trace). */
export { StartupError }
const oneLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim().slice(0, 400)

/**
 * What inference composes over (STYLE.md §3.2). Opened by an adapter: `openNatsPorts`
 * (distributed: JetStream, Object Stores, job events over gRPC) or `inProcessPorts` (embedded:
 * services/embedded's in-process queue and files).
 */
export interface InferencePorts {
  source: JobSource
  events: JobEventSink
  results: ResultStore
  /** Where `tailor://uploads/<id>` inputs are read from. */
  uploads: UploadSource
  connection: PortsConnection
}

/** The ports' connection (NATS in distributed mode; none in-process). */
export interface PortsConnection {
  mode: 'embedded' | 'distributed'
  /** Connected now (readiness); null without a connection. */
  connected(): boolean | null
  /** False once the connection is closed for good (liveness). */
  healthy(): boolean
  /** Lets in-flight messages finish, then closes (stop). */
  drain(): Promise<void>
  /** Closes at once (a start-up that fails). */
  close(): Promise<void>
}

export interface Inference {
  /** The execution provider actually in use (never a silent fallback). */
  provider: string
  /** Readiness: engines loaded and warmed up (true once start resolved), NATS connected, not stopping. */
  ready(): Report
  stop(): Promise<void>
}

export interface ComposeOptions {
  logger?: Logger
  /** Metrics registry shared with the gateway in this process (embedded); else one of its own. */
  registry?: MetricsRegistry
}

/**
 * Inference composed over its ports, one path for both modes: engines first (ready = loaded +
 * warmed up), then the ports are opened (`openPorts`, the adapter start.ts chose), then jobs.
 */
export async function compose(
  config: Config,
  openPorts: (logger: Logger) => Promise<InferencePorts>,
  opts: ComposeOptions = {},
): Promise<Inference> {
  const logger = opts.logger ?? createLogger(config.LOG_LEVEL)
  let consumerRef: Consumer | null = null
  let providerInUse = 'cpu'
  const metrics = createInferenceMetrics({
    registry: opts.registry ?? createMetricsRegistry(),
    inFlight: () => consumerRef?.inFlight() ?? 0,
    provider: () => providerInUse,
  })
  const onRun = metrics.modelRun
  // onnxruntime's own log lines follow LOG_LEVEL (STYLE.md §3.6).
  const logSeverityLevel = ortLogSeverity(config.LOG_LEVEL)
  const kinds = config.JOB_KINDS
  const required = config.REQUIRE_EXECUTION_PROVIDER
  // With a required provider, models open on it alone: no fallback can hide a failed CUDA set-up.
  const executionProviders: ExecutionProvider[] =
    required !== undefined ? [required] : config.ORT_EP === 'cuda' ? ['cuda', 'cpu'] : ['cpu']
  const threads = config.ORT_INTRA_OP_THREADS ?? cpuLimit()
  const requiredFailed = (what: string, err: unknown): StartupError =>
    new StartupError(
      `REQUIRE_EXECUTION_PROVIDER=${required}: ${what} did not load on ${required}: ${oneLine(err)}`,
      { cause: err },
    )

  // The matting engine serves remove-background jobs; a try-on-only worker does not load it.
  let engine:
    (MattingEngine & { warmupMs: number; provider?: string; providerFallbacks?: unknown }) | null =
    null
  if (kinds.includes('remove-background')) {
    const t0 = performance.now()
    try {
      engine = await openMattingEngine({
        modelsDir: config.MODELS_DIR,
        precision: config.RVM_PRECISION,
        executionProviders,
        intraOpThreads: threads,
        logSeverityLevel,
        onRun,
        thread: config.MATTING_ENGINE_THREAD,
      })
    } catch (err) {
      throw required !== undefined ? requiredFailed('the matting models', err) : err
    }
    logger.info(
      {
        provider: engine.provider,
        fallbacks: engine.providerFallbacks,
        intraOpThreads: threads,
        thread: config.MATTING_ENGINE_THREAD,
        loadMs: Math.round(performance.now() - t0),
        warmupMs: Math.round(engine.warmupMs),
      },
      'matting engine ready',
    )
  }

  // The try-on engine: without its models (a video-only deployment serving every kind) the worker
  // still runs video jobs, and try-on jobs fail with service_unavailable, logged as an error. A
  // worker that runs only try-on, or that requires a provider, does not start without it.
  // It runs in a worker thread by default (TRYON_ENGINE_THREAD): its JS stages would otherwise hold
  // this event loop (health, NATS, gRPC event streams, video jobs) for hundreds of ms per try-on.
  let tryOnEngine: TryOnWorkerEngine | Awaited<ReturnType<typeof openTryOnEngine>> | null = null
  if (kinds.includes('try-on')) {
    const t1 = performance.now()
    try {
      const tryOnOptions: OpenTryOnWorkerOptions = {
        modelsDir: config.MODELS_DIR,
        executionProviders,
        intraOpThreads: threads,
        logSeverityLevel,
        onRun,
      }
      tryOnEngine =
        config.TRYON_ENGINE_THREAD === 'worker'
          ? await openTryOnEngineInWorker(tryOnOptions)
          : await openTryOnEngine(tryOnOptions)
      logger.info(
        {
          provider: tryOnEngine.provider,
          fallbacks: tryOnEngine.providerFallbacks,
          intraOpThreads: threads,
          thread: config.TRYON_ENGINE_THREAD,
          loadMs: Math.round(performance.now() - t1),
          warmupMs: Math.round(tryOnEngine.warmupMs),
        },
        'try-on engine ready',
      )
    } catch (err) {
      if (required !== undefined || engine === null) {
        await engine?.close()
        throw required !== undefined ? requiredFailed('the try-on models', err) : err
      }
      logger.error(
        { err },
        'try-on engine unavailable: try-on jobs will fail with service_unavailable',
      )
    }
  }
  providerInUse = String(engine?.provider ?? tryOnEngine?.provider ?? 'cpu')
  const fallbacks = [
    ...((engine?.providerFallbacks as unknown[] | undefined) ?? []),
    ...(tryOnEngine?.providerFallbacks ?? []),
  ]

  let ports: InferencePorts
  try {
    ports = await openPorts(logger)
  } catch (err) {
    await engine?.close()
    await tryOnEngine?.close()
    throw err
  }

  // This process's own scratch dir under TAILOR_WORK_DIR; what dead processes left there goes
  // (never a live worker's: work-dir.ts).
  let workDir: WorkDir
  try {
    workDir = await openWorkDir(config.TAILOR_WORK_DIR)
  } catch (err) {
    await engine?.close()
    await tryOnEngine?.close()
    await ports.connection.close()
    throw err
  }
  if (workDir.swept.length > 0) {
    logger.info({ dirs: workDir.swept.length }, 'removed the work dirs of stopped workers')
  }

  const limits = {
    maxBytes: config.FETCH_MAX_BYTES,
    maxDurationS: config.VIDEO_MAX_DURATION_S,
    maxSidePx: config.VIDEO_MAX_SIDE_PX,
    minSidePx: config.VIDEO_MIN_SIDE_PX,
    maxFps: config.VIDEO_MAX_FPS,
    maxFrames: config.VIDEO_MAX_FRAMES,
  }
  const fetchOptions = {
    maxBytes: config.FETCH_MAX_BYTES,
    connectTimeoutMs: config.FETCH_CONNECT_TIMEOUT_MS,
    timeoutMs: config.FETCH_TIMEOUT_MS,
    maxRedirects: config.FETCH_MAX_REDIRECTS,
    allowLoopback: config.TAILOR_FETCH_ALLOW_LOOPBACK,
  }
  const imageMaxBytes = Math.min(fetchOptions.maxBytes, DEFAULT_IMAGE_LIMITS.maxBytes)
  const consumer: Consumer = consumeJobs({
    source: ports.source,
    events: ports.events,
    logger,
    concurrency: config.CONCURRENCY,
    kinds,
    ackWaitMs: config.ACK_WAIT_MS,
    maxDeliver: config.MAX_DELIVER,
    progressIntervalMs: config.PROGRESS_INTERVAL_MS,
    finalEventTimeoutMs: config.FINAL_EVENT_TIMEOUT_MS,
    metrics,
    jobTimeoutMs: {
      'remove-background': config.VIDEO_JOB_TIMEOUT_S * 1000,
      'try-on': config.TRYON_JOB_TIMEOUT_S * 1000,
    },
    run: (job, ctx) =>
      runJob(job, ctx, {
        workRoot: workDir.path,
        results: ports.results,
        fetchInput: createInputFetcher(
          (url, dest, signal) => safeFetchToFile(url, dest, fetchOptions, signal),
          ports.uploads,
          fetchOptions.maxBytes,
        ),
        ...(tryOnEngine !== null
          ? {
              tryOn: {
                engine: tryOnEngine,
                fetchInput: createInputFetcher(
                  (url: string, dest: string, signal: AbortSignal) =>
                    safeFetchToFile(
                      url,
                      dest,
                      { ...fetchOptions, maxBytes: imageMaxBytes },
                      signal,
                    ),
                  ports.uploads,
                  imageMaxBytes,
                ),
              },
            }
          : {}),
        ...(engine !== null
          ? {
              removeBackground: (req, c) =>
                removeBackground(req, {
                  matting: engine,
                  signal: c.signal,
                  onProgress: c.onProgress,
                  progressIntervalMs: Math.min(PROGRESS_INTERVAL_MS, config.PROGRESS_INTERVAL_MS),
                  limits,
                  maxOutputBytes: config.RESULT_MAX_BYTES,
                }),
            }
          : {}),
      }),
  })
  consumerRef = consumer
  let stopping = false
  const details = () => ({
    provider: providerInUse,
    ...(required !== undefined ? { required_provider: required } : {}),
    fallbacks,
    job_kinds: kinds,
    models_loaded: true,
    warmed_up: true,
    try_on: tryOnEngine !== null,
    in_flight: consumer.inFlight(),
  })
  // Engines are loaded and warmed up before this point, so readiness is about the connection.
  const ready = (): Report => {
    const nats = ports.connection.connected()
    return {
      ok: !stopping && nats !== false,
      ...details(),
      ...(nats === null ? {} : { nats_connected: nats }),
      ...(stopping ? { stopping: true } : {}),
    }
  }
  const scrape = {
    contentType: metrics.registry.contentType,
    text: () => metrics.registry.metrics(),
  }
  // A port that cannot be had ends start-up with one line naming its variable; nothing is left open.
  const closeAll = async (): Promise<void> => {
    await consumer.stop(0).catch(() => undefined)
    await engine?.close()
    await tryOnEngine?.close()
    await ports.connection.close()
    await workDir.close()
  }
  let health: HealthServer | null = null
  let metricsServer: HealthServer | null = null
  try {
    health =
      config.HEALTH_PORT === undefined
        ? null
        : await startHealthServer({
            host: config.HEALTH_HOST,
            port: config.HEALTH_PORT,
            live: () => ({ ok: !stopping && ports.connection.healthy(), ...details() }),
            ready,
            ...(config.METRICS_PORT === undefined ? { metrics: scrape } : {}),
          })
    metricsServer =
      config.METRICS_PORT === undefined
        ? null
        : await startMetricsServer({
            host: config.HEALTH_HOST,
            port: config.METRICS_PORT,
            metrics: scrape,
          })
  } catch (err) {
    await health?.stop()
    await closeAll()
    throw err
  }
  logger.info(
    {
      mode: ports.connection.mode,
      kinds,
      provider: providerInUse,
      concurrency: config.CONCURRENCY,
      allowLoopback: config.TAILOR_FETCH_ALLOW_LOOPBACK,
      healthPort: health?.port,
      metricsPort: metricsServer?.port,
    },
    'inference consuming jobs',
  )

  return {
    provider: providerInUse,
    ready,
    async stop() {
      stopping = true
      await consumer.stop(config.SHUTDOWN_TIMEOUT_MS)
      await health?.stop()
      await metricsServer?.stop()
      await ports.source.close()
      await ports.events.close()
      await ports.connection.drain()
      await engine?.close()
      await tryOnEngine?.close()
      await workDir.close()
      logger.info('inference stopped')
    },
  }
}
