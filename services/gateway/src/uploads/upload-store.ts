import type { UploadMeta } from '@tailor/proto'

/**
 * Port: where uploads are written (JetStream Object Store `uploads` distributed, the data dir
 * embedded). Inference reads the same storage through its own UploadSource port.
 */
export interface UploadStore {
  /**
   * Streams `body` into storage under `meta.id`. Past `maxBytes` it stops reading, keeps nothing
   * and throws AppError `file_size_too_large`. Resolves with the stored metadata (bytes filled in).
   */
  put(meta: Omit<UploadMeta, 'bytes'>, body: ReadableStream<Uint8Array>, maxBytes: number): Promise<UploadMeta>
  /** The upload's metadata, or null when there is none or it has expired. */
  info(id: string): Promise<UploadMeta | null>
  close(): Promise<void>
}
