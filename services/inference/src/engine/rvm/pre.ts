/**
 * RVM pre-processing, as data (no onnxruntime here): rgb24 bytes → float32 NHWC in 0..1, and the
 * downsample ratio for the network's internal low-resolution pass.
 */

/** The long side, in pixels, the network's low-resolution pass should see (RVM's sweet spot is 256–512). */
export const RVM_TARGET_LONG_SIDE_PX = 384

/**
 * `downsample_ratio` so that the network sees about `targetPx` on the long side; never upsamples.
 * Rounded to 1/1000 so that a job's ratio is stable and readable in logs.
 */
export function chooseDownsampleRatio(
  width: number,
  height: number,
  targetPx: number = RVM_TARGET_LONG_SIDE_PX,
): number {
  const r = Math.min(1, targetPx / Math.max(width, height))
  return Math.max(0.001, Math.round(r * 1000) / 1000)
}

/** Writes rgb24 `src` (w·h·3 bytes) into `dst` (w·h·3 floats, NHWC RGB) scaled to 0..1. */
export function rgb24ToFloat(src: Uint8Array, dst: Float32Array): Float32Array {
  if (src.length !== dst.length) {
    throw new RangeError(`rgb24ToFloat: ${src.length} bytes for ${dst.length} floats`)
  }
  const k = 1 / 255
  const n = src.length
  for (let i = 0; i < n; i++) {
    dst[i] = src[i]! * k
  }
  return dst
}
