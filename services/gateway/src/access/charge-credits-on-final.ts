import { isFinal, type JobRecord, type JobStore } from '../jobs/job-store.ts'
import type { KeyStore } from './key-store.ts'

/**
 * Wraps the job store so that a record that becomes `completed` charges its owner one credit
 * (Pixelcut charges on success: a failed or cancelled job costs nothing), whoever made the change.
 * Only keys with a budget (`tailor keys create --credits N`) are charged; the key record's
 * `creditsUsed` is raised by compare-and-set, so concurrent completions each count once, and every
 * gateway sees the new balance through the key store's watch. A failed charge is reported to
 * `onError` (the job is not undone).
 */
export function chargeCreditsOnFinal<S extends JobStore>(
  store: S,
  keys: KeyStore,
  onError: (err: unknown, rec: JobRecord) => void,
): S {
  return {
    ...store,
    async update(id: string, change: (cur: JobRecord) => JobRecord | null) {
      // The store may call `change` more than once (compare-and-set retries): the last call counts.
      const last: { completed: JobRecord | null } = { completed: null }
      const rec = await store.update(id, (cur) => {
        const next = change(cur)
        last.completed =
          next !== null && !isFinal(cur.status) && next.status === 'completed' ? next : null
        return next
      })
      const owner = rec?.ownerKeyId
      if (rec !== null && last.completed === rec && owner !== undefined) {
        await keys
          .update(owner, (k) =>
            k.credits === undefined ? null : { ...k, creditsUsed: (k.creditsUsed ?? 0) + 1 },
          )
          .catch((err: unknown) => onError(err, rec))
      }
      return rec
    },
  }
}
