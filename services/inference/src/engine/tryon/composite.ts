/**
 * Compositing (stage 4).
 *
 * Contract — in: the person photo, its analysis, the warped garment parts (premultiplied RGBA at
 * the photo's size). Out: the dressed photo (RGB, same size) and the garment's final coverage
 * (0..1, for metrics and background removal).
 *
 * Dresses and skirts may also cover the gap between the legs (see bridgeLegs).
 *
 * Occlusion order, back to front: the photo → body parts of the garment (torso, dress body, legs,
 * skirt) → the person's arms (upper arms and forearms, from the photo) → sleeves → hands → face
 * and hair. Every garment part is clipped to the person's silhouette dilated by 6 % of the
 * shoulder width, 1.5 % above the shoulder line (clothes may stand off the body a little, never
 * float in the background), with a soft 1–2 px edge; the parts themselves are bilinearly resampled, so their outlines are
 * anti-aliased.
 *
 * Shading: the photo's own light is carried onto the garment as a ratio of the photo's local
 * brightness (blur of 2.5 % of the shoulder width, which keeps folds and drops fine print) to its
 * broad brightness (a quarter of the shoulder width), clamped to [0.75, 1.15] and applied at SHADING_STRENGTH: folds and shadows of the clothes the person wears
 * darken the new garment where they darkened the old one.
 *
 * With `takeOff` (opt-in, TAKE_OFF_DEFAULT) the old garment is taken off first (clothing.ts finds it, undress.ts repaints it with skin shaded
 * from the photo's light where the body is and with background where it is not), so where the new
 * garment is smaller than the one worn (shorter sleeves, a shorter hem, a slimmer cut, a sleeveless
 * top, a dress over trousers) the body shows, not the old garment. A top replaces the old top, a
 * bottom the old bottom, a dress both.
 *
 * Hair that falls in front of the shoulders or chest (clothing.ts `hairFront`) is drawn in front of
 * a new top or dress, like the face.
 *
 * Tucked or untucked, for a new bottom under the old top: the old top is untucked when its hem on
 * the body axis (clothing.ts `topHemY`) lies lower than the new garment's waistband on that axis by
 * more than UNTUCK_MARGIN × the shoulder width; then the old top is drawn in front of the new
 * bottom (the top hangs over it). Otherwise (a top tucked in, or one ending above the new
 * waistband) the new bottom is drawn in front up to its own waistband.
 */
import { segmentClothing, type Clothing } from './clothing.ts'
import { LM } from './pose.ts'
import type { PersonAnalysis } from './person.ts'
import { boxBlur, dilate, mid, resizePlane, threshold, type Plane, type Rgb } from './raster.ts'
import { takeOff } from './undress.ts'
import type { WarpedPart } from './warp.ts'

export const SHADING_STRENGTH = 0.35
export const ENVELOPE_DILATE = 0.06
export const ENVELOPE_DILATE_SHOULDERS = 0.015
/**
 * Taking the old garment off is off by default: it lowers the paired SSIM of the evaluation set
 * (where the person already wears the very garment, the warp's imperfect fit now shows skin or
 * background instead of the matching old garment). Turn it on per engine with `takeOffOldGarment`.
 */
export const TAKE_OFF_DEFAULT = false
/** The old top counts as untucked when its hem is this much (× shoulder width) below the new waistband. */
export const UNTUCK_MARGIN = 0.05

export interface Composite {
  rgb: Uint8Array
  /** Coverage of the garment after clipping and occlusion (0..1). */
  garment: Plane
  /** The clipping envelope used (dilated person mask, 0..1). */
  envelope: Plane
  // The fields below are the built-in compositor's (a replacement stage may leave them out).
  /** What the person wore (clothing.ts). */
  clothing?: Clothing
  /** Where the old garment was repainted before the new one was drawn (0..1), and where with background. */
  removed?: Plane
  background?: Plane
  /** For a new bottom: whether the old top was judged tucked (null: no bottom, or no top found). */
  tucked?: boolean | null
  /** The old top drawn in front of a new bottom (untucked), or null. */
  inFront?: Plane | null
}

