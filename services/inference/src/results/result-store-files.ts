import { copyFile, mkdir, rename, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { RESULT_KEY_RE } from '@tailor/proto'
import type { ResultStore } from './result-store.ts'

/** Adapter: results are files `<dir>/<key>`, written atomically (copy to a temp name, rename). */
export function createFileResultStore(dir: string): ResultStore {
  return {
    async put(key, path) {
      if (!RESULT_KEY_RE.test(key)) throw new Error(`invalid result key ${key}`)
      const dest = join(dir, key)
      await mkdir(dirname(dest), { recursive: true })
      const tmp = `${dest}.partial`
      await copyFile(path, tmp)
      await rename(tmp, dest)
      return { bytes: (await stat(dest)).size }
    },
  }
}
