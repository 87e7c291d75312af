/**
 * Streams of runs with carried state, over opened model sessions: the shape both the in-process
 * runner (here) and the worker-thread runner (session-worker.ts) give the engines.
 *
 * A stream belongs to one job and one model. Each `run(feeds, outputs)` is queued behind the
 * stream's earlier runs, so a caller may hand in frame n+1 while frame n is still running: the
 * runs keep their order, and the outputs named in `carry` (a recurrent state, RVM's `r1o..r4o`)
 * are fed to the next run under their input names without ever leaving the runner. `constants`
 * are fed to every run (RVM's `downsample_ratio`). Feeds are handed over: the caller leaves their
 * buffers alone until the run settles, and gets them back in `feeds` to fill again (in the worker
 * runner they travel to the worker and back, transferred, not copied).
 *
 * A failed run fails every later run of its stream (the carried state is gone); `dispose()` fails
 * the stream's queued runs (a run already started finishes, its result is dropped).
 */
import { AppError } from '@tailor/proto'
import type {
  ExecutionProvider,
  ModelSession,
  ProviderFallback,
  TensorArray,
  TensorData,
} from './session.ts'

/** float32 tensors, and uint8 ones for image bytes (the rvm-rgb graphs' frames). */
export type Tensors = Record<string, TensorData<TensorArray>>

export interface StreamSpec {
  /** Output name → the input name it is fed to on the stream's next run. */
  carry?: Readonly<Record<string, string>>
  /** The carried inputs of the first run. */
  initial?: Tensors
  /** Fed to every run. */
  constants?: Tensors
}

export interface StreamRun {
  /** The outputs asked for (owned by the caller). */
  outputs: Tensors
  /** The feeds handed in, back to be reused. */
  feeds: Tensors
}

export interface CarriedStream {
  run(feeds: Tensors, outputs: readonly string[]): Promise<StreamRun>
  dispose(): void
}

export interface SessionRunner {
  readonly provider: ExecutionProvider
  readonly fallbacks: readonly ProviderFallback[]
  readonly intraOpThreads: number
  /** `worker` when the sessions run on a worker thread, `main` when on the caller's thread. */
  readonly thread: 'main' | 'worker'
  openStream(model: string, spec: StreamSpec): CarriedStream
  close(): Promise<void>
}

export const streamDisposed = (): Error => new Error('the stream was used after dispose()')

/** A stream over one session in this thread (also what the worker thread runs). */
export class LocalStream implements CarriedStream {
  #tail: Promise<unknown> = Promise.resolve()
  #state: Tensors
  #failed: unknown = null
  #disposed = false
  readonly #carry: [string, string][]
  readonly #constants: Tensors

  constructor(
    private readonly session: ModelSession,
    spec: StreamSpec,
  ) {
    this.#carry = Object.entries(spec.carry ?? {})
    this.#state = { ...spec.initial }
    this.#constants = { ...spec.constants }
  }

  run(feeds: Tensors, outputs: readonly string[]): Promise<StreamRun> {
    if (this.#disposed) {
      return Promise.reject(streamDisposed())
    }
    const wanted = [...new Set([...outputs, ...this.#carry.map(([o]) => o)])]
    const next = this.#tail.then(async (): Promise<StreamRun> => {
      if (this.#disposed) {
        throw streamDisposed()
      }
      if (this.#failed !== null) {
        throw new AppError('unexpected_error', 'an earlier run of this stream failed', {
          cause: this.#failed,
        })
      }
      try {
        const out = await this.session.runAny(
          { ...this.#constants, ...this.#state, ...feeds },
          wanted,
        )
        const state: Tensors = {}
        for (const [o, i] of this.#carry) {
          state[i] = out[o]!
        }
        this.#state = state // the previous state is dropped (its tensors are already disposed)
        const asked: Tensors = {}
        for (const name of outputs) {
          asked[name] = out[name]!
        }
        return { outputs: asked, feeds }
      } catch (err) {
        this.#failed = err
        throw err
      }
    })
    this.#tail = next.catch(() => undefined)
    return next
  }

  dispose(): void {
    this.#disposed = true
    this.#state = {}
  }
}

/** Runs on the caller's thread: `run()` holds the event loop for the length of each model run. */
export function localRunner(sessions: readonly ModelSession[]): SessionRunner {
  const first = sessions[0]
  if (first === undefined) {
    throw new RangeError('localRunner: no sessions')
  }
  const byName = new Map(sessions.map((s) => [s.spec.name, s]))
  return {
    provider: first.provider,
    fallbacks: first.fallbacks,
    intraOpThreads: first.intraOpThreads,
    thread: 'main',
    openStream(model, spec) {
      const session = byName.get(model)
      if (session === undefined) {
        throw new RangeError(`no session for model ${model}`)
      }
      return new LocalStream(session, spec)
    },
    async close() {
      await Promise.all(sessions.map((s) => s.release()))
    },
  }
}