export function compositeGarment(
  person: Rgb,
  a: PersonAnalysis,
  parts: readonly WarpedPart[],
  o: { removeBackground: boolean; category: 'upper' | 'lower' | 'full'; takeOff?: boolean },
): Composite {
  const { width: w, height: h } = person
  const N = w * h
  const sw = a.shoulderWidth
  const coverage = new Float32Array(N)
  const envelopeFull = new Float32Array(N)
  // Opt-in (TAKE_OFF_DEFAULT): with it off the compositor draws over the photo as it is.
  const clothing = o.takeOff ?? TAKE_OFF_DEFAULT ? segmentClothing(person, a) : null
  const undressed = clothing ? takeOff(person, a, clothing, { upper: o.category !== 'lower', lower: o.category !== 'upper' }) : null
  // Everything below draws over the photo with the old garment taken off.
  const photo = undressed ? undressed.rgb : person.data
  const rgb = photo.slice()
  let tucked: boolean | null = null
  let inFront: Plane | null = null
  // All work happens in the box the parts cover (plus the envelope's reach): the rest of the photo
  // is the photo.
  const r = Math.max(1, ENVELOPE_DILATE * sw)
  const margin = Math.ceil(r) + 4
  let bx0 = w
  let by0 = h
  let bx1 = -1
  let by1 = -1
  for (const p of parts) {
    bx0 = Math.min(bx0, p.x0)
    by0 = Math.min(by0, p.y0)
    bx1 = Math.max(bx1, p.x0 + p.width - 1)
    by1 = Math.max(by1, p.y0 + p.height - 1)
  }
  if (bx1 >= 0) {
    bx0 = Math.max(0, bx0 - margin)
    by0 = Math.max(0, by0 - margin)
    bx1 = Math.min(w - 1, bx1 + margin)
    by1 = Math.min(h - 1, by1 + margin)
    const cw = bx1 - bx0 + 1
    const ch = by1 - by0 + 1
    const cN = cw * ch
    const crop = (m: Plane): Plane => {
      const d = new Float32Array(cN)
      for (let y = 0; y < ch; y++) d.set(m.data.subarray((by0 + y) * w + bx0, (by0 + y) * w + bx0 + cw), y * cw)
      return { width: cw, height: ch, data: d }
    }
    const body = threshold(crop(a.mask), 0.5)
    const skirted = o.category === 'full' || parts.some((p) => p.part.name === 'skirt')
    if (skirted) bridgeLegs(body, a, bx0, by0)
    // Above the shoulder line the envelope hugs the silhouette (a collar must not stand above the
    // shoulders into the background or the hair).
    const loose = dilate(body, r)
    const tight = dilate(body, Math.max(1, ENVELOPE_DILATE_SHOULDERS * sw))
    const sl = a.points[LM.leftShoulder]!
    const sr = a.points[LM.rightShoulder]!
    const slope = (sl.y - sr.y) / (sl.x - sr.x || 1e-6)
    for (let y = 0; y < ch; y++) {
      for (let x = 0; x < cw; x++) {
        const lineY = sr.y + slope * (bx0 + x - sr.x) - by0
        if (y < lineY) loose.data[y * cw + x] = tight.data[y * cw + x]!
      }
    }
    const envelope = boxBlur(loose, 1.5)
    for (let y = 0; y < ch; y++) envelopeFull.set(envelope.data.subarray(y * cw, (y + 1) * cw), (by0 + y) * w + bx0)

    // Shading ratio from the photo's luma, computed at half resolution (it is smooth by design).
    const half = halfLuma(person, bx0, by0, cw, ch)
    const fine = boxBlur(half, Math.max(1, 0.025 * sw * 0.5))
    const broad = boxBlur(half, Math.max(2, 0.25 * sw * 0.5))
    const shadeHalf = new Float32Array(half.data.length)
    for (let i = 0; i < shadeHalf.length; i++) {
      const q = (fine.data[i]! + 0.02) / (broad.data[i]! + 0.02)
      const c = q < 0.75 ? 0.75 : q > 1.15 ? 1.15 : q
      shadeHalf[i] = 1 + (c - 1) * SHADING_STRENGTH
    }
    const shade = resizePlane({ width: half.width, height: half.height, data: shadeHalf }, cw, ch).data

    const out = new Float32Array(cN * 3)
    for (let y = 0; y < ch; y++) {
      const src = ((by0 + y) * w + bx0) * 3
      for (let k = 0; k < cw * 3; k++) out[y * cw * 3 + k] = photo[src + k]!
    }
    const paint = (p: WarpedPart) => {
      const d = p.rgba
      const n = p.width * p.height
      for (let yy = 0; yy < p.height; yy++) {
        const cy = p.y0 + yy - by0
        for (let xx = 0; xx < p.width; xx++) {
          const j = yy * p.width + xx
          const pa = d[3 * n + j]!
          if (pa <= 0.002) continue
          const ci = cy * cw + p.x0 + xx - bx0
          const al = Math.min(1, pa) * envelope.data[ci]!
          if (al <= 0) continue
          const k = (255 * shade[ci]!) / pa // un-premultiply, shade, scale to 0..255
          const o3 = ci * 3
          out[o3] = out[o3]! * (1 - al) + Math.min(255, d[j]! * k) * al
          out[o3 + 1] = out[o3 + 1]! * (1 - al) + Math.min(255, d[n + j]! * k) * al
          out[o3 + 2] = out[o3 + 2]! * (1 - al) + Math.min(255, d[2 * n + j]! * k) * al
          const i = (p.y0 + yy) * w + p.x0 + xx
          coverage[i] = coverage[i]! + (1 - coverage[i]!) * al
        }
      }
    }
    const keep = (m: Plane) => {
      for (let y = 0; y < ch; y++) {
        for (let x = 0; x < cw; x++) {
          const i = (by0 + y) * w + bx0 + x
          const k = m.data[i]!
          if (k <= 0 || coverage[i]! <= 0) continue
          const o3 = (y * cw + x) * 3
          const p3 = i * 3
          out[o3] = out[o3]! * (1 - k) + photo[p3]! * k
          out[o3 + 1] = out[o3 + 1]! * (1 - k) + photo[p3 + 1]! * k
          out[o3 + 2] = out[o3 + 2]! * (1 - k) + photo[p3 + 2]! * k
          coverage[i] = coverage[i]! * (1 - k)
        }
      }
    }
    for (const p of parts) if (p.part.layer === 'body') paint(p)
    if (clothing && o.category === 'lower' && clothing.topHemY !== null) {
      const waistY = waistbandY(parts, a)
      if (waistY !== null) {
        tucked = clothing.topHemY <= waistY + UNTUCK_MARGIN * sw
        if (!tucked) {
          // Only the top itself, down to its hem (never a bottom of a similar colour below it).
          inFront = { width: w, height: h, data: new Float32Array(N) }
          const hem = Math.min(h, Math.ceil(clothing.topHemY))
          inFront.data.set(clothing.upper.data.subarray(0, hem * w))
          keep(inFront)
        }
      }
    }
    keep(a.arms)
    for (const p of parts) if (p.part.layer === 'sleeve') paint(p)
    if (clothing && o.category !== 'lower') keep(clothing.hairFront)
    keep(a.hands)
    keep(a.head)
    for (let y = 0; y < ch; y++) {
      const dst = ((by0 + y) * w + bx0) * 3
      for (let k = 0; k < cw * 3; k++) rgb[dst + k] = Math.round(out[y * cw * 3 + k]!)
    }
  }
  if (o.removeBackground) {
    for (let i = 0; i < N; i++) {
      const al = Math.max(a.mask.data[i]! * (1 - (undressed ? undressed.background.data[i]! : 0)), coverage[i]!)
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round(rgb[i * 3 + c]! * al + 255 * (1 - al))
    }
  }
  return {
    rgb,
    garment: { width: w, height: h, data: coverage },
    envelope: { width: w, height: h, data: envelopeFull },
    ...(clothing && undressed ? { clothing, removed: undressed.removed, background: undressed.background } : {}),
    tucked,
    inFront,
  }
}

