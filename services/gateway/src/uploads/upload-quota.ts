import { AppError, type UploadMeta } from '@tailor/proto'
import type { UploadStore, UploadUsage } from './upload-store.ts'

/** UPLOAD_QUOTA_BYTES / UPLOAD_QUOTA_COUNT: what one key's unexpired uploads may hold. */
export interface UploadQuota {
  bytes: number
  count: number
}

const MIB = 1024 * 1024

export function uploadQuotaExceeded(held: UploadUsage, quota: UploadQuota): AppError {
  const when =
    held.firstExpiresAt === null ? '' : ` The first of them expires at ${held.firstExpiresAt}.`
  return new AppError(
    'upload_quota_exceeded',
    `This API key's unexpired uploads (${held.count}, ${(held.bytes / MIB).toFixed(1)} MB) leave no room for this one: the quota is ${quota.count} uploads and ${(quota.bytes / MIB).toFixed(1)} MB per key, each kept one hour.${when}`,
  )
}

/**
 * Stores an upload within its key's quota: checked before (with the bytes announced, e.g.
 * Content-Length) and again after the write, which is deleted if the key went past its quota
 * meanwhile (uploads of one key sent at once), so a key never holds more than its quota.
 */
export async function putWithinQuota(
  store: UploadStore,
  quota: UploadQuota,
  meta: Omit<UploadMeta, 'bytes'>,
  body: ReadableStream<Uint8Array>,
  o: { maxBytes: number; announcedBytes: number; onStored?: (m: UploadMeta) => void },
): Promise<UploadMeta> {
  const before = await store.usage(meta.ownerKeyId)
  if (before.count + 1 > quota.count || before.bytes + o.announcedBytes > quota.bytes) {
    throw uploadQuotaExceeded(before, quota)
  }
  const stored = await store.put(meta, body, o.maxBytes)
  const after = await store.usage(meta.ownerKeyId)
  if (after.count > quota.count || after.bytes > quota.bytes) {
    await store.remove(stored.id)
    throw uploadQuotaExceeded(
      { ...after, count: after.count - 1, bytes: after.bytes - stored.bytes },
      quota,
    )
  }
  return stored
}
