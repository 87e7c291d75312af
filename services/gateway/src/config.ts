import { createHash } from 'node:crypto'
import { resolve } from 'node:path'
import { configError } from '@tailor/proto'
import { natsClientEnvProblems, natsClientOptions, type NatsClientOptions } from '@tailor/proto/net'
import { z } from 'zod'
import { MAX_JOB_CAP } from './access/api-key.ts'
import { parseWebhookSecret } from './webhooks/standard-webhooks.ts'

/** Where `pnpm build:playground` writes (playground/dist in the repository). */
const DEFAULT_PLAYGROUND_DIR = resolve(import.meta.dirname, '../../../playground/dist')

/**
 * A key set by environment is guessable only if short: at least 32 characters (a generated key,
 * `tk_` + 43, has 256 random bits). The message names the variable, never the key.
 */
export const MIN_API_KEY_LENGTH = 32
const API_KEY_TOO_SHORT = `every key must be at least ${MIN_API_KEY_LENGTH} characters (e.g. \`openssl rand -hex 24\`, or a key made by \`pnpm tailor keys create\`)`

const csv = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x.length > 0),
  )

const Env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).default('0.0.0.0'),
    /** GET /metrics on this port (same HOST) instead of the public PORT (404 there); unset: on PORT. */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** gRPC server for inference job events (distributed mode only). */
    GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50051),
    /**
     * Shared secret every inference worker sends on the job-events port (`authorization: Bearer …`
     * metadata); required with NATS_URL. Callers without it get UNAUTHENTICATED and no event.
     */
    JOB_EVENTS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    /** mTLS on the job-events port (optional, PEM file paths, all three or none): this server's certificate and key, and the CA that signed the workers' client certificates. */
    JOB_EVENTS_TLS_CERT: z.string().min(1).optional(),
    JOB_EVENTS_TLS_KEY: z.string().min(1).optional(),
    JOB_EVENTS_TLS_CA: z.string().min(1).optional(),
    /** The internal gRPC API (proto/tailor/v1/tailor_api.proto), both modes; 0 = any free port. */
    API_GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50052),
    /**
     * gRPC WatchJob streams one API key may hold open on one gateway at once; one more answers
     * RESOURCE_EXHAUSTED watch_limit_exceeded. Opening a stream also takes one request from the
     * key's rate budget (as a submission does).
     */
    GRPC_MAX_WATCHES_PER_KEY: z.coerce.number().int().positive().max(10_000).default(16),
    /** Distributed mode when set; the embedded composition injects in-process ports instead. */
    NATS_URL: z.string().min(1).optional(),
    /** NATS user and password (deploy/k8s: Secret tailor-nats-auth); both or neither. */
    NATS_USER: z.string().min(1).optional(),
    NATS_PASSWORD: z.string().min(1).optional(),
    /** CA bundle to verify the NATS servers' TLS certificates (TLS on when set). */
    NATS_TLS_CA_FILE: z.string().min(1).optional(),
    /** Client certificate and key for NATS mutual TLS; both or neither. */
    NATS_TLS_CERT_FILE: z.string().min(1).optional(),
    NATS_TLS_KEY_FILE: z.string().min(1).optional(),
    /** JetStream replicas of Tailor's streams and buckets (3 on a 3-server NATS cluster; raised at start, never lowered). */
    NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    /** Plain keys to accept (comma separated, for rotation), each at least 32 characters. Hashed at load; never kept. */
    API_KEYS: csv.pipe(
      z
        .array(z.string())
        .refine((keys) => keys.every((k) => k.length >= MIN_API_KEY_LENGTH), API_KEY_TOO_SHORT),
    ),
    /** One plain key to accept (scripted use), at least 32 characters. */
    TAILOR_API_KEY: z.string().min(MIN_API_KEY_LENGTH, API_KEY_TOO_SHORT).optional(),
    /** sha256 hex digests of keys to accept (comma separated): keys never touch the config. */
    API_KEY_SHA256: csv.pipe(
      z.array(z.string().regex(/^[0-9a-f]{64}$/i, 'must be sha256 hex digests')),
    ),
    /**
     * Failed authentications (unknown or revoked keys) one client address may make per
     * AUTH_FAILURE_WINDOW_S on one gateway; past it, 429 too_many_auth_failures, keys not checked.
     */
    AUTH_FAILURE_LIMIT: z.coerce.number().int().positive().default(10),
    AUTH_FAILURE_WINDOW_S: z.coerce.number().int().positive().default(60),
    /**
     * Proxies in front of the gateway that append the client's address to X-Forwarded-For (the
     * Ingress: 1). 0: the client address is the socket's peer; N: the Nth address from the right.
     */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
    /** Requests per second per API key (submissions and uploads; polls are free), for keys without their own limit. */
    DEFAULT_RATE_LIMIT_PER_S: z.coerce.number().int().positive().default(5),
    /** Jobs per API key pending or running at once, for keys without their own cap; 0 = no cap (at most MAX_JOB_CAP otherwise). */
    DEFAULT_MAX_CONCURRENT_JOBS: z.coerce.number().int().min(0).max(MAX_JOB_CAP).default(10),
    /** HMAC secret for result URLs; every gateway replica must share it. */
    RESULT_URL_SECRET: z.string().min(32, 'must be at least 32 characters'),
    RESULT_URL_TTL_S: z.coerce.number().int().positive().default(3600),
    /** How long a stored result is kept after its job completed (Object Store bucket TTL / data-dir sweep). */
    RESULT_RETENTION_S: z.coerce.number().int().positive().default(7200),
    /** A result URL outlives its own expiry by at least this much before the result is deleted (clock skew, downloads in flight). */
    RESULT_EXPIRY_MARGIN_S: z.coerce.number().int().min(0).default(300),
    /** How long a job record is kept after its last change (KV bucket TTL / data-dir sweep). */
    JOB_RETENTION_S: z.coerce.number().int().positive().default(86_400),
    /** Origin used in result_url (e.g. https://tailor.example.com); defaults to the request's origin. */
    PUBLIC_BASE_URL: z.url().optional(),
    MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(64 * 1024),
    /** POST /v1/uploads size limits by media kind (the same as inference's input limits). */
    UPLOAD_MAX_IMAGE_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(25 * 1024 * 1024),
    UPLOAD_MAX_VIDEO_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(100 * 1024 * 1024),
    /** Per API key: bytes and number of its unexpired uploads (each is kept 1 hour); past either, POST /v1/uploads answers 429 upload_quota_exceeded. */
    UPLOAD_QUOTA_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(500 * 1024 * 1024),
    UPLOAD_QUOTA_COUNT: z.coerce.number().int().positive().default(50),
    /**
     * Byte caps of the storage every key shares (JetStream max_bytes of each stream and bucket,
     * set at start; the data dir's uploads/ and results/ embedded): uploads, results, and each
     * other stream or KV bucket (JOBS, WEBHOOKS, jobs, api_keys, rate_limits, job_slots,
     * idempotency). Full: new uploads answer 507 storage_full, results fail storage_full.
     */
    UPLOADS_MAX_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(2 * 1024 ** 3),
    RESULTS_MAX_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(4 * 1024 ** 3),
    STREAM_MAX_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(256 * 1024 ** 2),
    /** Longest a try-on request with wait_for_result "true" waits before answering 202 {job_id}. */
    TRYON_WAIT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(60_000),
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
    /** The playground's built page, script and style sheet (`pnpm build:playground`). */
    PLAYGROUND_DIR: z.string().min(1).default(DEFAULT_PLAYGROUND_DIR),
    /** Sample media the playground offers to API-key holders; unset: none (the default). */
    PLAYGROUND_SAMPLES_DIR: z.string().min(1).optional(),
    /** How long an Idempotency-Key is remembered (KV bucket TTL / data-dir files). */
    IDEMPOTENCY_TTL_S: z.coerce.number().int().positive().default(86_400),
    /**
     * Standard Webhooks signing secret(s), `whsec_<base64 of 24–64 bytes>`; comma separated to
     * rotate (every delivery is signed with each, receivers accept any). Unset: webhook_url is refused.
     */
    WEBHOOK_SECRET: csv.pipe(
      z.array(
        z
          .string()
          .refine(
            (s) => parseWebhookSecret(s) !== null,
            'must be whsec_ followed by the base64 of 24 to 64 random bytes',
          ),
      ),
    ),
    /** Delays before the 2nd, 3rd, … attempt of a webhook (ms, comma separated); attempts = delays + 1. */
    WEBHOOK_RETRY_DELAYS_MS: csv
      .pipe(
        z.array(
          z
            .string()
            .regex(/^\d{1,10}$/, 'must be whole milliseconds')
            .transform(Number),
        ),
      )
      .default([5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
    /** One webhook attempt: connect, send and the answer's status. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
    /**
     * A destination (scheme, host and port of webhook_url) whose last WEBHOOK_FAILING_AFTER
     * attempts all failed (timeout, network error, non-2xx) gets WEBHOOK_FAILING_TIMEOUT_MS per
     * attempt instead, until one succeeds (per gateway, in memory).
     */
    WEBHOOK_FAILING_AFTER: z.coerce.number().int().positive().default(3),
    WEBHOOK_FAILING_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
    /** Webhook attempts in flight at once per gateway, and of those at most this many for one API key's jobs. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().max(1000).default(8),
    WEBHOOK_MAX_IN_FLIGHT_PER_KEY: z.coerce.number().int().positive().max(1000).default(2),
    /**
     * Browser origins allowed to call the API (CORS), comma separated (`https://shop.example.com`;
     * `*` for any). Unset: no CORS headers (the default; the playground is same-origin).
     */
    CORS_ORIGINS: csv.pipe(
      z.array(
        z
          .string()
          .refine(
            (s) => s === '*' || /^https?:\/\/[^/\s]+$/.test(s),
            'must be origins like https://shop.example.com (scheme and host, no path), or *',
          ),
      ),
    ),
    /** Same setting as inference's: loopback destinations allowed (tests, local setups); nothing else private. */
    TAILOR_FETCH_ALLOW_LOOPBACK: z.stringbool().default(false),
  })
  .superRefine((env, ctx) => {
    if (env.NATS_URL !== undefined && env.JOB_EVENTS_TOKEN === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['JOB_EVENTS_TOKEN'],
        message:
          'required with NATS_URL: the secret inference workers present on the job-events port (the same value in both services)',
      })
    }
    const tls = [env.JOB_EVENTS_TLS_CERT, env.JOB_EVENTS_TLS_KEY, env.JOB_EVENTS_TLS_CA]
    if (tls.some((v) => v !== undefined) && tls.some((v) => v === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['JOB_EVENTS_TLS_CERT'],
        message:
          'JOB_EVENTS_TLS_CERT, JOB_EVENTS_TLS_KEY and JOB_EVENTS_TLS_CA go together (all three or none)',
      })
    }
    if (env.UPLOAD_QUOTA_BYTES > env.UPLOADS_MAX_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPLOAD_QUOTA_BYTES'],
        message: "must be at most UPLOADS_MAX_BYTES: one key's quota cannot exceed the whole store",
      })
    }
    for (const [path, message] of natsClientEnvProblems(env)) {
      ctx.addIssue({ code: 'custom', path: [path], message })
    }
    if (env.RESULT_RETENTION_S < env.RESULT_URL_TTL_S + env.RESULT_EXPIRY_MARGIN_S) {
      ctx.addIssue({
        code: 'custom',
        path: ['RESULT_RETENTION_S'],
        message:
          'must be at least RESULT_URL_TTL_S + RESULT_EXPIRY_MARGIN_S: a result URL must not outlive its result',
      })
    }
    if (env.JOB_RETENTION_S < env.RESULT_RETENTION_S) {
      ctx.addIssue({
        code: 'custom',
        path: ['JOB_RETENTION_S'],
        message: 'must be at least RESULT_RETENTION_S: a job record must outlive its result',
      })
    }
  })

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex')
}

