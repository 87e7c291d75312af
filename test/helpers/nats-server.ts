import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, connect as netConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'

export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server'
const NATS_START_TIMEOUT_MS = 15_000

export interface NatsServer {
  url: string
  port: number
  storeDir: string
  /**
   * Stops the server (SIGTERM, or `signal`) and starts it again on the same port with the same
   * store dir: what JetStream wrote to file storage must survive. Resolves when it listens again;
   * `downMs` is how long it stays down in between.
   */
  restart(o?: { signal?: NodeJS.Signals; downMs?: number }): Promise<void>
  stop(): Promise<void>
}

/** A free TCP port on loopback (bind to 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      if (addr === null || typeof addr === 'string') {
        reject(new Error('no port'))
        return
      }
      srv.close(() => resolve(addr.port))
    })
  })
}

export async function waitForPort(
  port: number,
  timeoutMs: number,
  host = '127.0.0.1',
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = netConnect({ port, host }, () => {
        s.end()
        resolve(true)
      })
      s.on('error', () => resolve(false))
    })
    if (ok) return
    if (Date.now() > deadline) throw new Error(`port ${port} did not open within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function spawnNatsServer(
  port: number,
  storeDir: string,
  extraArgs: string[] = [],
  env?: Record<string, string>,
): Promise<ChildProcess> {
  const proc: ChildProcess = spawn(
    NATS_SERVER_BIN,
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...extraArgs],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(env !== undefined ? { env: { ...process.env, ...env } } : {}),
    },
  )
  let stderr = ''
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4096)
  })
  try {
    await waitForPort(port, NATS_START_TIMEOUT_MS)
  } catch (err) {
    proc.kill('SIGKILL')
    throw new Error(`nats-server did not start: ${stderr}`, { cause: err })
  }
  return proc
}

async function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((r) => proc.once('exit', r))
    proc.kill(signal)
    await exited
  }
}

/**
 * Starts a real `nats-server -js` on a free loopback port with its own store dir; `config` is a
 * configuration file (accounts, TLS…) and `env` the variables it refers to.
 */
export async function startNatsServer(
  o: { config?: string; env?: Record<string, string> } = {},
): Promise<NatsServer> {
  const port = await freePort()
  const storeDir = await mkdtemp(join(tmpdir(), 'tailor-nats-'))
  const args = o.config !== undefined ? ['-c', o.config] : []
  const env = o.env
  let proc = await spawnNatsServer(port, storeDir, args, env)
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async restart(o = {}) {
      await stopProcess(proc, o.signal)
      if (o.downMs !== undefined) await new Promise((r) => setTimeout(r, o.downMs))
      proc = await spawnNatsServer(port, storeDir, args, env)
    },
    async stop() {
      await stopProcess(proc)
      await rm(storeDir, { recursive: true, force: true })
    },
  }
}

export interface NatsCluster {
  /** Client URLs of the servers, in order. */
  urls: string[]
  /** Stops server `i` (SIGTERM); the others keep the cluster (and its R3 streams) going. */
  stopServer(i: number): Promise<void>
  stop(): Promise<void>
}

/**
 * A real 3-server JetStream cluster on loopback (routes between free ports, a store dir each), as
 * deploy/k8s runs NATS. Resolves once each server answers on its client port; JetStream's meta
 * leader may still be electing: callers wait for `jsm.getAccountInfo()` to succeed.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()))
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()))
  const dirs = await Promise.all(
    Array.from({ length: size }, () => mkdtemp(join(tmpdir(), 'tailor-nats-cluster-'))),
  )
  const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',')
  const procs: ChildProcess[] = []
  try {
    for (let i = 0; i < size; i++) {
      const args = [
        '-n',
        `tailor-${i}`,
        '--cluster_name',
        'tailor',
        '--cluster',
        `nats://127.0.0.1:${routePorts[i]}`,
        '--routes',
        routes,
      ]
      procs.push(await spawnNatsServer(ports[i] ?? 0, dirs[i] ?? '', args))
    }
  } catch (err) {
    await Promise.all(procs.map((p) => stopProcess(p, 'SIGKILL')))
    throw err
  }
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    async stopServer(i) {
      const p = procs[i]
      if (p !== undefined) await stopProcess(p)
    },
    async stop() {
      await Promise.all(procs.map((p) => stopProcess(p)))
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
    },
  }
}

export interface JobsQueueState {
  ackPending: number
  messages: number
  /** The consumer's and the stream's state, for an assertion's message. */
  detail: string
}

/**
 * The JOBS stream and one of its consumers once the worker's last ack or term has landed. The
 * worker records a job's final status before it acks the message (a crash between the two
 * redelivers the job rather than loses it), so a client can see "completed" a moment before the
 * ack reaches the server: this polls until nothing is pending and the work-queue stream is empty,
 * or `timeoutMs` passes, and returns the last state either way (the caller asserts on it).
 */
export async function jobsQueueState(
  nc: NatsConnection,
  consumer = 'inference-remove-background',
  timeoutMs = 10_000,
): Promise<JobsQueueState> {
  const jsm = await jetstreamManager(nc)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ci = await jsm.consumers.info('JOBS', consumer)
    const si = await jsm.streams.info('JOBS')
    const state: JobsQueueState = {
      ackPending: ci.num_ack_pending,
      messages: si.state.messages,
      detail: JSON.stringify({
        pending: ci.num_pending,
        ackPending: ci.num_ack_pending,
        redelivered: ci.num_redelivered,
        waiting: ci.num_waiting,
        delivered: ci.delivered,
        ackFloor: ci.ack_floor,
        stream: si.state,
      }),
    }
    if ((state.ackPending === 0 && state.messages === 0) || Date.now() > deadline) return state
    await new Promise((r) => setTimeout(r, 50))
  }
}
