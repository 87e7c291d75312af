/**
 * How an error crosses a worker thread (the matting session worker and the try-on worker): the
 * worker posts its fields, the parent thread revives it — an AppError keeps its code and whether
 * it is retryable, any other error its message and stack.
 */
import { AppError, type ErrorCode } from '@tailor/proto'

export interface ErrorReply {
  code: string | null
  message: string
  stack?: string
  retryable: boolean
}

/** Worker side: the fields of `err` to post. */
export function errorReply(err: unknown): ErrorReply {
  const e = err instanceof Error ? err : new Error(String(err))
  return {
    code: err instanceof AppError ? err.code : null,
    message: e.message,
    ...(e.stack ? { stack: e.stack } : {}),
    retryable: err instanceof AppError && err.retryable,
  }
}

/** Parent side: the error the posted fields describe. */
export function revivedError(m: Omit<ErrorReply, 'retryable'> & { retryable?: boolean }): Error {
  if (m.code !== null) {
    return new AppError(m.code as ErrorCode, m.message, { retryable: m.retryable ?? false })
  }
  const err = new Error(m.message)
  if (m.stack) {
    err.stack = m.stack
  }
  return err
}
