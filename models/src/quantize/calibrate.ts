/**
 * Calibration for static quantization: the min/max of each activation to be quantized, measured
 * by running the float model (with those tensors exposed as outputs) over real video frames with
 * the recurrent state carried.
 */
import { rgb24ToPlanar, rgbFrames } from '../reference/video-stream.ts'
import type { Range } from './quantize-qdq.ts'
import { withOutputs } from './quantize-qdq.ts'
import { openRvmSequence } from './rvm-runner.ts'

export interface CalibrationClip {
  file: string
  width: number
  height: number
  ratio: number
  every: number
  max: number
}

export async function calibrateRvm(
  modelBytes: Uint8Array,
  tensors: readonly string[],
  clips: readonly CalibrationClip[],
): Promise<{ ranges: Map<string, Range>; frames: number }> {
  const probe = await openRvmSequence(withOutputs(modelBytes, tensors), 0.25)
  const lo = new Map<string, number>(tensors.map((t) => [t, Infinity]))
  const hi = new Map<string, number>(tensors.map((t) => [t, -Infinity]))
  let frames = 0
  try {
    for (const c of clips) {
      const seq = await openRvmSequence(withOutputs(modelBytes, tensors), c.ratio)
      try {
        for await (const rgb of rgbFrames(c.file, {
          width: c.width,
          height: c.height,
          every: c.every,
          max: c.max,
        })) {
          const out = await seq.step(rgb24ToPlanar(rgb), c.width, c.height, tensors)
          for (const t of tensors) {
            const d = out[t]!
            let a = lo.get(t)!
            let b = hi.get(t)!
            for (let i = 0; i < d.length; i++) {
              const v = d[i]!
              if (v < a) a = v
              if (v > b) b = v
            }
            lo.set(t, a)
            hi.set(t, b)
          }
          frames++
        }
      } finally {
        await seq.release()
      }
    }
  } finally {
    await probe.release()
  }
  return { ranges: new Map(tensors.map((t) => [t, [lo.get(t)!, hi.get(t)!] as const])), frames }
}
