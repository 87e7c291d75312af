/**
 * Use case: webhooks for jobs that became final. `webhookFor` turns a final job record into a
 * delivery; `createWebhookAttempt` makes one signed attempt and decides what comes next:
 * 2xx → done; 410 Gone → done (the receiver asked us to stop); network error, timeout or any other
 * status → retry after the next delay of the schedule, until it runs out (then given up, logged);
 * a destination the rules refuse → done at once (it would be refused again).
 */
import { isAppError } from '@tailor/proto'
import type { JobRecord } from '../jobs/job-store.ts'
import type { Logger } from '../logger.ts'
import { resultUrl } from '../signing.ts'
import { webhookSignatureHeader } from './standard-webhooks.ts'
import type { AttemptHandler, WebhookDelivery } from './webhook-queue.ts'

/** Port: one POST under the destination rules within `timeoutMs` (the adapter is `safePost` from @tailor/proto/net). */
export type WebhookPost = (
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
) => Promise<{ status: number }>

/** Thrown by a WebhookPost whose destination the rules refuse (never retried). */
export const isRefusal = (err: unknown): boolean =>
  isAppError(err) && err.code === 'invalid_parameter'

export interface WebhookAttemptDeps {
  post: WebhookPost
  /**
   * The secrets that sign a delivery of `ownerKeyId`'s job (its key's own, else WEBHOOK_SECRET's;
   * more than one while rotating). Empty: the delivery cannot be signed and is dropped (logged).
   */
  secretsFor: (ownerKeyId: string | undefined) => readonly Buffer[]
  /** Attempt timeouts: `timeoutMs`, and `failingTimeoutMs` for a destination whose last `failingAfter` attempts all failed. */
  timeouts: { timeoutMs: number; failingTimeoutMs: number; failingAfter: number }
  resultUrlSecret: string
  resultUrlTtlS: number
  /** Delay before attempt 2, 3, …; attempts = delays + 1. */
  retryDelaysMs: readonly number[]
  logger: Logger
  now?: () => number
}

/** Destinations remembered by the failure count (the least recently used is forgotten first). */
const MAX_TRACKED_DESTINATIONS = 10_000

/**
 * Consecutive failed attempts per destination (scheme, host and port of the URL), in memory: a
 * destination that keeps failing is given the shorter timeout, so a receiver that hangs holds a
 * delivery slot for less time; one success restores the full timeout.
 */
export function createDestinationHealth(t: WebhookAttemptDeps['timeouts']) {
  const failures = new Map<string, number>()
  const origin = (url: string): string => {
    try {
      return new URL(url).origin
    } catch {
      return url
    }
  }
  return {
    timeoutFor: (url: string): number =>
      (failures.get(origin(url)) ?? 0) >= t.failingAfter ? t.failingTimeoutMs : t.timeoutMs,
    record(url: string, ok: boolean): void {
      const o = origin(url)
      const before = failures.get(o) ?? 0
      failures.delete(o) // re-inserted last: the map's order is least recently used first
      if (ok) return
      failures.set(o, before + 1)
      if (failures.size > MAX_TRACKED_DESTINATIONS) failures.delete(failures.keys().next().value!)
    },
  }
}

/** `webhook-id` of a job's final event (stable: also the queue's de-duplication id). */
export const webhookIdFor = (jobId: string, status: 'completed' | 'failed'): string =>
  `msg_${jobId}_${status}`

/** The delivery for a record that just became final, or null when it asked for no webhook. */
export function webhookFor(rec: JobRecord): WebhookDelivery | null {
  if (rec.webhook === undefined || (rec.status !== 'completed' && rec.status !== 'failed')) {
    return null
  }
  const base = {
    webhookId: webhookIdFor(rec.id, rec.status),
    url: rec.webhook.url,
    jobId: rec.id,
    kind: rec.kind,
    finishedAt: rec.updatedAt,
    ...(rec.ownerKeyId === undefined ? {} : { ownerKeyId: rec.ownerKeyId }),
  }
  if (rec.status === 'completed' && rec.result !== null) {
    return {
      ...base,
      status: 'completed',
      result: { key: rec.result.key, baseUrl: rec.webhook.resultBaseUrl },
    }
  }
  return {
    ...base,
    status: 'failed',
    error: rec.error ?? { code: 'unexpected_error', message: 'The job failed.' },
  }
}

/** The JSON body (Standard Webhooks shape: type, timestamp, data). */
export function webhookPayload(
  d: WebhookDelivery,
  deps: Pick<WebhookAttemptDeps, 'resultUrlSecret' | 'resultUrlTtlS'>,
  nowS: number,
) {
  return {
    type: d.status === 'completed' ? 'job.completed' : 'job.failed',
    timestamp: d.finishedAt,
    data: {
      job_id: d.jobId,
      kind: d.kind,
      status: d.status,
      ...(d.result
        ? {
            result_url: resultUrl(
              d.result.baseUrl,
              deps.resultUrlSecret,
              d.result.key,
              nowS,
              deps.resultUrlTtlS,
            ),
          }
        : {}),
      ...(d.error ? { error: { message: d.error.message, error_code: d.error.code } } : {}),
    },
  }
}

export function createWebhookAttempt(deps: WebhookAttemptDeps): AttemptHandler {
  const now = deps.now ?? Date.now
  const maxAttempts = deps.retryDelaysMs.length + 1
  const health = createDestinationHealth(deps.timeouts)
  return async (d, attempt) => {
    const log = deps.logger.child({
      job_id: d.jobId,
      webhookId: d.webhookId,
      attempt,
      owner: d.ownerKeyId,
    })
    const secrets = deps.secretsFor(d.ownerKeyId)
    if (secrets.length === 0) {
      log.error('webhook dropped: its API key has no signing secret and WEBHOOK_SECRET is not set')
      return { done: true }
    }
    const nowS = Math.floor(now() / 1000)
    const body = JSON.stringify(webhookPayload(d, deps, nowS))
    const headers = {
      'content-type': 'application/json',
      'webhook-id': d.webhookId,
      'webhook-timestamp': String(nowS),
      'webhook-signature': webhookSignatureHeader(secrets, d.webhookId, nowS, body),
    }
    let failure: { status?: number; err?: unknown; timeoutMs: number }
    const timeoutMs = health.timeoutFor(d.url)
    try {
      const { status } = await deps.post(d.url, body, headers, timeoutMs)
      health.record(d.url, status >= 200 && status < 300)
      if (status >= 200 && status < 300) {
        log.info({ status }, 'webhook delivered')
        return { done: true }
      }
      if (status === 410) {
        log.warn({ status }, 'webhook receiver answered gone; not retried')
        return { done: true }
      }
      failure = { status, timeoutMs }
    } catch (err) {
      if (isRefusal(err)) {
        log.warn({ err }, 'webhook destination refused; not retried')
        return { done: true }
      }
      health.record(d.url, false)
      failure = { err, timeoutMs }
    }
    if (attempt >= maxAttempts) {
      log.error({ ...failure, attempts: attempt }, 'webhook given up')
      return { done: true }
    }
    const retryInMs = deps.retryDelaysMs[attempt - 1] ?? 0
    log.warn({ ...failure, retryInMs }, 'webhook attempt failed; will retry')
    return { done: false, retryInMs }
  }
}
