import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { AppError } from '../errors.ts'
import { classifyAddress, isAllowedAddress, refusedDestination } from './address-policy.ts'
import {
  guardConnectedAddress,
  guardedLookup,
  systemResolver,
  type LookupGuard,
  type Resolver,
} from './guarded-lookup.ts'

/**
 * One outbound POST (webhooks) under the destination rules of input URLs (ARCHITECTURE.md §5):
 * http/https only, no credentials, every resolved address and the address actually connected to
 * must be public (loopback only with `allowLoopback`). Redirects are not followed (a 3xx is an
 * answer like any other non-2xx). The response body is drained up to `maxResponseBytes` and discarded.
 */
export interface SafePostOptions {
  /** Whole attempt: connect, send, response head and the capped body read. */
  timeoutMs: number
  allowLoopback: boolean
  maxResponseBytes: number
  headers: Record<string, string>
  resolver?: Resolver
  /** Names the URL in error sentences (e.g. "webhook_url"). */
  label?: string
}

export interface PostAnswer {
  status: number
}

/** A destination the rules refuse: never retried. */
export class DestinationRefusedError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('invalid_parameter', message, { cause })
  }
}

/** A refused address: one sentence for all (address-policy.ts); what was refused goes to the cause. */
const refused = (label: string, detail: string): DestinationRefusedError =>
  new DestinationRefusedError(refusedDestination(label), new Error(detail))

/**
 * Checks a URL before any connection: http/https, no credentials, an IP-literal host must be
 * allowed. Host names are checked on every resolved address when connecting.
 */
export function checkDestination(raw: string, allowLoopback: boolean, label = 'url'): URL {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new DestinationRefusedError(`${label} is not a valid URL.`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new DestinationRefusedError(
      `${label} must use http or https, not ${u.protocol.slice(0, -1)}.`,
    )
  }
  if (u.username !== '' || u.password !== '') {
    throw new DestinationRefusedError(`${label} must not carry credentials.`)
  }
  const host = u.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && !isAllowedAddress(host, { allowLoopback })) {
    throw refused(label, `${host} is a ${classifyAddress(host)} address`)
  }
  return u
}

/**
 * POSTs `body`. Resolves with the HTTP status of any answer; throws DestinationRefusedError when
 * the rules refuse the destination (before any connection to it), and a retryable
 * `service_unavailable` AppError on network errors and timeouts.
 */
export async function safePost(
  rawUrl: string,
  body: string,
  o: SafePostOptions,
  signal?: AbortSignal,
): Promise<PostAnswer> {
  const label = o.label ?? 'url'
  const url = checkDestination(rawUrl, o.allowLoopback, label)
  const total = AbortSignal.timeout(o.timeoutMs)
  const combined = signal ? AbortSignal.any([signal, total]) : total
  const resolver = o.resolver ?? systemResolver
  const guard: LookupGuard = {
    allowLoopback: o.allowLoopback,
    refuse: (detail) => refused(label, detail),
  }
  try {
    return await new Promise<PostAnswer>((resolve, reject) => {
      const mod = url.protocol === 'https:' ? https : http
      const payload = Buffer.from(body, 'utf8')
      const req = mod.request(url, {
        method: 'POST',
        lookup: guardedLookup(resolver, guard),
        signal: combined,
        agent: false,
        headers: {
          'user-agent': 'tailor-webhooks/0.1',
          'content-length': String(payload.length),
          ...o.headers,
        },
      })
      guardConnectedAddress(req, guard)
      req.on('response', (res) => {
        // The answer is its status; the body is drained up to the cap and discarded.
        let read = 0
        res.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read > o.maxResponseBytes) res.destroy()
        })
        res.on('error', () => undefined)
        resolve({ status: res.statusCode ?? 0 })
      })
      req.on('error', reject)
      req.end(payload)
    })
  } catch (err) {
    if (err instanceof DestinationRefusedError) throw err
    if (total.aborted) {
      throw new AppError(
        'service_unavailable',
        `${label} did not answer within ${o.timeoutMs} ms.`,
        { cause: err, retryable: true },
      )
    }
    const code = (err as NodeJS.ErrnoException).code
    throw new AppError(
      'service_unavailable',
      `POST to ${label} failed${code ? ` (${code})` : ''}: ${(err as Error).message}`,
      { cause: err, retryable: true },
    )
  }
}