/** PEM file paths for mTLS on the job-events port. */
export interface JobEventsTlsFiles {
  readonly certFile: string
  readonly keyFile: string
  readonly caFile: string
}

/** Byte caps of the storage every key shares. */
export interface StorageCaps {
  readonly uploadsMaxBytes: number
  readonly resultsMaxBytes: number
  /** Each other stream or KV bucket. */
  readonly streamMaxBytes: number
}

export interface Config {
  readonly port: number
  readonly host: string
  readonly grpcPort: number
  /** The job-events port's shared secret (distributed mode), and its optional mTLS files. */
  readonly jobEventsToken: string | undefined
  readonly jobEventsTls: JobEventsTlsFiles | undefined
  readonly apiGrpcPort: number
  readonly natsUrl: string | undefined
  /** METRICS_PORT: /metrics on its own port (0 = any free one), not on the public port. */
  readonly metricsPort: number | undefined
  /** NATS user/password and TLS files (NATS_USER, NATS_PASSWORD, NATS_TLS_*). */
  readonly natsClient: NatsClientOptions
  /** JetStream replicas of our streams and buckets (NATS_REPLICAS). */
  readonly natsReplicas: number
  /** sha256 digests of the API keys configured by environment; the plain keys are dropped at load. Keys made by `tailor keys` live in the key store. */
  readonly apiKeyHashes: readonly Buffer[]
  /** Failed authentications per client address: AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_S (ms here). */
  readonly authFailureLimit: number
  readonly authFailureWindowMs: number
  /** X-Forwarded-For entries appended by trusted proxies (TRUST_PROXY_HOPS). */
  readonly trustProxyHops: number
  /** Defaults for keys without their own limits: requests per second, concurrent jobs (0 = no cap). */
  readonly rateLimitPerS: number
  readonly maxConcurrentJobs: number
  readonly resultUrlSecret: string
  readonly resultUrlTtlS: number
  /** Retention (seconds): results after completion, the URL margin before deletion, records after their last change. */
  readonly resultRetentionS: number
  readonly resultExpiryMarginS: number
  readonly jobRetentionS: number
  readonly publicBaseUrl: string | undefined
  readonly maxBodyBytes: number
  readonly uploadMaxImageBytes: number
  readonly uploadMaxVideoBytes: number
  /** Per key: outstanding upload bytes and count. */
  readonly uploadQuotaBytes: number
  readonly uploadQuotaCount: number
  /** Byte caps of the shared storage (see UPLOADS_MAX_BYTES). */
  readonly storageCaps: StorageCaps
  readonly tryOnWaitTimeoutMs: number
  readonly shutdownTimeoutMs: number
  readonly logLevel: string
  readonly playgroundDir: string
  /** Absolute; undefined: the playground offers no samples. */
  readonly playgroundSamplesDir: string | undefined
  readonly idempotencyTtlS: number
  /** Bytes behind each WEBHOOK_SECRET; empty when webhooks are off. */
  readonly webhookSecrets: readonly Buffer[]
  readonly webhookRetryDelaysMs: readonly number[]
  readonly webhookTimeoutMs: number
  /** Consecutive failures after which a destination gets the shorter timeout, and that timeout. */
  readonly webhookFailingAfter: number
  readonly webhookFailingTimeoutMs: number
  readonly webhookConcurrency: number
  readonly webhookMaxInFlightPerKey: number
  /** WatchJob streams per API key per gateway. */
  readonly grpcMaxWatchesPerKey: number
  readonly allowLoopback: boolean
  /** CORS_ORIGINS: origins allowed to call the API from a browser; empty: CORS off. */
  readonly corsOrigins: readonly string[]
}

