/**
 * Input and SSRF matrix, layer 3 (cases in input-matrix.cases.ts, table in docs/input-matrix.md):
 * request bodies at the HTTP edge. Bodies go through `app.request`, except the 10 MB ones, which
 * go through a real @hono/node-server on 127.0.0.1 so that what the server read off the socket
 * before answering can be measured. Only loopback is connected to.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve, type Http2Bindings, type HttpBindings } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HTTP_STATUS, type JobEnvelope } from '@tailor/proto'
import { matrixTitle } from '@tailor/proto/net/testing'
import { createApp, SERVE_OPTIONS } from './app.ts'
import { loadConfig, type Config } from './config.ts'
import { BODY_CASES } from './input-matrix.cases.ts'
import { openFileJobStore } from './jobs/job-store-files.ts'
import { createLogger } from './logger.ts'

const KEY = 'matrix-key-0123456789-abcdefghij'
const BIG_BODY_BYTES = 10 * 1024 * 1024
/** Bytes the server may have read off the socket when the app answers a 10 MB body (limit 64 KiB). */
const MAX_READ_BEFORE_ANSWER = 1024 * 1024
const DEEP = 100_000

type Id = (typeof BODY_CASES)[number]['id']
interface Answer {
  status: number
  body: Record<string, unknown>
}

let dir: string
const published: JobEnvelope[] = []
// Rate and concurrency limits out of the way: every case is one request from the same key.
const LIMITS_OFF = {
  DEFAULT_RATE_LIMIT_PER_S: '100000',
  DEFAULT_MAX_CONCURRENT_JOBS: '0',
  RATE_LIMIT_PER_S: '100000',
  MAX_CONCURRENT_JOBS: '0',
}
const baseEnv = {
  API_KEYS: KEY,
  RESULT_URL_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'http://tailor.test',
  ...LIMITS_OFF,
}

async function appWith(config: Config) {
  return createApp({
    config,
    logger: createLogger('silent'),
    jobs: await openFileJobStore(await mkdtemp(join(dir, 'jobs-'))),
    results: {
      size: async () => null,
      open: async () => {
        throw new Error('no results here')
      },
    },
    publisher: { publish: async (j) => void published.push(j) },
    cancel: { cancel: () => undefined },
    health: () => ({ ok: true }),
  })
}
let app: Awaited<ReturnType<typeof appWith>>
let roomyApp: Awaited<ReturnType<typeof appWith>>
let server: Server
let port: number
const readWhenAnswered: number[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-matrix-gw-'))
  app = await appWith(loadConfig(baseEnv))
  roomyApp = await appWith(loadConfig({ ...baseEnv, MAX_BODY_BYTES: String(1024 * 1024) }))
  // Records, when the app has its answer, how much the server had read off the request's socket.
  const fetch = async (req: Request, env: HttpBindings | Http2Bindings): Promise<Response> => {
    const res = await app.fetch(req, env)
    readWhenAnswered.push(env.incoming.socket.bytesRead)
    return res
  }
  server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1', ...SERVE_OPTIONS }, () =>
      resolve(s as Server),
    ) as Server
  })
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((r) => server?.close(r))
  await rm(dir, { recursive: true, force: true })
})

async function post(
  path: string,
  body: string,
  o: { type?: string; roomy?: boolean } = {},
): Promise<Answer> {
  const r = await (o.roomy === true ? roomyApp : app).request(path, {
    method: 'POST',
    headers: { 'content-type': o.type ?? 'application/json', 'x-api-key': KEY },
    body,
  })
  return { status: r.status, body: (await r.json()) as Record<string, unknown> }
}

const VIDEO = '/v1/video/remove-background'
const TRY_ON = '/v1/try-on'
const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const video = (url: string): Promise<Answer> => post(VIDEO, JSON.stringify({ video_url: url }))
const tryOn = (person: string, garment: string): Promise<Answer> =>
  post(
    TRY_ON,
    JSON.stringify({
      person_image_url: person,
      garment_image_url: garment,
      wait_for_result: 'false',
    }),
  )

/**
 * Sends `bytes` of a JSON-looking body to the real server, honouring back-pressure, and stops as
 * soon as the answer arrives. Returns the answer and what the server had read when it answered.
 */
