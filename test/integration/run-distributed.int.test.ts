import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient } from '../helpers/api.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort, NATS_SERVER_BIN, waitForPort } from '../helpers/nats-server.ts'
import { REPO_ROOT } from '../helpers/processes.ts'

/**
 * scripts/run-distributed.sh (issue 15 §3), run as a user runs it: a real nats-server -js with a
 * data dir, the gateway and two workers; the key made with the command its banner names; a job
 * submitted and completed; Ctrl-C stops every process. Bad configuration: every problem of every
 * process at once, one line each, nothing started, no stack trace.
 */
const JOB_TIMEOUT_MS = 240_000
/** Start-up of three processes plus one job on a shared, loaded machine: past vitest's 120 s default. */
const TEST_TIMEOUT_MS = 600_000

interface Run {
  proc: ChildProcess
  out(): string
  err(): string
  exited: Promise<number | null>
  waitFor(text: string, timeoutMs: number): Promise<void>
}

function runScript(args: string[], env: Record<string, string>): Run {
  const proc = spawn('bash', ['scripts/run-distributed.sh', '--no-setup', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))
  const reap = (): void => void (proc.exitCode === null && proc.kill('SIGKILL'))
  process.once('exit', reap)
  return {
    proc,
    out: () => out,
    err: () => err,
    exited,
    async waitFor(text, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      while (!out.includes(text)) {
        if (proc.exitCode !== null) {
          throw new Error(
            `run-distributed exited (${proc.exitCode}) before "${text}"\n${err.slice(-3000)}`,
          )
        }
        if (Date.now() > deadline) {
          throw new Error(`"${text}" not printed within ${timeoutMs} ms\n${err.slice(-3000)}`)
        }
        await new Promise((r) => setTimeout(r, 200))
      }
    },
  }
}

/** Processes of this user whose command line or environment names `marker`. */
async function processesNaming(marker: string): Promise<number[]> {
  const pids: number[] = []
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
    const [cmd, env] = await Promise.all([
      readFile(`/proc/${d}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${d}/environ`, 'utf8').catch(() => ''),
    ])
    if (cmd.includes(marker) || env.includes(marker)) pids.push(Number(d))
  }
  return pids
}

let models: { dir: string; remove(): Promise<void> }
let media: MediaFixtures
const roots: string[] = []
const newRoot = async (): Promise<string> => {
  const r = await mkdtemp(join(tmpdir(), 'tailor-run-distributed-'))
  roots.push(r)
  return r
}

beforeAll(async () => {
  models = await snapshotModels()
  media = await createMediaFixtures()
})

afterAll(async () => {
  await media?.stop()
  await models?.remove()
  for (const r of roots) await rm(r, { recursive: true, force: true })
})