/** Pure: a test passes a literal object. Throws listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = Env.safeParse(env)
  if (!r.success) throw configError(r.error)
  const e = r.data
  const hashes = new Set<string>([
    ...e.API_KEYS.map(sha256Hex),
    ...(e.TAILOR_API_KEY === undefined ? [] : [sha256Hex(e.TAILOR_API_KEY)]),
    ...e.API_KEY_SHA256.map((h) => h.toLowerCase()),
  ])
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    grpcPort: e.GRPC_PORT,
    jobEventsToken: e.JOB_EVENTS_TOKEN,
    jobEventsTls:
      e.JOB_EVENTS_TLS_CERT === undefined ||
      e.JOB_EVENTS_TLS_KEY === undefined ||
      e.JOB_EVENTS_TLS_CA === undefined
        ? undefined
        : Object.freeze({
            certFile: resolve(e.JOB_EVENTS_TLS_CERT),
            keyFile: resolve(e.JOB_EVENTS_TLS_KEY),
            caFile: resolve(e.JOB_EVENTS_TLS_CA),
          }),
    apiGrpcPort: e.API_GRPC_PORT,
    natsUrl: e.NATS_URL,
    metricsPort: e.METRICS_PORT,
    natsClient: Object.freeze(natsClientOptions(e)),
    natsReplicas: e.NATS_REPLICAS,
    apiKeyHashes: Object.freeze([...hashes].map((h) => Buffer.from(h, 'hex'))),
    authFailureLimit: e.AUTH_FAILURE_LIMIT,
    authFailureWindowMs: e.AUTH_FAILURE_WINDOW_S * 1000,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    rateLimitPerS: e.DEFAULT_RATE_LIMIT_PER_S,
    maxConcurrentJobs: e.DEFAULT_MAX_CONCURRENT_JOBS,
    resultUrlSecret: e.RESULT_URL_SECRET,
    resultUrlTtlS: e.RESULT_URL_TTL_S,
    resultRetentionS: e.RESULT_RETENTION_S,
    resultExpiryMarginS: e.RESULT_EXPIRY_MARGIN_S,
    jobRetentionS: e.JOB_RETENTION_S,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    maxBodyBytes: e.MAX_BODY_BYTES,
    uploadMaxImageBytes: e.UPLOAD_MAX_IMAGE_BYTES,
    uploadMaxVideoBytes: e.UPLOAD_MAX_VIDEO_BYTES,
    uploadQuotaBytes: e.UPLOAD_QUOTA_BYTES,
    uploadQuotaCount: e.UPLOAD_QUOTA_COUNT,
    storageCaps: Object.freeze({
      uploadsMaxBytes: e.UPLOADS_MAX_BYTES,
      resultsMaxBytes: e.RESULTS_MAX_BYTES,
      streamMaxBytes: e.STREAM_MAX_BYTES,
    }),
    tryOnWaitTimeoutMs: e.TRYON_WAIT_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    playgroundDir: resolve(e.PLAYGROUND_DIR),
    playgroundSamplesDir:
      e.PLAYGROUND_SAMPLES_DIR === undefined ? undefined : resolve(e.PLAYGROUND_SAMPLES_DIR),
    idempotencyTtlS: e.IDEMPOTENCY_TTL_S,
    webhookSecrets: Object.freeze(
      e.WEBHOOK_SECRET.map((s) => parseWebhookSecret(s)).filter((b): b is Buffer => b !== null),
    ),
    webhookRetryDelaysMs: Object.freeze([...e.WEBHOOK_RETRY_DELAYS_MS]),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookFailingAfter: e.WEBHOOK_FAILING_AFTER,
    webhookFailingTimeoutMs: Math.min(e.WEBHOOK_FAILING_TIMEOUT_MS, e.WEBHOOK_TIMEOUT_MS),
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookMaxInFlightPerKey: Math.min(e.WEBHOOK_MAX_IN_FLIGHT_PER_KEY, e.WEBHOOK_CONCURRENCY),
    grpcMaxWatchesPerKey: e.GRPC_MAX_WATCHES_PER_KEY,
    allowLoopback: e.TAILOR_FETCH_ALLOW_LOOPBACK,
    corsOrigins: Object.freeze([...e.CORS_ORIGINS]),
  })
}
