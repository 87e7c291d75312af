/**
 * The quality bound for an rvm speed-up: the variant's alpha against a reference's alpha over a
 * whole clip, each side carrying its own recurrent state (so drift would show).
 *
 * Bound (issue 14): mean |Δα| ≤ 0.004 and ≥ 99.5 % of pixels within 0.03. The temporal stability
 * figure is the mean |α_t − α_{t−1}| of each side: a variant that flickers shows a larger one.
 */
import { rgb24ToPlanar, rgbFrames } from '../reference/video-stream.ts'
import { openRvmSequence } from './rvm-runner.ts'

export const ALPHA_MEAN_BOUND = 0.004
export const ALPHA_PIXEL_TOLERANCE = 0.03
export const ALPHA_WITHIN_SHARE_BOUND = 0.995

export interface AlphaQuality {
  frames: number
  meanAbs: number
  /** share of all pixels of all frames with |Δα| ≤ ALPHA_PIXEL_TOLERANCE */
  withinShare: number
  /** worst frame's share within the tolerance */
  worstFrameWithinShare: number
  /** mean |α_t − α_{t−1}| of the reference and of the variant */
  temporalRef: number
  temporalVariant: number
  /** mean |(α_t − α_{t−1}) − (α'_t − α'_{t−1})|: flicker the variant adds */
  temporalDiff: number
  pass: boolean
}

export function summarize(q: Omit<AlphaQuality, 'pass'>): AlphaQuality {
  return { ...q, pass: q.meanAbs <= ALPHA_MEAN_BOUND && q.withinShare >= ALPHA_WITHIN_SHARE_BOUND }
}

/** Compares two alpha sequences frame by frame. Call `add` per frame, then `result`. */
export class AlphaComparison {
  #frames = 0
  #sumAbs = 0
  #within = 0
  #pixels = 0
  #worst = 1
  #tRef = 0
  #tVar = 0
  #tDiff = 0
  #prevRef: Float32Array | null = null
  #prevVar: Float32Array | null = null

  add(ref: Float32Array, variant: Float32Array): void {
    if (ref.length !== variant.length) throw new RangeError('alpha sizes differ')
    let sum = 0
    let within = 0
    let tr = 0
    let tv = 0
    let td = 0
    const pr = this.#prevRef
    const pv = this.#prevVar
    for (let i = 0; i < ref.length; i++) {
      const d = Math.abs(ref[i]! - variant[i]!)
      sum += d
      if (d <= ALPHA_PIXEL_TOLERANCE) within++
      if (pr !== null && pv !== null) {
        const dr = ref[i]! - pr[i]!
        const dv = variant[i]! - pv[i]!
        tr += Math.abs(dr)
        tv += Math.abs(dv)
        td += Math.abs(dr - dv)
      }
    }
    if (pr !== null) {
      this.#tRef += tr / ref.length
      this.#tVar += tv / ref.length
      this.#tDiff += td / ref.length
    }
    this.#sumAbs += sum
    this.#within += within
    this.#pixels += ref.length
    this.#worst = Math.min(this.#worst, within / ref.length)
    this.#frames++
    this.#prevRef = ref
    this.#prevVar = variant
  }

  result(): AlphaQuality {
    const pairs = Math.max(1, this.#frames - 1)
    return summarize({
      frames: this.#frames,
      meanAbs: this.#sumAbs / Math.max(1, this.#pixels),
      withinShare: this.#within / Math.max(1, this.#pixels),
      worstFrameWithinShare: this.#worst,
      temporalRef: this.#tRef / pairs,
      temporalVariant: this.#tVar / pairs,
      temporalDiff: this.#tDiff / pairs,
    })
  }
}

export interface ClipSpec {
  file: string
  width: number
  height: number
  ratio: number
  /** Frames to run (default: the whole clip). */
  max?: number
}

/**
 * Runs `reference` and each of `variants` (ONNX files or bytes, NCHW rvm graphs) over the clip,
 * each with its own state (variants may use their own downsample ratio), and compares alpha.
 */
export async function compareAlpha(
  clip: ClipSpec,
  reference: string | Uint8Array,
  variants: { label: string; model: string | Uint8Array; ratio?: number }[],
): Promise<Map<string, AlphaQuality>> {
  const ref = await openRvmSequence(reference, clip.ratio)
  const vs = await Promise.all(
    variants.map(async (v) => ({
      label: v.label,
      seq: await openRvmSequence(v.model, v.ratio ?? clip.ratio),
      cmp: new AlphaComparison(),
    })),
  )
  try {
    for await (const rgb of rgbFrames(clip.file, {
      width: clip.width,
      height: clip.height,
      ...(clip.max !== undefined ? { max: clip.max } : {}),
    })) {
      const src = rgb24ToPlanar(rgb)
      const a = (await ref.step(src, clip.width, clip.height)).pha!
      for (const v of vs) v.cmp.add(a, (await v.seq.step(src, clip.width, clip.height)).pha!)
    }
  } finally {
    await ref.release()
    for (const v of vs) await v.seq.release()
  }
  return new Map(vs.map((v) => [v.label, v.cmp.result()]))
}
