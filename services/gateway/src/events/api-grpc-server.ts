/**
 * The internal gRPC API (proto/tailor/v1/tailor_api.proto, docs/grpc.md): the HTTP API's
 * operations for services inside the cluster, over the same use cases (jobs/), the same request
 * schemas (@tailor/proto api.ts), the same access control (metadata `x-api-key`) and the same
 * error codes, mapped to gRPC statuses in api-grpc-errors.ts. WatchJob streams a job's changes
 * from the JobWatcher port until the job ends.
 */
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import {
  AppError,
  GRPC_API_KEY_METADATA,
  parseRemoveBackgroundBody,
  parseTryOnBody,
  TAILOR_API_PROTO_PATH,
  type JobKind,
  type JobStatus,
  type JobStatusDocument,
} from '@tailor/proto'
import type { ProtoGrpcType } from '@tailor/proto/gen/tailor_api.ts'
import type { Job } from '@tailor/proto/gen/tailor/v1/Job.ts'
import type { JobKind__Output as WireJobKind } from '@tailor/proto/gen/tailor/v1/JobKind.ts'
import type { JobStatus__Output as WireJobStatus } from '@tailor/proto/gen/tailor/v1/JobStatus.ts'
import type { TailorApiHandlers } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'
import type { AccessControl, Principal } from '../access/access-control.ts'
import { AuthFailureThrottle, authenticateFrom } from '../access/auth-failure-throttle.ts'
import { RateLimitError } from '../access/rate-limit-error.ts'
import type { Config } from '../config.ts'
import {
  IDEMPOTENCY_METADATA,
  REPLAYED_METADATA,
  parseIdempotencyKey,
  requestFingerprint,
} from '../idempotency/idempotency-key.ts'
import type { IdempotencyStore } from '../idempotency/idempotency-store.ts'
import { submitOnce, type SubmitOnceResult } from '../idempotency/submit-once.ts'
import type { JobWebhook, JobRecord } from '../jobs/job-store.ts'
import { cancelJob } from '../jobs/cancel-job.ts'
import { getJobStatus } from '../jobs/job-status.ts'
import type { JobWatcher } from '../jobs/job-watch.ts'
import type { CancelNotifier } from '../jobs/publisher.ts'
import { removeBackgroundSubmission, submitJob, type SubmitJobDeps } from '../jobs/submit-job.ts'
import { tryOnAndWait } from '../jobs/try-on-and-wait.ts'
import { watchJob } from '../jobs/watch-job.ts'
import type { Logger } from '../logger.ts'
import { checkUploadRefs } from '../uploads/check-upload-refs.ts'
import type { UploadStore } from '../uploads/upload-store.ts'
import { webhookForRequest } from '../webhooks/webhook-request.ts'
import { PROTO_LOADER_OPTIONS, stopGrpcServer } from './grpc-server.ts'
import { GRPC_STATUS, toServiceError, type ErrorExtras } from './api-grpc-errors.ts'

/** What the use cases need (SubmitJobDeps: the job store, publisher and per-key job slots), and the edge's own ports. */
export interface ApiGrpcDeps extends SubmitJobDeps {
  config: Config
  logger: Logger
  access: AccessControl
  watcher: JobWatcher
  cancel: CancelNotifier
  uploads?: UploadStore
  /** Idempotency-Key claims (metadata `idempotency-key`); absent: a call carrying one is unavailable. */
  idempotency?: IdempotencyStore
  /** Origin of result URLs: PUBLIC_BASE_URL, else the gateway's own HTTP address. */
  baseUrl: () => string
  /** Failed authentications per client address (shared with HTTP); absent: one of its own from config. */
  authThrottle?: AuthFailureThrottle
}

/** The address of a gRPC peer (`127.0.0.1:5678`, `[::1]:5678`; older grpc-js: `ipv4:…`, `ipv6:[…]:…`); undefined if not an IP. */
export function grpcPeerAddress(peer: string): string | undefined {
  const m =
    /^(?:ipv4:)?(\d+\.\d+\.\d+\.\d+):\d+$/.exec(peer) ??
    /^(?:ipv6:)?\[([0-9a-fA-F:.]+)\]:\d+$/.exec(peer)
  return m?.[1]
}

