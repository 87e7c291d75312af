import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TAILOR_STREAMS } from '@tailor/gateway/src/jetstream-replicas.ts'
import { freePort, startNatsCluster, type NatsCluster } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-nats-cluster'
const CLUSTER_READY_TIMEOUT_MS = 60_000
const STREAM_MOVE_TIMEOUT_MS = 30_000

let cluster: NatsCluster
let nc: NatsConnection
let gateway: ServiceProcess
let base: string

const submit = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
  const r = await fetch(`${base}/v1/video/remove-background`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({
      video_url: 'https://example.com/clip.mp4',
      output_format: 'webm_vp9',
      background_color: 'transparent',
    }),
  })
  return { status: r.status, body: (await r.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  cluster = await startNatsCluster(3)
  nc = await connect({ servers: cluster.urls[0] })
  // JetStream answers once the cluster has elected its meta leader.
  const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS
  for (;;) {
    try {
      await (await jetstreamManager(nc)).getAccountInfo()
      break
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  const [port, grpcPort] = [await freePort(), await freePort()]
  base = `http://127.0.0.1:${port}`
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: cluster.urls[0] ?? '',
    NATS_REPLICAS: '3',
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'nats-cluster-test-secret-0123456789abcdef',
  })
  await gateway.waitFor('gateway listening')
})

afterAll(async () => {
  await gateway?.stop()
  await nc?.close()
  await cluster?.stop()
})

describe('a 3-server JetStream cluster (as deploy/k8s runs NATS) with NATS_REPLICAS=3', () => {
  it('every Tailor stream and bucket is replicated on all three servers', async () => {
    const jsm = await jetstreamManager(nc)
    for (const name of TAILOR_STREAMS) {
      const info = await jsm.streams.info(name)
      expect(info.config.num_replicas, name).toBe(3)
    }
  })

  it('jobs are still accepted and queued with one NATS server down', async () => {
    const first = await submit()
    expect(first.status, JSON.stringify(first.body)).toBe(202)
    await cluster.stopServer(2) // the gateway is connected to server 0
    const deadline = Date.now() + STREAM_MOVE_TIMEOUT_MS
    let second = await submit()
    while (second.status !== 202 && Date.now() < deadline) {
      // A stream whose leader was on the stopped server elects a new one within seconds.
      await new Promise((r) => setTimeout(r, 500))
      second = await submit()
    }
    expect(second.status, JSON.stringify(second.body)).toBe(202)
    const jsm = await jetstreamManager(nc)
    expect((await jsm.streams.info('JOBS')).state.messages).toBe(2)
    const status = await fetch(
      `${base}/v1/video/remove-background/job/${String(first.body.job_id)}`,
      { headers: { 'x-api-key': API_KEY } },
    )
    expect(status.status).toBe(200)
    expect(await status.json()).toMatchObject({ status: 'pending' })
  })
})
