/**
 * The session worker thread (session-worker.ts starts it): opens the model sessions it was given
 * and runs the streams the main thread opens in it, in order, with their carried state kept here.
 * Each result's buffers (the outputs, and the feeds handed back for reuse) are transferred, not
 * copied. Model run times go back as `run` messages (metrics).
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { ModelSpec } from './manifest.ts'
import { localRunner, type CarriedStream, type StreamSpec, type Tensors } from './session-runner.ts'
import { ModelSession, type SessionOptions } from './session.ts'
import { errorReply, type ErrorReply } from './worker-error.ts'

export interface WorkerOptions {
  specs: ModelSpec[]
  session: Omit<SessionOptions, 'onRun'>
}

export type WorkerRequest =
  | { type: 'open-stream'; stream: number; model: string; spec: StreamSpec }
  | { type: 'run'; id: number; stream: number; feeds: Tensors; outputs: readonly string[] }
  | { type: 'dispose'; stream: number }
  | { type: 'close' }

export type WorkerReply =
  | {
      type: 'ready'
      provider: 'cuda' | 'cpu'
      fallbacks: { provider: 'cuda' | 'cpu'; reason: string }[]
      intraOpThreads: number
    }
  | ({ type: 'open-failed' } & ErrorReply)
  | { type: 'run'; model: string; seconds: number }
  | { type: 'result'; id: number; outputs: Tensors; feeds: Tensors }
  | ({ type: 'failed'; id: number } & ErrorReply)
  | { type: 'closed' }

const port = parentPort
if (port === null) {
  throw new Error('session-worker-main.ts runs as a worker thread (session-worker.ts)')
}
const post = (m: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer)
const opts = workerData as WorkerOptions

/** Every distinct buffer behind `tensors` (an output and a feed never share one). */
const buffersOf = (...tensors: Tensors[]): ArrayBuffer[] => [
  ...new Set(tensors.flatMap((t) => Object.values(t).map((d) => d.data.buffer as ArrayBuffer))),
]

const sessions: ModelSession[] = []
try {
  const onRun = (model: string, seconds: number) => post({ type: 'run', model, seconds })
  for (const spec of opts.specs) {
    sessions.push(await ModelSession.open(spec, { ...opts.session, onRun }))
  }
  const runner = localRunner(sessions)
  const streams = new Map<number, CarriedStream>()
  port.on('message', (m: WorkerRequest) => {
    switch (m.type) {
      case 'open-stream':
        streams.set(m.stream, runner.openStream(m.model, m.spec))
        break
      case 'run': {
        const stream = streams.get(m.stream)
        const run = stream?.run(m.feeds, m.outputs) ?? Promise.reject(new Error('no such stream'))
        run.then(
          (r) =>
            post(
              { type: 'result', id: m.id, outputs: r.outputs, feeds: r.feeds },
              buffersOf(r.outputs, r.feeds),
            ),
          (err: unknown) => post({ type: 'failed', id: m.id, ...errorReply(err) }),
        )
        break
      }
      case 'dispose':
        streams.get(m.stream)?.dispose()
        streams.delete(m.stream)
        break
      case 'close':
        void runner.close().finally(() => {
          post({ type: 'closed' })
          port.close()
        })
        break
    }
  })
  post({
    type: 'ready',
    provider: runner.provider,
    fallbacks: [...runner.fallbacks],
    intraOpThreads: runner.intraOpThreads,
  })
} catch (err) {
  await Promise.all(sessions.map((s) => s.release()))
  post({ type: 'open-failed', ...errorReply(err) })
  port.close()
}
