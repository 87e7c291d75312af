/**
 * The matting adapter: Robust Video Matting behind the `MattingEngine` port that the
 * remove-background use case declares.
 *
 * The graphs hand out the final bytes (models/README.md, "RVM's full-resolution tail"): they take
 * the decoded frame as it comes from ffmpeg (`rgb24` uint8 [1,H,W,3]), recurrent `r1i..r4i` (zeros
 * [1,1,1,1] on the first frame, then the previous `r1o..r4o`), and `downsample_ratio` [1] on the
 * refined graphs, and hand out either the frame composited onto the colour `bg` [3] (0..255),
 * `rgb` [1,H,W,3], or straight RGBA, `rgba` [1,H,W,4] — composited as rvm/post.ts does, so no
 * per-pixel JavaScript runs per frame. The refined `-rgb` graphs compute the network's foreground
 * only at the edge pixels, the only ones whose colour uses it (same bytes, models/README.md).
 *
 * Four graphs from the same weights: `rvm-rgb` / `rvm-rgba` (downsample + guided-filter refiner,
 * for ratios below 1) and `rvm-ratio1-rgb` / `rvm-ratio1-rgba` (the original's ratio-1 branch, no
 * `downsample_ratio` input). A stream uses the ratio-1 pair when the ratio chosen for its frame
 * size is 1, and the `-rgba` graph for a transparent background. With precision `int8`
 * (RVM_PRECISION) the refined pair is `rvm-int8-rgb` / `rvm-int8-rgba`: the same contract with the
 * decoder's convolutions int8 (models/README.md).
 */
import type { MattingEngine, MattingStream } from '../jobs/remove-background.ts'
import { loadModelSpec } from './manifest.ts'
import type { Background } from './rvm/post.ts'
import { chooseDownsampleRatio } from './rvm/pre.ts'
import { localRunner, type CarriedStream, type SessionRunner } from './session-runner.ts'
import { openSessionWorker } from './session-worker.ts'
import {
  ModelSession,
  type ExecutionProvider,
  type OrtLogSeverity,
  type SessionOptions,
  type TensorData,
} from './session.ts'

/** The graphs that hand out bytes, by branch and output (precision fp32). */
export const RVM_MODEL_NAMES = {
  refined: { rgb: 'rvm-rgb', rgba: 'rvm-rgba' },
  ratio1: { rgb: 'rvm-ratio1-rgb', rgba: 'rvm-ratio1-rgba' },
} as const
/** The refined pair per precision (RVM_PRECISION); the ratio-1 pair is float32 at both. */
export const RVM_REFINED_BY_PRECISION = {
  fp32: RVM_MODEL_NAMES.refined,
  int8: { rgb: 'rvm-int8-rgb', rgba: 'rvm-int8-rgba' },
} as const
export type RvmPrecision = keyof typeof RVM_REFINED_BY_PRECISION
/** Every graph the matting engine opens at a precision. */
export const mattingModels = (precision: RvmPrecision): readonly string[] => [
  RVM_REFINED_BY_PRECISION[precision].rgb,
  RVM_REFINED_BY_PRECISION[precision].rgba,
  RVM_MODEL_NAMES.ratio1.rgb,
  RVM_MODEL_NAMES.ratio1.rgba,
]
/** Every graph the engine opens by default (one list: the engine, the tests' model snapshots). */
export const MATTING_MODELS: readonly string[] = mattingModels('fp32')
const STATE_IN = ['r1i', 'r2i', 'r3i', 'r4i'] as const
const STATE_OUT = ['r1o', 'r2o', 'r3o', 'r4o'] as const
const WARMUP_SIZE = { width: 640, height: 360 }
const WARMUP_SIZE_RATIO1 = { width: 160, height: 96 }
const WARMUP_FRAMES = 2
const WARMUP_BACKGROUNDS: Background[] = [
  { kind: 'color', rgb: [0, 255, 0] },
  { kind: 'transparent' },
]

const zeroState = (): TensorData => ({ data: new Float32Array(1), dims: [1, 1, 1, 1] })

/**
 * Job-scoped: one carried stream (the recurrent state lives with the session, in the worker when
 * there is one) and a small pool of input buffers for its frame size, one per frame in flight (the
 * caller's frame is copied in, so the caller may reuse its buffer at once).
 */
class RvmStream implements MattingStream {
  readonly #free: Uint8Array[] = []
  readonly #stream: CarriedStream
  readonly #ratio: number
  readonly #output: 'rgb' | 'rgba'
  #disposed = false

