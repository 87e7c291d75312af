import type { JobRecord } from './job-store.ts'

/**
 * Port: change notification for job records, beside the JobStore (the same adapters implement
 * both: a KV watch distributed, so a change made through any gateway replica is seen by every
 * other; an in-process emitter for the data-dir store embedded). A port of its own, so that
 * decorators of JobStore (metrics, webhooks) need not forward it.
 */
export interface JobWatcher {
  /**
   * The record as it is now (nothing when there is none), then every change to it, in order, until
   * `signal` aborts or the consumer stops iterating; `null` when the record is deleted. Changes
   * that come while the consumer is busy are queued, not dropped.
   */
  watch(id: string, signal: AbortSignal): AsyncIterable<JobRecord | null>
}
