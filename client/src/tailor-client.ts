/**
 * Typed client for the Tailor HTTP API. Only `fetch`, `URL`, `Blob`, `AbortSignal` and timers: it
 * runs unchanged in Node 20 and in browsers (the playground bundles it with esbuild).
 */
import { HTTP_STATUS } from '@tailor/proto/errors'
import { parseRetryAfter, TailorError } from './tailor-error.ts'
import type {
  Credits,
  ErrorBody,
  JobAccepted,
  JobKind,
  JobStatusDocument,
  RemoveBackgroundRequest,
  TryOnRequest,
  TryOnResponse,
  UploadResponse,
} from './types.ts'

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

export interface TailorClientOptions {
  /** e.g. `http://localhost:8080` (a trailing slash is ignored). */
  baseUrl: string
  apiKey: string
  /** Defaults to the global fetch (Node 20, browsers). Tests pass the gateway app's own `request`. */
  fetch?: FetchLike
  /**
   * How many times a request answered 429 (rate_limit_exceeded: not processed, so safe to send
   * again, POSTs included) is retried after its Retry-After; default 2. Then the TailorError is thrown.
   */
  rateLimitRetries?: number
}

export interface RequestOptions {
  /** Aborts the request (and any Retry-After wait): TailorError `aborted`. */
  signal?: AbortSignal
}

export interface SubmitOptions extends RequestOptions {
  /**
   * Sent as the `Idempotency-Key` header (1–255 visible ASCII characters, e.g.
   * `crypto.randomUUID()`): sending the same submission again with the same key answers the job
   * the first one created instead of a second job, for 24 h (the service's IDEMPOTENCY_TTL_S).
   * The same key with another body is 422 `idempotency_key_reused`; while the first request is
   * still creating its job, 409 `idempotency_key_in_use`.
   */
  idempotencyKey?: string
}

export interface WaitOptions extends RequestOptions {
  /** Called with every status document polled (progress 0..1). */
  onProgress?: (doc: JobStatusDocument) => void
  /** Time between polls; default 1000 ms. A 429 waits its Retry-After instead. */
  pollIntervalMs?: number
  /** Give up after this long (TailorError `request_timeout`); default: wait as long as it takes. */
  timeoutMs?: number
}

/** Upload body: anything fetch can send as raw bytes (a file-backed Blob streams from disk in Node). */
export type UploadData = Blob | ArrayBuffer | ArrayBufferView

export const DEFAULT_POLL_INTERVAL_MS = 1000
export const DEFAULT_RATE_LIMIT_RETRIES = 2

const JOB_PATHS: Record<JobKind, string> = {
  'try-on': '/v1/try-on',
  'remove-background': '/v1/video/remove-background',
}

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === 'object' && v !== null && typeof (v as ErrorBody).error_code === 'string'

function abortError(signal: AbortSignal): TailorError {
  return new TailorError('The request was aborted.', {
    status: 0,
    errorCode: 'aborted',
    cause: signal.reason,
  })
}

