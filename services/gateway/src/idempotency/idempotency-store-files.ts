import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { IdempotencyClaim, IdempotencyStore, StoredClaim } from './idempotency-store.ts'

const KEY_RE = /^[0-9a-f]{64}$/
const SWEEP_EVERY_MS = 60 * 60 * 1000

interface FileEntry {
  claim: IdempotencyClaim
  revision: number
  /** Epoch ms after which the claim is forgotten. */
  expiresAt: number
}

/**
 * Adapter (embedded mode): one file per claim in `<dir>`, written atomically; every operation is
 * serialised in this process (the only writer). Expired claims count as absent and are swept at
 * open and hourly.
 */
export async function openFileIdempotencyStore(
  dir: string,
  o: { ttlMs: number; now?: () => number },
): Promise<IdempotencyStore> {
  const now = o.now ?? Date.now
  await mkdir(dir, { recursive: true, mode: 0o700 })
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = tail.then(f)
    tail = next.catch(() => undefined)
    return next
  }
  const file = (key: string): string => {
    if (!KEY_RE.test(key)) throw new Error('idempotency storage keys are sha256 hex digests')
    return join(dir, `${key}.json`)
  }
  const read = async (key: string): Promise<FileEntry | null> => {
    try {
      const e = JSON.parse(await readFile(file(key), 'utf8')) as FileEntry
      return e.expiresAt > now() ? e : null
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }
  const write = async (key: string, e: FileEntry): Promise<void> => {
    await writeFile(`${file(key)}.tmp`, JSON.stringify(e), { mode: 0o600 })
    await rename(`${file(key)}.tmp`, file(key))
  }
  const sweep = (): Promise<void> =>
    serial(async () => {
      for (const name of await readdir(dir)) {
        if (!name.endsWith('.json')) continue
        const key = name.slice(0, -'.json'.length)
        if (KEY_RE.test(key) && (await read(key).catch(() => null)) === null) {
          await rm(join(dir, name), { force: true })
        }
      }
    })
  await sweep()
  const timer = setInterval(() => void sweep().catch(() => undefined), SWEEP_EVERY_MS)
  timer.unref()
  const stored = (e: FileEntry): StoredClaim => ({ ...e.claim, revision: e.revision })
  return {
    claim: (key, claim) =>
      serial(async () => {
        const found = await read(key)
        if (found !== null) return stored(found)
        await write(key, { claim, revision: 1, expiresAt: now() + o.ttlMs })
        return null
      }),
    replace: (key, found, next) =>
      serial(async () => {
        const cur = await read(key)
        if (cur === null || cur.revision !== found.revision) return false
        await write(key, { claim: next, revision: cur.revision + 1, expiresAt: now() + o.ttlMs })
        return true
      }),
    release: (key, jobId) =>
      serial(async () => {
        const cur = await read(key)
        if (cur?.claim.jobId === jobId) await rm(file(key), { force: true })
      }),
    close: () =>
      serial(async () => {
        clearInterval(timer)
      }),
  }
}