/**
 * The new bottom's waistband on the body axis: the highest row where a body part of the garment
 * covers more than half of a band a fifth of the shoulder width wide around the hip centre.
 */
function waistbandY(parts: readonly WarpedPart[], a: PersonAnalysis): number | null {
  const hc = mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!)
  const half = Math.max(1, Math.round(0.1 * a.shoulderWidth))
  let best: number | null = null
  for (const p of parts) {
    if (p.part.layer !== 'body') continue
    const n = p.width * p.height
    for (let yy = 0; yy < p.height; yy++) {
      const y = p.y0 + yy
      if (best !== null && y >= best) break
      let on = 0
      let total = 0
      for (let x = Math.round(hc.x) - half; x <= Math.round(hc.x) + half; x++) {
        total++
        const xx = x - p.x0
        if (xx < 0 || xx >= p.width) continue
        if (p.rgba[3 * n + yy * p.width + xx]! > 0.5) on++
      }
      if (on > 0.5 * total) {
        best = y
        break
      }
    }
  }
  return best
}

/**
 * Dresses and skirts hang across the gap between the legs: below the hips, fill the gaps between
 * silhouette runs that lie between the legs (narrower than 1.6 × the hip-joint distance, centred within
 * it), so the envelope does not cut the skirt into trouser legs.
 */
