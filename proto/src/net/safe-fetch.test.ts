import { createServer, type Server } from 'node:http'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Resolver } from './guarded-lookup.ts'
import { checkUrl, safeFetchToFile, type SafeFetchOptions } from './safe-fetch.ts'

// This machine may only send traffic to loopback: non-loopback answers come from a resolver stub
// and must be refused before any connection is attempted.
const STUB: Record<string, string[]> = {
  'localhost.test': ['127.0.0.1'],
}
const resolver: Resolver = async (host) => {
  const a = STUB[host]
  if (a === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  }
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

const BODY = Buffer.alloc(64 * 1024, 7)
let server: Server
let base: string
let dir: string
// Generous bounds (they catch hangs; the CPU may be busy with other tests).
const CONNECT_TIMEOUT_MS = 10_000
const TOTAL_TIMEOUT_MS = 30_000
const opts = (o: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
  maxBytes: 1024 * 1024,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  timeoutMs: TOTAL_TIMEOUT_MS,
  maxRedirects: 3,
  allowLoopback: true,
  resolver,
  ...o,
})

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-fetch-'))
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x')
    switch (u.pathname) {
      case '/video.mp4':
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': BODY.length }).end(BODY)
        return
      case '/chunked': // no content-length: the cap must hold during the download
        res.writeHead(200, { 'content-type': 'video/mp4' })
        for (let i = 0; i < 40; i++) res.write(BODY)
        res.end()
        return
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/video.mp4' }).end()
        return
      case '/loop':
        res.writeHead(302, { location: '/loop' }).end()
        return
      case '/stall':
        res.writeHead(200, { 'content-type': 'video/mp4' })
        res.write(BODY.subarray(0, 10))
        return // never ends
      default:
        res.writeHead(404).end()
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await rm(dir, { recursive: true, force: true })
})

const leftovers = async (): Promise<string[]> => readdir(dir)
let n = 0
const dest = (): string => join(dir, `in-${n++}`)

describe('checkUrl', () => {
  it.each([
    'http://127.0.0.1/',
    'http://127.1/',
    'http://0x7f000001/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
  ])('refuses the loopback spelling %s unless loopback is allowed', (u) => {
    expect(() => checkUrl(u, false)).toThrow(
      expect.objectContaining({ code: 'input_fetch_failed' }),
    )
    expect(() => checkUrl(u, true)).not.toThrow()
  })
})

describe('safeFetchToFile', () => {
  it('downloads from an allowed loopback server', async () => {
    const d = dest()
    const f = await safeFetchToFile(`${base}/video.mp4`, d, opts())
    expect(f).toEqual({ path: d, bytes: BODY.length, contentType: 'video/mp4' })
    expect((await readFile(d)).equals(BODY)).toBe(true)
    await rm(d)
  })

  it('follows redirects, checking each hop', async () => {
    const d = dest()
    expect((await safeFetchToFile(`${base}/redirect?to=/video.mp4`, d, opts())).bytes).toBe(
      BODY.length,
    )
    await rm(d)
  })

  // Private, link-local, metadata, DNS, redirect, scheme, size and timeout refusals: input-matrix.test.ts.
  it.each([
    [
      'loopback when not allowed',
      () => `${base}/video.mp4`,
      { allowLoopback: false },
      /does not point at a publicly reachable host/,
    ],
    ['an HTTP error', () => `${base}/missing`, {}, /HTTP 404/],
    ['a stalled download', () => `${base}/stall`, { timeoutMs: 300 }, /longer than/],
  ])('refuses %s with input_fetch_failed and leaves nothing behind', async (_n, url, o, msg) => {
    const err = await safeFetchToFile(url(), dest(), opts(o)).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'input_fetch_failed', message: expect.stringMatching(msg) })
    expect(await leftovers()).toEqual([])
  })

  it('refuses an over-size body by Content-Length and during a chunked download, leaving no file', async () => {
    // Many times over: the partial file used to be opened after its removal now and then.
    for (let i = 0; i < 20; i++) {
      for (const path of ['/video.mp4', '/chunked']) {
        const err = await safeFetchToFile(`${base}${path}`, dest(), opts({ maxBytes: 1000 })).catch(
          (e: unknown) => e,
        )
        expect(err).toMatchObject({ code: 'file_size_too_large' })
      }
    }
    expect(await leftovers()).toEqual([])
  })

  it('stops when the job is cancelled', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 100)
    const err = await safeFetchToFile(`${base}/stall`, dest(), opts(), ac.signal).catch(
      (e: unknown) => e,
    )
    expect(err).toMatchObject({ code: 'job_cancelled' })
    expect(await leftovers()).toEqual([])
  })
})
