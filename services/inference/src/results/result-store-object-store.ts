import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import type { ResultStore } from './result-store.ts'

export const RESULTS_BUCKET = 'results'

/** Adapter: JetStream Object Store `results` (chunked, so results may exceed the message size limit). */
export async function openObjectStoreResultStore(nc: NatsConnection): Promise<ResultStore> {
  const os: ObjectStore = await new Objm(nc).create(RESULTS_BUCKET)
  return {
    async put(key, path, contentType) {
      const { size } = await stat(path)
      try {
        const info = await os.put(
          { name: key, description: contentType },
          Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
        )
        return { bytes: info.size || size }
      } catch (err) {
        throw new AppError('service_unavailable', 'storing the result failed', { cause: err, retryable: true })
      }
    },
  }
}
