import { Readable } from 'node:stream'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { RESULT_KEY_RE } from '@tailor/proto'
import { ensureStreamMaxAge } from '../jobs/job-store-kv.ts'
import type { ResultReader } from './result-reader.ts'

export const RESULTS_BUCKET = 'results'

/**
 * Adapter: JetStream Object Store `results`. A range is served by skipping chunks of the object's
 * stream. With `ttlMs` (RESULT_RETENTION_S) the gateway owns the bucket's TTL: each result is
 * removed that long after it was stored, whoever created the bucket.
 */
export async function openObjectStoreResultReader(
  nc: NatsConnection,
  opts: { ttlMs?: number } = {},
): Promise<ResultReader> {
  const os: ObjectStore = await new Objm(nc).create(RESULTS_BUCKET)
  if (opts.ttlMs) await ensureStreamMaxAge(nc, `OBJ_${RESULTS_BUCKET}`, opts.ttlMs)
  return {
    async size(key) {
      if (!RESULT_KEY_RE.test(key)) return null
      const info = await os.info(key)
      return info === null || info.deleted ? null : info.size
    },
    async open(key, start, end) {
      const r = await os.get(key)
      if (r === null) throw new Error('result vanished')
      async function* slice(): AsyncGenerator<Uint8Array> {
        let pos = 0
        for await (const chunk of r!.data) {
          const from = Math.max(start - pos, 0)
          const to = Math.min(end + 1 - pos, chunk.length)
          pos += chunk.length
          if (to > from) yield chunk.subarray(from, to)
          if (pos > end) break
        }
      }
      return Readable.from(slice(), { objectMode: false })
    },
  }
}
