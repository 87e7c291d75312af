import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import type { SlotListStore } from './job-slots.ts'
import { kvKeyFor } from './rate-budget-kv.ts'

export const SLOTS_BUCKET = 'job_slots'

/** Adapter: JetStream KV bucket `job_slots`, one entry per key id: the ids of its pending or running jobs. */
export async function openKvSlotListStore(nc: NatsConnection): Promise<SlotListStore> {
  const kv: KV = await new Kvm(nc).create(SLOTS_BUCKET, { history: 1 })
  return {
    async read(keyId) {
      const e = await kv.get(kvKeyFor(keyId))
      if (e === null) return { ids: [], revision: null }
      if (e.operation !== 'PUT' || e.length === 0) return { ids: [], revision: e.revision }
      const ids = e.json<{ ids?: unknown }>().ids
      return { ids: Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [], revision: e.revision }
    },
    async write(keyId, ids, revision) {
      const k = kvKeyFor(keyId)
      const value = JSON.stringify({ ids })
      try {
        return revision === null ? await kv.create(k, value) : await kv.update(k, value, revision)
      } catch (err) {
        // A compare-and-set conflict ("wrong last sequence") or a create over an existing key.
        const msg = err instanceof Error ? err.message : String(err)
        if (/wrong last sequence|exists/i.test(msg)) return false
        throw err
      }
    },
    async close() {},
  }
}
