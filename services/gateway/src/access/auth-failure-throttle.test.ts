import { request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp, SERVE_OPTIONS } from '../app.ts'
import { loadConfig } from '../config.ts'
import { grpcPeerAddress } from '../events/api-grpc-server.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import { createLogger } from '../logger.ts'
import { AuthFailureThrottle } from './auth-failure-throttle.ts'

const KEY = 'auth-throttle-test-key-0123456789abcdef'

describe('AuthFailureThrottle (clock by hand)', () => {
  it('allows the limit of failures per window, then blocks the address until one refills', () => {
    let now = 0
    const t = new AuthFailureThrottle({ maxFailures: 10, windowMs: 60_000, now: () => now })
    for (let i = 0; i < 10; i++) {
      expect(t.blockedForS('10.0.0.1')).toBe(0)
      t.fail('10.0.0.1')
    }
    expect(t.blockedForS('10.0.0.1')).toBe(6) // one failure refills every 6 s
    expect(t.blockedForS('10.0.0.2'), 'another address is not affected').toBe(0)
    now = 5_000
    expect(t.blockedForS('10.0.0.1')).toBe(1)
    now = 6_000
    expect(t.blockedForS('10.0.0.1')).toBe(0)
    now = 60_000
    expect(t.blockedForS('10.0.0.1')).toBe(0)
    expect(t.size, 'a refilled address is forgotten').toBe(0)
  })

  it('tracks at most maxAddresses (the oldest goes first)', () => {
    const t = new AuthFailureThrottle({
      maxFailures: 1,
      windowMs: 60_000,
      maxAddresses: 3,
      now: () => 0,
    })
    for (const a of ['a', 'b', 'c', 'd']) t.fail(a)
    expect(t.size).toBe(3)
    expect(t.blockedForS('a')).toBe(0)
    expect(t.blockedForS('d')).toBeGreaterThan(0)
  })

  it('reads the address of a gRPC peer', () => {
    expect(grpcPeerAddress('127.0.0.1:50123')).toBe('127.0.0.1') // what grpc-js 1.x getPeer() gives
    expect(grpcPeerAddress('[::1]:50123')).toBe('::1')
    expect(grpcPeerAddress('ipv4:127.0.0.1:50123')).toBe('127.0.0.1')
    expect(grpcPeerAddress('ipv6:[::1]:50123')).toBe('::1')
    expect(grpcPeerAddress('unix:/tmp/x.sock')).toBeUndefined()
  })
})

/** Over a real socket, from two loopback addresses (127.0.0.1 and 127.0.0.2 as the client's source). */
describe('failed authentications throttled per client address (real socket)', () => {
  let dir: string
  const servers: Server[] = []
  const listen = async (env: Record<string, string> = {}): Promise<number> => {
    const config = loadConfig({
      API_KEYS: KEY,
      RESULT_URL_SECRET: 'x'.repeat(32),
      AUTH_FAILURE_LIMIT: '3',
      AUTH_FAILURE_WINDOW_S: '600',
      ...env,
    })
    const app = createApp({
      config,
      logger: createLogger('silent'),
      jobs: await openFileJobStore(await mkdtemp(join(dir, 'jobs-'))),
      results: { size: async () => null, open: async () => Readable.from([]) },
      publisher: { publish: async () => undefined },
      cancel: { cancel: () => undefined },
      health: () => ({ ok: true }),
    })
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', ...SERVE_OPTIONS }, () =>
        resolve(s as Server),
      ) as Server
    })
    servers.push(server)
    return (server.address() as AddressInfo).port
  }
  const get = (
    port: number,
    key: string,
    from = '127.0.0.1',
    headers: Record<string, string> = {},
  ) =>
    new Promise<{ status: number; code: unknown; retryAfter: string | undefined }>(
      (resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            localAddress: from,
            path: '/v1/credits',
            headers: { 'x-api-key': key, ...headers },
          },
          (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (d: string) => (text += d))
            res.on('end', () => {
              const h = res.headers['retry-after']
              resolve({
                status: res.statusCode ?? 0,
                code: (JSON.parse(text) as { error_code?: unknown }).error_code,
                retryAfter: Array.isArray(h) ? h[0] : h,
              })
            })
          },
        )
        req.on('error', reject)
        req.end()
      },
    )
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-auth-throttle-'))
  })
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()))
    await rm(dir, { recursive: true, force: true })
  })

  it('answers 401 up to the limit, then 429 too_many_auth_failures with Retry-After, even for a valid key; another address still gets in', async () => {
    const port = await listen()
    for (let i = 0; i < 3; i++) {
      expect(await get(port, `wrong-key-${i}`)).toMatchObject({
        status: 401,
        code: 'invalid_auth_token',
      })
    }
    const blocked = await get(port, 'wrong-key-again')
    expect(blocked).toMatchObject({ status: 429, code: 'too_many_auth_failures' })
    expect(Number(blocked.retryAfter)).toBeGreaterThanOrEqual(1)
    // Refused before the key is checked: a correct guess from this address is not confirmed either.
    expect(await get(port, KEY)).toMatchObject({ status: 429, code: 'too_many_auth_failures' })
    expect(await get(port, KEY, '127.0.0.2')).toMatchObject({ status: 200 })
  })

  it('valid keys are never counted', async () => {
    const port = await listen()
    for (let i = 0; i < 10; i++) expect((await get(port, KEY)).status).toBe(200)
    expect((await get(port, 'wrong-key')).status).toBe(401)
  })

  it('behind a proxy (TRUST_PROXY_HOPS=1) the address is the one the proxy appended to X-Forwarded-For', async () => {
    const port = await listen({ TRUST_PROXY_HOPS: '1' })
    const via = (client: string) => ({ 'x-forwarded-for': `1.2.3.4, ${client}` }) // the first entry is the client's own to forge
    for (let i = 0; i < 3; i++) {
      expect((await get(port, 'wrong', '127.0.0.1', via('203.0.113.7'))).status).toBe(401)
    }
    expect((await get(port, 'wrong', '127.0.0.1', via('203.0.113.7'))).status).toBe(429)
    expect((await get(port, KEY, '127.0.0.1', via('203.0.113.8'))).status).toBe(200)
  })
})
