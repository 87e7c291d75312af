import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { listenFailure } from '@tailor/proto'

export interface HealthServer {
  port: number
  stop(): Promise<void>
}

export type Report = { ok: boolean } & Record<string, unknown>

/**
 * The worker's probe and scrape endpoints (this server starts only once the engines are loaded and
 * warmed up, so a Kubernetes startup probe on /healthz waits for that):
 * - GET /healthz: liveness, 200 while the process works (503 once shutting down);
 * - GET /readyz: readiness, 200 when models are loaded and warmed, the execution provider is the
 *   one reported, and NATS is connected; 503 otherwise;
 * - GET /metrics: Prometheus text format.
 */
export async function startHealthServer(o: {
  host: string
  port: number
  live: () => Report
  ready: () => Report
  metrics?: { contentType: string; text: () => Promise<string> }
  /** Named in the one-line start-up error when the port cannot be had. */
  portVariable?: string
}): Promise<HealthServer> {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
      const { ok, ...details } = path === '/healthz' ? o.live() : o.ready()
      json(res, ok ? 200 : 503, {
        status: ok ? (path === '/healthz' ? 'ok' : 'ready') : 'unavailable',
        ...details,
      })
      return
    }
    if (req.method === 'GET' && path === '/metrics' && o.metrics !== undefined) {
      const m = o.metrics
      m.text().then(
        (body) => res.writeHead(200, { 'content-type': m.contentType }).end(body),
        () =>
          json(res, 500, {
            error: 'Metrics could not be collected.',
            error_code: 'unexpected_error',
          }),
      )
      return
    }
    json(res, 404, { error: 'No such endpoint.', error_code: 'not_found' })
  })
  await listen(server, o.port, o.host, o.portVariable ?? 'HEALTH_PORT')
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Listens, or fails with the one-line StartupError naming `variable` (a port in use, …). */
async function listen(server: Server, port: number, host: string, variable: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  }).catch((err: unknown) => {
    throw listenFailure(err, variable, host, port)
  })
}
