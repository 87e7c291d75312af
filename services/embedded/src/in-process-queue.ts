import type { JobEnvelope, JobKind } from '@tailor/proto'
import type { JobDelivery } from '@tailor/inference'

interface Item {
  job: JobEnvelope
  deliveries: number
}

const NEXT_WAIT_MS = 1_000

/**
 * The embedded mode's queue: the gateway's JobPublisher and inference's JobSource in one object.
 * Same contract as the JetStream adapters: nak redelivers after a delay, term drops, a job id
 * already queued is not queued twice, and `next(kind)` takes only that kind (one lane per kind).
 */
export class InProcessQueue {
  readonly #items: Item[] = []
  readonly #queued = new Set<string>()
  #waiters: { kind: JobKind | undefined; wake: () => void }[] = []
  #closed = false

  async publish(job: JobEnvelope, deliveries = 0): Promise<void> {
    if (this.#queued.has(job.id) || this.#closed) return
    this.#queued.add(job.id)
    this.#items.push({ job, deliveries })
    // The first waiter that takes this kind (its own lane, or any kind).
    const i = this.#waiters.findIndex((w) => w.kind === undefined || w.kind === job.kind)
    if (i >= 0) this.#waiters.splice(i, 1)[0]!.wake()
  }

  /** Jobs waiting for the worker (not yet delivered, or nak'ed and back in line). */
  depth(): number {
    return this.#items.length
  }

  /** The oldest waiting job, of `kind` only when given (lanes: a try-on never waits behind videos). */
  async next(kind?: JobKind): Promise<JobDelivery | null> {
    const index = (): number =>
      this.#items.findIndex((it) => kind === undefined || it.job.kind === kind)
    if (index() < 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w.wake !== wake)
          resolve()
        }, NEXT_WAIT_MS)
        const wake = (): void => {
          clearTimeout(t)
          resolve()
        }
        this.#waiters.push({ kind, wake })
      })
    }
    const at = index()
    if (at < 0) return null
    const item = this.#items.splice(at, 1)[0]!
    item.deliveries++
    let settled = false
    const settle = (): boolean => {
      if (settled) return false
      settled = true
      this.#queued.delete(item.job.id)
      return true
    }
    return {
      data: item.job,
      deliveryCount: item.deliveries,
      ack: async () => void settle(),
      term: () => void settle(),
      working: () => undefined,
      nak: (delayMs) => {
        if (!settle()) return
        setTimeout(() => void this.publish(item.job, item.deliveries), delayMs).unref()
      },
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const w of this.#waiters.splice(0)) w.wake()
  }
}
