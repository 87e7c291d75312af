import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Resolver } from './guarded-lookup.ts'
import {
  checkDestination,
  DestinationRefusedError,
  safePost,
  type SafePostOptions,
} from './safe-post.ts'

// Only loopback is reachable here: other answers come from a resolver stub and must be refused
// before any connection is attempted.
const STUB: Record<string, string[]> = {
  'hooks.test': ['127.0.0.1'],
  'private.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '192.168.1.1'],
}
const resolver: Resolver = async (host) => {
  const a = STUB[host]
  if (a === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  }
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = []
let connections = 0
let server: Server
let port: number
const opts = (o: Partial<SafePostOptions> = {}): SafePostOptions => ({
  timeoutMs: 2000,
  allowLoopback: true,
  maxResponseBytes: 1024,
  headers: { 'content-type': 'application/json' },
  resolver,
  label: 'webhook_url',
  ...o,
})

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      seen.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      if (path === '/big') {
        res.writeHead(200)
        for (let i = 0; i < 200; i++) res.write(Buffer.alloc(64 * 1024, 1)) // far past the cap
        res.end()
      } else if (path === '/redirect') {
        res.writeHead(307, { location: '/ok' }).end()
      } else if (path === '/stall') {
        // never answers
      } else {
        res.writeHead(path === '/fail' ? 500 : 204).end()
      }
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

describe('safePost', () => {
  it('posts the body and headers and answers the status', async () => {
    const a = await safePost(
      `http://hooks.test:${port}/ok`,
      '{"a":1}',
      opts({ headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' } }),
    )
    expect(a.status).toBe(204)
    const got = seen.at(-1)!
    expect(got.body).toBe('{"a":1}')
    expect(got.headers['webhook-id']).toBe('msg_1')
    expect(got.headers['content-type']).toBe('application/json')
    expect((await safePost(`http://127.0.0.1:${port}/fail`, '{}', opts())).status).toBe(500)
  })

  it('does not follow redirects', async () => {
    const before = seen.length
    expect((await safePost(`http://127.0.0.1:${port}/redirect`, '{}', opts())).status).toBe(307)
    expect(seen.length).toBe(before + 1)
  })

  it('reads a large answer only up to the cap', async () => {
    expect((await safePost(`http://127.0.0.1:${port}/big`, '{}', opts())).status).toBe(200)
  })

  it('refuses private, link-local and mixed answers, and loopback unless allowed, before connecting', async () => {
    const before = connections
    for (const url of [
      `http://private.test:${port}/`,
      `http://metadata.test:${port}/`,
      `http://mixed.test:${port}/`,
      'http://10.0.0.1/',
      'http://[fd00::1]/',
    ]) {
      const err = await safePost(url, '{}', opts()).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(DestinationRefusedError)
      // One sentence for every refusal: nothing says what the name resolved to.
      expect((err as Error).message, url).toBe(
        'webhook_url does not point at a publicly reachable host; use a publicly accessible URL.',
      )
    }
    await expect(
      safePost(`http://hooks.test:${port}/ok`, '{}', opts({ allowLoopback: false })),
    ).rejects.toBeInstanceOf(DestinationRefusedError)
    await expect(
      safePost(`http://127.0.0.1:${port}/ok`, '{}', opts({ allowLoopback: false })),
    ).rejects.toBeInstanceOf(DestinationRefusedError)
    expect(connections).toBe(before)
  })

  it('refuses other schemes and credentials', () => {
    expect(() => checkDestination('ftp://example.com/x', false, 'webhook_url')).toThrow(
      /webhook_url must use http or https/,
    )
    expect(() => checkDestination('https://u:p@example.com/x', false, 'webhook_url')).toThrow(
      /credentials/,
    )
    expect(() => checkDestination('http://169.254.169.254/', false, 'webhook_url')).toThrow(
      /^webhook_url does not point at a publicly reachable host; use a publicly accessible URL\.$/,
    )
    expect(() => checkDestination('http://[2002:a9fe:a9fe::]/', false, 'webhook_url')).toThrow(
      DestinationRefusedError,
    )
    expect(checkDestination('https://example.com/hook', false).hostname).toBe('example.com')
  })

  it('turns network errors and timeouts into retryable service_unavailable', async () => {
    const e1 = await safePost('http://nowhere.test/', '{}', opts()).catch((e: unknown) => e)
    expect(e1).toMatchObject({ code: 'service_unavailable', retryable: true })
    const e2 = await safePost(
      `http://127.0.0.1:${port}/stall`,
      '{}',
      opts({ timeoutMs: 300 }),
    ).catch((e: unknown) => e)
    expect(e2).toMatchObject({ code: 'service_unavailable', retryable: true })
    expect((e2 as Error).message).toMatch(/within 300 ms/)
  })
})
