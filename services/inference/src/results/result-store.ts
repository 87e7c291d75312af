import { AppError } from '@tailor/proto'

export const resultTooLarge = (maxBytes: number): AppError =>
  new AppError(
    'result_too_large',
    `The result is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MB limit; choose a smaller output format or a shorter or smaller input.`,
  )

export const resultsFull = (cause?: unknown): AppError =>
  new AppError(
    'storage_full',
    'There is no room for the result right now (the results storage cap is reached).',
    { cause, retryable: true },
  )

/** Port: where finished results go (data dir embedded; JetStream Object Store `results` distributed). */
export interface ResultStore {
  /**
   * Stores the file at `path` under `key`, replacing any earlier copy (a redelivered job overwrites).
   * A file over the store's per-result cap throws result_too_large; a full store, storage_full (retryable).
   */
  put(key: string, path: string, contentType: string): Promise<{ bytes: number }>
}
