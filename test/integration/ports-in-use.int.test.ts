/**
 * A port already in use ends start-up with one clear line naming the variable to change (issue 11
 * §7; it used to be a grpc-js or EADDRINUSE stack trace), for every port of every service; and the
 * embedded mode's first-start API key is not lost when start-up fails: a start that fails creates
 * none, so the next start creates and prints it. Real processes (`node --import tsx <main>`), real
 * NATS; the busy ports are held by this test.
 */
import { createServer, type Server } from 'node:net'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const EXIT_TIMEOUT_MS = 120_000
let busy: Server
let busyPort: number
let nats: NatsServer
let models: { dir: string; remove(): Promise<void> }
let dir: string

beforeAll(async () => {
  busy = createServer()
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
  busyPort = (busy.address() as { port: number }).port
  nats = await startNatsServer()
  models = await snapshotModels()
  dir = await mkdtemp(join(tmpdir(), 'tailor-ports-'))
})
afterAll(async () => {
  await new Promise((r) => busy.close(r))
  await nats?.stop()
  await models?.remove()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Runs a service that must refuse to start; its whole output and exit code. */
async function refusal(
  entry: string,
  env: Record<string, string>,
): Promise<{ code: number | null; lines: string[] }> {
  const p: ServiceProcess = startService(entry, { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env })
  const code = await new Promise<number | null>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`${entry} did not exit\n${p.output().slice(-2000)}`)),
      EXIT_TIMEOUT_MS,
    )
    p.proc.once('exit', (c) => (clearTimeout(t), resolve(c)))
  })
  // Node's own warnings (e.g. an ExperimentalWarning) are not ours to count.
  return {
    code,
    lines: p
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '' && !/^\(node:\d+\)|--trace-warnings/.test(l)),
  }
}

const inUse = (prefix: string, variable: string): RegExp =>
  new RegExp(
    `^${prefix}: ${variable}=\\d+: port \\d+ on 127\\.0\\.0\\.1 is already in use; set ${variable} to a free port \\(or stop what is using it\\)\\.$`,
  )

describe('a port in use: one line naming the variable, exit 1', () => {
  const gatewayEnv = (): Record<string, string> => ({
    NATS_URL: nats.url,
    PORT: '0',
    GRPC_PORT: '0',
    API_GRPC_PORT: '0',
    RESULT_URL_SECRET: 'ports-test-secret-0123456789abcdef0123',
  })

  it.each([
    ['PORT', { PORT: 'busy' }],
    ['GRPC_PORT', { GRPC_PORT: 'busy' }],
    ['API_GRPC_PORT', { API_GRPC_PORT: 'busy' }],
    ['METRICS_PORT', { METRICS_PORT: 'busy' }],
  ])('gateway: %s', async (variable, env) => {
    const r = await refusal('services/gateway/src/main.ts', {
      ...gatewayEnv(),
      ...Object.fromEntries(Object.keys(env).map((k) => [k, String(busyPort)])),
    })
    expect(r.code).toBe(1)
    expect(r.lines, r.lines.join('\n')).toHaveLength(1)
    expect(r.lines[0]).toMatch(inUse('gateway', variable))
  })

  it.each([['PORT'], ['API_GRPC_PORT'], ['METRICS_PORT']])('embedded: %s', async (variable) => {
    const dataDir = await mkdtemp(join(dir, 'data-'))
    const port = variable === 'PORT' ? busyPort : await freePort()
    const r = await refusal('services/embedded/src/main.ts', {
      TAILOR_DATA_DIR: dataDir,
      MODELS_DIR: models.dir,
      PORT: String(port),
      API_GRPC_PORT: '0',
      [variable]: String(busyPort),
    })
    expect(r.code).toBe(1)
    expect(r.lines, r.lines.join('\n')).toHaveLength(1)
    expect(r.lines[0]).toMatch(inUse('tailor', variable))
  })

  it('inference: HEALTH_PORT and METRICS_PORT', async () => {
    const base = {
      NATS_URL: nats.url,
      GATEWAY_GRPC_ADDR: `127.0.0.1:${await freePort()}`,
      MODELS_DIR: models.dir,
      JOB_KINDS: 'remove-background',
      TAILOR_WORK_DIR: join(dir, 'work'),
      HEALTH_HOST: '127.0.0.1',
    }
    for (const [variable, env] of [
      ['HEALTH_PORT', { HEALTH_PORT: String(busyPort) }],
      ['METRICS_PORT', { HEALTH_PORT: '0', METRICS_PORT: String(busyPort) }],
    ] as const) {
      const r = await refusal('services/inference/src/main.ts', { ...base, ...env })
      expect(r.code, variable).toBe(1)
      expect(r.lines, r.lines.join('\n')).toHaveLength(1)
      expect(r.lines[0]).toMatch(inUse('inference', variable))
    }
    expect(await readdir(join(dir, 'work')), 'the refused worker removed its work dir').toEqual([])
  })
})

describe('the first-start API key survives a failed start (embedded)', () => {
  it('a start refused for a busy port creates no key; the next start creates and prints it', async () => {
    const dataDir = await mkdtemp(join(dir, 'data-'))
    const env = { TAILOR_DATA_DIR: dataDir, MODELS_DIR: models.dir, API_GRPC_PORT: '0' }
    const r = await refusal('services/embedded/src/main.ts', { ...env, PORT: String(busyPort) })
    expect(r.lines, r.lines.join('\n')).toHaveLength(1)
    const port = await freePort()
    const tailor = startService('services/embedded/src/main.ts', {
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    })
    try {
      await tailor.waitFor('Tailor is running at')
      const key = /X-API-KEY: (tk_[A-Za-z0-9_-]+)/.exec(tailor.output())?.[1]
      expect(key, tailor.output()).toBeDefined()
      expect(tailor.output()).not.toContain('no API key is accepted yet')
      // Accepted at once (not at the key file's next poll).
      const res = await fetch(`http://127.0.0.1:${port}/v1/credits`, {
        headers: { 'x-api-key': key! },
      })
      expect(res.status).toBe(200)
    } finally {
      await tailor.stop()
    }
  })
})
