import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM, UPLOADS_BUCKET } from '@tailor/proto'
import { KEYS_BUCKET } from './access/key-store-kv.ts'
import { SLOTS_BUCKET } from './access/job-slots-kv.ts'
import { RATE_BUCKET } from './access/rate-budget-kv.ts'
import { IDEMPOTENCY_BUCKET } from './idempotency/idempotency-store-kv.ts'
import { JOBS_BUCKET } from './jobs/job-store-kv.ts'
import type { Logger } from './logger.ts'
import { RESULTS_BUCKET } from './results/result-reader-object-store.ts'
import { WEBHOOKS_STREAM } from './webhooks/webhook-queue-jetstream.ts'

const REPLICAS_CURRENT_TIMEOUT_MS = 30_000
const REPLICAS_POLL_MS = 100

/** Every JetStream stream Tailor keeps (work queues, KV buckets, object stores). */
export const TAILOR_STREAMS: readonly string[] = [
  STREAM,
  WEBHOOKS_STREAM,
  ...[JOBS_BUCKET, KEYS_BUCKET, RATE_BUCKET, SLOTS_BUCKET, IDEMPOTENCY_BUCKET].map(
    (b) => `KV_${b}`,
  ),
  ...[RESULTS_BUCKET, UPLOADS_BUCKET].map((b) => `OBJ_${b}`),
]

/**
 * Raises the replica count of Tailor's streams to `replicas` (NATS_REPLICAS) where it is lower:
 * the adapters create them with one replica, which on a 3-server JetStream cluster would stop the
 * queue (or lose the records) with the one server holding them. Never lowers a count. Streams are
 * created by the adapters before this runs; one missing here is skipped.
 */
export async function ensureReplicas(
  nc: NatsConnection,
  replicas: number,
  logger: Logger,
): Promise<void> {
  if (replicas <= 1) return
  const jsm = await jetstreamManager(nc)
  for (const name of TAILOR_STREAMS) {
    const info = await jsm.streams.info(name).catch(() => null)
    if (info === null || info.config.num_replicas >= replicas) continue
    await jsm.streams.update(name, { num_replicas: replicas })
    // Serve only once the new peers have caught up: a stream mid-move answers requests late or not at all.
    const deadline = Date.now() + REPLICAS_CURRENT_TIMEOUT_MS
    for (;;) {
      const now = await jsm.streams.info(name).catch(() => null)
      const peers = now?.cluster?.replicas ?? []
      if (
        now?.cluster?.leader !== undefined &&
        peers.length >= replicas - 1 &&
        peers.every((p) => p.current)
      ) {
        break
      }
      if (Date.now() > deadline) {
        logger.warn({ stream: name, replicas }, 'stream replicas not current yet; serving anyway')
        break
      }
      await new Promise((r) => setTimeout(r, REPLICAS_POLL_MS))
    }
    logger.info(
      { stream: name, from: info.config.num_replicas, to: replicas },
      'stream replicas raised',
    )
  }
}
