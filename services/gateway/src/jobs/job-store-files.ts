import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { JobRecord, JobStore } from './job-store.ts'
import type { JobWatcher } from './job-watch.ts'

const ID_RE = /^[0-9a-f-]{36}$/

/** How often expired records are deleted (they are hidden from `get` at once). */
export const JOB_SWEEP_INTERVAL_MS = 60_000

/**
 * Adapter: one JSON file per job in `<dir>` (embedded mode), cached in memory. Writes are atomic
 * (temp file + rename) and serialised per process, so a restart loses nothing that was answered.
 * With `retentionMs` (JOB_RETENTION_S) a record expires that long after its last change, as in
 * the KV bucket: `get` no longer sees it and a sweep (at open, then every `sweepIntervalMs`)
 * deletes its file. Temp files a crash left mid-write are removed at open. `watch` is fed by this
 * store's own writes (one process owns the directory).
 */
export async function openFileJobStore(
  dir: string,
  o: { retentionMs?: number; sweepIntervalMs?: number; now?: () => number } = {},
): Promise<JobStore & JobWatcher> {
  await mkdir(dir, { recursive: true })
  for (const n of await readdir(dir)) {
    if (n.endsWith('.tmp')) await rm(join(dir, n), { force: true })
  }
  const now = o.now ?? Date.now
  const expired = (r: JobRecord): boolean =>
    o.retentionMs !== undefined && Date.parse(r.updatedAt) + o.retentionMs <= now()
  const cache = new Map<string, JobRecord>()
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = tail.then(f)
    tail = next.catch(() => undefined)
    return next
  }
  const file = (id: string): string => join(dir, `${id}.json`)
  /** Listeners of `watch`, by job id. */
  const listeners = new Map<string, Set<(rec: JobRecord) => void>>()
  const write = async (rec: JobRecord): Promise<void> => {
    const tmp = `${file(rec.id)}.tmp`
    await writeFile(tmp, JSON.stringify(rec))
    await rename(tmp, file(rec.id))
    cache.set(rec.id, rec)
    for (const l of listeners.get(rec.id) ?? []) l(rec)
  }
  const readAny = async (id: string): Promise<JobRecord | null> => {
    if (!ID_RE.test(id)) return null
    const hit = cache.get(id)
    if (hit !== undefined) return hit
    try {
      const rec = JSON.parse(await readFile(file(id), 'utf8')) as JobRecord
      cache.set(id, rec)
      return rec
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }
  const read = async (id: string): Promise<JobRecord | null> => {
    const rec = await readAny(id)
    return rec === null || expired(rec) ? null : rec
  }
  const sweep = (): Promise<void> =>
    serial(async () => {
      if (o.retentionMs === undefined) return
      for (const n of await readdir(dir)) {
        if (!n.endsWith('.json')) continue
        const id = n.slice(0, -'.json'.length)
        const rec = await readAny(id).catch(() => null)
        if (rec !== null && expired(rec)) {
          await rm(file(id), { force: true })
          cache.delete(id)
        }
      }
    })
  await sweep()
  const timer =
    o.retentionMs === undefined
      ? null
      : setInterval(
          () => void sweep().catch(() => undefined),
          o.sweepIntervalMs ?? JOB_SWEEP_INTERVAL_MS,
        )
  timer?.unref()
  return {
    create: (rec) => serial(() => write(rec)),
    get: (id) => read(id),
    update: (id, change) =>
      serial(async () => {
        const cur = await read(id)
        if (cur === null) return null
        const next = change(cur)
        if (next === null) return cur
        await write(next)
        return next
      }),
    async listUnfinished() {
      const names = (await readdir(dir)).filter((n) => n.endsWith('.json'))
      const recs = await Promise.all(names.map((n) => read(n.slice(0, -'.json'.length))))
      return recs.filter(
        (r): r is JobRecord => r !== null && (r.status === 'pending' || r.status === 'running'),
      )
    },
    async *watch(id, signal) {
      const queue: JobRecord[] = []
      let wake: (() => void) | null = null
      const onChange = (rec: JobRecord): void => {
        queue.push(rec)
        wake?.()
      }
      const onAbort = (): void => wake?.()
      const set = listeners.get(id) ?? new Set()
      listeners.set(id, set)
      set.add(onChange) // before the read: no change can fall between the two
      signal.addEventListener('abort', onAbort)
      try {
        let last = await read(id)
        if (last !== null && !signal.aborted) yield last
        while (!signal.aborted) {
          const next = queue.shift()
          if (next === undefined) {
            await new Promise<void>((resolve) => (wake = resolve))
            wake = null
          } else if (next !== last) {
            // (a write between subscribing and the read is the very record the read returned)
            last = next
            yield next
          }
        }
      } finally {
        set.delete(onChange)
        if (set.size === 0) listeners.delete(id)
        signal.removeEventListener('abort', onAbort)
      }
    },
    close: () =>
      serial(async () => {
        if (timer !== null) clearInterval(timer)
      }),
  }
}
