/**
 * API keys, rate limits, the concurrent-job cap and job ownership with two gateway replicas on one
 * real NATS server, keys managed by the `tailor keys` CLI (a real subprocess) in the KV bucket
 * api_keys. No inference worker: submitted jobs stay pending unless the test ends them.
 */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import { createLogger } from '@tailor/gateway/src/logger.ts'
import { generateApiKey } from '@tailor/gateway/src/access/api-key.ts'
import { openKvKeyStore } from '@tailor/gateway/src/access/key-store-kv.ts'
import { loadConfig } from '@tailor/gateway/src/config.ts'
import { start, type Gateway } from '@tailor/gateway/src/start.ts'
import { keysCommand } from '../../cli/src/commands/keys.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { REPO_ROOT, TEST_JOB_EVENTS_TOKEN } from '../helpers/processes.ts'

const ENV_KEY = 'access-int-env-key-0123456789-ab'
const SECRET = 'access-int-secret-0123456789abcdef0123'
/** The figure: a revoke reaches every replica within a second (measured from the CLI's exit). */
const REVOKE_BOUND_MS = 1_000
const CLI_TIMEOUT_MS = 30_000
/** Reconnection after a NATS restart (client backoff included). */
const NATS_BACK_MS = 20_000
/** A job id never issued (a v4 UUID): 404 for a key that is accepted, 401 for one that is not. */
const UNKNOWN_JOB = '/v1/video/remove-background/job/00000000-0000-4000-8000-000000000000'
const BODY = JSON.stringify({ video_url: 'https://cdn.example.com/clip.mp4' })

let nats: NatsServer
let gateways: Gateway[] = []
let urls: string[]

function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(REPO_ROOT, 'cli/src/main.ts'), 'keys', ...args],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          NATS_URL: nats.url,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const t = setTimeout(() => p.kill('SIGKILL'), CLI_TIMEOUT_MS)
    p.once('error', rej)
    p.once('exit', (code) => {
      clearTimeout(t)
      res({ code, stdout, stderr })
    })
  })
}

/** A key made by the CLI (`cli: true`, a subprocess) or, faster, by the same KV adapter in this process. */
async function createKey(
  o: { cli?: boolean; rateLimitPerS?: number; maxConcurrentJobs?: number; credits?: number } = {},
): Promise<{ id: string; key: string }> {
  let out: { id: string; key: string }
  if (o.cli === true) {
    const r = await runCli(['create', '--name', 'access-test', '--json'])
    expect(r.code, r.stderr).toBe(0)
    out = JSON.parse(r.stdout) as { id: string; key: string }
  } else {
    const { key, record } = generateApiKey({ name: 'access-test', ...o })
    const nc = await connect({ servers: nats.url })
    try {
      await (await openKvKeyStore(nc)).create(record)
    } finally {
      await nc.close()
    }
    out = { id: record.id, key }
  }
  // Every replica knows a new key as soon as its KV watch delivers it.
  await until(
    async () => (await Promise.all(urls.map((u) => status(u, out.key)))).every((s) => s === 404),
    REVOKE_BOUND_MS,
  )
  return out
}

const status = async (base: string, key: string, path = UNKNOWN_JOB): Promise<number> =>
  (await fetch(base + path, { headers: { 'x-api-key': key } })).status
const submit = (base: string, key: string): Promise<Response> =>
  fetch(`${base}/v1/video/remove-background`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: BODY,
  })
const jobIdOf = async (r: Response): Promise<string> =>
  ((await r.json()) as { job_id: string }).job_id

