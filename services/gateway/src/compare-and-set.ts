import { AppError } from '@tailor/proto'

const CAS_ATTEMPTS = 20

/**
 * The read → change → conditional write loop of a record kept in a KV bucket (job records, API
 * keys): `write` must fail when the revision moved, and the loop then reads again. `change`
 * returns the new record, or null for "no change". Null when the record does not exist.
 */
export async function compareAndSet<T>(
  read: () => Promise<{ rec: T; revision: number } | null>,
  write: (next: T, revision: number) => Promise<unknown>,
  change: (current: T) => T | null,
  what: string,
): Promise<T | null> {
  for (let i = 0; i < CAS_ATTEMPTS; i++) {
    const cur = await read()
    if (cur === null) return null
    const next = change(cur.rec)
    if (next === null) return cur.rec
    try {
      await write(next, cur.revision)
      return next
    } catch (err) {
      if (i === CAS_ATTEMPTS - 1) {
        throw new AppError('service_unavailable', `${what} kept changing under us`, {
          cause: err,
          retryable: true,
        })
      }
    }
  }
  return null
}
