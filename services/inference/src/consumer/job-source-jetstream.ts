import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, type JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { DURABLE, JOBS_STREAM_CONFIG, STREAM } from '@tailor/proto'
import type { JobDelivery, JobSource } from './job-source.ts'

const PULL_EXPIRES_MS = 5_000

function delivery(m: JsMsg): JobDelivery {
  let data: unknown
  try {
    data = m.json()
  } catch {
    data = m.string()
  }
  return {
    data,
    deliveryCount: m.info.deliveryCount,
    ack: async () => {
      await m.ackAck()
    },
    nak: (delayMs) => m.nak(delayMs),
    // No reason on the wire: nats-server before 2.10 (Debian's 2.9) ignores `+TERM <reason>`, so the
    // message came back after the ack wait (a failed job delivered again). The reason is logged by
    // the consumer loop instead.
    term: () => m.term(),
    working: () => m.working(),
  }
}

/**
 * Adapter: the durable pull consumer `inference` on stream JOBS (work queue). The server redelivers
 * a message whose ack-wait ran out (a dead worker); the consumer loop decides when to give up.
 */
export async function openJetStreamJobSource(nc: NatsConnection, o: { ackWaitMs: number; maxAckPending: number }): Promise<JobSource> {
  const jsm = await jetstreamManager(nc)
  try {
    await jsm.streams.info(STREAM)
  } catch {
    try {
      await jsm.streams.add({ ...JOBS_STREAM_CONFIG, subjects: [...JOBS_STREAM_CONFIG.subjects], retention: RetentionPolicy.Workqueue })
    } catch (err) {
      await jsm.streams.info(STREAM).catch(() => Promise.reject(err)) // created meanwhile by the other service
    }
  }
  const cfg = {
    durable_name: DURABLE,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: o.ackWaitMs * 1_000_000,
    max_ack_pending: Math.max(o.maxAckPending, 1) * 4,
    filter_subject: 'jobs.>',
  }
  try {
    await jsm.consumers.info(STREAM, DURABLE)
    await jsm.consumers.update(STREAM, DURABLE, { ack_wait: cfg.ack_wait, max_ack_pending: cfg.max_ack_pending })
  } catch {
    await jsm.consumers.add(STREAM, cfg)
  }
  const consumer = await jetstream(nc).consumers.get(STREAM, DURABLE)
  return {
    async next() {
      const m = await consumer.next({ expires: PULL_EXPIRES_MS })
      return m === null ? null : delivery(m)
    },
    async close() {},
  }
}
