import { AppError, type UploadMeta } from '@tailor/proto'

export interface UploadUsage {
  count: number
  bytes: number
  firstExpiresAt: string | null
}

/** Sums the unexpired uploads of one key. */
export function usageOf(
  metas: Iterable<UploadMeta>,
  ownerKeyId: string,
  nowMs: number,
): UploadUsage {
  const u: UploadUsage = { count: 0, bytes: 0, firstExpiresAt: null }
  for (const m of metas) {
    if (m.ownerKeyId !== ownerKeyId || Date.parse(m.expiresAt) <= nowMs) continue
    u.count++
    u.bytes += m.bytes
    if (u.firstExpiresAt === null || m.expiresAt < u.firstExpiresAt) u.firstExpiresAt = m.expiresAt
  }
  return u
}

/** The error of a store at its byte cap (UPLOADS_MAX_BYTES / RESULTS_MAX_BYTES). */
export const storageFull = (what: string, cause?: unknown): AppError =>
  new AppError(
    'storage_full',
    `The service has no room for more ${what} right now (its storage cap is reached); try again later.`,
    { cause, retryable: true },
  )

/** True for JetStream's refusal of a write past a stream's max_bytes. */
export const isMaxBytesError = (err: unknown): boolean => {
  for (let e: unknown = err; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    if (
      /maximum bytes|insufficient (storage|resources)/i.test(
        String((e as { message?: unknown }).message ?? ''),
      )
    ) {
      return true
    }
    if (e === (e as { cause?: unknown }).cause) break
  }
  return false
}

/**
 * Port: where uploads are written (JetStream Object Store `uploads` distributed, the data dir
 * embedded). Inference reads the same storage through its own UploadSource port.
 */
export interface UploadStore {
  /**
   * Streams `body` into storage under `meta.id`. Past `maxBytes` it stops reading, keeps nothing
   * and throws AppError `file_size_too_large`. Resolves with the stored metadata (bytes filled in).
   */
  put(
    meta: Omit<UploadMeta, 'bytes'>,
    body: ReadableStream<Uint8Array>,
    maxBytes: number,
  ): Promise<UploadMeta>
  /** The upload's metadata, or null when there is none or it has expired. */
  info(id: string): Promise<UploadMeta | null>
  /** What one key holds: its unexpired uploads' count and bytes, and when the first of them expires (null: none). */
  usage(ownerKeyId: string): Promise<UploadUsage>
  /** Deletes an upload (one written past its key's quota). */
  remove(id: string): Promise<void>
  close(): Promise<void>
}
