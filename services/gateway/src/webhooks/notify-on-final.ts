import type { JobRecord, JobStore } from '../jobs/job-store.ts'
import { isFinal } from '../jobs/job-store.ts'
import { webhookFor } from './deliver-webhook.ts'
import type { WebhookQueue } from './webhook-queue.ts'

/**
 * Wraps the job store so that every record that becomes final (a worker's completed/failed event,
 * a cancel, an expiry, a publish failure) queues its webhook, whoever made the change. The
 * webhook is queued after the record is written and before the change is answered: when queueing
 * fails, the caller sees the error (a worker's final event is then redelivered, see `requeue`).
 */
export function notifyOnFinal(
  store: JobStore,
  queue: WebhookQueue,
): JobStore & { requeue(rec: JobRecord): Promise<void> } {
  const enqueue = async (rec: JobRecord): Promise<void> => {
    const d = webhookFor(rec)
    if (d !== null) await queue.enqueue(d)
  }
  return {
    create: (rec) => store.create(rec),
    get: (id) => store.get(id),
    listUnfinished: () => store.listUnfinished(),
    close: () => store.close(),
    async update(id, change) {
      // The store may call `change` more than once (compare-and-set retries): the last call counts.
      let became: JobRecord | null = null
      const rec = await store.update(id, (cur) => {
        const next = change(cur)
        became = next !== null && !isFinal(cur.status) && isFinal(next.status) ? next : null
        return next
      })
      if (rec !== null && became === rec) await enqueue(rec)
      return rec
    },
    /**
     * Queues the webhook of an already-final record again (a worker's final event redelivered
     * because the gateway stopped before answering it). The queue de-duplicates on webhook-id.
     */
    requeue: enqueue,
  }
}