export interface ApiGrpcServer {
  port: number
  stop(timeoutMs: number): Promise<void>
}

const WIRE_KIND = {
  'try-on': 'JOB_KIND_TRY_ON',
  'remove-background': 'JOB_KIND_REMOVE_BACKGROUND',
} as const satisfies Record<JobKind, WireJobKind>
const WIRE_STATUS = {
  pending: 'JOB_STATUS_PENDING',
  running: 'JOB_STATUS_RUNNING',
  completed: 'JOB_STATUS_COMPLETED',
  failed: 'JOB_STATUS_FAILED',
} as const satisfies Record<JobStatus, WireJobStatus>

/** The status document as a tailor.v1.Job. */
export function toWireJob(kind: JobKind | null, d: JobStatusDocument): Job {
  return {
    jobId: d.job_id,
    kind: kind === null ? 'JOB_KIND_UNSPECIFIED' : WIRE_KIND[kind],
    status: WIRE_STATUS[d.status],
    progress: d.progress,
    attempt: d.attempt,
    ...(d.result_url === null ? {} : { resultUrl: d.result_url }),
    error: d.error === null ? null : { errorCode: d.error.error_code, message: d.error.message },
    createdAt: d.created_at,
    updatedAt: d.updated_at,
  }
}

/** An AppError that carries what its gRPC answer adds (the id of the failed job a waited try-on answers with). */
class ApiError extends AppError {
  constructor(
    e: AppError,
    readonly extras: ErrorExtras,
  ) {
    super(e.code, e.message, { cause: e.cause, retryable: e.retryable })
  }
}

/** What an error's answer adds: ApiError's extras, or the wait of a rate limit (the request budget's or the concurrent-job cap's). */
function extrasOf(err: unknown): ErrorExtras {
  if (err instanceof ApiError) return err.extras
  if (err instanceof RateLimitError) return { retryAfterS: err.retryAfterS }
  return {}
}

/** Proto3 strings are '' when unset: an empty string counts as a missing field. */
const present = <T>(name: string, v: T | undefined | null): Record<string, T> =>
  v === undefined || v === null || v === '' ? {} : { [name]: v }

const requireJobId = (id: string): string => {
  if (id === '') {
    throw new AppError(
      'missing_parameter',
      'Missing required parameter job_id: give the job_id answered when the job was submitted.',
    )
  }
  return id
}

