import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { configError, JOB_KINDS, type JobKind } from '@tailor/proto'
import { natsClientEnvProblems } from '@tailor/proto/net'
import { z } from 'zod'

const Env = z
  .object({
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
    /** host:port of the gateway's job events gRPC server (distributed mode). */
    GATEWAY_GRPC_ADDR: z
      .string()
      .regex(/^[^\s:]+:\d+$/, 'must be host:port')
      .optional(),
    /** The gateway's job-events shared secret (its JOB_EVENTS_TOKEN); required with NATS_URL. */
    JOB_EVENTS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    /** mTLS to the gateway's job-events port (optional, PEM file paths, all three or none): this worker's client certificate and key, and the CA that signed the gateway's certificate. */
    JOB_EVENTS_TLS_CERT: z.string().min(1).optional(),
    JOB_EVENTS_TLS_KEY: z.string().min(1).optional(),
    JOB_EVENTS_TLS_CA: z.string().min(1).optional(),
    WORKER_ID: z.string().min(1).optional(),
    /** GET /healthz on this port (readiness/liveness probes); off when unset. */
    HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    HEALTH_HOST: z.string().min(1).default('0.0.0.0'),
    /** GET /metrics on this port (HEALTH_HOST) instead of HEALTH_PORT (404 there); unset: on HEALTH_PORT. Embedded: the gateway's. */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    ORT_EP: z.enum(['cuda', 'cpu']).default('cpu'),
    /**
     * The provider every model must run on, or start-up fails with one line naming what loaded
     * instead (a GPU node whose CUDA set-up failed never turns into a silent CPU worker).
     * Unset: ORT_EP=cuda may fall back to the CPU, reported in readiness and the logs.
     */
    REQUIRE_EXECUTION_PROVIDER: z.enum(['cuda', 'cpu']).optional(),
    /** Job kinds this worker runs, comma separated (it pulls from those lanes only); default all. */
    JOB_KINDS: z
      .string()
      .default(JOB_KINDS.join(','))
      .transform((s, ctx) => {
        const kinds = [
          ...new Set(
            s
              .split(',')
              .map((k) => k.trim())
              .filter((k) => k !== ''),
          ),
        ]
        const bad = kinds.filter((k) => !(JOB_KINDS as readonly string[]).includes(k))
        if (bad.length > 0 || kinds.length === 0) {
          ctx.addIssue({
            code: 'custom',
            message: `unknown job kind ${bad.join(', ') || '(none)'}: use ${JOB_KINDS.join(', ')}`,
          })
          return z.NEVER
        }
        return kinds as JobKind[]
      }),
    /**
     * max_ack_pending of each lane's JetStream consumer: jobs handed out and not yet acknowledged,
     * cluster-wide. Set it ≥ the most workers of a kind × CONCURRENCY (deploy/k8s: KEDA's
     * maxReplicaCount × CONCURRENCY), or workers above it sit idle with a backlog.
     */
    JOBS_MAX_ACK_PENDING: z.coerce.number().int().min(1).default(256),
    /** Directory holding manifest.json and the .onnx files built by `pnpm models`. */
    MODELS_DIR: z
      .string()
      .min(1)
      .default(fileURLToPath(new URL('../../../models/dist', import.meta.url))),
    /** onnxruntime intra-op threads (default: the CPUs this process may use, cgroup quota included). */
    ORT_INTRA_OP_THREADS: z.coerce.number().int().positive().optional(),
    /**
     * The refined rvm graphs (clips that are downsampled): `fp32` (default) rvm-rgb / rvm-rgba,
     * `int8` rvm-int8-rgb / rvm-int8-rgba (the decoder's convolutions int8: within issue 14's
     * quality bound of fp32 over whole clips, ~10 % less CPU per frame on 2 AVX2 cores, wall-clock
     * within the noise: models/README.md). Ratio-1 clips keep the float32 ratio-1 graphs.
     */
    RVM_PRECISION: z.enum(['fp32', 'int8']).default('fp32'),
    /**
     * Where the try-on engine runs: `worker` (default) a worker thread, so its synchronous JS stages
     * never hold the service's event loop; `main` this thread (debugging, profiling).
     */
    TRYON_ENGINE_THREAD: z.enum(['worker', 'main']).default('worker'),
    /**
     * Where the matting network runs: `worker` (default) a worker thread that keeps each video
     * job's next frame queued, so decoding, compositing and encoding overlap the model run and the
     * event loop is never held by it (docs/media.md "Pipeline"); `main` this thread (debugging,
     * profiling).
     */
    MATTING_ENGINE_THREAD: z.enum(['worker', 'main']).default('worker'),
    /**
     * Scratch space for downloads and encodes. Each process works in its own directory under it
     * (`w-<host>-<pid>-XXXXXX`, mkdtemp, 0700; several workers may share TAILOR_WORK_DIR), each job
     * in a subdirectory of that, removed after; at start a process removes what dead workers of
     * its host left. Must be a real directory, not a symbolic link (work-dir.ts).
     */
    TAILOR_WORK_DIR: z.string().min(1).default(join(tmpdir(), 'tailor-work')),
    /**
     * How long JetStream waits for word from the worker running a job before it hands the job to
     * another worker: a dead worker's job is redelivered within this time. A live worker tells it
     * "still working" every third of it (consume-jobs.ts), so a long job never runs out of it.
     */
    ACK_WAIT_MS: z.coerce.number().int().min(1000).default(10_000),
    MAX_DELIVER: z.coerce.number().int().min(1).default(3),
    /** Jobs of each kind run at once (each kind of JOB_KINDS pulls from its own lane: a try-on never waits behind a video). */
    CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
    FETCH_MAX_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(100 * 1024 * 1024),
    FETCH_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    FETCH_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
    FETCH_MAX_REDIRECTS: z.coerce.number().int().min(0).max(20).default(5),
    /** Allows loopback destinations (tests, local files served on localhost); nothing else private. */
    VIDEO_MAX_DURATION_S: z.coerce.number().positive().default(60),
    /** Largest result a job may store; the encoder is stopped as soon as its output passes it (job error result_too_large). */
    RESULT_MAX_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(1024 ** 3),
    VIDEO_MAX_SIDE_PX: z.coerce.number().int().positive().default(4096),
    VIDEO_MIN_SIDE_PX: z.coerce.number().int().positive().default(64),
    /** Frame rate cap: faster inputs are processed and written at this rate (frames dropped). */
    VIDEO_MAX_FPS: z.coerce.number().int().positive().max(240).default(60),
    /** Frames one video job may process (at the capped rate); more: video_too_many_frames, decoding stops there. */
    VIDEO_MAX_FRAMES: z.coerce.number().int().positive().default(3600),
    TAILOR_FETCH_ALLOW_LOOPBACK: z.stringbool().default(false),
    /**
     * Longest one delivery of a job may run, per kind; then it fails with request_timeout (ffmpeg
     * killed, work dir removed) and the worker takes the next job. Fractions allowed (tests).
     */
    VIDEO_JOB_TIMEOUT_S: z.coerce.number().positive().default(1800),
    TRYON_JOB_TIMEOUT_S: z.coerce.number().positive().default(300),
    /**
     * A running video job reports its progress at most this often (the consumer forwards it to the
     * gateway; the final 100 % always goes). Smaller: a smoother bar, more events.
     */
    PROGRESS_INTERVAL_MS: z.coerce.number().int().min(0).default(500),
    /** How long a finished job waits for the gateway to acknowledge its final event. */
    FINAL_EVENT_TIMEOUT_MS: z.coerce.number().int().positive().default(300_000),
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
  })
  .superRefine((env, ctx) => {
    for (const [path, message] of natsClientEnvProblems(env)) {
      ctx.addIssue({ code: 'custom', path: [path], message })
    }
    if (env.REQUIRE_EXECUTION_PROVIDER === 'cuda' && env.ORT_EP !== 'cuda') {
      ctx.addIssue({
        code: 'custom',
        path: ['REQUIRE_EXECUTION_PROVIDER'],
        message: 'cuda is required but ORT_EP is not cuda',
      })
    }
    if (env.NATS_URL !== undefined && env.GATEWAY_GRPC_ADDR === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['GATEWAY_GRPC_ADDR'],
        message: 'required with NATS_URL: where to stream job events',
      })
    }
    if (env.NATS_URL !== undefined && env.JOB_EVENTS_TOKEN === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['JOB_EVENTS_TOKEN'],
        message:
          "required with NATS_URL: the gateway's job-events secret (the same value in both services)",
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
  })

export type Config = Readonly<z.infer<typeof Env>>

/** Pure: a test passes a literal object. Throws listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = Env.safeParse(env)
  if (!r.success) throw configError(r.error)
  return Object.freeze(r.data)
}
