/**
 * nats-server restarted under load (file storage, same store dir and port): jobs published but not
 * yet consumed survive it and complete, the gateway and inference reconnect on their own, and
 * every job has exactly one result.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { workLeft as jobDirsLeft } from '../helpers/work-dir.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import {
  freePort,
  jobsQueueState,
  startNatsServer,
  type NatsServer,
} from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const API_KEY = 'integration-test-key-nats-restart'
const JOB_TIMEOUT_MS = 180_000
/** Four jobs, one a 6 s clip, on a shared CPU. */
const TEST_TIMEOUT_MS = 420_000
/** How long the server stays down: longer than a client's reconnect wait, so both really reconnect. */
const NATS_DOWN_MS = 3_000

let nats: NatsServer
let nc: NatsConnection
let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let workDir: string
let gateway: ServiceProcess
let inference: ServiceProcess
let api: ApiClient
const timings: Record<string, number> = {}

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
  media = await createMediaFixtures()
  workDir = await mkdtemp(join(tmpdir(), 'tailor-work-nats-'))
  const [port, grpcPort] = [await freePort(), await freePort()]
  gateway = startService('services/gateway/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    NATS_URL: nats.url,
    API_KEYS: API_KEY,
    RESULT_URL_SECRET: 'nats-restart-test-secret-0123456789abc',
  })
  inference = startService('services/inference/src/main.ts', {
    NATS_URL: nats.url,
    GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    TAILOR_WORK_DIR: workDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    ACK_WAIT_MS: '3000',
    MAX_DELIVER: '5',
    ORT_EP: 'cpu',
    MODELS_DIR: models.dir,
  })
  await Promise.all([
    gateway.waitFor('gateway listening'),
    inference.waitFor('inference consuming jobs'),
  ])
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
})

afterAll(async () => {
  await inference?.stop('SIGKILL')
  await gateway?.stop('SIGKILL')
  await nc?.close()
  await nats?.stop()
  await media?.stop()
  await models?.remove()
  if (workDir) await rm(workDir, { recursive: true, force: true })
  console.info(`nats restart timings (ms): ${JSON.stringify(timings)}`)
})

describe('nats-server restart (file storage)', () => {
  it(
    'queued jobs survive it and complete once each; gateway and inference reconnect',
    async () => {
      // One job runs (one worker slot), two wait in the JOBS stream.
      const running = await api.start({
        video_url: `${media.baseUrl}/medium_01.mp4`,
        output_format: 'mp4_h264',
      })
      await api.waitUntil(running, (s) => s.status === 'running', JOB_TIMEOUT_MS)
      const queued = [
        await api.start({ video_url: `${media.baseUrl}/short_01.mp4`, output_format: 'mp4_h264' }),
        await api.start({ video_url: `${media.baseUrl}/short_02.mp4`, output_format: 'mp4_h264' }),
      ]
      {
        const probe = await connect({ servers: nats.url })
        const jsm = await jetstreamManager(probe)
        expect(
          (await jsm.consumers.info('JOBS', 'inference-remove-background')).num_pending,
        ).toBeGreaterThanOrEqual(1) // not yet consumed
        await probe.close()
      }

      const t0 = Date.now()
      await nats.restart({ downMs: NATS_DOWN_MS })
      timings.natsRestartMs = Date.now() - t0

      // The gateway publishes again once reconnected (a request meanwhile is refused with 503 service_unavailable).
      let after: string | null = null
      const refusals: number[] = []
      const deadline = Date.now() + JOB_TIMEOUT_MS
      while (after === null) {
        const r = await api.submit({
          video_url: `${media.baseUrl}/short_02.mp4`,
          output_format: 'webm_vp9',
        })
        if (r.status === 202) after = r.body.job_id as string
        else {
          refusals.push(r.status)
          if (Date.now() > deadline) throw new Error('the gateway never published again')
          await new Promise((res) => setTimeout(res, 250))
        }
      }
      timings.gatewayPublishesAgainMs = Date.now() - t0
      timings.submitsRefusedWhileReconnecting = refusals.length
      expect(
        refusals.every((c) => c === 503),
        JSON.stringify(refusals),
      ).toBe(true)

      for (const id of [running, ...queued, after]) {
        const s = await api.wait(id, JOB_TIMEOUT_MS)
        expect(s, id).toMatchObject({ status: 'completed', progress: 1 })
        expect((await fetch(s.result_url!)).status).toBe(200)
      }
      timings.allCompletedAfterRestartMs = Date.now() - t0

      nc = await connect({ servers: nats.url })
      const jsm = await jetstreamManager(nc)
      const q = await jobsQueueState(nc)
      expect(q.ackPending, q.detail).toBe(0)
      expect(q.messages, q.detail).toBe(0)
      const objects = await jsm.streams.info('OBJ_results', { subjects_filter: '$O.results.M.>' })
      const names = Object.keys(objects.state.subjects ?? {}).map((k) =>
        Buffer.from(k.slice('$O.results.M.'.length), 'base64url').toString(),
      )
      for (const id of [running, ...queued, after]) {
        expect(names.filter((n) => n.includes(id))).toHaveLength(1)
      }
      expect(await jobDirsLeft(workDir)).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )
})