/** Resolves after `ms`, or rejects with TailorError `aborted` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal))
      return
    }
    const onAbort = (): void => {
      clearTimeout(t)
      reject(abortError(signal!))
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export class TailorClient {
  readonly baseUrl: string
  readonly #apiKey: string
  readonly #fetch: FetchLike
  readonly #rateLimitRetries: number

  constructor(o: TailorClientOptions) {
    if (typeof o.baseUrl !== 'string' || !/^https?:\/\//i.test(o.baseUrl)) {
      throw new TypeError(`baseUrl must be an http or https URL; got ${JSON.stringify(o.baseUrl)}`)
    }
    if (typeof o.apiKey !== 'string' || o.apiKey.length === 0) {
      throw new TypeError('apiKey is required')
    }
    this.baseUrl = o.baseUrl.replace(/\/+$/, '')
    this.#apiKey = o.apiKey
    // Called unbound: a browser's window.fetch refuses another `this`.
    this.#fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.#rateLimitRetries = o.rateLimitRetries ?? DEFAULT_RATE_LIMIT_RETRIES
  }

  /** POST /v1/try-on. With wait_for_result (the default) a finished job answers its result_url; else poll `job_id`. */
  async tryOn(req: TryOnRequest, o: SubmitOptions = {}): Promise<TryOnResponse> {
    return this.#json<TryOnResponse>('POST', JOB_PATHS['try-on'], {
      json: req,
      signal: o.signal,
      idempotencyKey: o.idempotencyKey,
    })
  }

  /** POST /v1/video/remove-background → `{job_id}`; follow it with {@link waitForJob}. */
  async removeVideoBackground(
    req: RemoveBackgroundRequest,
    o: SubmitOptions = {},
  ): Promise<JobAccepted> {
    return this.#json<JobAccepted>('POST', JOB_PATHS['remove-background'], {
      json: req,
      signal: o.signal,
      idempotencyKey: o.idempotencyKey,
    })
  }

  /** GET /v1/<kind>/job/{id}: the status document (a failed job is a 200 with `error`, not a throw). */
  async getJob(kind: JobKind, jobId: string, o: RequestOptions = {}): Promise<JobStatusDocument> {
    return this.#json<JobStatusDocument>(
      'GET',
      `${JOB_PATHS[kind]}/job/${encodeURIComponent(jobId)}`,
      { signal: o.signal },
    )
  }

  /** POST /v1/<kind>/job/{id}/cancel. A finished job throws TailorError `job_finished` (409). */
  async cancelJob(
    kind: JobKind,
    jobId: string,
    o: RequestOptions = {},
  ): Promise<{ message: string }> {
    return this.#json<{ message: string }>(
      'POST',
      `${JOB_PATHS[kind]}/job/${encodeURIComponent(jobId)}/cancel`,
      { signal: o.signal },
    )
  }

  /**
   * Polls a job until it ends. Resolves with the completed document (its `result_url` valid one
   * hour); a failed job throws TailorError with the job's `error_code` and `jobId`. A 429 waits the
   * answer's Retry-After and polls again; an abort throws TailorError `aborted` (the job goes on:
   * call {@link cancelJob} to stop it).
   */
  async waitForJob(kind: JobKind, jobId: string, o: WaitOptions = {}): Promise<JobStatusDocument> {
    const interval = o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
    const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs
    for (;;) {
      let doc: JobStatusDocument | null = null
      let waitMs = interval
      try {
        doc = await this.getJob(kind, jobId, { ...(o.signal ? { signal: o.signal } : {}) })
      } catch (err) {
        if (!(err instanceof TailorError) || err.status !== 429) throw err
        waitMs = Math.max(interval, (err.retryAfter ?? 1) * 1000)
      }
      if (doc !== null) {
        o.onProgress?.(doc)
        if (doc.status === 'completed') return doc
        if (doc.status === 'failed') {
          const code = doc.error?.error_code ?? 'unexpected_error'
          throw new TailorError(doc.error?.message ?? `Job ${jobId} failed.`, {
            status: HTTP_STATUS[code] ?? 500,
            errorCode: code,
            jobId,
          })
        }
      }
      if (Date.now() + waitMs > deadline) {
        throw new TailorError(`Job ${jobId} did not finish within ${o.timeoutMs} ms.`, {
          status: 0,
          errorCode: 'request_timeout',
          jobId,
        })
      }
      await sleep(waitMs, o.signal)
    }
  }

  /**
   * GET /v1/credits (Pixelcut's): the key's credit balance, `credits_remaining` null and
   * `unlimited` true for a key without a budget. Also a cheap way to check a key: a wrong one is
   * TailorError `invalid_auth_token` (401).
   */
  async getCredits(o: RequestOptions = {}): Promise<Credits> {
    return this.#json<Credits>('GET', '/v1/credits', { signal: o.signal })
  }

  /**
   * POST /v1/uploads: stores local media for one hour and answers `url` (`tailor://uploads/<id>`),
   * usable as person_image_url, garment_image_url or video_url by jobs of the same API key.
   */
  async upload(
    data: UploadData,
    contentType: string,
    o: RequestOptions = {},
  ): Promise<UploadResponse> {
    return this.#json<UploadResponse>('POST', '/v1/uploads', {
      raw: data,
      contentType,
      signal: o.signal,
    })
  }

  /**
   * GETs a result_url (signed: no API key is sent, so it may point at another origin such as a
   * proxy's). Resolves with the checked Response: stream `body`, or `blob()` / `arrayBuffer()`.
   */
  async downloadResult(resultUrl: string, o: RequestOptions = {}): Promise<Response> {
    const res = await this.#send(
      resultUrl,
      { method: 'GET', ...(o.signal ? { signal: o.signal } : {}) },
      o.signal,
    )
    if (!res.ok) throw await this.#errorFrom(res)
    return res
  }

  async #json<T>(
    method: 'GET' | 'POST',
    path: string,
    b: {
      json?: unknown
      raw?: UploadData
      contentType?: string
      signal?: AbortSignal | undefined
      idempotencyKey?: string | undefined
    },
  ): Promise<T> {
    const headers: Record<string, string> = {
      'x-api-key': this.#apiKey,
      accept: 'application/json',
    }
    if (b.idempotencyKey !== undefined) headers['idempotency-key'] = b.idempotencyKey
    let body: BodyInit | undefined
    if (b.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(b.json)
    } else if (b.raw !== undefined) {
      headers['content-type'] = b.contentType ?? 'application/octet-stream'
      body = b.raw as BodyInit
    }
    const init: RequestInit = {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(b.signal ? { signal: b.signal } : {}),
    }
    let res: Response
    for (let attempt = 0; ; attempt++) {
      res = await this.#send(`${this.baseUrl}${path}`, init, b.signal)
      if (res.ok) break
      const err = await this.#errorFrom(res)
      if (res.status !== 429 || attempt >= this.#rateLimitRetries) throw err
      await sleep((err.retryAfter ?? 1) * 1000, b.signal)
    }
    try {
      return (await res.json()) as T
    } catch (err) {
      throw new TailorError(`The service answered ${res.status} with a body that is not JSON.`, {
        status: res.status,
        errorCode: 'invalid_response',
        requestId: res.headers.get('x-request-id') ?? undefined,
        cause: err,
      })
    }
  }

  async #send(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
    try {
      return await this.#fetch(url, init)
    } catch (err) {
      if (signal?.aborted) throw abortError(signal)
      throw new TailorError(
        `Could not reach ${new URL(url).origin}: ${err instanceof Error ? err.message : String(err)}`,
        {
          status: 0,
          errorCode: 'network_error',
          cause: err,
        },
      )
    }
  }

  async #errorFrom(res: Response): Promise<TailorError> {
    const retryAfter = parseRetryAfter(res.headers.get('retry-after'))
    let body: unknown = null
    try {
      body = await res.json()
    } catch {
      // not JSON: described below
    }
    if (isErrorBody(body)) {
      return new TailorError(body.error, {
        status: res.status,
        errorCode: body.error_code,
        requestId: body.request_id ?? res.headers.get('x-request-id') ?? undefined,
        retryAfter,
        jobId: body.job_id,
      })
    }
    return new TailorError(`The service answered HTTP ${res.status} without an error body.`, {
      status: res.status,
      errorCode: 'invalid_response',
      requestId: res.headers.get('x-request-id') ?? undefined,
      retryAfter,
    })
  }
}