describe('scripts/run-distributed.sh', () => {
  it('reports every configuration problem of every process together, one line each, and starts nothing', async () => {
    const root = await newRoot()
    const busy = await freePort()
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require('node:net').createServer().listen(${busy}, '127.0.0.1', () => console.log('up'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await new Promise((r) => holder.stdout!.once('data', r))
    try {
      const run = runScript([], {
        TAILOR_DISTRIBUTED_DIR: root,
        NATS_PORT: String(await freePort()),
        PORT: String(busy),
        GRPC_PORT: '0',
        API_GRPC_PORT: '0',
        DEFAULT_RATE_LIMIT_PER_S: 'lots',
        CONCURRENCY: '0',
        ORT_EP: 'tpu',
      })
      expect(await run.exited).toBe(2)
      const lines = run.err().trim().split('\n')
      expect(lines[0]).toBe('run-distributed: nothing started; fix these first:')
      expect(
        lines
          .slice(1)
          .map((l) => l.trim())
          .sort(),
      ).toEqual(
        [
          `gateway: DEFAULT_RATE_LIMIT_PER_S: Invalid input: expected number, received NaN`,
          `gateway: PORT: port ${busy} on 127.0.0.1 is in use by another process (set PORT to a free port, or stop the other process)`,
          'inference: CONCURRENCY: Too small: expected number to be >=1',
          'inference: ORT_EP: Invalid option: expected one of "cuda"|"cpu"',
        ].sort(),
      )
      expect(run.err()).not.toMatch(/^\s+at /m)
      expect(existsSync(join(root, 'nats'))).toBe(false) // no nats-server was started
    } finally {
      holder.kill()
    }
  })

  it('says in one line that a NATS server without JetStream will not do (gateway and each worker), no stack trace', async () => {
    const root = await newRoot()
    const natsPort = await freePort()
    const plain = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(natsPort)], {
      stdio: 'ignore',
    }) // no -js
    try {
      await waitForPort(natsPort, 10_000)
      const url = `nats://127.0.0.1:${natsPort}`
      const run = runScript(['--workers', '1'], {
        TAILOR_DISTRIBUTED_DIR: root,
        NATS_URL: url,
        PORT: '0',
        GRPC_PORT: '0',
        API_GRPC_PORT: '0',
        MODELS_DIR: models.dir,
        JOB_KINDS: 'remove-background',
      })
      expect(await run.exited).toBe(1)
      const err = run.err()
      expect(err).toContain(
        `run-distributed: gateway: NATS at ${url} has no JetStream: start the server with it, e.g. \`nats-server -js -sd ./nats-data\``,
      )
      expect(err).toMatch(
        /run-distributed: (gateway|worker-1) exited \(status 1\); stopping the others/,
      )
      expect(err).not.toMatch(/^\s+at /m)
      expect(err).not.toContain('JetStreamNotEnabled:')
      expect(await processesNaming(root)).toEqual([])
    } finally {
      plain.kill()
    }
  })

  it(
    "runs nats-server -js, the gateway and two workers; the banner's key command works; a job completes; Ctrl-C stops them all",
    async () => {
      const root = await newRoot()
      const natsPort = await freePort()
      const run = runScript(['--workers', '2'], {
        TAILOR_DISTRIBUTED_DIR: root,
        NATS_PORT: String(natsPort),
        PORT: '0',
        GRPC_PORT: '0',
        API_GRPC_PORT: '0',
        MODELS_DIR: models.dir,
        JOB_KINDS: 'remove-background',
        TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
        ORT_EP: 'cpu',
      })
      try {
        await run.waitFor('Ctrl-C stops them all.', 300_000)
        const out = run.out()
        const banner = out.slice(out.indexOf('Tailor is running at'))
        const url = /Tailor is running at (http:\/\/127\.0\.0\.1:\d+) {2}\(distributed mode\)/.exec(
          banner,
        )?.[1]
        expect(url).toBeDefined()
        expect(banner).toContain(`export TAILOR_URL=${url} `)
        expect(banner).toMatch(/Playground +http:\/\/127\.0\.0\.1:\d+\/\n/)
        expect(banner).toMatch(/gRPC API +127\.0\.0\.1:\d+ /)
        const natsUrl = `nats://127.0.0.1:${natsPort}`
        const hint = `pnpm tailor keys create --name NAME --nats-url ${natsUrl}`
        expect(banner).toContain(hint)
        const dirs = [join(root, 'work', 'worker-1'), join(root, 'work', 'worker-2')]
        expect(banner).toContain(
          `Workers: 2 ready, each with its own work dir (${dirs.join(', ')}).`,
        )
        for (const d of dirs) expect(existsSync(d)).toBe(true)
        expect(existsSync(join(root, 'nats', 'jetstream'))).toBe(true)

        // The key, made as the banner says (`pnpm tailor` runs cli/src/main.ts).
        const cli = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            'cli/src/main.ts',
            ...hint.replace('NAME', 'run-distributed-test').split(' ').slice(2),
            '--json',
          ],
          { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
        )
        let cliOut = ''
        cli.stdout!.on('data', (d: Buffer) => (cliOut += d.toString()))
        expect(await new Promise((r) => cli.once('exit', r))).toBe(0)
        const key = (JSON.parse(cliOut) as { key: string }).key
        expect(key).toMatch(/^tk_/)

        const api = apiClient(url!, key)
        // The gateway follows the key bucket (a KV watch): the new key is accepted within a second or so.
        let submitted: { status: number; body: Record<string, unknown> } | null = null
        for (let i = 0; i < 50; i++) {
          submitted = await api.submit({
            video_url: `${media.baseUrl}/short_01.mp4`,
            output_format: 'mp4_h264',
          })
          if (submitted.status !== 401) break
          await new Promise((r) => setTimeout(r, 200))
        }
        expect(submitted!.status, JSON.stringify(submitted!.body)).toBe(202)
        const done = await api.wait(submitted!.body.job_id as string, JOB_TIMEOUT_MS)
        expect(done).toMatchObject({ status: 'completed', progress: 1, attempt: 1 })
        expect((await fetch(done.result_url!)).status).toBe(200)
      } finally {
        run.proc.kill('SIGINT') // what Ctrl-C sends
      }
      expect(await run.exited).toBe(0)
      expect(run.err()).toContain(
        'run-distributed: stopped (worker-1, worker-2, gateway, nats-server)',
      )
      expect(await processesNaming(root)).toEqual([])
      expect(run.err()).not.toMatch(/^\s+at /m)
    },
    TEST_TIMEOUT_MS,
  )
})
