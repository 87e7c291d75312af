import { createReadStream, createWriteStream } from 'node:fs'
import { readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { UPLOAD_ID_RE, type UploadMeta } from '@tailor/proto'
import { uploadMissing, uploadTooLarge } from './upload-errors.ts'
import type { UploadSource } from './upload-source.ts'

/** Adapter (embedded): `<dir>/<id>` and `<dir>/<id>.json` as the gateway's file upload store writes them. */
export function createFileUploadSource(dir: string, o: { now?: () => number } = {}): UploadSource {
  const now = o.now ?? Date.now
  return {
    async read(id, dest, maxBytes, signal) {
      if (!UPLOAD_ID_RE.test(id)) throw uploadMissing(id)
      let meta: UploadMeta
      try {
        meta = JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as UploadMeta
      } catch (err) {
        throw Object.assign(uploadMissing(id), { cause: err })
      }
      if (Date.parse(meta.expiresAt) <= now()) throw uploadMissing(id)
      const src = join(dir, id)
      const st = await stat(src).catch(() => null)
      if (st === null) throw uploadMissing(id)
      if (st.size > maxBytes) throw uploadTooLarge(maxBytes)
      try {
        await pipeline(createReadStream(src), createWriteStream(dest), { signal })
      } catch (err) {
        await rm(dest, { force: true })
        throw err
      }
      return { bytes: st.size, contentType: meta.contentType }
    },
  }
}
