/**
 * RVM post-processing, as data (no onnxruntime here): composite a frame from the source pixels,
 * the network's foreground colour `fgr` (planar RGB 0..1: all R, all G, all B) and alpha `pha` (0..1).
 *
 * The graphs the video engine runs do this composite themselves (rvm-rgb / rvm-rgba,
 * models/src/convert/rvm-tail.ts, which repeats ALPHA_SNAP and EDGE_LOW): the functions here are
 * the reference they are tested against byte for byte (composite-graph.test.ts), and the
 * background colour parser of the job.
 *
 * Edges: where the person is opaque the source pixel is kept as is; at soft edges (hair, motion
 * blur) the source pixel still contains the old background, so the network's foreground
 * prediction is used instead, which is what removes the halo. The two are blended linearly for
 * alpha in [EDGE_LOW, 1] so there is no visible seam.
 */

export type Rgb = readonly [number, number, number]
export type Background = { kind: 'color'; rgb: Rgb } | { kind: 'transparent' }

/** Alpha at or below this is treated as exactly 0, at or above 1 − this as exactly 1. */
export const ALPHA_SNAP = 0.01
/** Below this alpha the colour comes entirely from `fgr`; from here to 1 it fades to the source. */
export const EDGE_LOW = 0.9

/** Parses `transparent`, `#rgb` or `#rrggbb` (spec 2.3); throws RangeError on anything else. */
export function parseBackground(s: string): Background {
  if (s === 'transparent') {
    return { kind: 'transparent' }
  }
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(s)
  if (m === null) {
    throw new RangeError(`not a background colour: ${JSON.stringify(s)}`)
  }
  const hex = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join('') : m[1]!
  const n = Number.parseInt(hex, 16)
  return { kind: 'color', rgb: [(n >> 16) & 255, (n >> 8) & 255, n & 255] }
}

function snap(a: number): number {
  return a <= ALPHA_SNAP ? 0 : a >= 1 - ALPHA_SNAP ? 1 : a
}

/**
 * Composites onto a solid colour. `src` rgb24 (w·h·3), `fgr` planar w·h·3, `pha` w·h, `out` rgb24.
 * `out` may be `src` itself (in place).
 */
export function compositeOnColor(
  src: Uint8Array,
  fgr: Float32Array,
  pha: Float32Array,
  rgb: Rgb,
  out: Uint8Array,
): void {
  const n = pha.length
  if (src.length !== n * 3 || fgr.length !== n * 3 || out.length !== n * 3) {
    throw new RangeError('compositeOnColor: size mismatch')
  }
  const o = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length)
  const [br, bg, bb] = rgb
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    const a = snap(pha[i]!)
    if (a === 0) {
      o[j] = br
      o[j + 1] = bg
      o[j + 2] = bb
      continue
    }
    if (a === 1) {
      o[j] = src[j]!
      o[j + 1] = src[j + 1]!
      o[j + 2] = src[j + 2]!
      continue
    }
    const t = a > EDGE_LOW ? (a - EDGE_LOW) / (1 - EDGE_LOW) : 0
    const f0 = fgr[i]! * 255
    const f1 = fgr[n + i]! * 255
    const f2 = fgr[2 * n + i]! * 255
    const c0 = f0 + t * (src[j]! - f0)
    const c1 = f1 + t * (src[j + 1]! - f1)
    const c2 = f2 + t * (src[j + 2]! - f2)
    o[j] = br + a * (c0 - br)
    o[j + 1] = bg + a * (c1 - bg)
    o[j + 2] = bb + a * (c2 - bb)
  }
}

/** Whether pixel `i` or one of its 8 neighbours has alpha above ALPHA_SNAP (visible). */
function nearVisible(pha: Float32Array, i: number, width: number): boolean {
  const height = pha.length / width
  const x = i % width
  const y = (i - x) / width
  for (let yy = Math.max(0, y - 1); yy <= Math.min(height - 1, y + 1); yy++) {
    for (let xx = Math.max(0, x - 1); xx <= Math.min(width - 1, x + 1); xx++) {
      if (pha[yy * width + xx]! > ALPHA_SNAP) {
        return true
      }
    }
  }
  return false
}

/**
 * Keeps alpha: writes straight (non-premultiplied) rgba, colour as in `compositeOnColor`.
 * `out` is w·h·4 bytes, `width` the frame's width.
 *
 * Where alpha snaps to 0 the colour is invisible to a player that composites, but one that
 * filters straight RGBA (bilinear scaling, no premultiplication) mixes a transparent pixel's
 * colour into its visible neighbours: so within one pixel of a visible pixel (8-neighbourhood)
 * it is the network's foreground, as at the edge (no halo of the old background); further away
 * it is the source colour, which the graphs need not compute the foreground for
 * (models/src/convert/rvm-tail.ts).
 */
export function compositeRgba(
  src: Uint8Array,
  fgr: Float32Array,
  pha: Float32Array,
  width: number,
  out: Uint8Array,
): void {
  const n = pha.length
  if (
    src.length !== n * 3 ||
    fgr.length !== n * 3 ||
    out.length !== n * 4 ||
    !Number.isInteger(width) ||
    width <= 0 ||
    n % width !== 0
  ) {
    throw new RangeError('compositeRgba: size mismatch')
  }
  const o = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length)
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += 4) {
    const a = snap(pha[i]!)
    if (a === 1 || (a === 0 && !nearVisible(pha, i, width))) {
      o[k] = src[j]!
      o[k + 1] = src[j + 1]!
      o[k + 2] = src[j + 2]!
      o[k + 3] = a * 255
      continue
    }
    const t = a > EDGE_LOW ? (a - EDGE_LOW) / (1 - EDGE_LOW) : 0
    const f0 = fgr[i]! * 255
    const f1 = fgr[n + i]! * 255
    const f2 = fgr[2 * n + i]! * 255
    o[k] = f0 + t * (src[j]! - f0)
    o[k + 1] = f1 + t * (src[j + 1]! - f1)
    o[k + 2] = f2 + t * (src[j + 2]! - f2)
    o[k + 3] = a * 255
  }
}
