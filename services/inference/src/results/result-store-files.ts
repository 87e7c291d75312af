import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { RESULT_KEY_RE } from '@tailor/proto'
import { resultsFull, resultTooLarge, type ResultStore } from './result-store.ts'

/** Bytes of the regular files under `dir` (symbolic links are not followed). */
async function treeBytes(dir: string): Promise<number> {
  let n = 0
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name)
    if (e.isDirectory()) n += await treeBytes(p)
    else if (e.isFile()) n += (await stat(p).catch(() => null))?.size ?? 0
  }
  return n
}

/**
 * Adapter: results are files `<dir>/<key>`, written atomically (copy to a temp name, rename).
 * `maxResultBytes` (RESULT_MAX_BYTES) caps one result, `maxTotalBytes` (RESULTS_MAX_BYTES) the
 * directory, every key's results together.
 */
export function createFileResultStore(
  dir: string,
  o: { maxResultBytes?: number; maxTotalBytes?: number } = {},
): ResultStore {
  return {
    async put(key, path) {
      if (!RESULT_KEY_RE.test(key)) throw new Error(`invalid result key ${key}`)
      const { size } = await stat(path)
      if (o.maxResultBytes !== undefined && size > o.maxResultBytes) {
        throw resultTooLarge(o.maxResultBytes)
      }
      const dest = join(dir, key)
      if (o.maxTotalBytes !== undefined) {
        const earlier = (await stat(dest).catch(() => null))?.size ?? 0
        if ((await treeBytes(dir)) - earlier + size > o.maxTotalBytes) throw resultsFull()
      }
      await mkdir(dirname(dest), { recursive: true })
      const tmp = `${dest}.partial`
      try {
        await copyFile(path, tmp)
        await rename(tmp, dest)
      } catch (err) {
        await rm(tmp, { force: true })
        throw err
      }
      return { bytes: (await stat(dest)).size }
    },
  }
}
