import { AppError } from '@tailor/proto'

export const tooLargeUpload = (maxBytes: number): AppError =>
  new AppError('file_size_too_large', `The upload is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MB limit for its media type.`)

/**
 * Passes chunks through, counting; errors with `file_size_too_large` as soon as more than
 * `maxBytes` went by (the adapter then discards what it stored). `bytes()` is the count so far.
 */
export function limitStream(body: ReadableStream<Uint8Array>, maxBytes: number): { stream: ReadableStream<Uint8Array>; bytes(): number } {
  let n = 0
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctrl) {
        n += chunk.byteLength
        if (n > maxBytes) ctrl.error(tooLargeUpload(maxBytes))
        else ctrl.enqueue(chunk)
      },
    }),
  )
  return { stream, bytes: () => n }
}
