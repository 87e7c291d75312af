/**
 * NATS with TLS, as overlays/production/nats-tls.yaml turns it on: a real nats-server with a
 * certificate from a CA made here (test/helpers/tls.ts) and `verify: true` (mutual TLS), plus the
 * accounts of deploy/k8s/base/nats/accounts.conf. Gateway and worker (NATS_TLS_CA_FILE,
 * NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE and their users) complete a video job; a client that does
 * not trust the CA, or that has no client certificate, is refused. The images run the same set-up
 * in test/integration/images.full.test.ts (server TLS, CA only).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { REPO_ROOT, startService, type ServiceProcess } from '../helpers/processes.ts'
import { makeTestPki } from '../helpers/tls.ts'

const API_KEY = 'integration-test-key-nats-tls-0123456789'
const GATEWAY_PASSWORD = 'gateway-password-tls-0123456789abcdef'
const INFERENCE_PASSWORD = 'inference-password-tls-0123456789abcdef'
const JOB_TIMEOUT_MS = 240_000

let dir: string
let nats: NatsServer
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gateway: ServiceProcess
let inference: ServiceProcess
let api: ApiClient

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-nats-tls-'))
  await makeTestPki(dir, ['gateway', 'inference'])
  await writeFile(
    join(dir, 'accounts.conf'),
    await readFile(resolve(REPO_ROOT, 'deploy/k8s/base/nats/accounts.conf')),
  )
  // The tls.conf that overlays/production/nats-tls.yaml describes, with verify (mutual TLS).
  await writeFile(
    join(dir, 'nats.conf'),
    `include ./accounts.conf\ntls { cert_file: "${dir}/tls.crt", key_file: "${dir}/tls.key", ca_file: "${dir}/ca.crt", verify: true }\n`,
  )
  nats = await startNatsServer({
    config: join(dir, 'nats.conf'),
    env: { NATS_GATEWAY_PASSWORD: GATEWAY_PASSWORD, NATS_INFERENCE_PASSWORD: INFERENCE_PASSWORD },
  })
  models = await snapshotModels()
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-nats-tls-'))
  const tls = (user: string) => ({
    NATS_TLS_CA_FILE: join(dir, 'ca.crt'),
    NATS_TLS_CERT_FILE: join(dir, `${user}.crt`),
    NATS_TLS_KEY_FILE: join(dir, `${user}.key`),
  })
  const [port, grpcPort] = [await freePort(), await freePort()]
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    NATS_USER: 'gateway',
    NATS_PASSWORD: GATEWAY_PASSWORD,
    ...tls('gateway'),
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'nats-tls-test-secret-0123456789abcdefgh',
  })
  await gateway.waitFor('gateway listening')
  inference = startService('services/inference/src/main.ts', {
    NATS_URL: nats.url,
    NATS_USER: 'inference',
    NATS_PASSWORD: INFERENCE_PASSWORD,
    ...tls('inference'),
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
    JOB_KINDS: 'remove-background',
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
  })
  await inference.waitFor('inference consuming jobs')
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
})

afterAll(async () => {
  await inference?.stop()
  await gateway?.stop()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('NATS over mutual TLS (NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE)', () => {
  it(
    'gateway and worker complete a video job over TLS; the result is fetched',
    async () => {
      const id = await api.start({
        video_url: `${media.baseUrl}/short_01.mp4`,
        output_format: 'mp4_h264',
      })
      const s = await api.wait(id, JOB_TIMEOUT_MS)
      expect(s, inference.output().slice(-2000)).toMatchObject({ status: 'completed', progress: 1 })
      const r = await fetch(s.result_url!)
      expect(r.status).toBe(200)
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(1000)
    },
    JOB_TIMEOUT_MS + 10_000,
  )

  it('a client that does not trust the CA, or presents no client certificate, is refused', async () => {
    const login = {
      servers: nats.url,
      user: 'gateway',
      pass: GATEWAY_PASSWORD,
      maxReconnectAttempts: 0,
    }
    // The system trust store does not know this CA (without tls options the client upgrades all the same).
    await expect(connect({ ...login, tls: {} })).rejects.toThrow(/unable to verify/i)
    await expect(connect(login)).rejects.toThrow(/unable to verify/i)
    // Trusts the server but has no certificate of its own: the server ends the handshake (verify),
    // which this client sees as a connection that never completes.
    await expect(
      connect({ ...login, timeout: 5000, tls: { caFile: join(dir, 'ca.crt') } }),
    ).rejects.toThrow(/timeout|certificate|handshake/i)
    const ok = await connect({
      ...login,
      tls: {
        caFile: join(dir, 'ca.crt'),
        certFile: join(dir, 'gateway.crt'),
        keyFile: join(dir, 'gateway.key'),
      },
    })
    await ok.close()
  })
})