  constructor(
    runner: SessionRunner,
    precision: RvmPrecision,
    readonly width: number,
    readonly height: number,
    background: Background,
  ) {
    this.#ratio = chooseDownsampleRatio(width, height)
    this.#output = background.kind === 'transparent' ? 'rgba' : 'rgb'
    this.model = (this.#ratio === 1 ? RVM_MODEL_NAMES.ratio1 : RVM_REFINED_BY_PRECISION[precision])[
      this.#output
    ]
    this.#stream = runner.openStream(this.model, {
      carry: Object.fromEntries(STATE_OUT.map((o, i) => [o, STATE_IN[i]!])),
      initial: Object.fromEntries(STATE_IN.map((name) => [name, zeroState()])),
      constants: {
        ...(this.#ratio === 1
          ? {}
          : { downsample_ratio: { data: Float32Array.of(this.#ratio), dims: [1] } }),
        ...(background.kind === 'color'
          ? { bg: { data: Float32Array.from(background.rgb), dims: [3] } }
          : {}),
      },
    })
  }

  /** The graph this stream runs (`rvm-rgb`, `rvm-int8-rgb`, `rvm-ratio1-rgba`, …). */
  readonly model: string

  get downsampleRatio(): number {
    return this.#ratio
  }

  async next(rgb: Uint8Array): Promise<Uint8Array> {
    if (this.#disposed) {
      throw new Error('MattingStream used after dispose()')
    }
    if (rgb.length !== this.width * this.height * 3) {
      throw new RangeError(
        `MattingStream: ${rgb.length} bytes for a ${this.width}x${this.height} frame`,
      )
    }
    const output = this.#output
    const src = this.#free.pop() ?? new Uint8Array(rgb.length)
    src.set(rgb)
    const r = await this.#stream.run(
      { rgb24: { data: src, dims: [1, this.height, this.width, 3] } },
      [output],
    )
    const back = r.feeds['rgb24']!.data
    if (back instanceof Uint8Array) {
      this.#free.push(back)
    }
    const out = r.outputs[output]!.data
    if (!(out instanceof Uint8Array)) {
      throw new Error(`${this.model}: output ${output} is not uint8`)
    }
    return out
  }

  dispose(): void {
    this.#disposed = true
    this.#stream.dispose()
    this.#free.length = 0
  }
}

class RvmMattingEngine implements MattingEngine {
  constructor(
    private readonly runner: SessionRunner,
    /** Which refined pair its streams run (RVM_REFINED_BY_PRECISION). */
    readonly precision: RvmPrecision,
  ) {}
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
  openStream(size: { width: number; height: number }, background: Background): RvmStream {
    return new RvmStream(this.runner, this.precision, size.width, size.height, background)
  }
  async close(): Promise<void> {
    await this.runner.close()
  }
}

/**
 * Opens the RVM graphs from `<modelsDir>/manifest.json`, checks them, and warms each up with two frames so the
 * first job does not pay for graph initialisation. Resolves only when the engine is ready.
 *
 * `thread: 'worker'` (the default) opens the sessions on a worker thread (session-worker.ts): a
 * run never holds the caller's event loop, and a job keeps the next frame queued behind the one
 * running. `'main'` runs them on the caller's thread (debugging, profiling).
 */
export async function openMattingEngine(opts: {
  modelsDir: string
  /** Which refined pair (default fp32: rvm-rgb / rvm-rgba); ratio-1 clips always run float32. */
  precision?: RvmPrecision
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
  const precision = opts.precision ?? 'fp32'
  const specs = []
  for (const name of mattingModels(precision)) {
    specs.push(await loadModelSpec(opts.modelsDir, name))
  }
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
  const engine = new RvmMattingEngine(runner, precision)
  const t0 = performance.now()
  try {
    // Warm every graph: WARMUP_SIZE takes the refined ones, WARMUP_SIZE_RATIO1 the ratio-1 ones.
    for (const size of [WARMUP_SIZE, WARMUP_SIZE_RATIO1]) {
      for (const background of WARMUP_BACKGROUNDS) {
        const stream = engine.openStream(size, background)
        const frame = new Uint8Array(size.width * size.height * 3).fill(128)
        for (let i = 0; i < WARMUP_FRAMES; i++) {
          await stream.next(frame)
        }
        stream.dispose()
      }
    }
  } catch (err) {
    await engine.close()
    throw err
  }
  return Object.assign(engine, { warmupMs: performance.now() - t0 })
}
