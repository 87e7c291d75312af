import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { listenFailure } from '../errors.ts'

/**
 * The metrics registry set-up, once for both services: one registry per process with the process
 * metrics (CPU, memory, event-loop lag, GC); the embedded mode shares one between the gateway and
 * its worker. Each service defines its own metrics on it (services/{gateway,inference}/src/metrics.ts).
 * A separate entry point (`@tailor/proto/metrics`) so `@tailor/proto` never loads prom-client.
 */
export type MetricsRegistry = Registry

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}

/** Job durations span a 1 s try-on to a 60 s clip on a CPU (minutes): both services' job histograms. */
export const JOB_SECONDS_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200]

export interface MetricsServer {
  port: number
  stop(): Promise<void>
}

/**
 * GET /metrics alone on its own port (METRICS_PORT; never routed by the Ingress that publishes the
 * public port), anything else 404. Both services serve their registry this way. A port that cannot
 * be had fails with the one-line StartupError naming METRICS_PORT.
 */
export async function startMetricsServer(o: {
  host: string
  port: number
  metrics: { contentType: string; text: () => Promise<string> }
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/metrics') {
      o.metrics.text().then(
        (body) => res.writeHead(200, { 'content-type': o.metrics.contentType }).end(body),
        () =>
          res.writeHead(500, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              error: 'Metrics could not be collected.',
              error_code: 'unexpected_error',
            }),
          ),
      )
      return
    }
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'No such endpoint.', error_code: 'not_found' }))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      server.off('error', reject)
      resolve()
    })
  }).catch((err: unknown) => {
    throw listenFailure(err, 'METRICS_PORT', o.host, o.port)
  })
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
