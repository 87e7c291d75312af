/**
 * Port: reads an upload (`tailor://uploads/<id>`) into the job's work dir, from the storage the
 * gateway wrote it to (JetStream Object Store `uploads` distributed, the data dir embedded); never
 * over HTTP. Throws AppError `input_fetch_failed` when the upload is missing or expired and
 * `file_size_too_large` past `maxBytes` (nothing is left at `dest` then).
 */
export interface UploadSource {
  read(
    id: string,
    dest: string,
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<{ bytes: number; contentType: string }>
}
