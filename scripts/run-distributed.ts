/**
 * Distributed mode in one command (issue 15 §3): `nats-server -js` with a data dir, the gateway and
 * N inference workers on this machine, each worker with its own work dir. It checks every
 * process's configuration first and reports every problem together, one line each; it prints the
 * gateway's start-up banner once every worker is ready; Ctrl-C stops them all (workers, gateway,
 * then nats-server). Run through scripts/run-distributed.sh (or `pnpm start:distributed`).
 *
 * Environment (besides each service's own variables, passed through to every process):
 *   WORKERS                  inference workers (default 2; or --workers N)
 *   TAILOR_DISTRIBUTED_DIR   NATS store, work dirs, generated secrets (default ./tailor-data-distributed)
 *   NATS_PORT                the nats-server's client port (default 4222)
 *   NATS_URL                 use this NATS server (with JetStream) instead of starting one
 *   NATS_SERVER_BIN          the nats-server executable (default: on PATH, else /usr/sbin/nats-server)
 *   HOST, PORT, GRPC_PORT, API_GRPC_PORT   the gateway's (defaults 127.0.0.1, 8080, 50051, 50052; 0 = a free port)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, Socket } from 'node:net'
import { delimiter, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { describeStartupError } from '../proto/src/startup.ts'
import { loadConfig as loadGatewayConfig } from '../services/gateway/src/config.ts'
import { loadConfig as loadInferenceConfig } from '../services/inference/src/config.ts'

const REPO = resolve(import.meta.dirname, '..')
const NAME = 'run-distributed'
type Env = Record<string, string | undefined>

interface Proc {
  name: string
  child: ChildProcess
  /** The last lines it wrote to stderr (its start-up refusal is there). */
  stderrTail: string[]
  exited: Promise<number | null>
}

const say = (line: string): void => void process.stderr.write(`${line}\n`)

function usageExit(message: string): never {
  say(`${NAME}: ${message}`)
  say(`usage: bash scripts/run-distributed.sh [--workers N] [--no-setup]`)
  process.exit(2)
}

function findNatsServer(env: Env): string | null {
  if (env.NATS_SERVER_BIN !== undefined) {
    return existsSync(env.NATS_SERVER_BIN) ? env.NATS_SERVER_BIN : null
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'nats-server'))) return join(dir, 'nats-server')
  }
  return existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : null
}

/** A port's state on `host`: free (0 resolved to a free one), or the reason it cannot be had. */
async function claimPort(
  host: string,
  port: number,
): Promise<{ port: number } | { error: string }> {
  return new Promise((res) => {
    const s = createServer()
    s.once('error', (err: NodeJS.ErrnoException) =>
      res({
        error: err.code === 'EADDRINUSE' ? 'in use by another process' : (err.code ?? err.message),
      }),
    )
    s.listen(port, host, () => {
      const got = (s.address() as { port: number }).port
      s.close(() => res({ port: got }))
    })
  })
}

