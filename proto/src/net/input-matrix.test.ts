/**
 * Input and SSRF matrix, layer 1 (cases in input-matrix.cases.ts, table in docs/input-matrix.md).
 *
 * Safety: only the test's own server on 127.0.0.1 is ever connected to. Host names answer from a
 * resolver stub, and a connection tripwire (`watchConnections`) records every connection attempt
 * in this process: a case refused "before any connection" must show none at all, and no case may
 * ever attempt a non-loopback address (the tripwire would also destroy such a socket first).
 */
import { createServer, type Server } from 'node:http'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { NET_CASES, STUB_DNS } from './input-matrix.cases.ts'
import { refusedDestination } from './address-policy.ts'
import type { Resolver } from './guarded-lookup.ts'
import { safeFetchToFile, type SafeFetchOptions } from './safe-fetch.ts'
import { matrixTitle, watchConnections, type ConnectionLog } from './testing.ts'

/** Generous: these bound hangs, they are not speed targets. */
const CONNECT_TIMEOUT_MS = 10_000
const TOTAL_TIMEOUT_MS = 30_000
const MAX_BYTES = 1024 * 1024
const TRICKLE_INTERVAL_MS = 50

const resolved: string[] = []
const resolver: Resolver = async (host) => {
  resolved.push(host)
  const a = STUB_DNS[host]
  if (a === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  }
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

let server: Server
let port: number
let dir: string
let log: ConnectionLog
const sockets = new Set<Socket>()
const timers = new Set<NodeJS.Timeout>()
/** Bytes the endless route managed to send before the client hung up. */
let endlessSent = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-matrix-'))
  log = watchConnections()
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x')
    switch (u.pathname) {
      case '/video.mp4':
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 4 }).end('abcd')
        return
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/video.mp4' }).end()
        return
      case '/loop':
        res.writeHead(302, { location: '/loop' }).end()
        return
      case '/huge-length':
        // Declares a petabyte; sends a little and then nothing.
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(1024 ** 5) })
        res.write(Buffer.alloc(1024))
        return
      case '/endless': {
        res.writeHead(200, { 'content-type': 'video/mp4' }) // chunked, never ends
        const chunk = Buffer.alloc(64 * 1024, 1)
        const pump = (): void => {
          let more = true
          while (more && !res.destroyed) {
            endlessSent += chunk.length
            more = res.write(chunk)
          }
        }
        res.on('drain', pump)
        pump()
        return
      }
      case '/trickle': {
        res.writeHead(200, { 'content-type': 'video/mp4' })
        const t = setInterval(() => res.write('x'), TRICKLE_INTERVAL_MS)
        timers.add(t)
        res.on('close', () => clearInterval(t))
        return
      }
      case '/silent':
        return // never answers
      default:
        res.writeHead(404).end()
    }
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  log.stop()
  for (const t of timers) clearInterval(t)
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await rm(dir, { recursive: true, force: true })
})

beforeEach(() => {
  log.clear()
  resolved.length = 0
})

const opts = (o: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
  maxBytes: MAX_BYTES,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  timeoutMs: TOTAL_TIMEOUT_MS,
  maxRedirects: 3,
  allowLoopback: true,
  resolver,
  ...o,
})
let n = 0

describe('input matrix: outbound fetch guard', () => {
  it.each(NET_CASES.map((c) => [matrixTitle(c), c] as const))('%s', async (_title, c) => {
    const url = c.input
      .replaceAll('{loopback}', `http://127.0.0.1:${port}`)
      .replaceAll('{port}', String(port))
    const options: Partial<SafeFetchOptions> = 'options' in c ? c.options : {}
    const err = await safeFetchToFile(url, join(dir, `in-${n++}`), opts(options)).catch(
      (e: unknown) => e,
    )

    expect(err).toMatchObject({ code: c.expected, message: expect.stringContaining(c.message) })
    // A refusal is that one sentence and nothing more: no class, address or resolver error.
    if (c.message === refusedDestination()) expect((err as Error).message).toBe(c.message)
    expect(await readdir(dir), 'no partial download is left').toEqual([])
    expect(log.blocked, 'the tripwire never had to stop a non-loopback connection').toEqual([])
    if (c.connects === 'none') {
      expect(log.attempts, 'refused before any connection was attempted').toEqual([])
    } else {
      expect(new Set(log.attempts), 'only the loopback server was connected to').toEqual(
        new Set(['127.0.0.1']),
      )
    }
    // Literal addresses and foreign schemes are refused without even asking the resolver.
    if (!/\.test[:/]/.test(url)) expect(resolved).toEqual([])
    await EXTRA_CHECKS[c.id as keyof typeof EXTRA_CHECKS]?.()
  })
})

/** Case-specific checks after the common ones. */
const EXTRA_CHECKS = {
  N32: async () => {
    // The client hung up at the cap: the server could send only the cap plus what the socket
    // buffers hold, where a client that read on would have let it send without end.
    await expect.poll(() => sockets.size).toBe(0)
    expect(endlessSent).toBeGreaterThan(0)
    expect(endlessSent).toBeLessThan(64 * MAX_BYTES)
  },
} satisfies Partial<Record<(typeof NET_CASES)[number]['id'], () => Promise<void>>>
