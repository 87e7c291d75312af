/**
 * The try-on engine's worker thread (tryon-worker.ts starts it): opens the engine with the
 * options it was given and answers `try-on` requests, so that the engine's synchronous JS stages
 * (hundreds of ms each on a loaded CPU) never hold the service's event loop. Model run times go
 * back to the main thread as `run` messages (metrics).
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { TryOnEngineOptions, TryOnImage } from '../../jobs/try-on.ts'
import { errorReply, type ErrorReply } from '../worker-error.ts'
import { openTryOnEngine, type OpenTryOnEngineOptions } from './tryon-engine.ts'

export type WorkerRequest =
  | {
      type: 'try-on'
      id: number
      person: TryOnImage
      garment: TryOnImage
      options: TryOnEngineOptions
    }
  | { type: 'close' }

export type WorkerReply =
  | { type: 'ready'; provider: 'cuda' | 'cpu'; providerFallbacks: unknown[]; warmupMs: number }
  | { type: 'open-failed'; message: string; stack?: string }
  | { type: 'run'; model: string; seconds: number }
  | {
      type: 'result'
      id: number
      rgb: Uint8Array
      category: 'upper' | 'lower' | 'full'
      detectedCategory: 'upper' | 'lower' | 'full'
      timings: Record<string, number>
    }
  | ({ type: 'failed'; id: number } & ErrorReply)
  | { type: 'closed' }

const port = parentPort
if (port === null) throw new Error('tryon-worker-main.ts runs as a worker thread (tryon-worker.ts)')
const post = (m: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer)
const opts = workerData as Omit<OpenTryOnEngineOptions, 'stages' | 'onRun'>

try {
  const engine = await openTryOnEngine({
    ...opts,
    onRun: (model, seconds) => post({ type: 'run', model, seconds }),
  })
  port.on('message', (m: WorkerRequest) => {
    if (m.type === 'close') {
      void engine.close().finally(() => {
        post({ type: 'closed' })
        port.close()
      })
      return
    }
    engine.tryOn(m.person, m.garment, m.options).then(
      (r) =>
        post(
          {
            type: 'result',
            id: m.id,
            rgb: r.rgb,
            category: r.category,
            detectedCategory: r.detectedCategory,
            timings: r.timings,
          },
          [r.rgb.buffer as ArrayBuffer],
        ),
      (err: unknown) => post({ type: 'failed', id: m.id, ...errorReply(err) }),
    )
  })
  post({
    type: 'ready',
    provider: engine.provider,
    providerFallbacks: [...engine.providerFallbacks],
    warmupMs: engine.warmupMs,
  })
} catch (err) {
  const e = err instanceof Error ? err : new Error(String(err))
  post({ type: 'open-failed', message: e.message, ...(e.stack ? { stack: e.stack } : {}) })
  port.close()
}
