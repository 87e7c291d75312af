import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../logger.ts'
import {
  slotGroup,
  type AttemptHandler,
  type DeliverySlots,
  type WebhookDelivery,
  type WebhookQueue,
} from './webhook-queue.ts'

/** Default slots: attempts in flight at once, and of those at most this many for one key's jobs. */
const DEFAULT_SLOTS: DeliverySlots = { concurrency: 8, perKey: 2 }
/** A delivered (or given-up) webhook's file is kept this long so a late duplicate enqueue is ignored. */
const DONE_KEEP_MS = 24 * 60 * 60 * 1000

interface Entry {
  delivery: WebhookDelivery
  /** Attempts made so far. */
  attempts: number
  /** Epoch ms when the next attempt is due. */
  dueAt: number
  /** Epoch ms when it was done (delivered, gone, refused or given up); absent while pending. */
  doneAt?: number
}

const FILE_RE = /^[A-Za-z0-9_-]+\.json$/

/**
 * Adapter (embedded mode): one JSON file per webhook in `<dir>` named by its webhook-id, rewritten
 * atomically after every attempt, so pending deliveries (and their attempt counts) resume after a
 * restart. A timer wakes at the earliest due time. Slots are shared fairly: a due delivery whose
 * key already has `slots.perKey` attempts in flight waits, and the next key's gets the slot.
 */
export async function openFileWebhookQueue(
  dir: string,
  o: { logger: Logger; now?: () => number; slots?: DeliverySlots },
): Promise<WebhookQueue> {
  const now = o.now ?? Date.now
  const slots = o.slots ?? DEFAULT_SLOTS
  const perGroup = new Map<string, number>()
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const entries = new Map<string, Entry>()
  for (const name of (await readdir(dir)).filter((n) => FILE_RE.test(n))) {
    try {
      const e = JSON.parse(await readFile(join(dir, name), 'utf8')) as Entry
      if (e.doneAt !== undefined && now() - e.doneAt > DONE_KEEP_MS) {
        await rm(join(dir, name), { force: true })
      } else entries.set(e.delivery.webhookId, e)
    } catch (err) {
      o.logger.error({ err, file: name }, 'unreadable webhook file skipped')
    }
  }
  const file = (id: string): string => join(dir, `${id}.json`)
  const save = async (e: Entry): Promise<void> => {
    const path = file(e.delivery.webhookId)
    await writeFile(`${path}.tmp`, JSON.stringify(e), { mode: 0o600 })
    await rename(`${path}.tmp`, path)
  }

  let handler: AttemptHandler | null = null
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const inFlight = new Map<string, Promise<void>>()

  const attempt = async (e: Entry, handle: AttemptHandler): Promise<void> => {
    const n = e.attempts + 1
    let next: Entry
    try {
      const outcome = await handle(e.delivery, n)
      next = outcome.done
        ? { ...e, attempts: n, doneAt: now() }
        : { ...e, attempts: n, dueAt: now() + outcome.retryInMs }
    } catch (err) {
      o.logger.error({ err, job_id: e.delivery.jobId }, 'webhook attempt crashed; will retry')
      next = { ...e, attempts: n, dueAt: now() + 30_000 }
    }
    entries.set(e.delivery.webhookId, next)
    await save(next).catch((err: unknown) =>
      o.logger.error({ err, job_id: e.delivery.jobId }, 'webhook state not saved'),
    )
  }

  const pump = (): void => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    if (closed || handler === null) return
    const h = handler
    const t = now()
    let nextDue = Infinity
    for (const e of entries.values()) {
      if (e.doneAt !== undefined && t - e.doneAt > DONE_KEEP_MS) {
        entries.delete(e.delivery.webhookId)
        void rm(file(e.delivery.webhookId), { force: true })
      }
      if (e.doneAt !== undefined || inFlight.has(e.delivery.webhookId)) continue
      if (e.dueAt > t) {
        nextDue = Math.min(nextDue, Math.max(e.dueAt, t + 10))
        continue
      }
      // Due: it waits while every slot, or its key's share of them, is taken (pump runs again as each attempt ends).
      const g = slotGroup(e.delivery)
      if (inFlight.size >= slots.concurrency || (perGroup.get(g) ?? 0) >= slots.perKey) continue
      const id = e.delivery.webhookId
      perGroup.set(g, (perGroup.get(g) ?? 0) + 1)
      inFlight.set(
        id,
        attempt(e, h).finally(() => {
          inFlight.delete(id)
          const left = (perGroup.get(g) ?? 1) - 1
          if (left > 0) perGroup.set(g, left)
          else perGroup.delete(g)
          pump()
        }),
      )
    }
    if (nextDue !== Infinity) timer = setTimeout(pump, Math.min(nextDue - t, 2 ** 31 - 1))
  }

  return {
    async enqueue(d) {
      if (entries.has(d.webhookId)) return // queued or done already: once per webhook-id
      const e: Entry = { delivery: d, attempts: 0, dueAt: now() }
      entries.set(d.webhookId, e)
      await save(e)
      pump()
    },
    start(handle) {
      handler = handle
      pump()
    },
    async close() {
      closed = true
      if (timer !== null) clearTimeout(timer)
      await Promise.all(inFlight.values())
    },
  }
}