async function until(cond: () => Promise<boolean>, withinMs: number): Promise<number> {
  const t0 = performance.now()
  for (;;) {
    if (await cond()) return performance.now() - t0
    if (performance.now() - t0 > withinMs) {
      throw new Error(`condition not met within ${withinMs} ms`)
    }
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Both replicas' rate-budget clock: real time, or stopped at `stoppedAt` (no refill at all). */
let stoppedAt: number | null = null
const rateClock = (): number => stoppedAt ?? Date.now()

beforeAll(async () => {
  nats = await startNatsServer()
  const logger = createLogger('silent')
  for (let i = 0; i < 2; i++) {
    const config = loadConfig({
      NATS_URL: nats.url,
      JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_PORT: '0',
      API_GRPC_PORT: '0',
      API_KEYS: ENV_KEY,
      RESULT_URL_SECRET: SECRET,
    })
    gateways.push(await start(config, { logger, rateClock }))
  }
  urls = gateways.map((g) => `http://127.0.0.1:${g.port}`)
})

afterAll(async () => {
  for (const g of gateways) await g.stop()
  gateways = []
  await nats?.stop()
})

describe('API keys across gateway replicas (NATS KV)', () => {
  it('tailor keys create: both replicas accept the key; list shows no key or hash; revoke: both refuse within a second', async () => {
    const { id, key } = await createKey({ cli: true })
    expect(key).toMatch(/^tk_[A-Za-z0-9_-]{43}$/)
    expect(id).toMatch(/^key_/)
    const list = await runCli(['list', '--json'])
    expect(list.code).toBe(0)
    const listed = JSON.parse(list.stdout) as Record<string, unknown>[]
    expect(listed.find((k) => k.id === id)).toMatchObject({
      name: 'access-test',
      revokedAt: null,
      rateLimitPerS: null,
    })
    expect(list.stdout).not.toContain(key)
    expect(list.stdout).not.toContain('sha256')
    const table = await runCli(['list'])
    expect(table.stdout).toMatch(
      new RegExp(`${id}\\s+access-test\\s+\\S+Z\\s+-\\s+default\\s+default`),
    )

    const revoke = await runCli(['revoke', id])
    expect(revoke.code, revoke.stderr).toBe(0)
    const ms = await until(
      async () => (await Promise.all(urls.map((u) => status(u, key)))).every((s) => s === 401),
      REVOKE_BOUND_MS,
    )
    expect(ms).toBeLessThan(REVOKE_BOUND_MS)
    const again = await runCli(['list', '--json'])
    expect(
      (JSON.parse(again.stdout) as Record<string, unknown>[]).find((k) => k.id === id)?.revokedAt,
    ).toEqual(expect.any(String))
  })

  it('a new key works on its very first request on every replica, with no wait after it is created; an unknown key is still refused', async () => {
    // Read-your-writes: a replica that does not know a presented key asks the bucket for its last
    // change and waits for its watch to deliver it, instead of answering 401 while the watch lags.
    const nc = await connect({ servers: nats.url })
    try {
      const store = await openKvKeyStore(nc)
      const got: number[] = []
      for (let i = 0; i < 20; i++) {
        const { key, record } = generateApiKey({ name: `first-request ${i}` })
        await store.create(record)
        got.push(...(await Promise.all(urls.map((u) => status(u, key)))))
      }
      expect(got).toEqual(Array.from({ length: 40 }, () => 404))
      expect(await status(urls[0]!, `tk_${'x'.repeat(43)}`)).toBe(401)
    } finally {
      await nc.close()
    }
  })

  it("a burst spread over both replicas is held to the key's one budget; 429s carry Retry-After and RateLimit-*", async () => {
    const { key } = await createKey({ rateLimitPerS: 10, maxConcurrentJobs: 0 })
    // The budgets' clock stands still during the burst: nothing refills, however slow the host, so
    // the bound is the bucket itself (a store that is not shared would admit up to 20).
    stoppedAt = Date.now()
    let rs: Response[]
    try {
      rs = await Promise.all(Array.from({ length: 60 }, (_, i) => submit(urls[i % 2]!, key)))
    } finally {
      stoppedAt = null
    }
    const accepted = rs.filter((r) => r.status === 202).length
    const refused = rs.filter((r) => r.status === 429)
    expect(accepted + refused.length).toBe(60)
    // At most the bucket (10); leases may leave a few tokens unspent, never more admitted.
    expect(accepted).toBeLessThanOrEqual(10)
    expect(accepted).toBeGreaterThanOrEqual(5)
    const r = refused[0]!
    expect(Number(r.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1)
    expect(r.headers.get('RateLimit-Limit')).toBe('10')
    expect(r.headers.get('RateLimit-Remaining')).toMatch(/^\d+$/)
    expect(r.headers.get('RateLimit-Reset')).toMatch(/^\d+$/)
    expect(await r.json()).toMatchObject({
      error_code: 'rate_limit_exceeded',
      error: expect.stringMatching(/10 requests per second/),
    })
    // Polls do not count against the budget.
    const id = await jobIdOf(rs.find((x) => x.status === 202)!)
    for (const u of urls) {
      expect(await status(u, key, `/v1/video/remove-background/job/${id}`)).toBe(200)
    }
  })

  it('the concurrent-job cap is shared: a job cancelled on the other replica frees its slot, a lost release is reclaimed', async () => {
    const { key } = await createKey({ maxConcurrentJobs: 2, rateLimitPerS: 100 })
    const [a, b] = urls as [string, string]
    const first = await submit(a, key)
    const second = await submit(b, key)
    expect([first.status, second.status]).toEqual([202, 202])
    const over = await submit(a, key)
    expect(over.status).toBe(429)
    expect(over.headers.get('Retry-After')).toBe('5')
    expect(await over.json()).toMatchObject({
      error_code: 'rate_limit_exceeded',
      error: expect.stringMatching(/already has 2 jobs pending or running/),
    })

    const cancel = await fetch(
      `${b}/v1/video/remove-background/job/${await jobIdOf(first)}/cancel`,
      { method: 'POST', headers: { 'x-api-key': key } },
    )
    expect(cancel.status).toBe(200)
    const third = await submit(a, key)
    expect(third.status).toBe(202)
    expect((await submit(b, key)).status).toBe(429)

    // A record made final behind the gateways' backs (a replica that died before giving the slot
    // back) no longer holds its slot: the next submission at the cap finds that out.
    const nc = await connect({ servers: nats.url })
    try {
      const kv = await new Kvm(nc).open('jobs')
      const id = await jobIdOf(second)
      const e = await kv.get(id)
      await kv.update(
        id,
        JSON.stringify({
          ...e!.json<Record<string, unknown>>(),
          status: 'failed',
          error: { code: 'worker_crashed', message: 'x' },
        }),
        e!.revision,
      )
    } finally {
      await nc.close()
    }
    expect((await submit(b, key)).status).toBe(202)
    expect((await submit(a, key)).status).toBe(429)
  })

  it('GET /v1/credits: a budget from `tailor keys create --credits`, charged once per completed job on every replica, then 403 insufficient_api_credits', async () => {
    const made = await runCli(['create', '--name', 'credits-test', '--credits', '2', '--json'])
    expect(made.code, made.stderr).toBe(0)
    const { key, id } = JSON.parse(made.stdout) as { key: string; id: string }
    expect(JSON.parse(made.stdout)).toMatchObject({ credits: 2, creditsRemaining: 2 })
    await until(
      async () => (await Promise.all(urls.map((u) => status(u, key)))).every((s) => s === 404),
      REVOKE_BOUND_MS,
    )
    const credits = async (u: string, k = key): Promise<unknown> =>
      (await fetch(`${u}/v1/credits`, { headers: { 'x-api-key': k } })).json()
    for (const u of urls) {
      expect(await credits(u)).toEqual({ credits_remaining: 2, unlimited: false })
    }
    for (const u of urls) {
      expect(await credits(u, ENV_KEY)).toEqual({ credits_remaining: null, unlimited: true })
    }
    const everywhere = (n: number) =>
      until(
        async () =>
          (await Promise.all(urls.map((u) => credits(u)))).every(
            (c) => (c as { credits_remaining: number }).credits_remaining === n,
          ),
        REVOKE_BOUND_MS,
      )
    const end = (g: Gateway, jobId: string, status: 'completed' | 'failed') =>
      g.jobs.update(jobId, (r) => ({
        ...r,
        status,
        progress: 1,
        updatedAt: new Date().toISOString(),
        ...(status === 'completed'
          ? {
              result: { key: `remove-background/${jobId}.mp4`, contentType: 'video/mp4', bytes: 1 },
            }
          : { error: { code: 'malformed_video' as const, message: 'x' } }),
      }))
    const [a, b] = gateways as [Gateway, Gateway]
    const one = await jobIdOf(await submit(urls[0]!, key))
    const two = await jobIdOf(await submit(urls[1]!, key))
    await end(a, one, 'completed')
    await everywhere(1)
    // A failed job costs nothing; a second final update of a completed job charges nothing either.
    await end(b, two, 'failed')
    await end(b, one, 'completed')
    await new Promise((r) => setTimeout(r, 300))
    await everywhere(1)
    const three = await jobIdOf(await submit(urls[1]!, key))
    await end(b, three, 'completed')
    await everywhere(0)
    for (const u of urls) {
      const r = await submit(u, key)
      expect(r.status).toBe(403)
      expect(await r.json()).toMatchObject({
        error_code: 'insufficient_api_credits',
        error: expect.stringMatching(/no credits left/),
      })
    }
    const table = await runCli(['list'])
    expect(table.stdout).toMatch(
      new RegExp(`${id}\\s+credits-test\\s+\\S+Z\\s+-\\s+default\\s+default\\s+0 of 2`),
    )
  })

  it("another key's job is 404 not_found on every replica, for status and cancel", async () => {
    const { key } = await createKey()
    const id = await jobIdOf(await submit(urls[0]!, key))
    for (const u of urls) {
      expect(await status(u, ENV_KEY, `/v1/video/remove-background/job/${id}`)).toBe(404)
      const c = await fetch(`${u}/v1/video/remove-background/job/${id}/cancel`, {
        method: 'POST',
        headers: { 'x-api-key': ENV_KEY },
      })
      expect(c.status).toBe(404)
      expect(await c.json()).toMatchObject({ error_code: 'not_found' })
      expect(await status(u, key, `/v1/video/remove-background/job/${id}`)).toBe(200)
    }
  })

  it('after NATS restarts, a new key and its revocation still reach both replicas within a second', async () => {
    await nats.restart({ downMs: 500 })
    // The replicas reconnect on their own; wait until both answer from NATS again.
    await until(
      async () =>
        (await Promise.all(urls.map((u) => fetch(`${u}/readyz`).then((r) => r.status)))).every(
          (st) => st === 200,
        ),
      NATS_BACK_MS,
    )
    const { id, key } = await createKey()
    const nc = await connect({ servers: nats.url })
    try {
      await (
        await openKvKeyStore(nc)
      ).update(id, (r) => ({ ...r, revokedAt: new Date().toISOString() }))
    } finally {
      await nc.close()
    }
    await until(
      async () => (await Promise.all(urls.map((u) => status(u, key)))).every((st) => st === 401),
      REVOKE_BOUND_MS,
    )
  })

  it('tailor keys: an unknown id and an unreachable NATS fail with exit code 1 and a clear message', async () => {
    const err: string[] = []
    const io = {
      stdout: { write: () => true },
      stderr: { write: (x: string) => err.push(x), isTTY: false },
      env: { NATS_URL: nats.url },
    }
    expect(await keysCommand(['revoke', 'key_AAAAAAAAAAAAAAAA'], io)).toBe(1)
    expect(err.join('')).toContain('no API key with id "key_AAAAAAAAAAAAAAAA"')
    expect(
      await keysCommand(['list', '--nats-url', `nats://127.0.0.1:${await freePort()}`], io),
    ).toBe(1)
    expect(err.join('')).toContain('cannot open the key store at NATS nats://127.0.0.1:')
  })
})
