/**
 * Runs an rvm graph (NCHW `src`, recurrent state carried) frame by frame on onnxruntime's CPU EP,
 * for calibration and for the quality comparison of variants.
 */
import * as ort from 'onnxruntime-node'

const STATES = ['r1', 'r2', 'r3', 'r4'] as const

export interface RvmSequence {
  /** Runs one planar frame; returns the requested outputs (copied), state carried internally. */
  step(
    src: Float32Array,
    width: number,
    height: number,
    outputs?: readonly string[],
  ): Promise<Record<string, Float32Array>>
  /** Forget the recurrent state (a new clip). */
  reset(): void
  release(): Promise<void>
}

export async function openRvmSequence(
  model: string | Uint8Array,
  ratio: number,
  threads = 2,
): Promise<RvmSequence> {
  const opts: ort.InferenceSession.SessionOptions = {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  }
  const session =
    typeof model === 'string'
      ? await ort.InferenceSession.create(model, opts)
      : await ort.InferenceSession.create(model, opts)
  const takesRatio = session.inputNames.includes('downsample_ratio')
  const zero = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1])
  let state: Record<string, ort.Tensor> = {}
  const reset = (): void => {
    state = Object.fromEntries(STATES.map((s) => [`${s}i`, zero()]))
  }
  reset()
  const dr = new ort.Tensor('float32', Float32Array.of(ratio), [1])
  return {
    async step(src, width, height, outputs = ['pha']) {
      const feeds: Record<string, ort.Tensor> = {
        src: new ort.Tensor('float32', src, [1, 3, height, width]),
        ...state,
      }
      if (takesRatio) feeds.downsample_ratio = dr
      const want = [...new Set([...outputs, ...STATES.map((s) => `${s}o`)])]
      const out = await session.run(feeds, want)
      state = Object.fromEntries(STATES.map((s) => [`${s}i`, out[`${s}o`]!]))
      const res: Record<string, Float32Array> = {}
      for (const o of outputs) res[o] = Float32Array.from(out[o]!.data as Float32Array)
      for (const [k, t] of Object.entries(out)) if (!STATES.some((s) => `${s}o` === k)) t.dispose()
      return res
    },
    reset,
    release: () => session.release(),
  }
}
