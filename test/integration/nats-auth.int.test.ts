/**
 * NATS with authentication on, as deploy/k8s runs it: a real nats-server with the accounts file of
 * deploy/k8s/base/nats/ (accounts.conf, tls.conf; users gateway and inference, passwords from the
 * environment, as the Secret tailor-nats-auth gives them). Gateway and a worker log in with their
 * own credentials and complete a video job read from an upload; anonymous clients are refused; the
 * inference user cannot read the api_keys bucket nor copy it into a stream of its own.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { REPO_ROOT, startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-nats-auth-0123456789'
const GATEWAY_PASSWORD = 'gateway-password-0123456789abcdef'
const INFERENCE_PASSWORD = 'inference-password-0123456789abcdef'
const JOB_TIMEOUT_MS = 240_000

let confDir: string
let nats: NatsServer
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gateway: ServiceProcess
let inference: ServiceProcess
let api: ApiClient
let base: string

beforeAll(async () => {
  // The server configuration shipped in the ConfigMap: its accounts and TLS files, verbatim.
  confDir = await mkdtemp(join(tmpdir(), 'tailor-nats-auth-'))
  for (const f of ['accounts.conf', 'tls.conf']) {
    await writeFile(join(confDir, f), await readFile(resolve(REPO_ROOT, 'deploy/k8s/base/nats', f)))
  }
  await writeFile(join(confDir, 'nats.conf'), 'include ./accounts.conf\ninclude ./tls.conf\n')
  nats = await startNatsServer({
    config: join(confDir, 'nats.conf'),
    env: { NATS_GATEWAY_PASSWORD: GATEWAY_PASSWORD, NATS_INFERENCE_PASSWORD: INFERENCE_PASSWORD },
  })
  models = await snapshotModels()
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-nats-auth-'))
  const [port, grpcPort] = [await freePort(), await freePort()]
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    NATS_USER: 'gateway',
    NATS_PASSWORD: GATEWAY_PASSWORD,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'nats-auth-test-secret-0123456789abcdefgh',
  })
  await gateway.waitFor('gateway listening')
  inference = startService('services/inference/src/main.ts', {
    NATS_URL: nats.url,
    NATS_USER: 'inference',
    NATS_PASSWORD: INFERENCE_PASSWORD,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    JOB_KINDS: 'remove-background',
  })
  await inference.waitFor('inference consuming jobs')
  base = `http://127.0.0.1:${port}`
  api = apiClient(base, API_KEY)
})

afterAll(async () => {
  await inference?.stop()
  await gateway?.stop()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
  if (confDir) await rm(confDir, { recursive: true, force: true })
})

describe('NATS accounts and users (deploy/k8s accounts.conf)', () => {
  it('gateway and inference with their own users complete a job read from an upload; the result is fetched', async () => {
    const up = await fetch(`${base}/v1/uploads`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'video/mp4' },
      body: await readFile(join(media.dir, 'short_01.mp4')),
    })
    expect(up.status).toBe(201)
    const { url } = (await up.json()) as { url: string }
    const id = await api.start({ video_url: url, output_format: 'mp4_h264' })
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    expect(s, inference.output().slice(-2000)).toMatchObject({ status: 'completed', progress: 1 })
    const r = await fetch(s.result_url!)
    expect(r.status).toBe(200)
    expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(1000)
    expect(inference.output()).not.toMatch(/Permissions Violation/i)
  })

  it('an anonymous client or a wrong password is refused', async () => {
    await expect(connect({ servers: nats.url, maxReconnectAttempts: 0 })).rejects.toThrow(
      /Authorization/i,
    )
    await expect(
      connect({ servers: nats.url, user: 'inference', pass: 'wrong', maxReconnectAttempts: 0 }),
    ).rejects.toThrow(/Authorization/i)
  })

  it('the inference user cannot read api_keys, nor copy it into a stream of its own; the gateway user can', async () => {
    const inf = await connect({ servers: nats.url, user: 'inference', pass: INFERENCE_PASSWORD })
    try {
      const kvm = new Kvm(inf)
      await expect((async () => (await kvm.open('api_keys')).get('anything'))()).rejects.toThrow(
        /permission|timeout|no responders/i,
      )
      const jsm = await jetstreamManager(inf)
      await expect(
        jsm.streams.add({ name: 'COPY', subjects: ['copy.>'], sources: [{ name: 'KV_api_keys' }] }),
      ).rejects.toThrow(/permission|timeout|no responders/i)
      await expect(jsm.streams.info('KV_api_keys')).rejects.toThrow(
        /permission|timeout|no responders/i,
      )
    } finally {
      await inf.close()
    }
    const gw = await connect({ servers: nats.url, user: 'gateway', pass: GATEWAY_PASSWORD })
    try {
      expect((await (await jetstreamManager(gw)).streams.info('KV_api_keys')).config.name).toBe(
        'KV_api_keys',
      )
    } finally {
      await gw.close()
    }
  })
})
