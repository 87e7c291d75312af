/**
 * No silent CPU on a GPU node: with REQUIRE_EXECUTION_PROVIDER=cuda a worker whose models cannot
 * open on CUDA (this machine has no CUDA provider libraries, as a GPU node whose CUDA set-up failed)
 * exits at start-up with one line naming the model and the reason, no stack trace; a worker that
 * starts reports its provider (and the required one) in readiness.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService } from '../helpers/processes.ts'

let models: { dir: string; remove(): Promise<void> }
let nats: NatsServer

beforeAll(async () => {
  models = await snapshotModels()
  nats = await startNatsServer()
})
afterAll(async () => {
  await nats?.stop()
  await models?.remove()
})

describe('REQUIRE_EXECUTION_PROVIDER', () => {
  it('cuda required, only the CPU provider loadable: start-up fails with one clear line', async () => {
    const w = startService('services/inference/src/main.ts', {
      NATS_URL: nats.url,
      GATEWAY_GRPC_ADDR: `127.0.0.1:${await freePort()}`,
      MODELS_DIR: models.dir,
      ORT_EP: 'cuda',
      REQUIRE_EXECUTION_PROVIDER: 'cuda',
      JOB_KINDS: 'remove-background',
    })
    const code = await new Promise<number | null>((resolve) =>
      w.proc.once('exit', (c) => resolve(c)),
    )
    expect(code).toBe(1)
    const ours = w
      .output()
      .split('\n')
      .filter((l) => l.startsWith('inference: '))
    expect(ours).toHaveLength(1)
    expect(ours[0]).toMatch(
      /^inference: REQUIRE_EXECUTION_PROVIDER=cuda: the matting models did not load on cuda: rvm-rgb: .*cuda/,
    )
    expect(w.output()).not.toMatch(/^\s+at /m) // no stack trace
    expect(w.output()).not.toContain('inference consuming jobs')
  })

  it('a worker that starts reports the provider in use and the required one on /readyz', async () => {
    const healthPort = await freePort()
    const w = startService('services/inference/src/main.ts', {
      NATS_URL: nats.url,
      GATEWAY_GRPC_ADDR: `127.0.0.1:${await freePort()}`,
      MODELS_DIR: models.dir,
      ORT_EP: 'cpu',
      REQUIRE_EXECUTION_PROVIDER: 'cpu',
      JOB_KINDS: 'remove-background',
      HEALTH_PORT: String(healthPort),
      HEALTH_HOST: '127.0.0.1',
    })
    try {
      await w.waitFor('inference consuming jobs')
      const r = await fetch(`http://127.0.0.1:${healthPort}/readyz`)
      expect(r.status).toBe(200)
      expect(await r.json()).toMatchObject({
        status: 'ready',
        provider: 'cpu',
        required_provider: 'cpu',
        fallbacks: [],
        job_kinds: ['remove-background'],
      })
    } finally {
      await w.stop()
    }
  })
})
