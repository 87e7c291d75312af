import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { configError, describeStartupError, withoutCredentials } from './startup.ts'

class JetStreamNotEnabled extends Error {
  override name = 'JetStreamNotEnabled'
}
class ConnectionError extends Error {
  override name = 'ConnectionError'
}
const sysErr = (code: string, extra: Record<string, unknown>): Error =>
  Object.assign(new Error(`listen ${code}`), { code, ...extra })

describe('start-up errors in one line each', () => {
  it('a bad environment: every variable, one line each, the service named', () => {
    const r = z
      .object({ A_PORT: z.coerce.number().int(), SECRET: z.string() })
      .safeParse({ A_PORT: 'x' })
    expect(r.success).toBe(false)
    const err = configError(r.error!)
    expect(err.message).toMatch(/^invalid environment\n/)
    expect(describeStartupError('gateway', err)).toEqual([
      'gateway: A_PORT: Invalid input: expected number, received NaN',
      'gateway: SECRET: Invalid input: expected string, received undefined',
    ])
  })

  it('NATS without JetStream names the -js flag', () => {
    const err = new JetStreamNotEnabled('jetstream is not enabled', {
      cause: new Error("no responders: '$JS.API.INFO'"),
    })
    expect(describeStartupError('gateway', err, { natsUrl: 'nats://u:p@127.0.0.1:4222' })).toEqual([
      'gateway: NATS at nats://127.0.0.1:4222 has no JetStream: start the server with it, e.g. `nats-server -js -sd ./nats-data`',
    ])
  })

  it('NATS unreachable, a port in use, an unknown error', () => {
    const refused = new ConnectionError('connection refused', {
      cause: sysErr('ECONNREFUSED', { port: 4222, address: '127.0.0.1' }),
    })
    expect(
      describeStartupError('inference', refused, { natsUrl: 'nats://127.0.0.1:4222' }),
    ).toEqual([
      'inference: cannot reach NATS at nats://127.0.0.1:4222 (ECONNREFUSED): is nats-server running there?',
    ])
    expect(
      describeStartupError('gateway', sysErr('EADDRINUSE', { port: 8080, address: '127.0.0.1' }), {
        ports: { PORT: 8080, API_GRPC_PORT: 50052 },
      }),
    ).toEqual([
      'gateway: cannot listen on port 8080 on 127.0.0.1: another process is using it (set PORT to a free port, or stop the other process)',
    ])
    // grpc-js reports a failed bind in its message only.
    const grpc = new Error(
      'No address added out of total 1 resolved errors: [Error: bind EADDRINUSE 127.0.0.1:50052]',
    )
    expect(
      describeStartupError('gateway', grpc, { ports: { PORT: 8080, API_GRPC_PORT: 50052 } })?.[0],
    ).toContain('port 50052: another process is using it (set API_GRPC_PORT')
    expect(describeStartupError('gateway', new TypeError('x is undefined'))).toBeNull()
  })

  it('shows NATS URLs without credentials', () => {
    expect(withoutCredentials('nats://gw:secret@a:4222, tls://b:4222')).toBe(
      'nats://a:4222,tls://b:4222',
    )
  })
})
