/**
 * A `SessionRunner` whose sessions live on a worker thread, so a model run never holds the
 * service's event loop, and the job's thread decodes, pre-processes, composites and encodes the
 * frames around frame n while the worker runs it (remove-background keeps two frames in flight;
 * docs/media.md "Pipeline").
 *
 * The worker owns the sessions and each stream's carried state (session-worker-main.ts); only the
 * per-run feeds and the outputs asked for cross the thread boundary, transferred (their
 * ArrayBuffers move, nothing is copied), and the feeds come back with the result for the caller
 * to fill again. Errors come back as the same AppError (code, message, retryable); any other
 * failure as an Error with the worker's message and stack. If the worker dies (a native crash,
 * out of memory), every pending run fails and the next stream starts a new worker (the sessions
 * are opened again; the caller warms them up if it wants).
 */
import { Worker } from 'node:worker_threads'
import { AppError } from '@tailor/proto'
import type { ModelSpec } from './manifest.ts'
import {
  streamDisposed,
  type CarriedStream,
  type SessionRunner,
  type StreamRun,
  type StreamSpec,
  type Tensors,
} from './session-runner.ts'
import type { WorkerOptions, WorkerReply, WorkerRequest } from './session-worker-main.ts'
import type { ProviderFallback, SessionOptions } from './session.ts'
import { revivedError } from './worker-error.ts'

/**
 * From TypeScript sources: a boot file that registers tsx in the worker (Node 20 workers do not
 * inherit `--import tsx`). Compiled (the images, scripts/images/compile.ts): the bundled
 * session-worker-main.js beside main.js.
 */
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('./session-worker-boot.mjs', import.meta.url)
  : new URL('./session-worker-main.js', import.meta.url)
const CLOSE_TIMEOUT_MS = 10_000

type Ready = Extract<WorkerReply, { type: 'ready' }>

interface Pending {
  resolve: (r: StreamRun) => void
  reject: (e: Error) => void
  stream: number
  worker: Worker
}

/** Every distinct buffer behind `tensors`. */
const buffersOf = (t: Tensors): ArrayBuffer[] => [
  ...new Set(Object.values(t).map((d) => d.data.buffer as ArrayBuffer)),
]

/** Opens `specs` on a new worker thread; resolves once every session is open. */
export async function openSessionWorker(
  specs: readonly ModelSpec[],
  options: SessionOptions = {},
): Promise<SessionRunner & { readonly threadId: number }> {
  const { onRun, ...session } = options
  const data: WorkerOptions = { specs: [...specs], session }
  const pending = new Map<number, Pending>()
  let nextId = 1
  let nextStream = 1
  let closing = false
  let current: { worker: Worker; ready: Ready } | null = null
  let starting: Promise<{ worker: Worker; ready: Ready }> | null = null

  const start = (): Promise<{ worker: Worker; ready: Ready }> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(ENTRY, { workerData: data, execArgv: [] })
      let ready: Ready | null = null
      worker.on('message', (m: WorkerReply) => {
        switch (m.type) {
          case 'ready':
            ready = m
            resolve({ worker, ready: m })
            break
          case 'open-failed':
            reject(revivedError({ ...m, retryable: false }))
            break
          case 'run':
            onRun?.(m.model, m.seconds)
            break
          case 'result': {
            const p = pending.get(m.id)
            pending.delete(m.id)
            p?.resolve({ outputs: m.outputs, feeds: m.feeds })
            break
          }
          case 'failed': {
            const p = pending.get(m.id)
            pending.delete(m.id)
            p?.reject(revivedError(m))
            break
          }
          case 'closed':
            break
        }
      })
      const died = (why: string) => {
        if (current?.worker === worker) {
          current = null
        }
        if (ready === null) {
          reject(new Error(`the session worker ${why} before it was ready`))
        }
        for (const [id, p] of pending) {
          if (p.worker === worker) {
            pending.delete(id)
            p.reject(new Error(`the session worker ${why} while running a model`))
          }
        }
      }
      worker.on('error', (err) => died(`failed (${err.message})`))
      worker.on('exit', (code) => died(`exited with code ${code}`))
    })

  const ensure = async (): Promise<{ worker: Worker; ready: Ready }> => {
    if (current !== null) {
      return current
    }
    if (closing) {
      throw new AppError('service_unavailable', 'the session worker is closed')
    }
    starting ??= start().finally(() => {
      starting = null
    })
    current = await starting
    return current
  }

  const first = await start()
  current = first

  class WorkerStream implements CarriedStream {
    readonly #id = nextStream++
    #worker: Promise<Worker> | null = null
    #disposed = false

    constructor(
      private readonly model: string,
      private readonly spec: StreamSpec,
    ) {}

    /** Opens the stream in the worker on first use (and ties it to that worker for good). */
    #open(): Promise<Worker> {
      this.#worker ??= ensure().then(({ worker }) => {
        const req: WorkerRequest = {
          type: 'open-stream',
          stream: this.#id,
          model: this.model,
          spec: this.spec,
        }
        worker.postMessage(req)
        return worker
      })
      return this.#worker
    }

    run(feeds: Tensors, outputs: readonly string[]): Promise<StreamRun> {
      if (this.#disposed) {
        return Promise.reject(streamDisposed())
      }
      const id = nextId++
      const p = this.#open().then(
        (worker) =>
          new Promise<StreamRun>((resolve, reject) => {
            if (this.#disposed) {
              reject(streamDisposed())
              return
            }
            if (current?.worker !== worker) {
              reject(new Error('the session worker that held this stream has exited'))
              return
            }
            pending.set(id, { resolve, reject, stream: this.#id, worker })
            const req: WorkerRequest = { type: 'run', id, stream: this.#id, feeds, outputs }
            worker.postMessage(req, buffersOf(feeds))
          }),
      )
      void p.catch(() => undefined) // a run left behind by an aborted job must not be unhandled
      return p
    }

    dispose(): void {
      if (this.#disposed) {
        return
      }
      this.#disposed = true
      for (const [id, p] of pending) {
        if (p.stream === this.#id) {
          pending.delete(id)
          p.reject(streamDisposed())
        }
      }
      void this.#worker?.then(
        (worker) =>
          worker.postMessage({ type: 'dispose', stream: this.#id } satisfies WorkerRequest),
        () => undefined,
      )
    }
  }

  return {
    provider: first.ready.provider,
    fallbacks: first.ready.fallbacks as ProviderFallback[],
    intraOpThreads: first.ready.intraOpThreads,
    thread: 'worker',
    get threadId() {
      return current?.worker.threadId ?? -1
    },
    openStream(model, spec) {
      if (!specs.some((s) => s.name === model)) {
        throw new RangeError(`no session for model ${model}`)
      }
      return new WorkerStream(model, spec)
    },
    async close() {
      closing = true
      // A worker still starting (after a crash) is waited for, so that it too is ended.
      const w = current?.worker ?? (await starting?.then((s) => s.worker).catch(() => undefined))
      current = null
      if (w === undefined) {
        return
      }
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()))
      w.postMessage({ type: 'close' } satisfies WorkerRequest)
      const timer = setTimeout(() => void w.terminate(), CLOSE_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}
