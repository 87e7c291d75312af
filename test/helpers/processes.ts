import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { resolve } from 'node:path'

export const REPO_ROOT = resolve(import.meta.dirname, '../..')
/** The job-events port's shared secret (JOB_EVENTS_TOKEN) the tests give both services; required with NATS_URL. */
export const TEST_JOB_EVENTS_TOKEN = 'test-job-events-token-0123456789abcdef'
const READY_TIMEOUT_MS = 120_000

export interface ServiceProcess {
  proc: ChildProcess
  /** Everything printed so far (stdout + stderr). */
  output(): string
  /** Resolves when a line contains `text` (e.g. a pino msg). */
  waitFor(text: string, timeoutMs?: number): Promise<void>
  /** SIGTERM (or the given signal) and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/** Starts `node --import tsx <entry>` from the repository root with `env` added. */
export function startService(entry: string, env: Record<string, string>): ServiceProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', resolve(REPO_ROOT, entry)], {
    cwd: REPO_ROOT,
    // API_GRPC_PORT 0: a gateway's internal gRPC API on a free port unless the test names one;
    // JOB_EVENTS_TOKEN: the same job-events secret for every gateway and worker a test starts.
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'info',
      API_GRPC_PORT: '0',
      JOB_EVENTS_TOKEN: TEST_JOB_EVENTS_TOKEN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const waiters: { text: string; resolve: () => void }[] = []
  const onData = (d: Buffer): void => {
    out += d.toString()
    if (out.length > 2_000_000) out = out.slice(-1_000_000)
    for (const w of [...waiters]) {
      if (out.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
  proc.stdout?.on('data', onData)
  proc.stderr?.on('data', onData)
  const exited = new Promise<void>((r) => proc.once('exit', () => r()))
  // Never outlive the test process, whatever happens to its hooks.
  const reap = (): void => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
  }
  process.once('exit', reap)
  void exited.then(() => process.removeListener('exit', reap))
  return {
    proc,
    output: () => out,
    waitFor(text, timeoutMs = READY_TIMEOUT_MS) {
      if (out.includes(text)) return Promise.resolve()
      return new Promise((res, rej) => {
        const t = setTimeout(
          () =>
            rej(
              new Error(`${entry}: "${text}" not seen within ${timeoutMs} ms\n${out.slice(-3000)}`),
            ),
          timeoutMs,
        )
        const w = { text, resolve: () => (clearTimeout(t), res()) }
        waiters.push(w)
        void exited.then(() => {
          if (waiters.includes(w)) {
            clearTimeout(t)
            rej(new Error(`${entry} exited before "${text}"\n${out.slice(-3000)}`))
          }
        })
      })
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill(signal)
        await exited
      }
    },
  }
}

export interface ProcInfo {
  pid: number
  /** The executable's name (from /proc/<pid>/stat, at most 15 characters). */
  comm: string
  /** One-letter state: R, S, T (stopped), Z (zombie)… */
  state: string
}

/** The live child processes of `pid` (Linux /proc), e.g. the ffmpeg processes of a worker. */
export async function childProcesses(pid: number): Promise<ProcInfo[]> {
  const out: ProcInfo[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => null)
    if (stat === null) continue
    // pid (comm) state ppid …; comm may hold spaces or parentheses, so split at the last ')'.
    const close = stat.lastIndexOf(')')
    const [state, ppid] = stat.slice(close + 2).split(' ')
    if (Number(ppid) === pid) {
      out.push({
        pid: Number(name),
        comm: stat.slice(stat.indexOf('(') + 1, close),
        state: state ?? '?',
      })
    }
  }
  return out
}
