/**
 * The evaluation figures of one try-on result against the labels (docs/tryon-eval.md):
 *
 * - changed pixels: where the result differs from the person photo by more than CHANGED_DIFF in
 *   some channel (0..255), on the engine's RGB (before the JPEG encode);
 * - the garment's region: the labelled box of its category (a dress: the union of the upper and
 *   lower boxes), dilated by BOX_DILATE of the image's width and height on each side, as the
 *   labels' SOURCES.md says (labels are ±0.02);
 * - region score: the share of the changed pixels inside that region (0 when nothing changed);
 * - box changed: the share of the undilated region that changed;
 * - paired figures (the person wears this very garment): SSIM (luma, 11×11 Gaussian σ 1.5, the
 *   usual constants) and the mean absolute RGB difference between the real photo and the result
 *   inside the undilated garment region.
 */
import type { GarmentCategory } from '../../src/jobs/try-on.ts'
import type { Box } from './eval-set.ts'

export const CHANGED_DIFF = 24
export const BOX_DILATE = 0.05

export interface PixelRect {
  x0: number
  y0: number
  /** Exclusive. */
  x1: number
  y1: number
}

/** A fractional box in pixels of a w×h image, grown by `grow` of the image's sides, clipped. */
export function toPixels(b: Box, w: number, h: number, grow = 0): PixelRect {
  // The 1e-9 keeps 0.85 × 100 at 85 (floating point gives 85.00000000000001).
  const lo = (v: number) => Math.floor(v + 1e-9)
  const hi = (v: number) => Math.ceil(v - 1e-9)
  return {
    x0: Math.max(0, lo((b[0] - grow) * w)),
    y0: Math.max(0, lo((b[1] - grow) * h)),
    x1: Math.min(w, hi((b[2] + grow) * w)),
    y1: Math.min(h, hi((b[3] + grow) * h)),
  }
}

/** The garment's region: its category's box(es) as pixel rectangles (their union is the region). */
export function regionRects(
  category: GarmentCategory,
  boxes: { upper: Box; lower: Box },
  w: number,
  h: number,
  grow = 0,
): PixelRect[] {
  if (category === 'full') {
    return [toPixels(boxes.upper, w, h, grow), toPixels(boxes.lower, w, h, grow)]
  }
  return [toPixels(boxes[category], w, h, grow)]
}

/** 1 where a pixel is inside any of the rectangles. */
export function rectMask(rects: readonly PixelRect[], w: number, h: number): Uint8Array {
  const m = new Uint8Array(w * h)
  for (const r of rects) for (let y = r.y0; y < r.y1; y++) m.fill(1, y * w + r.x0, y * w + r.x1)
  return m
}

/** 1 where the result differs from the photo by more than CHANGED_DIFF in some channel. */
export function changedMask(
  before: Uint8Array,
  after: Uint8Array,
  w: number,
  h: number,
  diff = CHANGED_DIFF,
): Uint8Array {
  const m = new Uint8Array(w * h)
  for (let i = 0, j = 0; i < w * h; i++, j += 3) {
    if (
      Math.abs(before[j]! - after[j]!) > diff ||
      Math.abs(before[j + 1]! - after[j + 1]!) > diff ||
      Math.abs(before[j + 2]! - after[j + 2]!) > diff
    ) {
      m[i] = 1
    }
  }
  return m
}

export interface RegionFigures {
  /** Share of the changed pixels inside the dilated region (0 when nothing changed). */
  regionScore: number
  /** Share of the (undilated) region that changed. */
  boxChanged: number
  /** Share of the whole image that changed. */
  imageChanged: number
}

export function regionFigures(
  changed: Uint8Array,
  region: Uint8Array,
  regionDilated: Uint8Array,
): RegionFigures {
  let n = 0
  let inside = 0
  let area = 0
  let areaChanged = 0
  for (let i = 0; i < changed.length; i++) {
    const c = changed[i]!
    n += c
    if (regionDilated[i]) inside += c
    if (region[i]) {
      area++
      areaChanged += c
    }
  }
  return {
    regionScore: n === 0 ? 0 : inside / n,
    boxChanged: area === 0 ? 0 : areaChanged / area,
    imageChanged: n / changed.length,
  }
}

