import type { IncomingMessage } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'

/**
 * hono's bodyLimit without its cost on the common case. A request whose size is declared by
 * Content-Length (and that has no Transfer-Encoding), or an HTTP/1.1 request on
 * @hono/node-server that has neither header (it has no body), is decided from its headers alone.
 * hono's bodyLimit reads `c.req.raw.body` first, which on @hono/node-server builds the whole web
 * Request (undici Request, a ReadableStream over the socket, an AbortSignal) for every request,
 * polls included: about a fifth of a submission's CPU in `pnpm bench:load`. Everything else (a
 * declared length past the limit, any Transfer-Encoding, another runtime) goes through hono's
 * bodyLimit unchanged, which answers or counts the bytes as they arrive exactly as before.
 */
export function bodyLimitByHeaders(maxSize: number): MiddlewareHandler {
  const counting = bodyLimit({ maxSize })
  return (c, next) => {
    if (c.req.header('transfer-encoding') === undefined) {
      const length = c.req.header('content-length')
      if (length !== undefined ? Number.parseInt(length, 10) <= maxSize : isHttp1(c.env)) return next()
    }
    return counting(c, next)
  }
}

/** An HTTP/1.x request served by @hono/node-server (its bindings carry the IncomingMessage). */
const isHttp1 = (env: unknown): boolean => (env as { incoming?: IncomingMessage } | undefined)?.incoming?.httpVersionMajor === 1
