import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import {
  AppError,
  UPLOAD_ID_RE,
  UPLOAD_TTL_MS,
  UPLOADS_BUCKET,
  type UploadMeta,
} from '@tailor/proto'
import { limitStream } from './limit-stream.ts'
import { isMaxBytesError, storageFull, usageOf, type UploadStore } from './upload-store.ts'

/** Object metadata keys (strings only) carrying UploadMeta. */
const toMetadata = (m: UploadMeta): Record<string, string> => ({
  owner: m.ownerKeyId,
  content_type: m.contentType,
  bytes: String(m.bytes),
  created_at: m.createdAt,
  expires_at: m.expiresAt,
})

export function uploadMetaFrom(
  id: string,
  md: Record<string, string> | undefined,
  size: number,
): UploadMeta | null {
  if (
    md === undefined ||
    md.owner === undefined ||
    md.content_type === undefined ||
    md.expires_at === undefined
  ) {
    return null
  }
  return {
    id,
    ownerKeyId: md.owner,
    contentType: md.content_type,
    bytes: size,
    createdAt: md.created_at ?? '',
    expiresAt: md.expires_at,
  }
}

/**
 * Adapter (distributed): JetStream Object Store `uploads` with a TTL of one hour (the server
 * removes expired uploads). The metadata is stored with the object; a failed or oversized put
 * leaves nothing (the client purges the chunks it wrote).
 */
export async function openObjectStoreUploadStore(
  nc: NatsConnection,
  o: { now?: () => number } = {},
): Promise<UploadStore> {
  const now = o.now ?? Date.now
  const os: ObjectStore = await new Objm(nc).create(UPLOADS_BUCKET, {
    ttl: UPLOAD_TTL_MS * 1_000_000,
  })
  return {
    async put(m, body, maxBytes) {
      if (!UPLOAD_ID_RE.test(m.id)) throw new Error(`invalid upload id ${m.id}`)
      const limited = limitStream(body, maxBytes)
      try {
        // Metadata is written with the object's final record, so bytes is known only after; it is
        // re-read from the object's size by info().
        const info = await os.put(
          { name: m.id, description: m.contentType, metadata: toMetadata({ ...m, bytes: 0 }) },
          limited.stream,
        )
        return { ...m, bytes: info.size }
      } catch (err) {
        if (err instanceof AppError) throw err
        const cause = (err as { cause?: unknown }).cause
        if (cause instanceof AppError) throw cause
        // The bucket is at UPLOADS_MAX_BYTES (max_bytes, discard new): the chunks written are purged.
        if (isMaxBytesError(err)) throw storageFull('uploads', err)
        throw new AppError('service_unavailable', 'Storing the upload failed; try again.', {
          cause: err,
          retryable: true,
        })
      }
    },
    async info(id) {
      if (!UPLOAD_ID_RE.test(id)) return null
      const info = await os.info(id)
      if (info === null || info.deleted) return null
      const meta = uploadMetaFrom(id, info.metadata, info.size)
      return meta === null || Date.parse(meta.expiresAt) <= now() ? null : meta
    },
    async usage(ownerKeyId) {
      const metas: UploadMeta[] = []
      for (const info of await os.list()) {
        const meta = info.deleted ? null : uploadMetaFrom(info.name, info.metadata, info.size)
        if (meta !== null) metas.push(meta)
      }
      return usageOf(metas, ownerKeyId, now())
    },
    async remove(id) {
      if (UPLOAD_ID_RE.test(id)) await os.delete(id)
    },
    async close() {},
  }
}
