import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JsMsg,
} from '@nats-io/jetstream'
import { nanos, type NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import type { Logger } from '../logger.ts'
import {
  slotGroup,
  type AttemptHandler,
  type DeliverySlots,
  type WebhookDelivery,
  type WebhookQueue,
} from './webhook-queue.ts'

export const WEBHOOKS_STREAM = 'WEBHOOKS'
export const WEBHOOKS_SUBJECT = 'webhooks.deliveries.v1'
export const WEBHOOKS_DURABLE = 'gateway-webhooks'
/** A job's final event may be redelivered minutes later; its webhook is queued once within this window. */
const DUPLICATE_WINDOW_MS = 60 * 60 * 1000
/** Undelivered webhooks are dropped after this long whatever the schedule says. */
const MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000
const PULL_EXPIRES_MS = 2_000
/**
 * A delivery whose key has its share of slots in flight on this gateway is handed back until about
 * its turn: each deferral of a key is scheduled one (average attempt time ÷ share) after that key's
 * previous one, between these bounds. A key with a large backlog is then pulled about as fast as
 * its share serves it, not once a second per message.
 */
const MIN_DEFER_MS = 200
const MAX_DEFER_MS = 5 * 60_000
/** Assumed attempt time of a key before one is measured. */
const FIRST_ATTEMPT_MS = 1_000

/**
 * A message of the stream: the delivery, the attempts made so far, and when the next is due
 * (epoch ms). Both travel in the message, so a delivery handed back because its key was at its
 * in-flight cap (a nak) does not count as an attempt. Messages queued by an older version carry
 * neither (their redeliveries were their attempts).
 */
type Queued = WebhookDelivery & { attempts?: number; dueAt?: number }
/**
 * A message nak'ed with a delay stays pending on the consumer until redelivered, so this bounds
 * how many webhooks may wait for a retry at once before new ones stall: far above any backlog.
 */
const MAX_ACK_PENDING = 100_000

/**
 * Adapter: JetStream work-queue stream WEBHOOKS (msgID = webhook-id, so a job's webhook is queued
 * once) and the durable pull consumer `gateway-webhooks` shared by every gateway replica. A retry
 * is the delivery published again with its attempt count and due time (then the old message is
 * acked); a message pulled before it is due is nak'ed until then. Slots are shared fairly: each
 * gateway runs `slots.concurrency` attempts at once, at most `slots.perKey` for one key's jobs; a
 * delivery of a key at its share is nak'ed until about its turn (not an attempt), so the next
 * messages, other keys' among them, are pulled. A gateway that dies mid-attempt leaves the message
 * unacked, and the server hands it to another replica (or the restarted one) after the ack wait.
 */
export async function openJetStreamWebhookQueue(
  nc: NatsConnection,
  o: { attemptTimeoutMs: number; logger: Logger; slots: DeliverySlots },
): Promise<WebhookQueue> {
  const jsm = await jetstreamManager(nc)
  const streamCfg = {
    name: WEBHOOKS_STREAM,
    subjects: [WEBHOOKS_SUBJECT],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    max_age: nanos(MAX_AGE_MS),
  }
  try {
    await jsm.streams.info(WEBHOOKS_STREAM)
  } catch {
    try {
      await jsm.streams.add(streamCfg)
    } catch (err) {
      await jsm.streams.info(WEBHOOKS_STREAM).catch(() => Promise.reject(err)) // created meanwhile by another replica
    }
  }
  const ackWait = nanos(o.attemptTimeoutMs + 15_000)
  try {
    await jsm.consumers.info(WEBHOOKS_STREAM, WEBHOOKS_DURABLE)
    await jsm.consumers.update(WEBHOOKS_STREAM, WEBHOOKS_DURABLE, {
      ack_wait: ackWait,
      max_ack_pending: MAX_ACK_PENDING,
    })
  } catch {
    await jsm.consumers.add(WEBHOOKS_STREAM, {
      durable_name: WEBHOOKS_DURABLE,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      max_ack_pending: MAX_ACK_PENDING,
      filter_subject: WEBHOOKS_SUBJECT,
    })
  }
  const js = jetstream(nc)
  const consumer = await js.consumers.get(WEBHOOKS_STREAM, WEBHOOKS_DURABLE)
  let stopped = false
  const loops: Promise<void>[] = []

  /** Attempts in flight on this gateway per key (slotGroup). */
  const perGroup = new Map<string, number>()
  /** Per key: average attempt time (EWMA, ms), and when its last deferred delivery was scheduled. */
  const attemptMs = new Map<string, number>()
  const lastTurn = new Map<string, number>()
  const deferFor = (g: string, t: number): number => {
    const step = Math.max(MIN_DEFER_MS / 2, (attemptMs.get(g) ?? FIRST_ATTEMPT_MS) / o.slots.perKey)
    const at = Math.min(Math.max(t, lastTurn.get(g) ?? 0) + step, t + MAX_DEFER_MS)
    lastTurn.set(g, at)
    return Math.max(MIN_DEFER_MS, Math.round(at - t))
  }
  const handleOne = async (m: JsMsg, handle: AttemptHandler): Promise<void> => {
    let q: Queued
    try {
      q = m.json<Queued>()
    } catch (err) {
      o.logger.error({ err, seq: m.seq }, 'unreadable webhook message dropped')
      m.term('unreadable')
      return
    }
    const { attempts, dueAt, ...d } = q
    const t = Date.now()
    if (dueAt !== undefined && dueAt > t) {
      m.nak(dueAt - t)
      return
    }
    const g = slotGroup(d)
    const busy = perGroup.get(g) ?? 0
    if (busy >= o.slots.perKey) {
      m.nak(deferFor(g, t))
      return
    }
    perGroup.set(g, busy + 1)
    if (busy === 0 && (lastTurn.get(g) ?? 0) < t) lastTurn.delete(g) // no deferral pending: forget it
    // An older version's message: each of its deliveries was an attempt.
    const n = (attempts ?? m.info.deliveryCount - 1) + 1
    const began = Date.now()
    try {
      const outcome = await handle(d, n)
      attemptMs.set(g, 0.8 * (attemptMs.get(g) ?? FIRST_ATTEMPT_MS) + 0.2 * (Date.now() - began))
      if (outcome.done) {
        await m.ackAck()
        return
      }
      const next: Queued = { ...d, attempts: n, dueAt: Date.now() + outcome.retryInMs }
      try {
        await js.publish(WEBHOOKS_SUBJECT, JSON.stringify(next), { msgID: `${d.webhookId}.${n}` })
      } catch (err) {
        o.logger.warn(
          { err, job_id: d.jobId },
          'webhook retry not queued; the message is retried as it is',
        )
        m.nak(outcome.retryInMs)
        return
      }
      await m.ackAck()
    } catch (err) {
      o.logger.error({ err, job_id: d.jobId }, 'webhook attempt crashed; will retry')
      m.nak(30_000)
    } finally {
      const left = (perGroup.get(g) ?? 1) - 1
      if (left > 0) perGroup.set(g, left)
      else perGroup.delete(g)
    }
  }

  const loop = async (handle: AttemptHandler): Promise<void> => {
    while (!stopped) {
      let m: JsMsg | null
      try {
        m = await consumer.next({ expires: PULL_EXPIRES_MS })
      } catch (err) {
        if (stopped) return
        o.logger.warn({ err }, 'webhook pull failed; retrying')
        await new Promise((r) => setTimeout(r, 1000))
        continue
      }
      if (m !== null) await handleOne(m, handle)
    }
  }

  return {
    async enqueue(d) {
      try {
        await js.publish(WEBHOOKS_SUBJECT, JSON.stringify({ ...d, attempts: 0 } satisfies Queued), {
          msgID: d.webhookId,
        })
      } catch (err) {
        throw new AppError('service_unavailable', 'the webhook queue is unavailable', {
          cause: err,
          retryable: true,
        })
      }
    },
    start(handle) {
      for (let i = 0; i < o.slots.concurrency; i++) loops.push(loop(handle))
    },
    async close() {
      stopped = true
      await Promise.all(loops)
    },
  }
}
