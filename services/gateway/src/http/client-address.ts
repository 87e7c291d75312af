import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * The client's address: the socket's peer, or with `trustProxyHops` N > 0 (TRUST_PROXY_HOPS) the
 * Nth X-Forwarded-For entry from the right — the one the outermost trusted proxy appended; entries
 * further left are the client's own to write. Fewer entries than hops: the peer. Undefined for a
 * request without a socket (app.request in tests).
 */
export function clientAddress(c: Context, trustProxyHops: number): string | undefined {
  const peer = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket
    ?.remoteAddress
  if (peer === undefined || trustProxyHops === 0) return peer
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  return forwarded.length >= trustProxyHops ? forwarded[forwarded.length - trustProxyHops] : peer
}
