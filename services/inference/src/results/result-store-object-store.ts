import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import { resultsFull, resultTooLarge, type ResultStore } from './result-store.ts'

export const RESULTS_BUCKET = 'results'

/** JetStream's refusal of a write past the bucket's max_bytes (RESULTS_MAX_BYTES, set by the gateway). */
const isMaxBytes = (err: unknown): boolean => {
  for (
    let e = err, i = 0;
    e !== undefined && e !== null && i < 5;
    e = (e as { cause?: unknown }).cause, i++
  ) {
    if (
      /maximum bytes|insufficient (storage|resources)/i.test(
        String((e as { message?: unknown }).message ?? ''),
      )
    ) {
      return true
    }
  }
  return false
}

/**
 * Adapter: JetStream Object Store `results` (chunked, so results may exceed the message size
 * limit). A result over `maxResultBytes` (RESULT_MAX_BYTES) is refused before it is sent; a full
 * bucket fails storage_full (retryable: results expire and make room).
 */
export async function openObjectStoreResultStore(
  nc: NatsConnection,
  o: { maxResultBytes?: number } = {},
): Promise<ResultStore> {
  const os: ObjectStore = await new Objm(nc).create(RESULTS_BUCKET)
  return {
    async put(key, path, contentType) {
      const { size } = await stat(path)
      if (o.maxResultBytes !== undefined && size > o.maxResultBytes) {
        throw resultTooLarge(o.maxResultBytes)
      }
      try {
        const info = await os.put(
          { name: key, description: contentType },
          Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
        )
        return { bytes: info.size || size }
      } catch (err) {
        if (isMaxBytes(err)) throw resultsFull(err)
        throw new AppError('service_unavailable', 'storing the result failed', {
          cause: err,
          retryable: true,
        })
      }
    },
  }
}
