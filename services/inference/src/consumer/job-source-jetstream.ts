import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { durableFor, laneFilterFor, LEGACY_DURABLE, STREAM, type JobKind } from '@tailor/proto'
import { ensureJobsStream } from '@tailor/proto/jetstream'
import type { Logger } from '../logger.ts'
import type { JobDelivery, JobSource } from './job-source.ts'

/** How long one pull waits for a job: one lane, or each lane in turn when the worker serves several. */
const PULL_EXPIRES_MS = 5_000
const PULL_EXPIRES_PER_LANE_MS = 1_000

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

export interface JobLanesOptions {
  /** The kinds this worker runs: it pulls from their lanes only. */
  kinds: readonly JobKind[]
  ackWaitMs: number
  /**
   * The lane consumer's max_ack_pending: jobs delivered and not yet acknowledged, cluster-wide.
   * One value from config for every worker (≥ the most workers × CONCURRENCY), never derived from
   * one worker's concurrency: it is the ceiling on jobs running at once in the whole cluster.
   */
  maxAckPending: number
  logger?: Logger
}

/**
 * Creates the JOBS stream if missing, deletes the pre-lanes consumer, and creates or updates the
 * durable consumer of each kind. An existing consumer is updated only where its ack wait or
 * max_ack_pending differs from the configured values (every worker reads the same config, so they
 * agree; a changed ConfigMap is applied by the first worker that starts with it).
 */
export async function ensureJobLanes(jsm: JetStreamManager, o: JobLanesOptions): Promise<void> {
  await ensureJobsStream(jsm)
  const legacy = await jsm.consumers.info(STREAM, LEGACY_DURABLE).catch(() => null)
  if (legacy !== null) {
    await jsm.consumers.delete(STREAM, LEGACY_DURABLE).catch(() => undefined) // another worker may have deleted it first
    o.logger?.warn(
      { consumer: LEGACY_DURABLE, pending: legacy.num_pending, ackPending: legacy.num_ack_pending },
      'deleted the pre-lanes consumer; its jobs go to the per-kind lanes',
    )
  }
  const ackWait = o.ackWaitMs * 1_000_000
  const maxAckPending = Math.max(1, o.maxAckPending)
  for (const kind of o.kinds) {
    const name = durableFor(kind)
    const info = await jsm.consumers.info(STREAM, name).catch(() => null)
    if (info === null) {
      try {
        await jsm.consumers.add(STREAM, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: ackWait,
          max_ack_pending: maxAckPending,
          filter_subject: laneFilterFor(kind),
        })
      } catch (err) {
        await jsm.consumers.info(STREAM, name).catch(() => Promise.reject(err)) // created meanwhile by another worker
      }
    } else if (info.config.ack_wait !== ackWait || info.config.max_ack_pending !== maxAckPending) {
      await jsm.consumers.update(STREAM, name, {
        ack_wait: ackWait,
        max_ack_pending: maxAckPending,
      })
      o.logger?.info(
        {
          consumer: name,
          ackWaitMs: o.ackWaitMs,
          maxAckPending,
          was: {
            ackWaitMs: (info.config.ack_wait ?? 0) / 1e6,
            maxAckPending: info.config.max_ack_pending,
          },
        },
        'lane consumer settings updated from config',
      )
    }
  }
}

/**
 * Adapter: the per-kind durable pull consumers on stream JOBS (work queue). A pull asks for one
 * message and only when a job slot is free, so a worker never holds a job it is not running; with
 * several lanes it asks each in turn. The server redelivers a message whose ack wait ran out (a
 * dead worker); the consumer loop decides when to give up.
 */
export async function openJetStreamJobSource(
  nc: NatsConnection,
  o: JobLanesOptions,
): Promise<JobSource> {
  if (o.kinds.length === 0) throw new Error('a worker needs at least one job kind')
  await ensureJobLanes(await jetstreamManager(nc), o)
  const js = jetstream(nc)
  const lanes: Consumer[] = []
  const byKind = new Map<JobKind, Consumer>()
  for (const kind of o.kinds) {
    const c = await js.consumers.get(STREAM, durableFor(kind))
    lanes.push(c)
    byKind.set(kind, c)
  }
  const expires = lanes.length === 1 ? PULL_EXPIRES_MS : PULL_EXPIRES_PER_LANE_MS
  let turn = 0
  return {
    async next(kind) {
      const own = kind === undefined ? undefined : byKind.get(kind)
      if (kind !== undefined && own === undefined) {
        throw new Error(`this worker does not pull ${kind} jobs (JOB_KINDS)`)
      }
      const m =
        own !== undefined
          ? await own.next({ expires: PULL_EXPIRES_MS })
          : await lanes[turn++ % lanes.length]!.next({ expires })
      return m === null ? null : delivery(m)
    },
    async close() {},
  }
}
