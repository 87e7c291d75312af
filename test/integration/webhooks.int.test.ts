/**
 * Webhooks and Idempotency-Key, end to end: a real HTTP receiver on loopback verifies every
 * delivery with the independent `standardwebhooks` package.
 *   - embedded mode (one process, real worker and models): completion and failure webhooks of real
 *     jobs, retries after 500s, idempotent submissions, destinations refused at submission;
 *   - distributed mode (real nats-server, gateways in this process; job events applied through the
 *     gateway's own handler, as its gRPC server does): a delivery survives a gateway restart,
 *     concurrent duplicates through two replicas make one job, a destination whose name resolves to
 *     a refused address gets no connection.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { createReadStream } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STREAM } from '@tailor/proto'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start as startGateway, type Gateway } from '@tailor/gateway/src/start.ts'
import { generateWebhookSecret } from '@tailor/gateway/src/webhooks/standard-webhooks.ts'
import { WEBHOOKS_STREAM } from '@tailor/gateway/src/webhooks/webhook-queue-jetstream.ts'
import { ffmpeg } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, TEST_JOB_EVENTS_TOKEN, type ServiceProcess } from '../helpers/processes.ts'

const JOB_TIMEOUT_MS = 120_000
const EMBEDDED_KEY = 'webhook-test-key-0123456789-abcd'
/** These tests send bursts: per-key limits well above them. */
const NO_LIMITS = { DEFAULT_RATE_LIMIT_PER_S: '1000', DEFAULT_MAX_CONCURRENT_JOBS: '100' }
/** Generous bound for a webhook to arrive once its job is final (or its retry is due). */
const DELIVERY_TIMEOUT_MS = 20_000

