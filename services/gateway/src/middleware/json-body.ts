import type { IncomingMessage } from 'node:http'
import type { Context, MiddlewareHandler } from 'hono'
import { AppError } from '@tailor/proto'

const JSON_TYPE_RE = /^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i
/** UTF-8 with the BOM dropped and bad bytes replaced, as the web Request's text() decodes. */
const UTF8 = new TextDecoder()

/**
 * On @hono/node-server a body of declared length (its limit already checked from the headers by
 * middleware/body-limit.ts) is read straight from the socket's IncomingMessage into hono's body
 * cache, so that `c.req.json()` parses it without the web Request and ReadableStream that
 * reading `c.req.raw` builds per request. Anything else (another server, a chunked body that
 * bodyLimit has buffered, a body some middleware started reading) is read through `c.req.raw`.
 */
function cacheBodyFromSocket(c: Context): void {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  if (
    incoming === undefined ||
    incoming.readableDidRead ||
    c.req.header('content-length') === undefined ||
    c.req.header('transfer-encoding') !== undefined
  ) {
    return
    // hono keeps the body read's promise in bodyCache (its type says the value).
  }
  ;(c.req.bodyCache as { text?: Promise<string> }).text = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    incoming.on('data', (d: Buffer) => chunks.push(d))
    incoming.once('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      // Should the web Request be built later (c.req.raw.signal, …), @hono/node-server takes its
      // body from here instead of the IncomingMessage this has read.
      ;(incoming as IncomingMessage & { rawBody?: Buffer }).rawBody = body
      resolve(UTF8.decode(body))
    })
    incoming.once('error', reject)
    incoming.once('close', () => reject(new Error('the request body ended early')))
  })
}

/** Requires `Content-Type: application/json` and a body that parses to a JSON object. */
export function jsonObjectBody(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header('content-type')
    if (type === undefined || !JSON_TYPE_RE.test(type)) {
      throw new AppError(
        'unsupported_content_type',
        `Unsupported Content-Type ${type === undefined ? '(none)' : JSON.stringify(type)}: send the body as JSON with Content-Type: application/json.`,
      )
    }
    let body: unknown
    try {
      if (c.req.bodyCache.text === undefined) cacheBodyFromSocket(c)
      body = await c.req.json() // cached by hono: the validator reads the same parse
    } catch (err) {
      throw new AppError(
        'invalid_request_body',
        'The request body is not valid JSON: send a JSON object.',
        { cause: err },
      )
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError('invalid_request_body', 'The request body must be a JSON object.')
    }
    await next()
  }
}
