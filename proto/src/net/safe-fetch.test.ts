import { createServer, type Server } from 'node:http'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkUrl, safeFetchToFile, type Resolver, type SafeFetchOptions } from './safe-fetch.ts'

// This machine may only send traffic to loopback: non-loopback answers come from a resolver stub
// and must be refused before any connection is attempted.
const STUB: Record<string, string[]> = {
  'localhost.test': ['127.0.0.1'],
  'private.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '10.0.0.1'],
  'v6private.test': ['fd12::1'],
}
const resolver: Resolver = async (host) => {
  const a = STUB[host]
  if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

const BODY = Buffer.alloc(64 * 1024, 7)
let server: Server
let base: string
let dir: string
const opts = (o: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
  maxBytes: 1024 * 1024, connectTimeoutMs: 2000, timeoutMs: 5000, maxRedirects: 3, allowLoopback: true, resolver, ...o,
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
    'http://127.0.0.1/', 'http://127.1/', 'http://0x7f000001/', 'http://2130706433/', 'http://0177.0.0.1/',
    'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/',
  ])('refuses the loopback spelling %s unless loopback is allowed', (u) => {
    expect(() => checkUrl(u, false)).toThrow(expect.objectContaining({ code: 'input_fetch_failed' }))
    expect(() => checkUrl(u, true)).not.toThrow()
  })
  it.each([
    'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://192.168.1.1/', 'http://172.16.0.5/', 'http://0.0.0.0/',
    'http://[fe80::1]/', 'http://[fd00:ec2::254]/', 'http://0xa9fea9fe/', 'http://[::ffff:169.254.169.254]/',
  ])('refuses %s even with loopback allowed', (u) => {
    expect(() => checkUrl(u, true)).toThrow(/not allowed/)
  })
  it.each(['ftp://example.com/v.mp4', 'file:///etc/passwd', 'gopher://x/', 'data:video/mp4;base64,AAAA', 'http://user:pw@example.com/'])(
    'refuses %s',
    (u) => {
      expect(() => checkUrl(u, true)).toThrow(expect.objectContaining({ code: 'input_fetch_failed' }))
    },
  )
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
    expect((await safeFetchToFile(`${base}/redirect?to=/video.mp4`, d, opts())).bytes).toBe(BODY.length)
    await rm(d)
  })

  it.each([
    ['loopback when not allowed', () => `${base}/video.mp4`, { allowLoopback: false }, /loopback address/],
    ['a host resolving to loopback when not allowed', () => `http://localhost.test:${new URL(base).port}/video.mp4`, { allowLoopback: false }, /resolves to a loopback/],
    ['a host resolving to a private address', () => 'http://private.test/video.mp4', {}, /resolves to a private/],
    ['a host resolving to the metadata address', () => 'http://metadata.test/latest', {}, /resolves to a link-local/],
    ['a host with mixed public/private answers', () => `http://mixed.test:${new URL(base).port}/video.mp4`, {}, /private/],
    ['a host resolving to an IPv6 ULA', () => 'http://v6private.test/', {}, /private/],
    ['a redirect to a private address', () => `${base}/redirect?to=http://10.0.0.1/x`, {}, /private address/],
    ['a redirect to a host resolving to metadata', () => `${base}/redirect?to=http://metadata.test/`, {}, /link-local/],
    ['a redirect to another scheme', () => `${base}/redirect?to=file:///etc/passwd`, {}, /http or https/],
    ['too many redirects', () => `${base}/loop`, {}, /redirected more than 3 times/],
    ['an HTTP error', () => `${base}/missing`, {}, /HTTP 404/],
    ['an unresolvable host', () => 'http://nowhere.test/v.mp4', {}, /ENOTFOUND/],
    ['a stalled download', () => `${base}/stall`, { timeoutMs: 300 }, /longer than/],
  ])('refuses %s with input_fetch_failed and leaves nothing behind', async (_n, url, o, msg) => {
    const err = await safeFetchToFile(url(), dest(), opts(o)).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'input_fetch_failed', message: expect.stringMatching(msg) })
    expect(await leftovers()).toEqual([])
  })

  it('refuses an over-size body by Content-Length and during a chunked download', async () => {
    for (const path of ['/video.mp4', '/chunked']) {
      const err = await safeFetchToFile(`${base}${path}`, dest(), opts({ maxBytes: 1000 })).catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'file_size_too_large' })
    }
    expect(await leftovers()).toEqual([])
  })

  it('stops when the job is cancelled', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 100)
    const err = await safeFetchToFile(`${base}/stall`, dest(), opts(), ac.signal).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'job_cancelled' })
    expect(await leftovers()).toEqual([])
  })
})
