/**
 * Failed authentications are throttled per client address across both public edges of a gateway
 * (issue 11 §6): unknown keys sent over HTTP and over the gRPC API draw on one allowance, and past
 * it either edge refuses (429 / RESOURCE_EXHAUSTED too_many_auth_failures) before looking at the
 * key. Real NATS, real sockets, a real grpc-js client.
 */
import { status as grpcStatus } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start, type Gateway } from '@tailor/gateway/src/start.ts'
import { openGrpcApiClient, rejection, unary } from '../helpers/grpc-api.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { TEST_JOB_EVENTS_TOKEN } from '../helpers/processes.ts'

const KEY = 'auth-throttle-int-key-0123456789abcdef'
const JOB = '00000000-0000-7000-8000-000000000000'
let nats: NatsServer
let gateway: Gateway

beforeAll(async () => {
  nats = await startNatsServer()
  gateway = await start(
    loadConfig({
      NATS_URL: nats.url,
      JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_PORT: '0',
      API_GRPC_PORT: '0',
      API_KEYS: KEY,
      RESULT_URL_SECRET: 'auth-throttle-int-secret-0123456789abcdef',
      AUTH_FAILURE_LIMIT: '3',
      AUTH_FAILURE_WINDOW_S: '600',
    }),
    { logger: createLogger('silent') },
  )
})
afterAll(async () => {
  await gateway?.stop()
  await nats?.stop()
})

describe('failed authentications per client address, HTTP and gRPC together', () => {
  it('two unknown keys over HTTP and one over gRPC use up the allowance; then both edges refuse, the valid key too', async () => {
    const http = (key: string) =>
      fetch(`http://127.0.0.1:${gateway.port}/v1/credits`, { headers: { 'x-api-key': key } })
    const client = await openGrpcApiClient(`127.0.0.1:${gateway.apiGrpcPort}`)
    try {
      const valid = await unary(client, 'GetJob', { jobId: JOB }, KEY).then(
        () => 'answered',
        (e: { code: number }) => e.code,
      )
      expect(valid, 'a valid key is not counted').not.toBe(grpcStatus.UNAUTHENTICATED)
      expect((await http('wrong-1')).status).toBe(401)
      expect((await http('wrong-2')).status).toBe(401)
      const third = await rejection(unary(client, 'GetJob', { jobId: JOB }, 'wrong-3'))
      expect(third.code).toBe(grpcStatus.UNAUTHENTICATED)
      const refused = await rejection(unary(client, 'GetJob', { jobId: JOB }, KEY))
      expect(refused.code).toBe(grpcStatus.RESOURCE_EXHAUSTED)
      expect(refused.metadata.get('error-code')).toEqual(['too_many_auth_failures'])
      const r = await http(KEY)
      expect(r.status).toBe(429)
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await r.json()).toMatchObject({
        error_code: 'too_many_auth_failures',
        error: expect.stringMatching(/Too many failed authentications from this address/),
      })
    } finally {
      client.close()
    }
  })
})
