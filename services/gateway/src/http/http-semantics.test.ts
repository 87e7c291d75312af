import { request, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp, SERVE_OPTIONS } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import { createLogger } from '../logger.ts'
import { openFileUploadStore } from '../uploads/upload-store-files.ts'
import { allowedMethods } from './allowed-methods.ts'

const KEY = 'http-semantics-key-0123456789-ab'
const ORIGIN = 'https://shop.example.com'

/** The gateway app over a real socket: paths, methods, CORS and answers to bodies past the limit. */
describe('HTTP semantics of the gateway (real socket)', () => {
  let dir: string
  const servers: Server[] = []
  let base: string
  let corsBase: string
  const listen = async (env: Record<string, string>): Promise<string> => {
    const config = loadConfig({
      API_KEYS: KEY,
      RESULT_URL_SECRET: 'x'.repeat(32),
      DEFAULT_RATE_LIMIT_PER_S: '1000',
      UPLOAD_MAX_IMAGE_BYTES: '1000000',
      UPLOAD_MAX_VIDEO_BYTES: '2000000',
      ...env,
    })
    const sub = await mkdtemp(join(dir, 'gw-'))
    const app = createApp({
      config,
      logger: createLogger('silent'),
      jobs: await openFileJobStore(join(sub, 'jobs')),
      uploads: await openFileUploadStore(join(sub, 'uploads')),
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
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-http-'))
    base = await listen({})
    corsBase = await listen({ CORS_ORIGINS: `${ORIGIN}, http://localhost:3000` })
  })
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()))
    await rm(dir, { recursive: true, force: true })
  })

  /**
   * A raw request (fetch would normalise the path itself). Fails when the request errs at any
   * point (EPIPE, reset), also after its answer arrived: it resolves once the body is all sent.
   */
  const raw = (
    url: string,
    path: string,
    o: {
      method?: string
      headers?: Record<string, string>
      body?: Buffer | string
      pieces?: number
      gapMs?: number
    } = {},
  ) =>
    new Promise<{
      status: number
      headers: Record<string, string | string[] | undefined>
      body: string
    }>((resolve, reject) => {
      const u = new URL(url)
      let answer: {
        status: number
        headers: Record<string, string | string[] | undefined>
        body: string
      } | null = null
      let sent = false
      const settle = (): void => {
        if (answer !== null && sent) resolve(answer)
      }
      const req = request(
        { host: u.hostname, port: u.port, path, method: o.method ?? 'GET', headers: o.headers },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (d: string) => (text += d))
          res.on('end', () => {
            answer = { status: res.statusCode ?? 0, headers: res.headers, body: text }
            settle()
          })
        },
      )
      req.on('error', (err) => reject(new Error(`${path}: ${err.message}`)))
      req.on('close', () => {
        if (!sent) reject(new Error(`${path}: the connection closed before the body was sent`))
      })
      req.on('finish', () => {
        sent = true
        settle()
      })
      const body = o.body === undefined ? undefined : Buffer.from(o.body)
      if (body === undefined) return req.end()
      // Written in pieces, as a client on a real network does.
      const n = o.pieces ?? 1
      const size = Math.ceil(body.length / n)
      void (async () => {
        for (let i = 0; i < body.length && !req.destroyed; i += size) {
          if (!req.write(body.subarray(i, i + size))) await new Promise((r) => req.once('drain', r))
          if (o.gapMs !== undefined) await new Promise((r) => setTimeout(r, o.gapMs))
        }
        req.end()
      })()
    })
  const json = { 'content-type': 'application/json', 'x-api-key': KEY }
  const video = JSON.stringify({ video_url: 'https://cdn.example.com/v.mp4' })

  it('doubled and trailing slashes reach the route (a base URL ending in /)', async () => {
    for (const path of [
      '//v1/video/remove-background',
      '/v1/video/remove-background/',
      '/v1//video/remove-background//',
    ]) {
      const r = await raw(base, path, { method: 'POST', headers: json, body: video })
      expect({ path, status: r.status }).toEqual({ path, status: 202 })
    }
    expect((await raw(base, '//healthz/')).status).toBe(200)
    expect((await raw(base, '/v1/credits/', { headers: json })).status).toBe(200)
  })

  it('a known path with another method is 405 with Allow; an unknown path stays 404', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/v1/try-on', 'POST'],
      ['PUT', '/v1/video/remove-background/', 'POST'],
      ['DELETE', '/v1/try-on/job/0193', 'GET, HEAD'],
      ['GET', '/v1/try-on/job/0193/cancel', 'POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['POST', '/v1/credits', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const r = await raw(base, path, { method, headers: json })
      expect({ method, path, status: r.status, allow: r.headers.allow }).toEqual({
        method,
        path,
        status: 405,
        allow,
      })
      expect(JSON.parse(r.body)).toMatchObject({
        error_code: 'method_not_allowed',
        error: `${method} is not allowed here; this path answers ${allow}.`,
      })
    }
    const missing = await raw(base, '/v1/nowhere', { method: 'POST', headers: json, body: '{}' })
    expect(missing.status).toBe(404)
    expect(missing.headers.allow).toBeUndefined()
  })

  it('CORS is off by default; with CORS_ORIGINS a listed origin gets its headers and preflight, another none', async () => {
    const off = await raw(base, '/v1/credits', { headers: { ...json, origin: ORIGIN } })
    expect(off.status).toBe(200)
    expect(off.headers['access-control-allow-origin']).toBeUndefined()
    const preflight = await raw(corsBase, '/v1/try-on', {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain(
      'x-api-key',
    )
    const on = await raw(corsBase, '/v1/credits', { headers: { ...json, origin: ORIGIN } })
    expect(on.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(String(on.headers['access-control-expose-headers'])).toContain('X-Request-Id')
    const other = await raw(corsBase, '/v1/credits', {
      headers: { ...json, origin: 'https://evil.example' },
    })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    expect(() =>
      loadConfig({ RESULT_URL_SECRET: 'x'.repeat(32), CORS_ORIGINS: 'https://a.example/path' }),
    ).toThrow(/CORS_ORIGINS/)
  })

  /**
   * A client that sends its whole body before it reads the answer (as Python's requests, or curl
   * without 100-continue, do), over a plain socket: an EPIPE or a reset while it is still writing
   * fails the test. Written in pieces with pauses (a slow link: @hono/node-server alone closes
   * the socket 500 ms after the answer).
   */
  const sendWholeBody = (
    url: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer,
    chunked: boolean,
  ) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(url)
      const socket = connect(Number(u.port), u.hostname)
      let answer = ''
      let written = false
      socket.setEncoding('utf8')
      /** The answer, once its headers and Content-Length bytes are in and the whole body was sent. */
      const settle = (): void => {
        const m = /^HTTP\/1\.1 (\d{3})[^]*?content-length: (\d+)[^]*?\r\n\r\n([^]*)$/i.exec(answer)
        if (written && m !== null && Buffer.byteLength(m[3]!) >= Number(m[2])) {
          socket.destroy()
          resolve({ status: Number(m[1]), body: m[3]! })
        }
      }
      socket.on('data', (d: string) => {
        answer += d
        settle()
      })
      socket.on('error', (err) =>
        reject(
          new Error(
            `${path}: ${err.message} after ${written ? 'the whole body' : 'part of the body'}`,
          ),
        ),
      )
      socket.on('close', () => {
        if (!written) reject(new Error(`${path}: the connection closed before the body was sent`))
        else {
          reject(
            new Error(
              `${path}: closed without a whole answer: ${JSON.stringify(answer.slice(0, 200))}`,
            ),
          )
        }
      })
      const head = Object.entries({
        host: u.host,
        ...headers,
        ...(chunked
          ? { 'transfer-encoding': 'chunked' }
          : { 'content-length': String(body.length) }),
      })
      const write = (b: Buffer | string): Promise<void> =>
        new Promise((r) => (socket.write(b) ? r() : socket.once('drain', () => r())))
      void (async () => {
        await write(
          `POST ${path} HTTP/1.1\r\n${head.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`,
        )
        const piece = Math.ceil(body.length / 40)
        for (let i = 0; i < body.length && !socket.destroyed; i += piece) {
          const part = body.subarray(i, i + piece)
          await write(
            chunked
              ? Buffer.concat([
                  Buffer.from(`${part.length.toString(16)}\r\n`),
                  part,
                  Buffer.from('\r\n'),
                ])
              : part,
          )
          await new Promise((r) => setTimeout(r, 25))
        }
        if (chunked) await write('0\r\n\r\n')
        written = !socket.destroyed
        settle()
      })()
    })

  it('a body past the limit always gets its 400 after the client sent it all (never EPIPE or a reset); a big upload with a bad key its 401', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 0x20)
    const cases: [string, Record<string, string>, boolean, number, string][] = [
      ['/v1/video/remove-background', json, false, 400, 'invalid_request_body'],
      ['/v1/video/remove-background', json, true, 400, 'invalid_request_body'],
      [
        '/v1/uploads',
        { 'content-type': 'video/mp4', 'x-api-key': 'wrong' },
        false,
        401,
        'invalid_auth_token',
      ],
      [
        '/v1/uploads',
        { 'content-type': 'image/jpeg', 'x-api-key': KEY },
        false,
        400,
        'file_size_too_large',
      ],
      ['/nowhere', json, false, 404, 'not_found'],
    ]
    for (const [path, headers, chunked, status, code] of cases) {
      const r = await sendWholeBody(base, path, headers, big, chunked)
      expect({ path, chunked, status: r.status }).toEqual({ path, chunked, status })
      expect(JSON.parse(r.body)).toMatchObject({ error_code: code })
    }
  })
})

describe('allowedMethods', () => {
  it('matches hono patterns: params, regex params, wildcards', () => {
    const allowed = allowedMethods([
      { method: 'GET', path: '/v1/try-on/job/:id' },
      { method: 'POST', path: '/v1/try-on/job/:id/cancel' },
      { method: 'GET', path: '/results/:kind{(try-on|remove-background)}/:file' },
      { method: 'GET', path: '/playground/*' },
      { method: 'ALL', path: '/v1/*' },
    ])
    expect(allowed('/v1/try-on/job/abc')).toEqual(['GET', 'HEAD'])
    expect(allowed('/v1/try-on/job/abc/cancel')).toEqual(['POST'])
    expect(allowed('/results/try-on/x.jpg')).toEqual(['GET', 'HEAD'])
    expect(allowed('/results/other/x.jpg')).toEqual([])
    expect(allowed('/playground/a/b.js')).toEqual(['GET', 'HEAD'])
    expect(allowed('/v1/anything')).toEqual([])
  })
})
