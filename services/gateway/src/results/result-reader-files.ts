import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { RESULT_KEY_RE } from '@tailor/proto'
import type { ResultReader } from './result-reader.ts'

/** Adapter: results are files `<dir>/<key>` (embedded mode). Keys are validated, so no traversal. */
export function createFileResultReader(dir: string): ResultReader {
  const path = (key: string): string | null => (RESULT_KEY_RE.test(key) ? join(dir, key) : null)
  return {
    async size(key) {
      const p = path(key)
      if (p === null) return null
      try {
        const s = await stat(p)
        return s.isFile() ? s.size : null
      } catch {
        return null
      }
    },
    async open(key, start, end) {
      const p = path(key)
      if (p === null) throw new Error('invalid result key')
      return createReadStream(p, { start, end })
    },
  }
}