const lumaOf = (rgb: Uint8Array, w: number, r: PixelRect): Float64Array => {
  const cw = r.x1 - r.x0
  const out = new Float64Array(cw * (r.y1 - r.y0))
  for (let y = r.y0; y < r.y1; y++) {
    for (let x = r.x0; x < r.x1; x++) {
      const j = (y * w + x) * 3
      out[(y - r.y0) * cw + x - r.x0] = 0.299 * rgb[j]! + 0.587 * rgb[j + 1]! + 0.114 * rgb[j + 2]!
    }
  }
  return out
}

const GAUSS = (() => {
  const k = new Float64Array(11)
  let s = 0
  for (let i = 0; i < 11; i++) s += k[i] = Math.exp(-((i - 5) ** 2) / (2 * 1.5 * 1.5))
  for (let i = 0; i < 11; i++) k[i]! /= s
  return k
})()

/** Separable 11-tap Gaussian with the edges clamped. */
function gauss(src: Float64Array, w: number, h: number): Float64Array {
  const tmp = new Float64Array(w * h)
  const out = new Float64Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0
      for (let k = -5; k <= 5; k++) {
        s += GAUSS[k + 5]! * src[y * w + Math.min(w - 1, Math.max(0, x + k))]!
      }
      tmp[y * w + x] = s
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0
      for (let k = -5; k <= 5; k++) {
        s += GAUSS[k + 5]! * tmp[Math.min(h - 1, Math.max(0, y + k)) * w + x]!
      }
      out[y * w + x] = s
    }
  }
  return out
}

/** Mean SSIM (luma) of two RGB images over a rectangle. */
export function ssim(a: Uint8Array, b: Uint8Array, w: number, r: PixelRect): number {
  const cw = r.x1 - r.x0
  const ch = r.y1 - r.y0
  if (cw <= 0 || ch <= 0) return Number.NaN
  const x = lumaOf(a, w, r)
  const y = lumaOf(b, w, r)
  const n = cw * ch
  const xx = new Float64Array(n)
  const yy = new Float64Array(n)
  const xy = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    xx[i] = x[i]! * x[i]!
    yy[i] = y[i]! * y[i]!
    xy[i] = x[i]! * y[i]!
  }
  const mx = gauss(x, cw, ch)
  const my = gauss(y, cw, ch)
  const sxx = gauss(xx, cw, ch)
  const syy = gauss(yy, cw, ch)
  const sxy = gauss(xy, cw, ch)
  const C1 = (0.01 * 255) ** 2
  const C2 = (0.03 * 255) ** 2
  let sum = 0
  for (let i = 0; i < n; i++) {
    const vx = sxx[i]! - mx[i]! * mx[i]!
    const vy = syy[i]! - my[i]! * my[i]!
    const cxy = sxy[i]! - mx[i]! * my[i]!
    sum +=
      ((2 * mx[i]! * my[i]! + C1) * (2 * cxy + C2)) /
      ((mx[i]! * mx[i]! + my[i]! * my[i]! + C1) * (vx + vy + C2))
  }
  return sum / n
}

/** Mean absolute RGB difference (0..255) over a mask. */
export function maskedMae(a: Uint8Array, b: Uint8Array, mask: Uint8Array): number {
  let s = 0
  let n = 0
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue
    const j = i * 3
    s += Math.abs(a[j]! - b[j]!) + Math.abs(a[j + 1]! - b[j + 1]!) + Math.abs(a[j + 2]! - b[j + 2]!)
    n += 3
  }
  return n === 0 ? Number.NaN : s / n
}

/** The bounding rectangle of a set of rectangles (SSIM of a dress is taken over it). */
export const boundingRect = (rects: readonly PixelRect[]): PixelRect => ({
  x0: Math.min(...rects.map((r) => r.x0)),
  y0: Math.min(...rects.map((r) => r.y0)),
  x1: Math.max(...rects.map((r) => r.x1)),
  y1: Math.max(...rects.map((r) => r.y1)),
})

export const percentile = (xs: readonly number[], p: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}
