import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { JobRecord, JobStore } from './job-store.ts'

const ID_RE = /^[0-9a-f-]{36}$/

/**
 * Adapter: one JSON file per job in `<dir>` (embedded mode), cached in memory. Writes are atomic
 * (temp file + rename) and serialised per process, so a restart loses nothing that was answered.
 */
export async function openFileJobStore(dir: string): Promise<JobStore> {
  await mkdir(dir, { recursive: true })
  const cache = new Map<string, JobRecord>()
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = tail.then(f)
    tail = next.catch(() => undefined)
    return next
  }
  const file = (id: string): string => join(dir, `${id}.json`)
  const write = async (rec: JobRecord): Promise<void> => {
    const tmp = `${file(rec.id)}.tmp`
    await writeFile(tmp, JSON.stringify(rec))
    await rename(tmp, file(rec.id))
    cache.set(rec.id, rec)
  }
  const read = async (id: string): Promise<JobRecord | null> => {
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
      return recs.filter((r): r is JobRecord => r !== null && (r.status === 'pending' || r.status === 'running'))
    },
    close: () => serial(async () => undefined),
  }
}
