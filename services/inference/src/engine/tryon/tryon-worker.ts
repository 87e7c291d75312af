/**
 * The try-on engine in a worker thread, behind the same `TryOnEngine` port as openTryOnEngine:
 * the engine's JS stages (garment extraction, regions, fit, compositing) are synchronous and hold
 * the thread they run on for hundreds of ms, so the service runs them off its event loop (HTTP
 * health checks, NATS heartbeats, gRPC event streams and video jobs keep flowing). The composition
 * root (start.ts) chooses it (`TRYON_ENGINE_THREAD=worker`, the default).
 *
 * One worker holds one engine (the same networks and stages as in-process); requests are
 * interleaved in it the way they would be in-process. The images are copied to the worker
 * (structured clone, a few ms for 768×1024), the result's pixels are transferred back. Model run
 * times come back as messages and are handed to `onRun` (metrics). Refusals come back as the same
 * AppError (code, message); any other failure as an Error with the worker's message and stack. If
 * the worker dies (a native crash, out of memory), every pending request fails and the next one
 * starts a new worker (the models are loaded and warmed up again).
 */
import { Worker } from 'node:worker_threads'
import type {
  TryOnEngine,
  TryOnEngineOptions,
  TryOnEngineResult,
  TryOnImage,
} from '../../jobs/try-on.ts'
import type { ProviderFallback } from '../session.ts'
import { revivedError } from '../worker-error.ts'
import type { OpenTryOnEngineOptions } from './tryon-engine.ts'
import type { WorkerReply, WorkerRequest } from './tryon-worker-main.ts'

export type OpenTryOnWorkerOptions = Omit<OpenTryOnEngineOptions, 'stages'>

export interface TryOnWorkerEngine extends TryOnEngine {
  readonly providerFallbacks: readonly ProviderFallback[]
  readonly warmupMs: number
  /** The worker thread's id (tests: the engine does not run on the caller's thread). */
  readonly threadId: number
}

/**
 * From TypeScript sources: a boot file that registers tsx in the worker (Node 20 workers do not
 * inherit `--import tsx`), then loads tryon-worker-main.ts. Compiled (the images,
 * scripts/images/compile.ts): the bundled tryon-worker-main.js beside main.js.
 */
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('./tryon-worker-boot.mjs', import.meta.url)
  : new URL('./tryon-worker-main.js', import.meta.url)
const CLOSE_TIMEOUT_MS = 10_000

interface Started {
  worker: Worker
  ready: Extract<WorkerReply, { type: 'ready' }>
}

export async function openTryOnEngineInWorker(
  o: OpenTryOnWorkerOptions,
): Promise<TryOnWorkerEngine> {
  const { onRun, ...data } = o
  const pending = new Map<
    number,
    { resolve: (r: TryOnEngineResult) => void; reject: (e: Error) => void }
  >()
  const workerOf = new Map<number, Worker>()
  let nextId = 1
  let closing = false
  let current: Started | null = null
  let starting: Promise<Started> | null = null

  const start = (): Promise<Started> =>
    new Promise<Started>((resolve, reject) => {
      const worker = new Worker(ENTRY, { workerData: data, execArgv: [] })
      let ready: Started['ready'] | null = null
      worker.on('message', (m: WorkerReply) => {
        switch (m.type) {
          case 'ready':
            ready = m
            resolve({ worker, ready: m })
            break
          case 'open-failed': {
            const err = new Error(`try-on engine failed to open in its worker: ${m.message}`)
            if (m.stack) err.stack = m.stack
            reject(err)
            break
          }
          case 'run':
            onRun?.(m.model, m.seconds)
            break
          case 'result': {
            const p = pending.get(m.id)
            pending.delete(m.id)
            p?.resolve({
              rgb: m.rgb,
              category: m.category,
              detectedCategory: m.detectedCategory,
              timings: m.timings,
            })
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
        if (current?.worker === worker) current = null
        if (ready === null) reject(new Error(`try-on worker ${why} before it was ready`))
        for (const [id, p] of pending) {
          if (workerOf.get(id) !== worker) continue
          pending.delete(id)
          p.reject(new Error(`try-on worker ${why} while running the request`))
        }
      }
      worker.on('error', (err) => died(`failed (${err.message})`))
      worker.on('exit', (code) => died(`exited with code ${code}`))
    })

  const first = await start()
  current = first

  const ensure = async (): Promise<Started> => {
    if (current !== null) return current
    if (closing) throw new Error('the try-on engine is closed')
    starting ??= start().finally(() => {
      starting = null
    })
    current = await starting
    return current
  }

  return {
    provider: first.ready.provider,
    providerFallbacks: first.ready.providerFallbacks as ProviderFallback[],
    warmupMs: first.ready.warmupMs,
    get threadId() {
      return current?.worker.threadId ?? -1
    },
    async tryOn(
      person: TryOnImage,
      garment: TryOnImage,
      options: TryOnEngineOptions,
    ): Promise<TryOnEngineResult> {
      const { worker } = await ensure()
      const id = nextId++
      return new Promise<TryOnEngineResult>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        workerOf.set(id, worker)
        const req: WorkerRequest = { type: 'try-on', id, person, garment, options }
        worker.postMessage(req)
      }).finally(() => workerOf.delete(id))
    },
    async close() {
      closing = true
      const w = current?.worker
      current = null
      if (w === undefined) return
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()))
      w.postMessage({ type: 'close' } satisfies WorkerRequest)
      const timer = setTimeout(() => void w.terminate(), CLOSE_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}
