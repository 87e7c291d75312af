import type { IncomingMessage } from 'node:http'
import type { Context, MiddlewareHandler, Next } from 'hono'
import { HTTPException } from 'hono/http-exception'

/** What is read and dropped of a body past the limit before answering (http/drain-body.ts says why). */
export interface DrainLimits {
  maxBytes: number
  idleMs: number
}
const DEFAULT_DRAIN: DrainLimits = { maxBytes: 64 * 1024 * 1024, idleMs: 5_000 }

const tooLarge = (): HTTPException => new HTTPException(413, { message: 'Payload Too Large' })

/**
 * The body size limit, decided from the headers where they suffice. A request whose size is
 * declared by Content-Length (and that has no Transfer-Encoding), or an HTTP/1.1 request on
 * @hono/node-server that has neither header (it has no body), is decided from its headers alone:
 * reading `c.req.raw.body` first would build the whole web Request (undici Request, a
 * ReadableStream over the socket, an AbortSignal) for every request, polls included, about a
 * fifth of a submission's CPU in `pnpm bench:load`. A declared length past the limit is refused
 * without opening the body (the error edge then reads it off the socket: http/drain-body.ts).
 * Anything else (any Transfer-Encoding, another runtime) is counted as it arrives; past the limit
 * the 413 goes out at once and the rest is read and dropped (up to `drain`) so the client can
 * finish sending and read it.
 */
export function bodyLimitByHeaders(
  maxSize: number,
  drain: DrainLimits = DEFAULT_DRAIN,
): MiddlewareHandler {
  return (c, next) => {
    if (c.req.header('transfer-encoding') === undefined) {
      const length = c.req.header('content-length')
      if (length !== undefined ? Number.parseInt(length, 10) <= maxSize : isHttp1(c.env)) {
        return next()
      }
      if (length !== undefined && /^\s*\d+\s*$/.test(length)) throw tooLarge()
    }
    return countBody(c, next, maxSize, drain)
  }
}

/** Reads the body counting its bytes; within the limit it becomes the request's body again. */
async function countBody(
  c: Context,
  next: Next,
  maxSize: number,
  drain: DrainLimits,
): Promise<void> {
  const body = c.req.raw.body
  if (body === null) return next()
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > maxSize) {
      void discard(reader, drain) // answered at once; the rest is read and dropped meanwhile
      throw tooLarge()
    }
    chunks.push(value)
  }
  c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks) })
  return next()
}

/** Reads and drops the rest of a body, up to `drain.maxBytes` and while it keeps arriving; then closes it. */
async function discard(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  drain: DrainLimits,
): Promise<void> {
  let bytes = 0
  for (;;) {
    let timer: NodeJS.Timeout | undefined
    const idle = new Promise<'idle'>(
      (resolve) => (timer = setTimeout(() => resolve('idle'), drain.idleMs)),
    )
    const r = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer))
    if (r === 'idle' || r.done) break
    bytes += r.value.length
    if (bytes > drain.maxBytes) break
  }
  await reader.cancel().catch(() => undefined)
}

/** An HTTP/1.x request served by @hono/node-server (its bindings carry the IncomingMessage). */
const isHttp1 = (env: unknown): boolean =>
  (env as { incoming?: IncomingMessage } | undefined)?.incoming?.httpVersionMajor === 1