function bridgeLegs(body: Plane, a: PersonAnalysis, ox: number, oy: number): void {
  const pl = a.points[LM.leftHip]!
  const pr = a.points[LM.rightHip]!
  const hw = Math.abs(pl.x - pr.x) || 0.5 * a.shoulderWidth
  const cx = (pl.x + pr.x) / 2 - ox
  const y0 = Math.max(0, Math.round(Math.max(pl.y, pr.y) - oy))
  const { width: w, height: h } = body
  for (let y = y0; y < h; y++) {
    const row = y * w
    let prevEnd = -1
    for (let x = 0; x < w; x++) {
      if (body.data[row + x]! <= 0.5) continue
      if (prevEnd >= 0 && x - prevEnd > 1) {
        const gap = x - prevEnd - 1
        const gc = (x + prevEnd) / 2
        if (gap < 1.6 * hw && Math.abs(gc - cx) < 0.6 * hw) for (let k = prevEnd + 1; k < x; k++) body.data[row + k] = 1
      }
      prevEnd = x
    }
  }
}

/** Luma (0..1) of the box (x0, y0, cw, ch) at half resolution, 2×2 box-averaged. */
function halfLuma(img: Rgb, x0: number, y0: number, cw: number, ch: number): Plane {
  const w = Math.max(1, cw >> 1)
  const h = Math.max(1, ch >> 1)
  const out = new Float32Array(w * h)
  const W = img.width
  const d = img.data
  const l = (i: number) => 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = ((y0 + 2 * y) * W + x0 + 2 * x) * 3
      const b = Math.min(y0 + 2 * y + 1, img.height - 1) === y0 + 2 * y ? a : a + W * 3
      const c = Math.min(x0 + 2 * x + 1, W - 1) === x0 + 2 * x ? 0 : 3
      out[y * w + x] = (l(a) + l(a + c) + l(b) + l(b + c)) / (4 * 255)
    }
  }
  return { width: w, height: h, data: out }
}
