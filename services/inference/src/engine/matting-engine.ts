/**
 * The matting adapter: Robust Video Matting (models/dist/rvm.onnx) behind the `MattingEngine`
 * port that the remove-background use case declares.
 *
 * Contract of the graph: `src` [1,3,H,W] planar (NCHW) RGB 0..1, recurrent `r1i..r4i` (zeros
 * [1,1,1,1] on the first frame, then the previous `r1o..r4o`), `downsample_ratio` [1]; outputs
 * `fgr` [1,3,H,W] planar, `pha` [1,1,H,W], `r1o..r4o`.
 *
 * Two graphs from the same weights (models/README.md): `rvm` (downsample + guided-filter refiner,
 * for ratios below 1) and `rvm-ratio1` (the original's ratio-1 branch, no `downsample_ratio`
 * input). A stream uses `rvm-ratio1` when the ratio chosen for its frame size is 1.
 */
import type { MattingEngine, MattingFrame, MattingStream } from '../jobs/remove-background.ts'
import { loadModelSpec } from './manifest.ts'
import { chooseDownsampleRatio, rgb24ToPlanar } from './rvm/pre.ts'
import { localRunner, type CarriedStream, type SessionRunner } from './session-runner.ts'
import { openSessionWorker } from './session-worker.ts'
import {
  ModelSession,
  type ExecutionProvider,
  type OrtLogSeverity,
  type SessionOptions,
  type TensorData,
} from './session.ts'

export const RVM_MODEL_NAME = 'rvm'
export const RVM_RATIO1_MODEL_NAME = 'rvm-ratio1'
const STATE_IN = ['r1i', 'r2i', 'r3i', 'r4i'] as const
const STATE_OUT = ['r1o', 'r2o', 'r3o', 'r4o'] as const
const OUTPUTS = ['fgr', 'pha'] as const
const WARMUP_SIZE = { width: 640, height: 360 }
const WARMUP_SIZE_RATIO1 = { width: 160, height: 96 }
const WARMUP_FRAMES = 2

const zeroState = (): TensorData => ({ data: new Float32Array(1), dims: [1, 1, 1, 1] })

/**
 * Job-scoped: one carried stream (the recurrent state lives with the session, in the worker when
 * there is one) and a small pool of input buffers for its frame size, one per frame in flight.
 */
class RvmStream implements MattingStream {
  readonly #free: Float32Array[] = []
  readonly #stream: CarriedStream
  readonly #ratio: number
  #disposed = false

  constructor(
    runner: SessionRunner,
    readonly width: number,
    readonly height: number,
  ) {
    this.#ratio = chooseDownsampleRatio(width, height)
    this.model = this.#ratio === 1 ? RVM_RATIO1_MODEL_NAME : RVM_MODEL_NAME
    this.#stream = runner.openStream(this.model, {
      carry: Object.fromEntries(STATE_OUT.map((o, i) => [o, STATE_IN[i]!])),
      initial: Object.fromEntries(STATE_IN.map((name) => [name, zeroState()])),
      constants:
        this.#ratio === 1
          ? {}
          : { downsample_ratio: { data: Float32Array.of(this.#ratio), dims: [1] } },
    })
  }

  /** The graph this stream runs (`rvm` or `rvm-ratio1`). */
  readonly model: string

  get downsampleRatio(): number {
    return this.#ratio
  }

  async next(rgb: Uint8Array): Promise<MattingFrame> {
    if (this.#disposed) {
      throw new Error('MattingStream used after dispose()')
    }
    const src = this.#free.pop() ?? new Float32Array(this.width * this.height * 3)
    rgb24ToPlanar(rgb, src)
    const r = await this.#stream.run(
      { src: { data: src, dims: [1, 3, this.height, this.width] } },
      OUTPUTS,
    )
    this.#free.push(r.feeds['src']!.data)
    return { fgr: r.outputs['fgr']!.data, pha: r.outputs['pha']!.data }
  }

  dispose(): void {
    this.#disposed = true
    this.#stream.dispose()
    this.#free.length = 0
  }
}

class RvmMattingEngine implements MattingEngine {
  constructor(private readonly runner: SessionRunner) {}
  get provider(): ExecutionProvider {
    return this.runner.provider
  }
  get providerFallbacks() {
    return this.runner.fallbacks
  }
  get intraOpThreads(): number {
    return this.runner.intraOpThreads
  }
  /** Where the model runs: `worker` (a worker thread) or `main` (the caller's thread). */
  get thread(): 'main' | 'worker' {
    return this.runner.thread
  }
  openStream(size: { width: number; height: number }): RvmStream {
    return new RvmStream(this.runner, size.width, size.height)
  }
  async close(): Promise<void> {
    await this.runner.close()
  }
}

/**
 * Opens RVM from `<modelsDir>/manifest.json`, checks it, and warms it up with two frames so the
 * first job does not pay for graph initialisation. Resolves only when the engine is ready.
 *
 * `thread: 'worker'` (the default) opens the sessions on a worker thread (session-worker.ts): a
 * run never holds the caller's event loop, and a job keeps the next frame queued behind the one
 * running. `'main'` runs them on the caller's thread (debugging, profiling).
 */
export async function openMattingEngine(opts: {
  modelsDir: string
  executionProviders?: ExecutionProvider[]
  intraOpThreads?: number
  /** ORT log severity (ortLogSeverity(LOG_LEVEL), session.ts). */
  logSeverityLevel?: OrtLogSeverity
  /** Told each model run's wall time (metrics). */
  onRun?: (model: string, seconds: number) => void
  thread?: 'main' | 'worker'
}): Promise<RvmMattingEngine & { warmupMs: number }> {
  const sessionOptions: SessionOptions = {
    ...(opts.executionProviders !== undefined
      ? { executionProviders: opts.executionProviders }
      : {}),
    ...(opts.intraOpThreads !== undefined ? { intraOpThreads: opts.intraOpThreads } : {}),
    ...(opts.logSeverityLevel !== undefined ? { logSeverityLevel: opts.logSeverityLevel } : {}),
    ...(opts.onRun !== undefined ? { onRun: opts.onRun } : {}),
  }
  const specs = [
    await loadModelSpec(opts.modelsDir, RVM_MODEL_NAME),
    await loadModelSpec(opts.modelsDir, RVM_RATIO1_MODEL_NAME),
  ]
  let runner: SessionRunner
  if ((opts.thread ?? 'worker') === 'worker') {
    runner = await openSessionWorker(specs, sessionOptions)
  } else {
    const sessions: ModelSession[] = []
    try {
      for (const spec of specs) {
        sessions.push(await ModelSession.open(spec, sessionOptions))
      }
    } catch (err) {
      await Promise.all(sessions.map((s) => s.release()))
      throw err
    }
    runner = localRunner(sessions)
  }
  const engine = new RvmMattingEngine(runner)
  const t0 = performance.now()
  try {
    // Warm both graphs: WARMUP_SIZE takes the refined one, WARMUP_SIZE_RATIO1 the ratio-1 one.
    for (const size of [WARMUP_SIZE, WARMUP_SIZE_RATIO1]) {
      const stream = engine.openStream(size)
      const frame = new Uint8Array(size.width * size.height * 3).fill(128)
      for (let i = 0; i < WARMUP_FRAMES; i++) {
        await stream.next(frame)
      }
      stream.dispose()
    }
  } catch (err) {
    await engine.close()
    throw err
  }
  return Object.assign(engine, { warmupMs: performance.now() - t0 })
}
