import { request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVE_OPTIONS } from '../app.ts'
import { toErrorResponse } from '../errors.ts'
import { createLogger } from '../logger.ts'
import { bodyLimitByHeaders } from './body-limit.ts'
import { jsonObjectBody } from './json-body.ts'

const MAX = 1024
/** Whether @hono/node-server built the web Request behind its light request object (it keeps it under a symbol). */
const webRequestBuilt = (raw: Request): boolean =>
  Object.getOwnPropertySymbols(raw).some(
    (k) =>
      k.description === 'requestCache' &&
      (raw as unknown as Record<symbol, unknown>)[k] !== undefined,
  )

/** The gateway's body middleware over a real socket: bodies of declared length are read from the IncomingMessage. */
describe('JSON bodies on @hono/node-server', () => {
  let server: Server
  let port: number
  beforeAll(async () => {
    const app = new Hono()
      .use('*', bodyLimitByHeaders(MAX))
      .post('/echo', jsonObjectBody(), async (c) =>
        c.json({ got: await c.req.json(), materialized: webRequestBuilt(c.req.raw) }),
      )
      .post('/echo-then-signal', jsonObjectBody(), async (c) =>
        c.json({ got: await c.req.json(), aborted: c.req.raw.signal.aborted }),
      )
      .get('/poll', (c) => c.json({ ok: true }))
      .onError((err, c) => toErrorResponse(err, c, createLogger('silent')))
    server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', ...SERVE_OPTIONS }, () =>
        resolve(s as Server),
      ) as Server
    })
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  /** Sends `parts` as separate socket writes (a body that arrives in pieces). */
  const send = (
    headers: Record<string, string>,
    parts: Buffer[],
    o: { path?: string; method?: string; breakOff?: boolean } = {},
  ) =>
    new Promise<{ status: number; body: Record<string, unknown> } | 'reset'>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: o.path ?? '/echo', method: o.method ?? 'POST', headers },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (d: string) => (text += d))
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(text) as Record<string, unknown>,
            }),
          )
        },
      )
      req.on('error', (err) => (o.breakOff ? resolve('reset') : reject(err)))
      void (async () => {
        for (const p of parts) {
          req.write(p)
          await new Promise((r) => setTimeout(r, 20))
        }
        if (o.breakOff) req.destroy()
        else req.end()
      })()
    })

  it('parses a body sent in pieces, UTF-8 with a BOM, as the web Request would, without building the web Request', async () => {
    const json = Buffer.from('\uFEFF{"name":"caf\u00e9 \u2615","n":[1,2,3]}', 'utf8')
    const parts = [json.subarray(0, 7), json.subarray(7, 20), json.subarray(20)]
    const r = await send(
      { 'content-type': 'application/json', 'content-length': String(json.length) },
      parts,
    )
    expect(r).toEqual({
      status: 200,
      body: { got: { name: 'caf\u00e9 \u2615', n: [1, 2, 3] }, materialized: false },
    })
  })

  it('the web Request can still be built after the body was read from the socket (a sync try-on reads c.req.raw.signal)', async () => {
    const json = Buffer.from('{"a":1}')
    const r = await send(
      { 'content-type': 'application/json', 'content-length': String(json.length) },
      [json],
      { path: '/echo-then-signal' },
    )
    expect(r).toEqual({ status: 200, body: { got: { a: 1 }, aborted: false } })
  })

  it('answers invalid_request_body for malformed JSON, a non-object and a declared length past the limit', async () => {
    const bad = Buffer.from('{"a":')
    expect(
      await send({ 'content-type': 'application/json', 'content-length': String(bad.length) }, [
        bad,
      ]),
    ).toMatchObject({ status: 400, body: { error_code: 'invalid_request_body' } })
    const arr = Buffer.from('[1]')
    expect(
      await send({ 'content-type': 'application/json', 'content-length': String(arr.length) }, [
        arr,
      ]),
    ).toMatchObject({ status: 400, body: { error_code: 'invalid_request_body' } })
    const big = Buffer.from(JSON.stringify({ a: 'x'.repeat(MAX) }))
    expect(
      await send({ 'content-type': 'application/json', 'content-length': String(big.length) }, [
        big,
      ]),
    ).toMatchObject({ status: 400, body: { error_code: 'invalid_request_body' } })
  })

  it('still counts a chunked body against the limit', async () => {
    const ok = Buffer.from('{"chunked":true}')
    expect(
      await send({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [ok]),
    ).toMatchObject({ status: 200, body: { got: { chunked: true } } })
    const big = Buffer.from(JSON.stringify({ a: 'x'.repeat(MAX) }))
    expect(
      await send({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [
        big.subarray(0, 600),
        big.subarray(600),
      ]),
    ).toMatchObject({ status: 400, body: { error_code: 'invalid_request_body' } })
  })

  it('a body that breaks off fails that request only (no unhandled rejection, the next request is served)', async () => {
    const part = Buffer.from('{"a":"')
    expect(
      await send({ 'content-type': 'application/json', 'content-length': '500' }, [part], {
        breakOff: true,
      }),
    ).toBe('reset')
    await new Promise((r) => setTimeout(r, 100))
    const ok = Buffer.from('{"after":1}')
    expect(
      await send({ 'content-type': 'application/json', 'content-length': String(ok.length) }, [ok]),
    ).toMatchObject({ status: 200, body: { got: { after: 1 } } })
  })

  it('a poll without a body passes the limit untouched', async () => {
    expect(await send({}, [], { path: '/poll', method: 'GET' })).toEqual({
      status: 200,
      body: { ok: true },
    })
  })
})
