import { jobIdTimeMs } from '@tailor/proto'
import { isFinal, type JobRecord, type JobStore } from '../jobs/job-store.ts'
import type { JobSlots } from './job-slots.ts'

/**
 * Wraps the job store so that a record that becomes final (a worker's completed/failed event, a
 * cancel, a publish failure) gives its owner's job slot back, whoever made the change. Release is
 * best effort: a failure is reported to `onError`, and the slot is reclaimed the next time its key
 * is found at the cap (job-slots.ts checks the listed jobs then). Records that expire without
 * becoming final are reclaimed the same way.
 */
export function releaseSlotsOnFinal<S extends JobStore>(
  store: S,
  slots: JobSlots,
  onError: (err: unknown, rec: JobRecord) => void,
): S {
  return {
    ...store,
    async update(id: string, change: (cur: JobRecord) => JobRecord | null) {
      // The store may call `change` more than once (compare-and-set retries): the last call counts.
      const last: { became: JobRecord | null } = { became: null }
      const rec = await store.update(id, (cur) => {
        const next = change(cur)
        last.became = next !== null && !isFinal(cur.status) && isFinal(next.status) ? next : null
        return next
      })
      const owner = rec?.ownerKeyId
      if (rec !== null && last.became === rec && owner !== undefined) {
        await slots.release(owner, rec.id).catch((err: unknown) => onError(err, rec))
      }
      return rec
    },
  }
}

/** A slot is taken just before its record is written: a job this young without a record still holds it. */
export const SLOT_RECORD_GRACE_MS = 30_000

/**
 * Whether a listed job still holds its slot: its record exists and is pending or running, or it
 * has no record yet and its id (UUIDv7: creation time inside) is younger than SLOT_RECORD_GRACE_MS.
 */
export const holdsSlot =
  (jobs: Pick<JobStore, 'get'>, now: () => number = Date.now) =>
  async (jobId: string): Promise<boolean> => {
    const rec = await jobs.get(jobId)
    if (rec !== null) return !isFinal(rec.status)
    const t = jobIdTimeMs(jobId)
    return t !== null && now() - t < SLOT_RECORD_GRACE_MS
  }
