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
import {
  ModelSession,
  type ExecutionProvider,
  type OrtLogSeverity,
  type TensorData,
} from './session.ts'

export const RVM_MODEL_NAME = 'rvm'
export const RVM_RATIO1_MODEL_NAME = 'rvm-ratio1'
const STATE_IN = ['r1i', 'r2i', 'r3i', 'r4i'] as const
const STATE_OUT = ['r1o', 'r2o', 'r3o', 'r4o'] as const
const OUTPUTS = ['fgr', 'pha', ...STATE_OUT] as const
const WARMUP_SIZE = { width: 640, height: 360 }
const WARMUP_SIZE_RATIO1 = { width: 160, height: 96 }
const WARMUP_FRAMES = 2

const zeroState = (): TensorData => ({ data: new Float32Array(1), dims: [1, 1, 1, 1] })

/** Job-scoped: holds the recurrent state and the one reusable input buffer for its frame size. */
class RvmStream implements MattingStream {
  readonly #src: Float32Array
  readonly #ratio: Float32Array
  #state: TensorData[] = STATE_IN.map(zeroState)
  #disposed = false

  readonly session: ModelSession

  constructor(
    sessions: { refined: ModelSession; ratio1: ModelSession },
    readonly width: number,
    readonly height: number,
  ) {
    this.#src = new Float32Array(width * height * 3)
    this.#ratio = Float32Array.of(chooseDownsampleRatio(width, height))
    this.session = this.#ratio[0] === 1 ? sessions.ratio1 : sessions.refined
  }

  /** The graph this stream runs (`rvm` or `rvm-ratio1`). */
  get model(): string {
    return this.session.spec.name
  }

  get downsampleRatio(): number {
    return this.#ratio[0]!
  }

  async next(rgb: Uint8Array): Promise<MattingFrame> {
    if (this.#disposed) {
      throw new Error('MattingStream used after dispose()')
    }
    rgb24ToPlanar(rgb, this.#src)
    const feeds: Record<string, TensorData> = {
      src: { data: this.#src, dims: [1, 3, this.height, this.width] },
    }
    if (this.#ratio[0] !== 1) feeds.downsample_ratio = { data: this.#ratio, dims: [1] }
    STATE_IN.forEach((name, i) => {
      feeds[name] = this.#state[i]!
    })
    const out = await this.session.run(feeds, OUTPUTS)
    // The previous state is dropped here (its tensors were already disposed by the session).
    this.#state = STATE_OUT.map((name) => out[name]!)
    return { fgr: out['fgr']!.data, pha: out['pha']!.data }
  }

  dispose(): void {
    this.#disposed = true
    this.#state = []
  }
}

class RvmMattingEngine implements MattingEngine {
  constructor(
    private readonly session: ModelSession,
    private readonly ratio1: ModelSession,
  ) {}
  get provider(): ExecutionProvider {
    return this.session.provider
  }
  get providerFallbacks() {
    return this.session.fallbacks
  }
  get intraOpThreads(): number {
    return this.session.intraOpThreads
  }
  openStream(size: { width: number; height: number }): MattingStream {
    return new RvmStream({ refined: this.session, ratio1: this.ratio1 }, size.width, size.height)
  }
  async close(): Promise<void> {
    await Promise.all([this.session.release(), this.ratio1.release()])
  }
}

/**
 * Opens RVM from `<modelsDir>/manifest.json`, checks it, and warms it up with two frames so the
 * first job does not pay for graph initialisation. Resolves only when the engine is ready.
 */
export async function openMattingEngine(opts: {
  modelsDir: string
  executionProviders?: ExecutionProvider[]
  intraOpThreads?: number
  /** ORT log severity (ortLogSeverity(LOG_LEVEL), session.ts). */
  logSeverityLevel?: OrtLogSeverity
  /** Told each model run's wall time (metrics). */
  onRun?: (model: string, seconds: number) => void
}): Promise<MattingEngine & { warmupMs: number; intraOpThreads: number }> {
  const sessionOptions = {
    ...(opts.executionProviders !== undefined
      ? { executionProviders: opts.executionProviders }
      : {}),
    ...(opts.intraOpThreads !== undefined ? { intraOpThreads: opts.intraOpThreads } : {}),
    ...(opts.logSeverityLevel !== undefined ? { logSeverityLevel: opts.logSeverityLevel } : {}),
    ...(opts.onRun !== undefined ? { onRun: opts.onRun } : {}),
  }
  const session = await ModelSession.open(
    await loadModelSpec(opts.modelsDir, RVM_MODEL_NAME),
    sessionOptions,
  )
  let ratio1: ModelSession
  try {
    ratio1 = await ModelSession.open(
      await loadModelSpec(opts.modelsDir, RVM_RATIO1_MODEL_NAME),
      sessionOptions,
    )
  } catch (err) {
    await session.release()
    throw err
  }
  const engine = new RvmMattingEngine(session, ratio1)
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
