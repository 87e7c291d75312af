/**
 * The internal gRPC API takes the same request options as HTTP: `webhook_url` in the request and
 * the Idempotency-Key as call metadata `idempotency-key` (a replay answers with metadata
 * `idempotent-replayed: true`). One key means one job whichever edge the retries come through.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as grpc from '@grpc/grpc-js'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TailorApiClient } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'
import type { RemoveVideoBackgroundRequest } from '@tailor/proto/gen/tailor/v1/RemoveVideoBackgroundRequest.ts'
import type { SubmitJobResponse__Output } from '@tailor/proto/gen/tailor/v1/SubmitJobResponse.ts'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { start as startGateway, type Gateway } from '@tailor/gateway/src/start.ts'
import { generateWebhookSecret } from '@tailor/gateway/src/webhooks/standard-webhooks.ts'
import { openGrpcApiClient } from '../helpers/grpc-api.ts'
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { TEST_JOB_EVENTS_TOKEN } from '../helpers/processes.ts'

const API_KEY = 'grpc-webhook-test-key-abcdefghij'
const DELIVERY_TIMEOUT_MS = 20_000

interface Answer {
  res?: SubmitJobResponse__Output
  err?: grpc.ServiceError
  replayed: boolean
}

/** RemoveVideoBackground with an optional Idempotency-Key; records the response metadata. */
function removeBg(
  client: TailorApiClient,
  req: RemoveVideoBackgroundRequest,
  idempotencyKey?: string,
): Promise<Answer> {
  const md = new grpc.Metadata()
  md.set('x-api-key', API_KEY)
  if (idempotencyKey !== undefined) md.set('idempotency-key', idempotencyKey)
  return new Promise((resolve) => {
    let replayed = false
    const call = client.RemoveVideoBackground(req, md, (err, res) =>
      resolve({ ...(err ? { err } : { res: res! }), replayed }),
    )
    call.on('metadata', (m: grpc.Metadata) => {
      replayed = m.get('idempotent-replayed')[0] === 'true'
    })
  })
}

let nats: NatsServer
let gateway: Gateway
let client: TailorApiClient
let hooks: Server
let hookPort: number
const secret = generateWebhookSecret()
/** Being rotated out: both sign every delivery until it is removed from WEBHOOK_SECRET. */
const oldSecret = generateWebhookSecret()
const received: { headers: IncomingHttpHeaders; body: string }[] = []

beforeAll(async () => {
  nats = await startNatsServer()
  hooks = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r))
  hookPort = (hooks.address() as AddressInfo).port
  gateway = await startGateway(
    loadConfig({
      NATS_URL: nats.url,
      JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_PORT: '0',
      API_GRPC_PORT: '0',
      API_KEYS: API_KEY,
      RESULT_URL_SECRET: 'r'.repeat(40),
      WEBHOOK_SECRET: `${oldSecret},${secret}`,
      TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
      DEFAULT_RATE_LIMIT_PER_S: '1000',
      DEFAULT_MAX_CONCURRENT_JOBS: '100',
    }),
    { logger: createLogger('silent') },
  )
  client = await openGrpcApiClient(`127.0.0.1:${gateway.apiGrpcPort}`)
})
afterAll(async () => {
  client?.close()
  await gateway?.stop()
  hooks?.closeAllConnections()
  await new Promise((r) => hooks?.close(r))
  await nats?.stop()
})

describe('gRPC API: webhook_url and Idempotency-Key', () => {
  it('replays a job by its key, across gRPC and HTTP; another body is idempotency_key_reused', async () => {
    const req = { videoUrl: 'https://example.com/a.mp4', outputFormat: 'gif' }
    const first = await removeBg(client, req, 'grpc-key-1')
    const again = await removeBg(client, req, 'grpc-key-1')
    expect(first.err).toBeUndefined()
    expect(first.replayed).toBe(false)
    expect(again).toMatchObject({ replayed: true, res: { jobId: first.res!.jobId } })
    const http = await fetch(`http://127.0.0.1:${gateway.port}/v1/video/remove-background`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': API_KEY,
        'idempotency-key': 'grpc-key-1',
      },
      body: JSON.stringify({ video_url: 'https://example.com/a.mp4', output_format: 'gif' }),
    })
    expect(http.status).toBe(202)
    expect(http.headers.get('idempotent-replayed')).toBe('true')
    expect(((await http.json()) as { job_id: string }).job_id).toBe(first.res!.jobId)
    const other = await removeBg(client, { ...req, outputFormat: 'mp4_h264' }, 'grpc-key-1')
    expect(other.err?.code).toBe(grpc.status.FAILED_PRECONDITION)
    expect(other.err?.metadata.get('error-code')[0]).toBe('idempotency_key_reused')
    const bad = await removeBg(client, req, 'has space')
    expect(bad.err?.metadata.get('error-code')[0]).toBe('invalid_parameter')
  })

  it('calls webhook_url when the job ends, signed per Standard Webhooks (with each secret while rotating)', async () => {
    const a = await removeBg(client, {
      videoUrl: 'https://example.com/b.mp4',
      webhookUrl: `http://127.0.0.1:${hookPort}/grpc`,
    })
    expect(a.err).toBeUndefined()
    const jobId = a.res!.jobId
    await gateway.handleJobEvent({
      type: 'failed',
      jobId,
      code: 'malformed_video',
      message: 'Not a video.',
    })
    const end = Date.now() + DELIVERY_TIMEOUT_MS
    while (received.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 25))
    const d = received[0]!
    const headers = {
      'webhook-id': String(d.headers['webhook-id']),
      'webhook-timestamp': String(d.headers['webhook-timestamp']),
      'webhook-signature': String(d.headers['webhook-signature']),
    }
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2)
    expect(new Webhook(oldSecret).verify(d.body, headers)).toEqual(
      new Webhook(secret).verify(d.body, headers),
    )
    expect(() => new Webhook(generateWebhookSecret()).verify(d.body, headers)).toThrow()
    const p = new Webhook(secret).verify(d.body, headers)
    expect(p).toMatchObject({
      type: 'job.failed',
      data: { job_id: jobId, status: 'failed', error: { error_code: 'malformed_video' } },
    })
    const refused = await removeBg(client, {
      videoUrl: 'https://example.com/b.mp4',
      webhookUrl: 'http://10.0.0.1/hook',
    })
    expect(refused.err?.metadata.get('error-code')[0]).toBe('invalid_parameter')
  })
})
