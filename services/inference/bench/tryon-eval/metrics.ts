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

// ---- old garment left ----------------------------------------------------------------------------
/**
 * "Old garment left": of the person's old-garment pixels in the replaced category's region, the
 * share the result left unchanged (no channel differs by more than CHANGED_DIFF). A colour model on
 * the ORIGINAL photo, independent of the engine's own clothing finder:
 * - background: within OLD_BG_DE (CIE76 ΔE) of one of the colours of the image's border (k-means
 *   prototypes of the outer 2 % frame: the top, and the two sides at the rows of the region);
 * - skin: Lab hue 15°–80°, chroma 8–50, L* 20–92 (every skin tone; a beige garment counts as skin);
 * - the old garment: what is neither, within OLD_GARMENT_DE of a prototype of what is neither in the
 *   sample zone where the old garment surely is (a top or dress: the chest, the middle 40 % of the
 *   upper box's width, 15–45 % of its height; a bottom or dress: the hips, the middle 50 % of the
 *   lower box's width, 5–30 % of its height). Prototypes with under 10 % of the samples (a hand, a
 *   necklace) are dropped. Hair counts only where it has the old garment's colour.
 * Region: the labelled box(es) of the garment's category (undilated). Null when the zone holds too
 * few garment pixels (a bare torso: nothing to take off). It reads 0 for a result that replaced
 * every old-garment pixel, 1 for one that left the photo as it was; a new garment of the old one's
 * colour (within CHANGED_DIFF) counts as left.
 */
export const OLD_BG_DE = 12
export const OLD_GARMENT_DE = 16

type Lab = [number, number, number]
const lin = (c: number): number => {
  const v = c / 255
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
}
const LIN = Float64Array.from({ length: 256 }, (_, i) => lin(i))
const f3 = (t: number): number => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)
/** CIE Lab (D65) of an sRGB pixel. */
export function lab(r: number, g: number, b: number): Lab {
  const R = LIN[r]!
  const G = LIN[g]!
  const B = LIN[b]!
  const x = f3((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047)
  const y = f3(0.2126 * R + 0.7152 * G + 0.0722 * B)
  const z = f3((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883)
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)]
}
const d2 = (a: Lab, b: Lab): number => (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2

/** k-means (deterministic seeding: spread over the sorted-by-L samples), with each centre's share. */
export function prototypes(xs: readonly Lab[], k: number): { c: Lab; share: number }[] {
  if (xs.length === 0) return []
  const sorted = [...xs].sort((a, b) => a[0] - b[0])
  const n = Math.min(k, xs.length)
  let cs: Lab[] = Array.from(
    { length: n },
    (_, i) => [...sorted[Math.floor(((i + 0.5) * sorted.length) / n)]!] as Lab,
  )
  let counts = new Array<number>(n).fill(0)
  for (let it = 0; it < 12; it++) {
    const sum = cs.map(() => [0, 0, 0])
    counts = new Array<number>(n).fill(0)
    for (const x of xs) {
      let best = 0
      for (let j = 1; j < n; j++) if (d2(x, cs[j]!) < d2(x, cs[best]!)) best = j
      counts[best]!++
      for (let c = 0; c < 3; c++) sum[best]![c]! += x[c]!
    }
    cs = cs.map((c, j) => (counts[j]! > 0 ? (sum[j]!.map((v) => v / counts[j]!) as Lab) : c))
  }
  return cs.map((c, j) => ({ c, share: counts[j]! / xs.length }))
}

/** Skin's colour gate (see oldGarmentLeft). */
export function isSkin(v: Lab): boolean {
  const chroma = Math.hypot(v[1], v[2])
  const hue = (Math.atan2(v[2], v[1]) * 180) / Math.PI
  return hue >= 15 && hue <= 80 && chroma >= 8 && chroma <= 50 && v[0] >= 20 && v[0] <= 92
}

/** The old garment's pixels of the category's region on the photo (1), or null (see above). */
export function oldGarmentMask(
  before: Uint8Array,
  w: number,
  h: number,
  category: GarmentCategory,
  boxes: { upper: Box; lower: Box },
): Uint8Array | null {
  const at = (i: number): Lab => lab(before[i * 3]!, before[i * 3 + 1]!, before[i * 3 + 2]!)
  // Background: the border's colours, the top and the sides beside the region (not the floor
  // beside the feet, which may have a top's grey).
  const frame = Math.max(1, Math.round(0.02 * Math.min(w, h)))
  const rows = regionRects(category, boxes, w, h)
  const border: Lab[] = []
  for (let y = 0; y < h; y += 2) {
    const beside = rows.some((r) => y >= r.y0 && y < r.y1)
    for (let x = 0; x < w; x += 2) {
      if (y < frame || (beside && (x < frame || x >= w - frame))) border.push(at(y * w + x))
    }
  }
  const bg = prototypes(border, 4)
    .filter((p) => p.share >= 0.05)
    .map((p) => p.c)
  const isBg = (v: Lab) => bg.some((c) => d2(v, c) < OLD_BG_DE ** 2)
  const cloth = (v: Lab) => !isBg(v) && !isSkin(v)
  // The old garment's colours, from where it surely is.
  const zones: PixelRect[] = []
  const zone = (b: Box, fx: number, fy0: number, fy1: number) => {
    const bw = b[2] - b[0]
    const bh = b[3] - b[1]
    const cx = (b[0] + b[2]) / 2
    zones.push(
      toPixels([cx - (fx / 2) * bw, b[1] + fy0 * bh, cx + (fx / 2) * bw, b[1] + fy1 * bh], w, h),
    )
  }
  if (category !== 'lower') zone(boxes.upper, 0.4, 0.15, 0.45)
  if (category !== 'upper') zone(boxes.lower, 0.5, 0.05, 0.3)
  const samples: Lab[] = []
  for (const r of zones) {
    for (let y = r.y0; y < r.y1; y++) {
      for (let x = r.x0; x < r.x1; x++) {
        const v = at(y * w + x)
        if (cloth(v)) samples.push(v)
      }
    }
  }
  const zoneArea = zones.reduce((s, r) => s + (r.x1 - r.x0) * (r.y1 - r.y0), 0)
  if (samples.length < Math.max(20, 0.15 * zoneArea)) return null
  const garment = prototypes(samples, 4)
    .filter((p) => p.share >= 0.1)
    .map((p) => p.c)
  const region = rectMask(regionRects(category, boxes, w, h), w, h)
  for (let i = 0; i < w * h; i++) {
    if (!region[i]) continue
    const v = at(i)
    if (!cloth(v) || !garment.some((c) => d2(v, c) < OLD_GARMENT_DE ** 2)) region[i] = 0
  }
  return region
}

export function oldGarmentLeft(
  before: Uint8Array,
  after: Uint8Array,
  w: number,
  h: number,
  category: GarmentCategory,
  boxes: { upper: Box; lower: Box },
): number | null {
  const m = oldGarmentMask(before, w, h, category, boxes)
  if (m === null) return null
  let old = 0
  let left = 0
  for (let i = 0; i < w * h; i++) {
    if (!m[i]) continue
    old++
    const j = i * 3
    if (
      Math.abs(before[j]! - after[j]!) <= CHANGED_DIFF &&
      Math.abs(before[j + 1]! - after[j + 1]!) <= CHANGED_DIFF &&
      Math.abs(before[j + 2]! - after[j + 2]!) <= CHANGED_DIFF
    ) {
      left++
    }
  }
  return old === 0 ? null : left / old
}
