import { AppError } from '@tailor/proto'

/**
 * After the limit is passed, up to this much more of the body is read and discarded, so that a
 * client still sending (a chunked upload has no Content-Length to refuse up front) gets the 400
 * answer instead of a reset connection; beyond it the body is cancelled (the connection closes).
 */
export const DRAIN_AFTER_LIMIT_BYTES = 16 * 1024 * 1024

export const tooLargeUpload = (maxBytes: number): AppError =>
  new AppError(
    'file_size_too_large',
    `The upload is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MB limit for its media type.`,
  )

/**
 * Passes the body's chunks through, counting; errors with `file_size_too_large` as soon as more
 * than `maxBytes` went by (the adapter then discards what it stored) and drains the rest of the
 * body in the background (DRAIN_AFTER_LIMIT_BYTES). A body that breaks off errors with
 * `invalid_request_body`. `bytes()` is the count so far.
 */
export function limitStream(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  drainBytes = DRAIN_AFTER_LIMIT_BYTES,
): { stream: ReadableStream<Uint8Array>; bytes(): number } {
  const reader = body.getReader()
  let n = 0
  const read = async (): Promise<ReadableStreamReadResult<Uint8Array>> => {
    try {
      return await reader.read()
    } catch (err) {
      throw new AppError('invalid_request_body', 'The upload broke off before its end.', {
        cause: err,
      })
    }
  }
  const drain = async (): Promise<void> => {
    let extra = 0
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        extra += value.byteLength
        if (extra > drainBytes) {
          await reader.cancel()
          return
        }
      }
    } catch {
      // the client went away: nothing left to drain
    }
  }
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      const { done, value } = await read()
      if (done) {
        ctrl.close()
        return
      }
      n += value.byteLength
      if (n > maxBytes) {
        ctrl.error(tooLargeUpload(maxBytes))
        void drain()
        return
      }
      ctrl.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return { stream, bytes: () => n }
}
