import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/** How much of an unread body is read and dropped after an early answer, and how long it may stall. */
export interface DrainLimits {
  maxBytes: number
  idleMs: number
}

/**
 * After an early answer (a 400 for a body past the limit, a 401 for a large upload with a bad key,
 * a 404 for a POST to nowhere), reads and drops what is left of the request body in the
 * background, so the client can finish writing and read its answer: the answer goes out at once
 * (nothing more is read to decide it), but the socket is not closed under a client that is still
 * sending (it would see EPIPE or a reset instead of the 400). Past `maxBytes`, or `idleMs` without
 * data, the connection is closed. Needs `autoCleanupIncoming: false` on @hono/node-server
 * (SERVE_OPTIONS in app.ts), whose own clean-up closes the socket 500 ms after the answer.
 */
export function drainInBackground(c: Context, o: DrainLimits): void {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  if (incoming === undefined || incoming.complete || incoming.destroyed || incoming.readableEnded) {
    return
  }
  let bytes = 0
  let timer: NodeJS.Timeout | undefined
  const stop = (giveUp: boolean): void => {
    clearTimeout(timer)
    incoming.off('data', onData)
    incoming.off('end', onEnd)
    incoming.off('close', onClose)
    if (giveUp) incoming.socket?.destroy()
  }
  const arm = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => stop(true), o.idleMs)
  }
  const onData = (d: Buffer): void => {
    bytes += d.length
    if (bytes > o.maxBytes) stop(true)
    else arm()
  }
  const onEnd = (): void => stop(false)
  const onClose = (): void => stop(false)
  incoming.on('data', onData)
  incoming.once('end', onEnd)
  incoming.once('close', onClose)
  incoming.on('error', () => undefined) // a client that breaks off: nothing to answer any more
  arm()
  incoming.resume()
}
