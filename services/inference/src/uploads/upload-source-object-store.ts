import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { pipeline } from 'node:stream/promises'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError, UPLOAD_ID_RE, UPLOAD_TTL_MS, UPLOADS_BUCKET } from '@tailor/proto'
import { uploadMissing, uploadTooLarge } from './upload-errors.ts'
import type { UploadSource } from './upload-source.ts'

/** Adapter (distributed): JetStream Object Store `uploads` (created with the same TTL as the gateway's). */
export async function openObjectStoreUploadSource(
  nc: NatsConnection,
  o: { now?: () => number } = {},
): Promise<UploadSource> {
  const now = o.now ?? Date.now
  const os: ObjectStore = await new Objm(nc).create(UPLOADS_BUCKET, {
    ttl: UPLOAD_TTL_MS * 1_000_000,
  })
  return {
    async read(id, dest, maxBytes, signal) {
      if (!UPLOAD_ID_RE.test(id)) throw uploadMissing(id)
      let r
      try {
        r = await os.get(id)
      } catch (err) {
        throw new AppError('service_unavailable', 'Reading the upload failed.', {
          cause: err,
          retryable: true,
        })
      }
      if (r === null || r.info.deleted) throw uploadMissing(id)
      const expires = Date.parse(r.info.metadata?.expires_at ?? '')
      if (!Number.isNaN(expires) && expires <= now()) {
        await r.data.cancel().catch(() => undefined)
        throw uploadMissing(id)
      }
      if (r.info.size > maxBytes) {
        await r.data.cancel().catch(() => undefined)
        throw uploadTooLarge(maxBytes)
      }
      try {
        await pipeline(
          Readable.fromWeb(r.data as NodeReadableStream<Uint8Array>),
          createWriteStream(dest),
          { signal },
        )
        const err = await r.error
        if (err != null) {
          throw new AppError('service_unavailable', 'Reading the upload failed.', {
            cause: err,
            retryable: true,
          })
        }
      } catch (err) {
        await rm(dest, { force: true })
        throw err
      }
      return {
        bytes: r.info.size,
        contentType: r.info.metadata?.content_type ?? 'application/octet-stream',
      }
    },
  }
}
