import { AppError } from '@tailor/proto'

/**
 * Per-key concurrent-job slots: a job takes its key's slot when it is submitted and gives it back
 * when its record becomes final (completed, failed, cancelled, expired). The slot lists live in a
 * SlotListStore (JetStream KV bucket `job_slots` distributed, memory embedded) and change by
 * compare-and-set, so replicas share them.
 *
 * No slot can leak: releases are prompt but best effort (a replica may die between the final
 * record and the release), and every time a key is found at its cap, each listed job is checked
 * (`isActive`: its record exists and is pending or running) and the ones that are not are
 * dropped before the decision. Operations on one key are batched: while one compare-and-set is
 * in flight, the next batch collects, so a busy key costs one round trip per batch.
 */
export interface SlotListStore {
  read(keyId: string): Promise<{ ids: string[]; revision: number | null }>
  /** Compare-and-set; false when the list changed since `revision` (null: it did not exist). Answers the new revision. */
  write(keyId: string, ids: string[], revision: number | null): Promise<number | false>
  close(): Promise<void>
}

export interface JobSlots {
  /** Takes a slot for `jobId` unless `keyId` already holds `max` (0 = no cap: nothing is recorded). */
  acquire(keyId: string, jobId: string, max: number): Promise<{ admitted: boolean; active: number }>
  /** Gives the slot back (idempotent). */
  release(keyId: string, jobId: string): Promise<void>
  close(): Promise<void>
}

type Op =
  | {
      kind: 'acquire'
      jobId: string
      max: number
      done: (r: { admitted: boolean; active: number }) => void
      fail: (e: unknown) => void
    }
  | { kind: 'release'; jobId: string; done: () => void; fail: (e: unknown) => void }

const CAS_ATTEMPTS = 50

export function createJobSlots(
  store: SlotListStore,
  isActive: (jobId: string) => Promise<boolean>,
): JobSlots {
  const queues = new Map<string, Op[]>()
  const running = new Set<string>()
  const cache = new Map<string, { ids: string[]; revision: number | null }>()

  const apply = async (keyId: string, ops: Op[]): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const cached = cache.get(keyId)
      const cur = cached ?? (await store.read(keyId))
      const ids = new Set(cur.ids)
      const results = new Map<Op, { admitted: boolean; active: number }>()
      let pruned = false
      for (const op of ops) {
        if (op.kind === 'release') {
          ids.delete(op.jobId)
          continue
        }
        if (ids.size >= op.max && !pruned) {
          pruned = true
          const checks = await Promise.all(
            [...ids].map(async (id) => [id, await isActive(id)] as const),
          )
          for (const [id, active] of checks) if (!active) ids.delete(id)
        }
        const admitted = ids.size < op.max
        if (admitted) ids.add(op.jobId)
        results.set(op, { admitted, active: ids.size })
      }
      const next = [...ids]
      const unchanged = next.length === cur.ids.length && next.every((id, i) => id === cur.ids[i])
      if (cached !== undefined && (unchanged || [...results.values()].some((r) => !r.admitted))) {
        // Decided on this replica's copy: a release it does not show, or a refusal, is decided again on a fresh read.
        cache.delete(keyId)
        continue
      }
      const revision = unchanged ? cur.revision : await store.write(keyId, next, cur.revision)
      if (revision !== false) {
        cache.set(keyId, { ids: next, revision })
        for (const op of ops) {
          if (op.kind === 'release') op.done()
          else op.done(results.get(op)!)
        }
        return
      }
      cache.delete(keyId)
      if (attempt >= CAS_ATTEMPTS) {
        throw new AppError('service_unavailable', 'job slot list kept changing under us', {
          retryable: true,
        })
      }
    }
  }

  const drain = async (keyId: string): Promise<void> => {
    running.add(keyId)
    try {
      for (;;) {
        const ops = queues.get(keyId) ?? []
        queues.delete(keyId)
        if (ops.length === 0) return
        try {
          await apply(keyId, ops)
        } catch (err) {
          cache.delete(keyId)
          for (const op of ops) op.fail(err)
        }
      }
    } finally {
      running.delete(keyId)
    }
  }

  const enqueue = (keyId: string, op: Op): void => {
    const q = queues.get(keyId)
    if (q === undefined) queues.set(keyId, [op])
    else q.push(op)
    if (!running.has(keyId)) void drain(keyId)
  }

  return {
    acquire(keyId, jobId, max) {
      if (max <= 0 || !Number.isFinite(max)) return Promise.resolve({ admitted: true, active: 0 })
      return new Promise((done, fail) =>
        enqueue(keyId, { kind: 'acquire', jobId, max, done, fail }),
      )
    },
    release(keyId, jobId) {
      return new Promise((done, fail) => enqueue(keyId, { kind: 'release', jobId, done, fail }))
    },
    close: () => store.close(),
  }
}

/** Adapter: slot lists in this process's memory (embedded mode; seeded from unfinished records at start). */
export function createMemorySlotListStore(
  held: ReadonlyMap<string, readonly string[]> = new Map(),
): SlotListStore {
  const lists = new Map<string, { ids: string[]; revision: number }>(
    [...held].map(([k, ids]) => [k, { ids: [...ids], revision: 1 }]),
  )
  return {
    async read(keyId) {
      const l = lists.get(keyId)
      return l === undefined
        ? { ids: [], revision: null }
        : { ids: [...l.ids], revision: l.revision }
    },
    async write(keyId, ids, revision) {
      const l = lists.get(keyId)
      if ((l?.revision ?? null) !== revision) return false
      const next = (l?.revision ?? 0) + 1
      lists.set(keyId, { ids: [...ids], revision: next })
      return next
    },
    async close() {},
  }
}
