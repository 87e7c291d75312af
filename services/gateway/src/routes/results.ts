import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { AppError, contentTypeForKey } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { verifyResultSignature } from '../signing.ts'

/** Parses a single `bytes=` range against `size`; null = whole file; 'bad' = unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'bad' {
  if (header === undefined) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (m === null) return null // multiple or unknown ranges: serve the whole file (allowed by RFC 9110)
  const [, a = '', b = ''] = m
  if (a === '' && b === '') return 'bad'
  let start: number
  let end: number
  if (a === '') {
    const n = Number(b)
    if (n === 0) return 'bad'
    start = Math.max(size - n, 0)
    end = size - 1
  } else {
    start = Number(a)
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1)
  }
  if (start >= size || start > end) return 'bad'
  return { start, end }
}

/** GET /results/<key>?expires&sig: signed, time-limited, seekable. */
export function resultRoutes(deps: GatewayDeps) {
  return new Hono<AppEnv>().get('/*', async (c) => {
    let key: string
    try {
      key = decodeURIComponent(c.req.path.replace(/^\/results\//, ''))
    } catch (err) {
      // Percent-escapes that are not UTF-8 (`/results/%A4%A2`): no URL we signed looks like that.
      throw new AppError(
        'invalid_signature',
        'This result URL is not valid (bad or missing signature); use the result_url from the job status.',
        { cause: err },
      )
    }
    const check = verifyResultSignature(
      deps.config.resultUrlSecret,
      key,
      c.req.query('expires'),
      c.req.query('sig'),
      Math.floor(Date.now() / 1000),
    )
    if (check === 'expired') {
      throw new AppError(
        'result_url_expired',
        'This result URL has expired; fetch the job status again for a fresh result_url.',
      )
    }
    if (check === 'invalid') {
      throw new AppError(
        'invalid_signature',
        'This result URL is not valid (bad or missing signature); use the result_url from the job status.',
      )
    }
    const size = await deps.results.size(key)
    if (size === null) throw new AppError('not_found', 'The result no longer exists.')
    const range = parseRange(c.req.header('range'), size)
    const headers: Record<string, string> = {
      'Content-Type': contentTypeForKey(key),
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'private, max-age=300',
    }
    if (range === 'bad') {
      c.header('Content-Range', `bytes */${size}`)
      throw new AppError(
        'range_not_satisfiable',
        `The requested range is outside the result (${size} bytes); ask for bytes=0-${size - 1} or a part of it.`,
      )
    }
    const { start, end } = range ?? { start: 0, end: size - 1 }
    headers['Content-Length'] = String(end - start + 1)
    if (range !== null) headers['Content-Range'] = `bytes ${start}-${end}/${size}`
    if (c.req.method === 'HEAD' || size === 0) {
      return c.body(null, range === null ? 200 : 206, headers)
    }
    const stream = await deps.results.open(key, start, end)
    return c.body(Readable.toWeb(stream) as ReadableStream, range === null ? 200 : 206, headers)
  })
}
