/**
 * METRICS_PORT: the gateway serves /metrics on its own port (what a PodMonitor scrapes) and
 * answers 404 for /metrics on the public port (what the Ingress publishes). Real NATS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start, type Gateway } from '@tailor/gateway/src/start.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { TEST_JOB_EVENTS_TOKEN } from '../helpers/processes.ts'

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
      METRICS_PORT: '0',
      TAILOR_API_KEY: 'metrics-port-test-key-0123456789abcdef',
      RESULT_URL_SECRET: 'metrics-port-test-secret-0123456789abcdef',
    }),
    { logger: createLogger('silent') },
  )
})
afterAll(async () => {
  await gateway?.stop()
  await nats?.stop()
})

describe('METRICS_PORT', () => {
  it('/metrics answers on the metrics port only; the public port says 404', async () => {
    expect(gateway.metricsPort).toBeGreaterThan(0)
    expect(gateway.metricsPort).not.toBe(gateway.port)
    expect((await fetch(`http://127.0.0.1:${gateway.port}/healthz`)).status).toBe(200) // counted in tailor_http_requests_total
    const m = await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)
    expect(m.status).toBe(200)
    expect(m.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await m.text()
    expect(text).toMatch(/^tailor_http_requests_total\{[^}]*route="\/healthz"[^}]*\} [1-9]/m)
    expect(text).toMatch(/^tailor_queue_depth 0$/m)
    const pub = await fetch(`http://127.0.0.1:${gateway.port}/metrics`)
    expect(pub.status).toBe(404)
    expect(await pub.json()).toMatchObject({ error_code: 'not_found' })
    expect((await fetch(`http://127.0.0.1:${gateway.metricsPort}/v1/credits`)).status).toBe(404) // nothing else there
  })
})
