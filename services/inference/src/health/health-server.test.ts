import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { StartupError } from '@tailor/proto'
import { startMetricsServer } from '@tailor/proto/metrics'
import { startHealthServer } from './health-server.ts'

const scrape = { contentType: 'text/plain; version=0.0.4', text: async () => 'tailor_up 1\n' }
const report = () => ({ ok: true })

describe('inference health and metrics servers', () => {
  it('METRICS_PORT: /metrics on its own port only (404 on the health port, which keeps the probes)', async () => {
    const health = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      live: report,
      ready: report,
    })
    const metrics = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics: scrape })
    try {
      expect((await fetch(`http://127.0.0.1:${health.port}/metrics`)).status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${health.port}/healthz`)).status).toBe(200)
      const m = await fetch(`http://127.0.0.1:${metrics.port}/metrics`)
      expect(m.status).toBe(200)
      expect(await m.text()).toBe('tailor_up 1\n')
      expect((await fetch(`http://127.0.0.1:${metrics.port}/healthz`)).status).toBe(404)
    } finally {
      await health.stop()
      await metrics.stop()
    }
  })

  it('a port in use is a StartupError naming the variable', async () => {
    const busy = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
    const port = (busy.address() as { port: number }).port
    try {
      const e1 = await startHealthServer({
        host: '127.0.0.1',
        port,
        live: report,
        ready: report,
      }).catch((e: unknown) => e)
      expect(e1).toBeInstanceOf(StartupError)
      expect((e1 as Error).message).toBe(
        `HEALTH_PORT=${port}: port ${port} on 127.0.0.1 is already in use; set HEALTH_PORT to a free port (or stop what is using it).`,
      )
      const e2 = await startMetricsServer({ host: '127.0.0.1', port, metrics: scrape }).catch(
        (e: unknown) => e,
      )
      expect((e2 as Error).message).toMatch(/^METRICS_PORT=\d+: .* set METRICS_PORT to a free port/)
    } finally {
      await new Promise((r) => busy.close(r))
    }
  })
})