/** gRPC edge of the public API (events/ is the only home of @grpc/*). */
export async function startApiGrpcServer(
  deps: ApiGrpcDeps,
  o: { host: string; port: number },
): Promise<ApiGrpcServer> {
  const def = await protoLoader.load(TAILOR_API_PROTO_PATH, PROTO_LOADER_OPTIONS)
  const pkg = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType
  const log = deps.logger.child({ edge: 'grpc-api' })
  /** Open WatchJob streams, ended with UNAVAILABLE at shutdown. */
  const watches = new Set<() => void>()
  const throttle =
    deps.authThrottle ??
    new AuthFailureThrottle({
      maxFailures: deps.config.authFailureLimit,
      windowMs: deps.config.authFailureWindowMs,
    })
  /** What a key may see: its own jobs (another key's are not found, as over HTTP). */
  const scopeOf = (p: Principal) => ({ ownerKeyId: p.keyId })

  /** Open WatchJob streams per key id (GRPC_MAX_WATCHES_PER_KEY on this gateway). */
  const watchesPerKey = new Map<string, number>()

  /**
   * Authenticates the call's `x-api-key`; a submission or a WatchJob (`charge`) also takes one
   * request from the key's rate budget (reading a job once, GetJob, is free, as over HTTP).
   */
  const authenticate = async (
    call: { metadata: grpc.Metadata; getPeer(): string },
    charge: boolean,
  ): Promise<Principal> => {
    const key = call.metadata.get(GRPC_API_KEY_METADATA)[0]
    const peer = grpcPeerAddress(call.getPeer())
    if (typeof key !== 'string' || key.length === 0) {
      throw new AppError(
        'invalid_auth_token',
        `Missing API key: send it in the ${GRPC_API_KEY_METADATA} metadata.`,
      )
    }
    const principal = await authenticateFrom(deps.access, throttle, peer, key)
    if (principal === null) {
      throw new AppError(
        'invalid_auth_token',
        `Invalid API key in the ${GRPC_API_KEY_METADATA} metadata.`,
      )
    }
    if (!charge) return principal
    const rate = await deps.access.takeRequest(principal)
    if (!rate.allowed) {
      throw new RateLimitError(
        `Rate limit of ${rate.limit} requests per second exceeded for this API key; retry in ${rate.retryAfterS} s.`,
        rate.retryAfterS,
        rate,
      )
    }
    return principal
  }

  const fail = (method: string, err: unknown): Partial<grpc.ServiceError> => {
    const { e, error } = toServiceError(err, extrasOf(err))
    if (
      GRPC_STATUS[e.code] === grpc.status.INTERNAL ||
      GRPC_STATUS[e.code] === grpc.status.UNAVAILABLE
    ) {
      log.error({ err, method, code: e.code }, 'grpc call failed')
    } else log.debug({ method, code: e.code }, 'grpc call rejected')
    return error
  }

  /**
   * A submission under the call's Idempotency-Key (metadata, as the HTTP header) with its
   * webhook_url checked: idempotency/submit-once.ts, so HTTP and gRPC replay each other's jobs.
   */
  const submitIdempotently = async (
    call: grpc.ServerUnaryCall<unknown, unknown>,
    p: Principal,
    operation: JobKind,
    body: { webhook_url?: string | undefined },
    submit: (id: string, webhook: JobWebhook | undefined) => Promise<JobRecord>,
  ): Promise<SubmitOnceResult> => {
    const webhook = webhookForRequest(deps.config, p, body.webhook_url, deps.baseUrl())
    const raw = call.metadata.get(IDEMPOTENCY_METADATA)[0]
    const key = parseIdempotencyKey(typeof raw === 'string' ? raw : undefined)
    const req =
      key === null
        ? null
        : { scope: p.keyId, key, fingerprint: requestFingerprint(operation, body) }
    const r = await submitOnce(deps, req, (id) => submit(id, webhook))
    if (r.replayed) {
      const md = new grpc.Metadata()
      md.set(REPLAYED_METADATA, 'true')
      call.sendMetadata(md)
    }
    return r
  }

  /** A unary handler: authenticate, run, answer; `signal` aborts when the client goes away. */
  const unary =
    <Req, Res>(
      method: string,
      charge: boolean,
      run: (
        req: Req,
        p: Principal,
        signal: AbortSignal,
        call: grpc.ServerUnaryCall<Req, Res>,
      ) => Promise<Res>,
    ): grpc.handleUnaryCall<Req, Res> =>
    (call, callback) => {
      const ac = new AbortController()
      call.on('cancelled', () => ac.abort())
      void (async () => {
        try {
          const p = await authenticate(call, charge)
          callback(null, await run(call.request, p, ac.signal, call))
        } catch (err) {
          callback(fail(method, err))
        }
      })()
    }

  const handlers: TailorApiHandlers = {
    TryOn: unary('TryOn', true, async (req, p, signal, call) => {
      const body = parseTryOnBody({
        ...present('person_image_url', req.personImageUrl),
        ...present('garment_image_url', req.garmentImageUrl),
        ...present('garment_mode', req.garmentMode),
        ...present('garment_photo_type', req.garmentPhotoType),
        ...present('preprocess_garment', req.preprocessGarment),
        ...present('remove_background', req.removeBackground),
        ...present('wait_for_result', req.waitForResult),
        ...present('webhook_url', req.webhookUrl),
      })
      const a = await tryOnAndWait(deps, body, {
        callerKeyId: p.keyId,
        submit: (job) =>
          submitIdempotently(call, p, 'try-on', body, (id, webhook) =>
            submitJob(deps, job, { id, webhook, owner: p }),
          ),
        waitTimeoutMs: deps.config.tryOnWaitTimeoutMs,
        baseUrl: deps.baseUrl(),
        signal,
        log,
      })
      switch (a.status) {
        case 'completed':
          return { jobId: a.jobId, resultUrl: a.resultUrl }
        case 'failed':
          throw new ApiError(a.error, { jobId: a.jobId })
        case 'accepted':
          return { jobId: a.jobId }
      }
    }),

    RemoveVideoBackground: unary('RemoveVideoBackground', true, async (req, p, _signal, call) => {
      const body = parseRemoveBackgroundBody({
        ...present('video_url', req.videoUrl),
        ...present('background_color', req.backgroundColor),
        ...present('output_format', req.outputFormat),
        ...present('webhook_url', req.webhookUrl),
      })
      await checkUploadRefs(deps.uploads, { video_url: body.video_url }, p.keyId)
      const job = removeBackgroundSubmission(body)
      const { job: rec } = await submitIdempotently(
        call,
        p,
        'remove-background',
        body,
        (id, webhook) => submitJob(deps, job, { id, webhook, owner: p }),
      )
      log.info({ job_id: rec.id, format: job.params.output_format }, 'job accepted')
      return { jobId: rec.id }
    }),

    GetJob: unary('GetJob', false, async (req, p) => {
      const { kind, document } = await getJobStatus(
        deps,
        requireJobId(req.jobId),
        scopeOf(p),
        deps.baseUrl(),
      )
      return toWireJob(kind, document)
    }),

    CancelJob: unary('CancelJob', false, async (req, p) => {
      const id = requireJobId(req.jobId)
      const rec = await cancelJob(deps, id, scopeOf(p))
      log.info({ job_id: id, kind: rec.kind }, 'job cancel accepted')
      return { message: `Job ${id} was cancelled.` }
    }),

    WatchJob(call) {
      const ac = new AbortController()
      const shutdown = (): void => {
        if (ac.signal.aborted) return
        ac.abort()
        call.emit(
          'error',
          toServiceError(
            new AppError(
              'service_unavailable',
              'The gateway is shutting down; watch the job again.',
              { retryable: true },
            ),
          ).error,
        )
      }
      watches.add(shutdown)
      call.on('cancelled', () => ac.abort())
      let heldBy: string | null = null
      void (async () => {
        try {
          // Charged like a submission: a stream holds a KV watch on the gateway for as long as the job runs.
          const p = await authenticate(call, true)
          const open = watchesPerKey.get(p.keyId) ?? 0
          if (open >= deps.config.grpcMaxWatchesPerKey) {
            throw new AppError(
              'watch_limit_exceeded',
              `This API key already holds ${open} WatchJob streams on this gateway (at most ${deps.config.grpcMaxWatchesPerKey}); end one, or poll GetJob.`,
            )
          }
          watchesPerKey.set(p.keyId, open + 1)
          heldBy = p.keyId
          for await (const u of watchJob(
            deps,
            requireJobId(call.request.jobId),
            scopeOf(p),
            deps.baseUrl(),
            ac.signal,
          )) {
            if (ac.signal.aborted) return
            call.write(toWireJob(u.kind, u.document))
          }
          if (!ac.signal.aborted) call.end()
        } catch (err) {
          if (!ac.signal.aborted) call.emit('error', fail('WatchJob', err))
        } finally {
          ac.abort() // the job ended or the call did: either way the watcher stops
          watches.delete(shutdown)
          if (heldBy !== null) {
            const left = (watchesPerKey.get(heldBy) ?? 1) - 1
            if (left > 0) watchesPerKey.set(heldBy, left)
            else watchesPerKey.delete(heldBy)
          }
        }
      })()
    },
  }

  const server = new grpc.Server()
  server.addService(pkg.tailor.v1.TailorApi.service, handlers)
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    )
  })
  log.info({ port }, 'gRPC API listening')
  return {
    port,
    stop: (timeoutMs) => {
      for (const end of [...watches]) end()
      return stopGrpcServer(server, timeoutMs)
    },
  }
}