interface Delivery {
  path: string
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/** A webhook receiver on loopback. `answers[path]` lists the statuses to answer in turn (then 204). */
async function startReceiver() {
  const deliveries: Delivery[] = []
  const answers: Record<string, number[]> = {}
  let connections = 0
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      deliveries.push({
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      })
      res.writeHead(answers[path]?.shift() ?? 204).end()
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    port,
    deliveries,
    answers,
    connections: () => connections,
    /** Waits for the n-th delivery to `path`. */
    async waitFor(path: string, n = 1, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<Delivery[]> {
      const end = Date.now() + timeoutMs
      for (;;) {
        const got = deliveries.filter((d) => d.path === path)
        if (got.length >= n) return got
        if (Date.now() > end) {
          throw new Error(
            `${n} deliveries to ${path} not seen within ${timeoutMs} ms (got ${got.length})`,
          )
        }
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    async stop() {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>

interface Payload {
  type: string
  timestamp: string
  data: {
    job_id: string
    kind: string
    status: string
    result_url?: string
    error?: { error_code: string; message: string }
  }
}

/** Verifies with the standardwebhooks package (signature over id.timestamp.body, timestamp tolerance). */
const verify = (secret: string, d: Delivery): Payload =>
  new Webhook(secret).verify(d.body, {
    'webhook-id': String(d.headers['webhook-id']),
    'webhook-timestamp': String(d.headers['webhook-timestamp']),
    'webhook-signature': String(d.headers['webhook-signature']),
  }) as Payload

async function post(
  base: string,
  key: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  })
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> }
}

describe('embedded: webhooks and Idempotency-Key with a real worker', () => {
  let models: { dir: string; remove(): Promise<void> }
  let dataDir: string
  let mediaDir: string
  let media: Server
  let mediaBase: string
  let tailor: ServiceProcess
  let base: string
  let apiKey: string
  let secret: string
  let hooks: Receiver

  beforeAll(async () => {
    // Video models only: try-on jobs then fail at once (service_unavailable), which is all the
    // try-on replay below needs (a final state to answer again), and the file stays fast.
    models = await snapshotModels()
    hooks = await startReceiver()
    mediaDir = await mkdtemp(join(tmpdir(), 'tailor-hook-media-'))
    // A tiny real clip (a short job) and a non-video (a failed job).
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=96x64:rate=10',
      '-t',
      '0.5',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      join(mediaDir, 'tiny.mp4'),
    ])
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=blue:size=96x64:rate=10',
      '-t',
      '0.5',
      '-f',
      'image2',
      '-update',
      '1',
      join(mediaDir, 'frame.png'),
    ])
    media = createServer((req, res) => {
      const path = join(mediaDir, (req.url ?? '/').slice(1).replace(/[^a-z0-9.]/gi, ''))
      stat(path).then(
        (s) => {
          res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': s.size })
          createReadStream(path).pipe(res)
        },
        () => res.writeHead(404).end(),
      )
    })
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r))
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`
    dataDir = await mkdtemp(join(tmpdir(), 'tailor-hook-data-'))
    const port = await freePort()
    tailor = startService('services/embedded/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      TAILOR_DATA_DIR: dataDir,
      MODELS_DIR: models.dir,
      TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
      TAILOR_API_KEY: EMBEDDED_KEY,
      API_GRPC_PORT: '0',
      WEBHOOK_RETRY_DELAYS_MS: '300,600',
      LOG_LEVEL: 'warn',
      ...NO_LIMITS,
    })
    await tailor.waitFor('Tailor is running at')
    apiKey = EMBEDDED_KEY
    base = `http://127.0.0.1:${port}`
    secret = (await readFile(join(dataDir, 'webhook.secret'), 'utf8')).trim()
  })
  afterAll(async () => {
    await tailor?.stop()
    await hooks?.stop()
    media?.closeAllConnections()
    await new Promise((r) => media?.close(r))
    await models?.remove()
    for (const d of [dataDir, mediaDir]) if (d) await rm(d, { recursive: true, force: true })
  })

  it('generates a whsec_ secret in the data dir and says where at start', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(tailor.output()).toContain(join(dataDir, 'webhook.secret'))
  })

  it('a completed job calls its webhook_url once, signed; result_url downloads the result', async () => {
    const r = await post(base, apiKey, '/v1/video/remove-background', {
      video_url: `${mediaBase}/tiny.mp4`,
      output_format: 'webm_vp9',
      background_color: 'transparent',
      webhook_url: hooks.url('/done'),
    })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    const [d] = await hooks.waitFor('/done', 1, JOB_TIMEOUT_MS)
    const p = verify(secret, d!)
    expect(d!.headers['webhook-id']).toBe(`msg_${r.body.job_id as string}_completed`)
    expect(d!.headers['content-type']).toBe('application/json')
    expect(p).toMatchObject({
      type: 'job.completed',
      data: { job_id: r.body.job_id, kind: 'remove-background', status: 'completed' },
    })
    expect(Date.parse(p.timestamp)).toBeGreaterThan(0)
    const res = await fetch(p.data.result_url!)
    expect(res.status).toBe(200)
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100)
    // A tampered body fails verification with the independent implementation.
    expect(() => verify(secret, { ...d!, body: d!.body.replace('completed', 'failed') })).toThrow()
    await new Promise((r2) => setTimeout(r2, 500))
    expect(hooks.deliveries.filter((x) => x.path === '/done')).toHaveLength(1)
  })

  it('a failed job calls it with the error; 500s are retried on the schedule until a 2xx', async () => {
    hooks.answers['/flaky'] = [500, 503]
    const r = await post(base, apiKey, '/v1/video/remove-background', {
      video_url: `${mediaBase}/frame.png`,
      webhook_url: hooks.url('/flaky'),
    })
    expect(r.status).toBe(202)
    const got = await hooks.waitFor('/flaky', 3, JOB_TIMEOUT_MS)
    const payloads = got.map((d) => verify(secret, d))
    expect(new Set(got.map((d) => d.headers['webhook-id']))).toEqual(
      new Set([`msg_${r.body.job_id as string}_failed`]),
    )
    for (const p of payloads) {
      expect(p).toMatchObject({
        type: 'job.failed',
        data: { job_id: r.body.job_id, status: 'failed', error: { error_code: 'malformed_video' } },
      })
      expect(p.data.result_url).toBeUndefined()
    }
    // WEBHOOK_RETRY_DELAYS_MS=300,600: attempts 2 and 3 come after at least those delays.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(250)
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(550)
    await new Promise((r2) => setTimeout(r2, 1000))
    expect(hooks.deliveries.filter((x) => x.path === '/flaky')).toHaveLength(3)
  })

  it('gives up after the last attempt of the schedule', async () => {
    hooks.answers['/down'] = [500, 500, 500, 500]
    const r = await post(base, apiKey, '/v1/video/remove-background', {
      video_url: `${mediaBase}/frame.png`,
      webhook_url: hooks.url('/down'),
    })
    expect(r.status).toBe(202)
    await hooks.waitFor('/down', 3, JOB_TIMEOUT_MS)
    await new Promise((r2) => setTimeout(r2, 2000)) // well past another 600 ms delay
    expect(hooks.deliveries.filter((x) => x.path === '/down')).toHaveLength(3)
  })

  it('refuses webhook_url at submission when it is not http(s) or names a private address', async () => {
    for (const webhook_url of [
      'ftp://example.com/hook',
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://[fd00::1]/x',
      'https://user:pw@example.com/h',
      'not a url',
    ]) {
      const r = await post(base, apiKey, '/v1/video/remove-background', {
        video_url: `${mediaBase}/tiny.mp4`,
        webhook_url,
      })
      expect(r.status, webhook_url).toBe(400)
      expect(r.body.error_code).toBe('invalid_parameter')
      expect(String(r.body.error)).toContain('webhook_url')
    }
  })

  it('Idempotency-Key: same key and body → the same job (Idempotent-Replayed), another body → 422', async () => {
    const body = { video_url: `${mediaBase}/tiny.mp4`, output_format: 'gif' }
    const key = { 'Idempotency-Key': `order-${Date.now()}` }
    const a = await post(base, apiKey, '/v1/video/remove-background', body, key)
    const b = await post(
      base,
      apiKey,
      '/v1/video/remove-background',
      { output_format: 'gif', video_url: body.video_url, unknown_field: 1 },
      key,
    )
    expect(a.status).toBe(202)
    expect(a.headers.get('idempotent-replayed')).toBeNull()
    expect(b.status).toBe(202)
    expect(b.body.job_id).toBe(a.body.job_id)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const c = await post(
      base,
      apiKey,
      '/v1/video/remove-background',
      { ...body, output_format: 'mp4_h264' },
      key,
    )
    expect(c.status).toBe(422)
    expect(c.body.error_code).toBe('idempotency_key_reused')
    // Another operation with the same key is another request too.
    const d = await post(
      base,
      apiKey,
      '/v1/try-on',
      {
        person_image_url: `${mediaBase}/frame.png`,
        garment_image_url: `${mediaBase}/frame.png`,
        wait_for_result: false,
      },
      key,
    )
    expect(d.status).toBe(422)
    const bad = await post(base, apiKey, '/v1/video/remove-background', body, {
      'Idempotency-Key': 'x'.repeat(256),
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error_code).toBe('invalid_parameter')
  })

  it("Idempotency-Key: concurrent duplicates create exactly one job; a try-on replay answers the job's state", async () => {
    const key = { 'Idempotency-Key': `burst-${Date.now()}` }
    const body = { video_url: `${mediaBase}/tiny.mp4`, output_format: 'mkv_h264' }
    const all = await Promise.all(
      Array.from({ length: 6 }, () => post(base, apiKey, '/v1/video/remove-background', body, key)),
    )
    expect(all.map((r) => r.status)).toEqual(Array(6).fill(202))
    expect(new Set(all.map((r) => r.body.job_id)).size).toBe(1)
    expect(all.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(5)

    const tk = { 'Idempotency-Key': `tryon-${Date.now()}` }
    const tb = {
      person_image_url: `${mediaBase}/frame.png`,
      garment_image_url: `${mediaBase}/frame.png`,
      wait_for_result: true,
    }
    const t1 = await post(base, apiKey, '/v1/try-on', tb, tk)
    const t2 = await post(base, apiKey, '/v1/try-on', tb, tk)
    // Without try-on models the job fails at once; the replay answers that same failure.
    expect(t1.status).toBe(503)
    expect(t2.status).toBe(t1.status)
    expect(t2.body).toMatchObject({ job_id: t1.body.job_id, error_code: t1.body.error_code })
    expect(t2.headers.get('idempotent-replayed')).toBe('true')
  })
})

