import type { ErrorCode, JobKind } from '@tailor/proto'

/**
 * One webhook to deliver: everything the payload needs, fixed when the job became final (the
 * result URL is signed afresh at each attempt, so a late retry still carries a usable link).
 */
export interface WebhookDelivery {
  /** `webhook-id`: the same on every attempt (receivers de-duplicate on it). */
  webhookId: string
  url: string
  jobId: string
  /**
   * The API key that submitted the job: its secret signs the delivery, and its deliveries share
   * its in-flight cap. Absent on deliveries queued by an older version (the `''` group).
   */
  ownerKeyId?: string
  kind: JobKind
  status: 'completed' | 'failed'
  /** When the job became final (ISO 8601): the payload's `timestamp`. */
  finishedAt: string
  /** Completed jobs: the result's storage key and the origin its signed URL is built on. */
  result?: { key: string; baseUrl: string }
  error?: { code: ErrorCode; message: string }
}

/** What one attempt decided: done (delivered, gone, refused or given up), or try again later. */
export type AttemptOutcome = { done: true } | { done: false; retryInMs: number }

export type AttemptHandler = (d: WebhookDelivery, attempt: number) => Promise<AttemptOutcome>

/** How a queue shares its delivery slots: `concurrency` attempts at once, at most `perKey` of them for one key's jobs. */
export interface DeliverySlots {
  concurrency: number
  perKey: number
}

/** The group a delivery's in-flight cap counts in. */
export const slotGroup = (d: WebhookDelivery): string => d.ownerKeyId ?? ''

/**
 * Port: durable queue of webhook deliveries (JetStream stream WEBHOOKS distributed; files in the
 * data dir embedded). `enqueue` is idempotent per `webhookId`; a delivery survives a restart of the
 * process that queued it until its handler answers done.
 */
export interface WebhookQueue {
  enqueue(d: WebhookDelivery): Promise<void>
  /** Hands due deliveries to `handle` (attempt counts from 1) until close(). */
  start(handle: AttemptHandler): void
  close(): Promise<void>
}
