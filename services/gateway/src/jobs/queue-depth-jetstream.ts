import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { DURABLE, STREAM } from '@tailor/proto'

/**
 * Adapter: jobs waiting for a worker = the durable consumer `inference`'s num_pending on stream
 * JOBS (the figure KEDA scales inference on). Before any worker created the consumer, every
 * message in the work-queue stream is waiting. null when NATS cannot say.
 */
export async function openJetStreamQueueDepth(nc: NatsConnection): Promise<() => Promise<number | null>> {
  const jsm = await jetstreamManager(nc)
  return async () => {
    try {
      return (await jsm.consumers.info(STREAM, DURABLE)).num_pending
    } catch {
      try {
        return (await jsm.streams.info(STREAM)).state.messages
      } catch {
        return null
      }
    }
  }
}