describe('distributed: WEBHOOKS stream and KV idempotency with a real nats-server', () => {
  const apiKey = 'test-key-distributed-0123456789ab'
  const secret = generateWebhookSecret()
  let nats: NatsServer
  let nc: NatsConnection
  let hooks: Receiver
  const gateways: Gateway[] = []

  const gatewayEnv = (extra: Record<string, string | undefined> = {}) => ({
    NATS_URL: nats.url,
    JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_PORT: '0',
    API_GRPC_PORT: '0',
    API_KEYS: apiKey,
    RESULT_URL_SECRET: 'r'.repeat(40),
    WEBHOOK_SECRET: secret,
    ...NO_LIMITS,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '2000,300',
    ...extra,
  })
  const open = async (extra: Record<string, string | undefined> = {}): Promise<Gateway> => {
    const g = await startGateway(loadConfig(gatewayEnv(extra)), { logger: createLogger('silent') })
    gateways.push(g)
    return g
  }
  const base = (g: Gateway): string => `http://127.0.0.1:${g.port}`
  const complete = (g: Gateway, jobId: string) =>
    g.handleJobEvent({
      type: 'completed',
      jobId,
      resultKey: `remove-background/${jobId}.mp4`,
      contentType: 'video/mp4',
      bytes: 1000,
      frames: 5,
    })
  const streamMessages = async (name: string): Promise<number> =>
    (await (await jetstreamManager(nc)).streams.info(name)).state.messages

  beforeAll(async () => {
    nats = await startNatsServer()
    nc = await connect({ servers: nats.url })
    hooks = await startReceiver()
  })
  afterAll(async () => {
    for (const g of gateways.splice(0)) await g.stop().catch(() => undefined)
    await nc?.close()
    await hooks?.stop()
    await nats?.stop()
  })

  it('delivers a completion webhook from the stream, signed, with a signed result_url', async () => {
    const g = await open()
    const r = await post(base(g), apiKey, '/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
      webhook_url: hooks.url('/d1'),
    })
    expect(r.status).toBe(202)
    await complete(g, r.body.job_id as string)
    const [d] = await hooks.waitFor('/d1')
    const p = verify(secret, d!)
    expect(p).toMatchObject({
      type: 'job.completed',
      data: { job_id: r.body.job_id, status: 'completed' },
    })
    expect(p.data.result_url).toMatch(
      new RegExp(
        `^${base(g)}/results/remove-background/${r.body.job_id as string}\\.mp4\\?expires=\\d+&sig=`,
      ),
    )
    // The final event repeated (a redelivery to inference after a gateway stop) queues nothing new.
    await complete(g, r.body.job_id as string)
    await new Promise((r2) => setTimeout(r2, 500))
    expect(hooks.deliveries.filter((x) => x.path === '/d1')).toHaveLength(1)
  })

  it('a cancelled job calls its webhook with job_cancelled', async () => {
    const g = gateways[0]!
    const r = await post(base(g), apiKey, '/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
      webhook_url: hooks.url('/cancel'),
    })
    const c = await post(
      base(g),
      apiKey,
      `/v1/video/remove-background/job/${r.body.job_id as string}/cancel`,
      {},
    )
    expect(c.status).toBe(200)
    const [d] = await hooks.waitFor('/cancel')
    expect(verify(secret, d!)).toMatchObject({
      type: 'job.failed',
      data: { job_id: r.body.job_id, error: { error_code: 'job_cancelled' } },
    })
  })

  it("a delivery pending a retry survives the gateway's restart", async () => {
    // The only consumer: one gateway whose retry (5 s) cannot fall due before it has stopped.
    for (const other of gateways.splice(0)) await other.stop()
    const g1 = await open({ WEBHOOK_RETRY_DELAYS_MS: '5000' })
    hooks.answers['/restart'] = [500]
    const r = await post(base(g1), apiKey, '/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
      webhook_url: hooks.url('/restart'),
    })
    await complete(g1, r.body.job_id as string)
    const [first] = await hooks.waitFor('/restart', 1)
    // The only gateway stops while the retry is pending; the message stays in WEBHOOKS.
    await g1.stop()
    gateways.splice(gateways.indexOf(g1), 1)
    expect(await streamMessages(WEBHOOKS_STREAM)).toBe(1)
    await open()
    const got = await hooks.waitFor('/restart', 2)
    expect(got[1]!.headers['webhook-id']).toBe(first!.headers['webhook-id'])
    expect(got[1]!.at - first!.at).toBeGreaterThanOrEqual(4_500) // the nak delay held across the restart
    expect(verify(secret, got[1]!)).toMatchObject({
      type: 'job.completed',
      data: { job_id: r.body.job_id },
    })
    await new Promise((r2) => setTimeout(r2, 500))
    expect(await streamMessages(WEBHOOKS_STREAM)).toBe(0)
  })

  it('Idempotency-Key across two replicas: concurrent duplicates → one job, one JOBS message', async () => {
    const [g1, g2] = [await open(), await open()]
    const before = await streamMessages(STREAM)
    const key = { 'Idempotency-Key': 'replicas-1' }
    const body = { video_url: 'https://example.com/same.mp4' }
    const all = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        post(base(i % 2 === 0 ? g1 : g2), apiKey, '/v1/video/remove-background', body, key),
      ),
    )
    expect(
      all.map((r) => r.status),
      JSON.stringify(all.map((r) => r.body)),
    ).toEqual(Array(10).fill(202))
    expect(new Set(all.map((r) => r.body.job_id)).size).toBe(1)
    expect(all.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1)
    expect(await streamMessages(STREAM)).toBe(before + 1)
    const other = await post(
      base(g2),
      apiKey,
      '/v1/video/remove-background',
      { video_url: 'https://example.com/other.mp4' },
      key,
    )
    expect(other).toMatchObject({ status: 422, body: { error_code: 'idempotency_key_reused' } })
  })

  it('a host name resolving to a refused address gets no connection (loopback not allowed)', async () => {
    // Every replica consumes WEBHOOKS: only this one (loopback not allowed) may run now.
    for (const other of gateways.splice(0)) await other.stop()
    const g = await open({ TAILOR_FETCH_ALLOW_LOOPBACK: 'false' })
    const before = hooks.connections()
    const r = await post(base(g), apiKey, '/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
      webhook_url: `http://localhost:${hooks.port}/refused`,
    })
    expect(r.status).toBe(202) // a name is checked when connecting, on every address it resolves to
    await complete(g, r.body.job_id as string)
    // Refused is final: the message leaves the stream without a retry and without a connection.
    const end = Date.now() + DELIVERY_TIMEOUT_MS
    while ((await streamMessages(WEBHOOKS_STREAM)) > 0 && Date.now() < end) {
      await new Promise((r2) => setTimeout(r2, 50))
    }
    expect(await streamMessages(WEBHOOKS_STREAM)).toBe(0)
    await new Promise((r2) => setTimeout(r2, 500))
    expect(hooks.connections()).toBe(before)
    expect(hooks.deliveries.filter((x) => x.path === '/refused')).toHaveLength(0)
  })

  it('without WEBHOOK_SECRET a webhook_url is refused with a clear error', async () => {
    const g = await open({ WEBHOOK_SECRET: undefined })
    const r = await post(base(g), apiKey, '/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
      webhook_url: hooks.url('/x'),
    })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error_code: 'invalid_parameter' })
    expect(String(r.body.error)).toContain('WEBHOOK_SECRET')
  })
})
