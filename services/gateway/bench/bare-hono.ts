/**
 * The load benchmark's baseline (`pnpm bench:load`): a bare Hono app on @hono/node-server that
 * accepts the same POST as the gateway (parse JSON, answer 202 {job_id}) with no auth, validation,
 * record or publish. Run as its own process, like the gateway, so both see the same machine.
 *
 * Usage: BARE_PORT=8090 tsx services/gateway/bench/bare-hono.ts
 */
import { randomUUID } from 'node:crypto'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

// A bench fixture, not a service: it has no config module, so it reads its one variable here.
const port = Number(process.env.BARE_PORT ?? 0)
const app = new Hono().post('/v1/video/remove-background', async (c) => {
  const body: unknown = await c.req.json()
  if (typeof body !== 'object' || body === null) return c.json({ error: 'bad body' }, 400)
  return c.json({ job_id: randomUUID() }, 202)
})
serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  console.log(`bare hono listening ${info.port}`)
})
