import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { AppError } from '@tailor/proto'
import { isApiKeyRecord, type ApiKeyRecord } from './api-key.ts'
import type { KeyStore } from './key-store.ts'
import { sharedRuns } from './shared-runs.ts'

export const KEYS_FILE = 'api-keys.json'
/** How often a watcher looks at the file (a revoke reaches the gateway within this, well under 1 s). */
export const KEYS_FILE_POLL_MS = 250
const LOCK_WAIT_MS = 5_000
/** A lock older than this was left by a process that died mid-write. */
const LOCK_STALE_MS = 30_000

/**
 * Adapter: every key record in one JSON file, `<dataDir>/api-keys.json` (mode 0600), embedded
 * mode. Writes take a lock file (O_EXCL) so `tailor keys` and a running gateway never lose each
 * other's changes, then write a temp file and rename it over the old one (atomic). Watchers poll
 * the file's stat every KEYS_FILE_POLL_MS.
 */
export function openFileKeyStore(dataDir: string, o: { pollMs?: number } = {}): KeyStore {
  const path = join(dataDir, KEYS_FILE)
  const lock = `${path}.lock`
  const read = async (): Promise<ApiKeyRecord[]> => {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    let doc: unknown
    try {
      doc = JSON.parse(text)
    } catch (err) {
      throw new AppError('service_unavailable', `${path} is not valid JSON`, { cause: err })
    }
    const keys = (doc as { keys?: unknown } | null)?.keys
    if (!Array.isArray(keys)) {
      throw new AppError('service_unavailable', `${path} has no "keys" list`)
    }
    return keys.filter(isApiKeyRecord)
  }
  const locked = async <T>(f: () => Promise<T>): Promise<T> => {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    const deadline = Date.now() + LOCK_WAIT_MS
    for (;;) {
      try {
        const h = await open(lock, 'wx', 0o600)
        await h.close()
        break
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        const st = await stat(lock).catch(() => null)
        if (st !== null && Date.now() - st.mtimeMs > LOCK_STALE_MS) await rm(lock, { force: true })
        else if (Date.now() > deadline) {
          throw new AppError('service_unavailable', `${lock} is held by another process`, {
            retryable: true,
          })
        } else await sleep(20)
      }
    }
    try {
      return await f()
    } finally {
      await rm(lock, { force: true })
    }
  }
  const write = async (keys: ApiKeyRecord[]): Promise<void> => {
    const tmp = `${path}.${process.pid}.tmp`
    await writeFile(tmp, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 })
    await rename(tmp, path)
  }
  return {
    create: (rec) =>
      locked(async () => {
        const keys = await read()
        if (keys.some((k) => k.id === rec.id)) {
          throw new AppError('invalid_parameter', `API key ${rec.id} already exists`)
        }
        await write([...keys, rec])
      }),
    list: read,
    update: (id, change) =>
      locked(async () => {
        const keys = await read()
        const i = keys.findIndex((k) => k.id === id)
        if (i < 0) return null
        const next = change(keys[i]!)
        if (next === null) return keys[i]!
        keys[i] = next
        await write(keys)
        return next
      }),
    async watch(onChange, onError) {
      let last = ''
      let stopped = false
      const check = async (): Promise<void> => {
        const st = await stat(path).catch(() => null)
        const sig = st === null ? 'none' : `${st.ino}:${st.mtimeMs}:${st.size}`
        if (sig === last) return
        const keys = await read()
        last = sig
        if (!stopped) onChange(keys)
      }
      await check()
      // The poll and catchUp share runs: a catchUp is answered by a stat made after it was asked.
      const run = sharedRuns(check)
      const timer = setInterval(() => {
        run().catch(onError)
      }, o.pollMs ?? KEYS_FILE_POLL_MS)
      timer.unref()
      return {
        stop() {
          stopped = true
          clearInterval(timer)
        },
        catchUp: run,
      }
    },
    async close() {},
  }
}
