import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import type { SlotListStore } from './job-slots.ts'
import { kvKeyFor } from './rate-budget-kv.ts'

export const SLOTS_BUCKET = 'job_slots'

/** NATS failures are the service's unavailability (503, retryable), not a bug. */
async function unavailable<T>(p: Promise<T>): Promise<T> {
  try {
    return await p
  } catch (err) {
    if (err instanceof AppError) throw err
    throw new AppError(
      'service_unavailable',
      'The job slot store cannot reach NATS; retry shortly.',
      { cause: err, retryable: true },
    )
  }
}

/** Adapter: JetStream KV bucket `job_slots`, one entry per key id: the ids of its pending or running jobs. */
export async function openKvSlotListStore(nc: NatsConnection): Promise<SlotListStore> {
  const kv: KV = await new Kvm(nc).create(SLOTS_BUCKET, { history: 1 })
  const read = async (keyId: string): Promise<{ ids: string[]; revision: number | null }> => {
    const e = await kv.get(kvKeyFor(keyId))
    if (e === null) return { ids: [], revision: null }
    if (e.operation !== 'PUT' || e.length === 0) return { ids: [], revision: e.revision }
    const ids = e.json<{ ids?: unknown }>().ids
    return {
      ids: Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [],
      revision: e.revision,
    }
  }
  const write = async (
    keyId: string,
    ids: string[],
    revision: number | null,
  ): Promise<number | false> => {
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
  }
  return {
    read: (keyId) => unavailable(read(keyId)),
    write: (keyId, ids, revision) => unavailable(write(keyId, ids, revision)),
    async close() {},
  }
}
