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

/** Port: one POST under the destination rules (the adapter is `safePost` from @tailor/proto/net). */
export type WebhookPost = (url: string, body: string, headers: Record<string, string>) => Promise<{ status: number }>

/** Thrown by a WebhookPost whose destination the rules refuse (never retried). */
export const isRefusal = (err: unknown): boolean => isAppError(err) && err.code === 'invalid_parameter'

export interface WebhookAttemptDeps {
  post: WebhookPost
  /** Bytes behind each WEBHOOK_SECRET (more than one while rotating). */
  secrets: readonly Buffer[]
  resultUrlSecret: string
  resultUrlTtlS: number
  /** Delay before attempt 2, 3, …; attempts = delays + 1. */
  retryDelaysMs: readonly number[]
  logger: Logger
  now?: () => number
}

/** `webhook-id` of a job's final event (stable: also the queue's de-duplication id). */
export const webhookIdFor = (jobId: string, status: 'completed' | 'failed'): string => `msg_${jobId}_${status}`

/** The delivery for a record that just became final, or null when it asked for no webhook. */
export function webhookFor(rec: JobRecord): WebhookDelivery | null {
  if (rec.webhook === undefined || (rec.status !== 'completed' && rec.status !== 'failed')) return null
  const base = { webhookId: webhookIdFor(rec.id, rec.status), url: rec.webhook.url, jobId: rec.id, kind: rec.kind, finishedAt: rec.updatedAt }
  if (rec.status === 'completed' && rec.result !== null) {
    return { ...base, status: 'completed', result: { key: rec.result.key, baseUrl: rec.webhook.resultBaseUrl } }
  }
  return { ...base, status: 'failed', error: rec.error ?? { code: 'unexpected_error', message: 'The job failed.' } }
}

/** The JSON body (Standard Webhooks shape: type, timestamp, data). */
export function webhookPayload(d: WebhookDelivery, deps: Pick<WebhookAttemptDeps, 'resultUrlSecret' | 'resultUrlTtlS'>, nowS: number) {
  return {
    type: d.status === 'completed' ? 'job.completed' : 'job.failed',
    timestamp: d.finishedAt,
    data: {
      job_id: d.jobId,
      kind: d.kind,
      status: d.status,
      ...(d.result ? { result_url: resultUrl(d.result.baseUrl, deps.resultUrlSecret, d.result.key, nowS, deps.resultUrlTtlS) } : {}),
      ...(d.error ? { error: { message: d.error.message, error_code: d.error.code } } : {}),
    },
  }
}

export function createWebhookAttempt(deps: WebhookAttemptDeps): AttemptHandler {
  const now = deps.now ?? Date.now
  const maxAttempts = deps.retryDelaysMs.length + 1
  return async (d, attempt) => {
    const log = deps.logger.child({ job_id: d.jobId, webhookId: d.webhookId, attempt })
    const nowS = Math.floor(now() / 1000)
    const body = JSON.stringify(webhookPayload(d, deps, nowS))
    const headers = {
      'content-type': 'application/json',
      'webhook-id': d.webhookId,
      'webhook-timestamp': String(nowS),
      'webhook-signature': webhookSignatureHeader(deps.secrets, d.webhookId, nowS, body),
    }
    let failure: { status?: number; err?: unknown }
    try {
      const { status } = await deps.post(d.url, body, headers)
      if (status >= 200 && status < 300) {
        log.info({ status }, 'webhook delivered')
        return { done: true }
      }
      if (status === 410) {
        log.warn({ status }, 'webhook receiver answered gone; not retried')
        return { done: true }
      }
      failure = { status }
    } catch (err) {
      if (isRefusal(err)) {
        log.warn({ err }, 'webhook destination refused; not retried')
        return { done: true }
      }
      failure = { err }
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
