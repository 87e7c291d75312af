import type { MiddlewareHandler } from 'hono'
import { AppError } from '@tailor/proto'

const JSON_TYPE_RE = /^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i

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
      body = await c.req.json() // cached by hono: the validator reads the same parse
    } catch (err) {
      throw new AppError('invalid_request_body', 'The request body is not valid JSON: send a JSON object.', { cause: err })
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError('invalid_request_body', 'The request body must be a JSON object.')
    }
    await next()
  }
}
