import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM } from '@tailor/proto'

/**
 * Adapter: jobs waiting for a worker, every kind together = the JOBS work-queue stream's messages
 * less those delivered and not yet acknowledged (running) on its consumers, the per-kind lanes.
 * A lane no worker has created yet counts too (its jobs are in the stream, waiting). null when
 * NATS cannot say.
 */
export async function openJetStreamQueueDepth(
  nc: NatsConnection,
): Promise<() => Promise<number | null>> {
  const jsm = await jetstreamManager(nc)
  return async () => {
    try {
      const messages = (await jsm.streams.info(STREAM)).state.messages
      let running = 0
      for (const c of await jsm.consumers.list(STREAM).next()) running += c.num_ack_pending
      return Math.max(0, messages - running)
    } catch {
      return null
    }
  }
}
