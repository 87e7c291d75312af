import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HealthServer {
  port: number
  stop(): Promise<void>
}

/**
 * GET /healthz for probes: 200 with the execution provider actually in use once the engine is
 * loaded and warmed up (this server starts only then), 503 while shutting down.
 */
export async function startHealthServer(o: { host: string; port: number; report: () => { ok: boolean } & Record<string, unknown> }): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/healthz' && req.url !== '/readyz')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'No such endpoint.', error_code: 'not_found' }))
      return
    }
    const { ok, ...details } = o.report()
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', ...details }))
  })
  await new Promise<void>((resolve) => server.listen(o.port, o.host, resolve))
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