async function waitForPort(
  port: number,
  host: string,
  timeoutMs: number,
  alive: () => boolean,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && alive()) {
    const ok = await new Promise<boolean>((res) => {
      const s = new Socket()
      s.once('connect', () => (s.destroy(), res(true)))
      s.once('error', () => (s.destroy(), res(false)))
      s.connect(port, host)
    })
    if (ok) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

/** Secrets the gateway and workers share, generated once and kept (result URLs stay valid across restarts). */
async function secrets(
  dir: string,
): Promise<{ RESULT_URL_SECRET: string; JOB_EVENTS_TOKEN: string }> {
  const file = join(dir, 'secrets.json')
  try {
    return JSON.parse(await readFile(file, 'utf8')) as {
      RESULT_URL_SECRET: string
      JOB_EVENTS_TOKEN: string
    }
  } catch {
    const s = {
      RESULT_URL_SECRET: randomBytes(32).toString('hex'),
      JOB_EVENTS_TOKEN: randomBytes(32).toString('hex'),
    }
    await writeFile(file, `${JSON.stringify(s)}\n`, { mode: 0o600 })
    await chmod(file, 0o600)
    return s
  }
}

function startProc(
  name: string,
  command: string,
  args: string[],
  env: Env,
  onLine: (line: string, stream: 'out' | 'err') => void,
): Proc {
  // Its own process group: a terminal's Ctrl-C reaches this script only, which stops the others in order.
  const child = spawn(command, args, {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const stderrTail: string[] = []
  const lines = (stream: 'out' | 'err') => {
    let rest = ''
    return (d: Buffer): void => {
      rest += d.toString()
      const parts = rest.split('\n')
      rest = parts.pop() ?? ''
      for (const l of parts) {
        if (stream === 'err') {
          stderrTail.push(l)
          if (stderrTail.length > 20) stderrTail.shift()
        }
        onLine(l, stream)
      }
    }
  }
  child.stdout?.on('data', lines('out'))
  child.stderr?.on('data', lines('err'))
  const exited = new Promise<number | null>((res) =>
    child.once('exit', (code, signal) => res(code ?? (signal === null ? null : 128))),
  )
  return { name, child, stderrTail, exited }
}

/** What a process said before it gave up: its one-line refusals (lines starting `<service>: `), else its last line. */
function refusal(p: Proc): string[] {
  const own = p.stderrTail.filter((l) => /^(gateway|inference|tailor): /.test(l))
  if (own.length > 0) {
    return own.map((l) => `${p.name}: ${l.replace(/^(gateway|inference|tailor): /, '')}`)
  }
  const last = p.stderrTail.filter((l) => l.trim() !== '' && !/^\s+at /.test(l)).at(-1)
  return [`${p.name}: exited${last === undefined ? '' : `: ${last.trim().slice(0, 300)}`}`]
}

async function main(): Promise<void> {
  let args
  try {
    args = parseArgs({
      options: { workers: { type: 'string' }, 'no-setup': { type: 'boolean' } },
      allowPositionals: false,
    })
  } catch (err) {
    usageExit((err as Error).message)
  }
  const env: Env = { ...process.env }
  const workersText = args.values.workers ?? env.WORKERS ?? '2'
  const workers = Number(workersText)
  if (!Number.isInteger(workers) || workers < 1 || workers > 16) {
    usageExit(
      `--workers / WORKERS must be a whole number from 1 to 16, got ${JSON.stringify(workersText)}`,
    )
  }
  const root = resolve(env.TAILOR_DISTRIBUTED_DIR ?? './tailor-data-distributed')
  const host = env.HOST ?? '127.0.0.1'
  const external = env.NATS_URL
  const natsHost = '127.0.0.1'

  // 1. Everything that can be checked before starting anything, reported together.
  const problems: string[] = []
  const natsBin = external === undefined ? findNatsServer(env) : null
  if (external === undefined && natsBin === null) {
    problems.push("nats-server: not found (install Debian's nats-server, or set NATS_SERVER_BIN)")
  }
  const portOf = async (
    who: string,
    variable: string,
    fallback: number,
    h: string,
  ): Promise<number> => {
    const text = env[variable] ?? String(fallback)
    const n = Number(text)
    if (!/^\d+$/.test(text) || n > 65535) {
      problems.push(
        `${who}: ${variable}: must be a port number (0-65535), got ${JSON.stringify(text)}`,
      )
      return 0
    }
    const r = await claimPort(h, n)
    if ('error' in r) {
      problems.push(
        `${who}: ${variable}: port ${n} on ${h} is ${r.error} (set ${variable} to a free port, or stop the other process)`,
      )
      return n
    }
    return r.port
  }
  const natsPort =
    external === undefined ? await portOf('nats-server', 'NATS_PORT', 4222, natsHost) : 0
  const httpPort = await portOf('gateway', 'PORT', 8080, host)
  const grpcPort = await portOf('gateway', 'GRPC_PORT', 50051, host)
  const apiGrpcPort = await portOf('gateway', 'API_GRPC_PORT', 50052, host)
  const natsUrl = external ?? `nats://${natsHost}:${natsPort}`
  await mkdir(root, { recursive: true })
  const shared = await secrets(root)
  const gatewayEnv: Env = {
    ...env,
    ...shared,
    ...Object.fromEntries(
      Object.entries(shared)
        .filter(([k]) => env[k] !== undefined)
        .map(([k]) => [k, env[k]]),
    ),
    NATS_URL: natsUrl,
    HOST: host,
    PORT: String(httpPort),
    GRPC_PORT: String(grpcPort),
    API_GRPC_PORT: String(apiGrpcPort),
  }
  const grpcAddr = `${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${grpcPort}`
  const workerEnv = (i: number): Env => ({
    ...env,
    JOB_EVENTS_TOKEN: gatewayEnv.JOB_EVENTS_TOKEN,
    NATS_URL: natsUrl,
    GATEWAY_GRPC_ADDR: grpcAddr,
    // Never another worker's: each one empties its own at start.
    TAILOR_WORK_DIR: join(root, 'work', `worker-${i}`),
    // Ctrl-C should not wait two minutes for a long video.
    SHUTDOWN_TIMEOUT_MS: env.SHUTDOWN_TIMEOUT_MS ?? '10000',
    // The gateway's variables are not the worker's (HEALTH_PORT etc. stay as given).
    PORT: undefined,
    GRPC_PORT: undefined,
    API_GRPC_PORT: undefined,
  })
  const seen = new Set<string>()
  const report = (lines: string[] | null, err: unknown, who: string): void => {
    for (const l of lines ?? [`${who}: ${(err as Error).message.split('\n')[0]}`]) {
      if (!seen.has(l)) (seen.add(l), problems.push(l))
    }
  }
  try {
    loadGatewayConfig(gatewayEnv)
  } catch (err) {
    report(describeStartupError('gateway', err), err, 'gateway')
  }
  for (let i = 1; i <= workers; i++) {
    try {
      loadInferenceConfig(workerEnv(i))
    } catch (err) {
      report(describeStartupError('inference', err), err, 'inference')
    }
  }
  if (problems.length > 0) {
    say(`${NAME}: nothing started; fix these first:`)
    for (const p of problems) say(`  ${p}`)
    process.exit(2)
  }

  // 2. Start them: nats-server, the gateway, the workers. Logs pass through; the gateway's banner is held until every worker is ready.
  const procs: Proc[] = []
  let stopping = false
  let banner: string[] | null = null
  let inBanner = false
  const heldBanner: string[] = []
  const readyWorkers = new Set<string>()
  const forward =
    (p: () => Proc) =>
    (line: string, stream: 'out' | 'err'): void => {
      if (p().name === 'gateway' && stream === 'out') {
        // The gateway's banner: a block between two rules of ─. Held, printed once the workers are ready.
        if (/^─{10,}$/.test(line)) {
          if (!inBanner) heldBanner.length = 0
          heldBanner.push(line)
          if (inBanner) banner = [...heldBanner]
          inBanner = !inBanner
          return
        }
        if (inBanner) {
          heldBanner.push(line)
          return
        }
      }
      if (p().name.startsWith('worker-') && line.includes('"msg":"inference consuming jobs"')) {
        readyWorkers.add(p().name)
      }
      // nats-server's own start-up chatter stays out of the way; its warnings and errors do not.
      if (p().name === 'nats-server' && !/\[(WRN|ERR|FTL)\]/.test(line)) return
      if (line === '' && stream === 'out') return
      ;(stream === 'out' ? process.stdout : process.stderr).write(`${line}\n`)
    }
  const stopAll = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true
      // Workers first (they hand back or finish their jobs), then the gateway, then NATS.
      const order = [
        ...procs.filter((p) => p.name.startsWith('worker-')),
        ...procs.filter((p) => p.name === 'gateway'),
        ...procs.filter((p) => p.name === 'nats-server'),
      ]
      const groups = [
        order.filter((p) => p.name.startsWith('worker-')),
        order.filter((p) => p.name === 'gateway'),
        order.filter((p) => p.name === 'nats-server'),
      ]
      for (const g of groups) {
        for (const p of g) {
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM')
        }
        await Promise.all(g.map((p) => p.exited))
      }
      say(`${NAME}: stopped (${order.map((p) => p.name).join(', ')})`)
    }
    process.exit(code)
  }
  const killAll = (): void => {
    for (const p of procs) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
    }
  }
  process.once('exit', killAll)
  let firstSignalAt = 0
  const onSignal = (): void => {
    // A terminal's Ctrl-C may reach this process twice (directly, and relayed by pnpm): one stop.
    if (firstSignalAt !== 0 && Date.now() - firstSignalAt < 1_000) return
    if (firstSignalAt !== 0) {
      say(`${NAME}: stopping at once`)
      killAll()
      process.exit(130)
    }
    firstSignalAt = Date.now()
    say(`${NAME}: stopping (workers, gateway, nats-server); Ctrl-C again to kill them at once`)
    void stopAll(0)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  /**
   * A process that ends on its own (not stopped by us) stops the rest. Processes that refuse to
   * start usually refuse together (NATS without JetStream stops the gateway and every worker):
   * wait a moment, then say every one's reason, one line each.
   */
  let failing = false
  const watch = (p: Proc): void => {
    void p.exited.then(async (code) => {
      if (stopping || failing) return
      failing = true
      await Promise.race([
        Promise.all(procs.filter((q) => q.name !== 'nats-server').map((q) => q.exited)),
        new Promise((r) => setTimeout(r, 3_000)),
      ])
      const ended = procs.filter((q) => q.child.exitCode !== null || q.child.signalCode !== null)
      for (const q of ended) for (const l of refusal(q)) say(`${NAME}: ${l}`)
      say(`${NAME}: ${p.name} exited (status ${code}); stopping the others`)
      await stopAll(1)
    })
  }

  if (external === undefined) {
    await mkdir(join(root, 'nats'), { recursive: true })
    const nats: Proc = startProc(
      'nats-server',
      natsBin!,
      ['-js', '-sd', join(root, 'nats'), '-a', natsHost, '-p', String(natsPort)],
      env,
      forward(() => nats),
    )
    procs.push(nats)
    watch(nats)
    if (!(await waitForPort(natsPort, natsHost, 15_000, () => nats.child.exitCode === null))) {
      if (!stopping) {
        say(`${NAME}: nats-server did not start listening on ${natsHost}:${natsPort}`)
        await stopAll(1)
      }
    }
  }
  const tsx = ['--import', 'tsx']
  const gateway: Proc = startProc(
    'gateway',
    process.execPath,
    [...tsx, 'services/gateway/src/main.ts'],
    gatewayEnv,
    forward(() => gateway),
  )
  procs.push(gateway)
  watch(gateway)
  for (let i = 1; i <= workers; i++) {
    const w: Proc = startProc(
      `worker-${i}`,
      process.execPath,
      [...tsx, 'services/inference/src/main.ts'],
      workerEnv(i),
      forward(() => w),
    )
    procs.push(w)
    watch(w)
  }
  while (!stopping && !failing && (banner === null || readyWorkers.size < workers)) {
    await new Promise((r) => setTimeout(r, 200))
  }
  if (stopping || failing) return
  const dirs = Array.from({ length: workers }, (_, i) => join(root, 'work', `worker-${i + 1}`))
  const b = banner as string[] | null
  const body = b === null ? [] : b.slice(0, -1)
  process.stdout.write(
    `\n${[
      ...body,
      `Workers: ${workers} ready, each with its own work dir (${dirs.join(', ')}).`,
      `NATS store: ${external === undefined ? join(root, 'nats') : `external (${natsUrl.replace(/\/\/[^@/]*@/, '//')})`}. Ctrl-C stops them all.`,
      b?.at(-1) ?? '',
    ].join('\n')}\n\n`,
  )
}

await main()
