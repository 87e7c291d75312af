import { createWriteStream } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AppError, UPLOAD_ID_RE, UPLOAD_TTL_MS, type UploadMeta } from '@tailor/proto'
import { limitStream } from './limit-stream.ts'
import { storageFull, usageOf, type UploadStore } from './upload-store.ts'

/** How often the embedded data dir is swept of expired uploads. */
export const UPLOAD_SWEEP_INTERVAL_MS = 5 * 60 * 1000

/**
 * Adapter (embedded): `<dir>/<id>` holds the bytes, `<dir>/<id>.json` the metadata, written after
 * the bytes are complete (a reader that finds the metadata finds the whole file). Expired uploads
 * are refused at once and removed by a sweep every UPLOAD_SWEEP_INTERVAL_MS (and at open).
 */
export async function openFileUploadStore(
  dir: string,
  o: {
    sweepIntervalMs?: number
    now?: () => number
    /** UPLOADS_MAX_BYTES: the directory's cap, every key together. */ maxTotalBytes?: number
  } = {},
): Promise<UploadStore> {
  const now = o.now ?? Date.now
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const readMeta = async (id: string): Promise<UploadMeta | null> => {
    if (!UPLOAD_ID_RE.test(id)) return null
    try {
      return JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as UploadMeta
    } catch {
      return null
    }
  }
  const sweep = async (): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const id = name.split('.')[0]!
      const meta = name.endsWith('.json') ? await readMeta(id) : null
      if (meta !== null) {
        if (Date.parse(meta.expiresAt) <= now()) {
          await rm(join(dir, `${id}.json`), { force: true })
          await rm(join(dir, id), { force: true })
        }
        continue
      }
      if (name.endsWith('.json')) continue
      // Bytes without metadata: an upload being written, or one whose writer died. Older than the TTL → gone.
      const st = await stat(join(dir, name)).catch(() => null)
      if (st !== null && now() - st.mtimeMs > UPLOAD_TTL_MS && (await readMeta(id)) === null) {
        await rm(join(dir, name), { force: true })
      }
    }
  }
  const metas = async (): Promise<UploadMeta[]> => {
    const out: UploadMeta[] = []
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json')) continue
      const m = await readMeta(name.slice(0, -'.json'.length))
      if (m !== null) out.push(m)
    }
    return out
  }
  /** Bytes in the directory (uploads, and those being written). */
  const totalBytes = async (): Promise<number> => {
    let n = 0
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      n += (await stat(join(dir, name)).catch(() => null))?.size ?? 0
    }
    return n
  }
  await sweep()
  const timer = setInterval(
    () => void sweep().catch(() => undefined),
    o.sweepIntervalMs ?? UPLOAD_SWEEP_INTERVAL_MS,
  )
  timer.unref()
  return {
    async put(m, body, maxBytes) {
      if (!UPLOAD_ID_RE.test(m.id)) throw new Error(`invalid upload id ${m.id}`)
      const tmp = join(dir, `${m.id}.partial`)
      // The directory's cap: what is there plus this upload's own limit must fit (the bytes are
      // counted as they come; an upload that would pass the cap is cut off and discarded).
      const room = o.maxTotalBytes === undefined ? Infinity : o.maxTotalBytes - (await totalBytes())
      if (room <= 0) throw storageFull('uploads')
      const limited = limitStream(body, Math.min(maxBytes, room))
      const out = createWriteStream(tmp, { mode: 0o600 })
      try {
        await pipeline(
          Readable.fromWeb(limited.stream as import('node:stream/web').ReadableStream<Uint8Array>),
          out,
        )
        await rename(tmp, join(dir, m.id))
      } catch (err) {
        // pipeline rejects as soon as the body fails, while the file may still be opening: remove
        // it only once the write stream has closed, or the open creates it after the rm.
        if (!out.closed) await new Promise<void>((res) => out.once('close', () => res()))
        await rm(tmp, { force: true })
        if (room < maxBytes && err instanceof AppError && err.code === 'file_size_too_large') {
          throw storageFull('uploads', err)
        }
        throw err
      }
      const meta: UploadMeta = { ...m, bytes: limited.bytes() }
      await writeFile(join(dir, `${m.id}.json`), JSON.stringify(meta), { mode: 0o600 })
      return meta
    },
    async info(id) {
      const meta = await readMeta(id)
      return meta === null || Date.parse(meta.expiresAt) <= now() ? null : meta
    },
    async usage(ownerKeyId) {
      return usageOf(await metas(), ownerKeyId, now())
    },
    async remove(id) {
      if (!UPLOAD_ID_RE.test(id)) return
      await rm(join(dir, `${id}.json`), { force: true })
      await rm(join(dir, id), { force: true })
    },
    async close() {
      clearInterval(timer)
    },
  }
}