function postBig(
  path: string,
  bytes: number,
  chunked: boolean,
): Promise<Answer & { serverReadBytes: number }> {
  return new Promise((resolve, reject) => {
    readWhenAnswered.length = 0
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'x-api-key': KEY,
        ...(chunked ? {} : { 'content-length': String(bytes) }),
      },
    })
    let answered = false
    req.on('response', (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        req.destroy()
        const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>
        resolve({
          status: res.statusCode ?? 0,
          body,
          serverReadBytes: readWhenAnswered[0] ?? Number.NaN,
        })
      })
    })
    req.on('error', (err) => {
      if (!answered) reject(err)
    })
    const chunk = Buffer.alloc(64 * 1024, 0x20) // spaces: valid JSON whitespace
    chunk.write('{"video_url":"https://example.com/v.mp4","pad":"')
    let sent = 0
    const pump = (): void => {
      while (!answered && sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent)
        sent += n
        if (!req.write(chunk.subarray(0, n))) {
          req.once('drain', pump)
          return
        }
      }
      if (!answered) req.end()
    }
    pump()
  })
}

const RUN = {
  G01: () => post(VIDEO, '{"video_url": "https://example.com/v.mp4",'),
  G02: () => post(TRY_ON, '[1, 2, 3]'),
  G03: () => post(VIDEO, nested(DEEP), { roomy: true }),
  G04: () => post(VIDEO, `{"video_url": ${nested(DEEP)}}`, { roomy: true }),
  G05: async () => {
    const a = await post(
      VIDEO,
      `{"video_url": "https://example.com/v.mp4", "x": ${nested(30_000)}}`,
    )
    expect(JSON.stringify(published.at(-1)?.params)).not.toContain('[[')
    return a
  },
  G06: async () => {
    const a = await postBig(VIDEO, BIG_BODY_BYTES, false)
    expect(a.serverReadBytes, 'bytes read before answering').toBeLessThan(MAX_READ_BEFORE_ANSWER)
    return a
  },
  G07: async () => {
    const a = await postBig(TRY_ON, BIG_BODY_BYTES, true)
    expect(a.serverReadBytes, 'bytes read before answering').toBeLessThan(MAX_READ_BEFORE_ANSWER)
    return a
  },
  G08: () =>
    post(VIDEO, JSON.stringify({ video_url: 'https://example.com/v.mp4' }), { type: 'text/plain' }),
  G09: () =>
    post(
      TRY_ON,
      'person_image_url=https%3A%2F%2Fexample.com%2Fp.jpg&garment_image_url=https%3A%2F%2Fexample.com%2Fg.jpg',
    ),
  G10: () => video('file:///etc/passwd'),
  G11: () => video('gopher://127.0.0.1:6379/_FLUSHALL'),
  G12: () => tryOn('data:image/png;base64,iVBORw0KGgo=', 'https://example.com/g.jpg'),
  G13: () => tryOn('https://example.com/p.jpg', 'ftp://example.com/garment.jpg'),
  G14: () => video('https://user:secret@example.com/v.mp4'),
  G15: () => tryOn(`https://example.com/${'a'.repeat(2030)}`, 'https://example.com/g.jpg'),
  G16: async () => {
    const r = await app.request('/results/%A4%A2')
    return { status: r.status, body: (await r.json()) as Record<string, unknown> }
  },
} satisfies Record<Id, () => Promise<Answer>>

describe('input matrix: request bodies', () => {
  it.each(BODY_CASES.map((c) => [matrixTitle(c), c] as const))('%s', async (_title, c) => {
    const before = published.length
    const a = await RUN[c.id]()
    if (c.expected === 'accepted') {
      expect(a, JSON.stringify(a.body)).toMatchObject({
        status: 202,
        body: { job_id: expect.any(String) },
      })
      expect(published.length).toBe(before + 1)
    } else {
      expect(a, JSON.stringify(a.body)).toMatchObject({
        status: HTTP_STATUS[c.expected],
        body: { error_code: c.expected, error: expect.any(String) },
      })
      expect(published.length, 'nothing was queued').toBe(before)
    }
  })
})
