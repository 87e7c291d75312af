/**
 * RVM pre-processing, as data (no onnxruntime here): the downsample ratio for the network's
 * internal low-resolution pass, and rgb24 bytes → float32 planar RGB in 0..1 for the float graphs
 * (`rvm`, `rvm-ratio1`: tests and tools). The graphs the engine runs take the rgb24 bytes as they
 * are and do this themselves.
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

/**
 * Writes rgb24 `src` (w·h·3 bytes, interleaved) into `dst` (w·h·3 floats, planar: all R, then all G,
 * then all B, i.e. NCHW with N = 1) scaled to 0..1.
 */
export function rgb24ToPlanar(src: Uint8Array, dst: Float32Array): Float32Array {
  if (src.length !== dst.length) {
    throw new RangeError(`rgb24ToPlanar: ${src.length} bytes for ${dst.length} floats`)
  }
  const k = 1 / 255
  const n = src.length / 3
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    dst[i] = src[j]! * k
    dst[n + i] = src[j + 1]! * k
    dst[2 * n + i] = src[j + 2]! * k
  }
  return dst
}
