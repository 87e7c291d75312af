/**
 * Garment extraction: a clean, soft mask of the garment on a product photo.
 *
 * `preprocess: true` (the default of the API): the background is estimated from the photo's border
 * (`backgroundField`: the 2 px ring's colours along each side, smoothed, spread over the photo as a
 * Coons patch, so a backdrop lit a few levels darker at the top than at the sides is followed and
 * its gradient is not taken for noise) and removed by edge-stopped region growing from the border: a
 * pixel joins the background when it is close to the background colour (global bound) *and* close
 * to the neighbour it is reached from (local bound), so studio gradients and soft shadows are
 * followed while a garment edge — even a light garment on a light background, which still has a
 * seam, shadow or texture step at its outline — stops the growth. Gaps that open to the outside
 * (between legs, under sleeves, between straps reaching the edge of the garment) are reached and
 * removed; a region fully enclosed by the garment is kept (a white print on a white-background
 * photo must not become a hole). Only the large components are kept, and the outline is softened
 * by one pixel for anti-aliasing. The bounds adapt to how flat the background is (the border
 * ring's spread): on a flat one (a seamless sweep, a rendered packshot) a garment only a few levels
 * from it (a white skirt on light grey) is still found — the core distance shrinks, pixels
 * brighter than the background are reached only up to a bound set by the spread (shadows are
 * darker), and the garment's outline (a sharp luma step at the photo's own resolution) stops the
 * growth through gradients; two rounds of the ordinary rules then peel the anti-aliased rim.
 * That is the garment's shape (category, landmarks). The matte it is drawn with also loses the soft
 * shadows it casts on the backdrop: grown into from the background over pixels of the backdrop's
 * own hue, darker, darkening on the way in, never across a sharp step (the garment's outline).
 *
 * `preprocess: false`: the photo is taken as already cut out: its alpha channel if it has one
 * (alpha/255 is the mask); otherwise every pixel within 0.10 (RGB distance, 0..√3 scale) of the
 * border's median colour is background — a simple key of a uniform background, with no region
 * growing, no hole filling and no component filtering.
 */
import {
  boxBlur,
  clamp,
  components,
  dilate,
  erode,
  resizePlane,
  selectInPlace,
  type Plane,
  type Rgb,
} from './raster.ts'

export interface GarmentMaskOptions {
  preprocess: boolean
}

/** Distance (RGB, each channel 0..1) from the border colour under which `preprocess: false` keys a pixel out. */
export const KEY_DISTANCE = 0.1
const GLOBAL_DISTANCE = 0.22
const CORE_DISTANCE = 0.035
const LOCAL_STEP = 0.022
/** Core distance on a perfectly flat background (the core is 3 × the border's spread, at most CORE_DISTANCE). */
const CORE_MIN = 0.01
/** Bound for pixels brighter than the background on a perfectly flat one (4 × the border's spread, at most GLOBAL_DISTANCE). */
const BRIGHT_MIN = 0.015
/** A background whose border spread is at most this is flat (a seamless sweep, a rendered packshot). */
const FLAT_SPREAD = 0.012
/** Luma step (central difference, 0..1) that is an outline on a noise-free background. */
const EDGE_MIN = 0.02
/** Longest side the region growing works at. */
export const GROW_SIDE_PX = 400
/** A cast shadow keeps at least this share of the backdrop's luma … */
export const SHADOW_MIN_LUMA = 0.75
/** … and its chromaticity (R, G, B over their sum) within this of the backdrop's. */
const SHADOW_CHROMA = 0.012
/** Largest step (smoothed RGB, 0..1) between neighbours through a soft shadow. */
const SHADOW_STEP = 0.07
/** How much lighter (luma, 0..1) a pixel may be than the one a shadow reaches it from (noise). */
const SHADOW_RISE = 0.004
/** An edge is a step when its ±1 px luma difference is at least this share of its ±3 px one. */
const STEP_SHARE = 0.6

export function borderColor(img: Rgb): [number, number, number] {
  const { width: w, height: h, data } = img
  const ch: number[][] = [[], [], []]
  const push = (x: number, y: number) => {
    const i = (y * w + x) * 3
    for (let c = 0; c < 3; c++) ch[c]!.push(data[i + c]!)
  }
  for (let x = 0; x < w; x++) for (const y of [0, 1, h - 2, h - 1]) push(x, y)
  for (let y = 2; y < h - 2; y++) for (const x of [0, 1, w - 2, w - 1]) push(x, y)
  return ch.map((v) => {
    v.sort((a, b) => a - b)
    return v[v.length >> 1]! / 255
  }) as [number, number, number]
}

function distanceTo(img: Rgb, c: readonly number[]): Float32Array {
  const n = img.width * img.height
  const d = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    const r = img.data[i * 3]! / 255 - c[0]!
    const g = img.data[i * 3 + 1]! / 255 - c[1]!
    const b = img.data[i * 3 + 2]! / 255 - c[2]!
    d[i] = Math.sqrt(r * r + g * g + b * b)
  }
  return d
}

/** The garment's outline (`shape`) and the matte it is drawn with (`matte`), 0..1 at the image's size. */
export interface GarmentMasks {
  /** What the garment's category and landmarks are read from. */
  shape: Plane
  /**
   * The shape without the soft shadows the garment casts on the backdrop (see growMask), so no rim
   * of the backdrop is drawn around it. Kept apart from the shape: a shadow between two trouser
   * legs opened at their hems but not above moved the landmarks (tryon/garment_lower_01: its legs
   * were then fitted as bent).
   */
  matte: Plane
}

/** Returns the garment mask (0..1) at the image's size: the shape (`extractGarmentMasks`). */
export function extractGarmentMask(
  img: Rgb,
  alpha: Uint8Array | null,
  o: GarmentMaskOptions,
): Plane {
  return extractGarmentMasks(img, alpha, o).shape
}

/** The garment's shape and matte (`preprocess: false`: the same plane). */
export function extractGarmentMasks(
  img: Rgb,
  alpha: Uint8Array | null,
  o: GarmentMaskOptions,
): GarmentMasks {
  if (!o.preprocess) {
    const m = keyMask(img, alpha)
    return { shape: m, matte: m }
  }
  const edges = outlineEdges(img)
  return openNarrowGaps(img, edges, growMask(img, edges))
}

/**
 * Luma steps at the photo's own resolution that stand out from the background's noise (central
 * differences; the threshold is 3 × the border ring's 99th percentile, at least EDGE_MIN): the
 * outline of a garment that differs from a flat background only by a few levels is still a sharp
 * step there, while the region growing runs on a smoothed, smaller copy where it is not.
 */
function outlineEdges(img: Rgb): Uint8Array {
  const { width: w, height: h, data } = img
  const n = w * h
  const luma = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    luma[i] = (0.299 * data[i * 3]! + 0.587 * data[i * 3 + 1]! + 0.114 * data[i * 3 + 2]!) / 255
  }
  const g = new Float32Array(n)
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x
      g[i] = Math.max(Math.abs(luma[i + 1]! - luma[i - 1]!), Math.abs(luma[i + w]! - luma[i - w]!))
    }
  }
  const ring: number[] = []
  for (let x = 1; x < w - 1; x++) ring.push(g[w + x]!, g[(h - 2) * w + x]!)
  for (let y = 2; y < h - 2; y++) ring.push(g[y * w + 1]!, g[y * w + w - 2]!)
  ring.sort((a, b) => a - b)
  const t = Math.max(EDGE_MIN, 3 * (ring[Math.floor(0.99 * (ring.length - 1))] ?? 0))
  // Bit 0: an edge. Bit 1: a step — the change happens within a pixel or two (the luma difference
  // over ±1 px is at least STEP_SHARE of that over ±3 px), as at a garment's outline, not spread
  // over a ramp, as across a soft shadow on the backdrop.
  const e = new Uint8Array(n)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      if (g[i]! <= t) continue
      e[i] = 1
      const horiz = Math.abs(luma[i + 1]! - luma[i - 1]!) >= Math.abs(luma[i + w]! - luma[i - w]!)
      const s = horiz ? 1 : w
      const k = horiz ? Math.min(3, x, w - 1 - x) : Math.min(3, y, h - 1 - y)
      if (k < 3) {
        e[i] = 3
        continue
      }
      const wide = Math.abs(luma[i + 3 * s]! - luma[i - 3 * s]!)
      if (g[i]! >= STEP_SHARE * wide) e[i] = 3
    }
  }
  return e
}

const lumaOf = (c: Float32Array, i: number): number =>
  0.299 * c[i * 3]! + 0.587 * c[i * 3 + 1]! + 0.114 * c[i * 3 + 2]!

/**
 * The 4-neighbours of pixel `p` in a `w`-wide image of `n` pixels, written into `out` (left, right,
 * up, down; -1 where one is off the image): no list allocated per pixel in the region growing.
 */
const neighbours4 = (p: number, w: number, n: number, out: Int32Array): Int32Array => {
  const x = p % w
  out[0] = x > 0 ? p - 1 : -1
  out[1] = x < w - 1 ? p + 1 : -1
  out[2] = p >= w ? p - w : -1
  out[3] = p < n - w ? p + w : -1
  return out
}
const distRgb = (c: Float32Array, a: number, b: number): number =>
  Math.sqrt(
    (c[a * 3]! - c[b * 3]!) ** 2 +
      (c[a * 3 + 1]! - c[b * 3 + 1]!) ** 2 +
      (c[a * 3 + 2]! - c[b * 3 + 2]!) ** 2,
  )

/** 2×2 max-pool of a binary map (an edge anywhere in the 2×2 block is an edge of the half-size block). */
function halveEdges(e: Uint8Array, W: number, H: number): Uint8Array {
  const w = W >> 1
  const h = H >> 1
  const out = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = 2 * y * W + 2 * x
      out[y * w + x] = e[a]! | e[a + 1]! | e[a + W]! | e[a + W + 1]!
    }
  }
  return out
}

function keyMask(img: Rgb, alpha: Uint8Array | null): Plane {
  const { width: w, height: h } = img
  const n = w * h
  const out = new Float32Array(n)
  if (alpha !== null && alpha.some((a) => a < 250)) {
    for (let i = 0; i < n; i++) out[i] = alpha[i]! / 255
  } else {
    const d = distanceTo(img, borderColor(img))
    for (let i = 0; i < n; i++) out[i] = d[i]! > KEY_DISTANCE ? 1 : 0
  }
  return { width: w, height: h, data: out }
}

/** The photo 3×3 box-averaged, RGB 0..1 interleaved. */
function smoothRgb(img: Rgb): Float32Array {
  const { width: w, height: h } = img
  const n = w * h
  const smooth = new Float32Array(n * 3)
  for (let c = 0; c < 3; c++) {
    const p = new Float32Array(n)
    for (let i = 0; i < n; i++) p[i] = img.data[i * 3 + c]! / 255
    const b = boxBlur({ width: w, height: h, data: p }, 1).data
    for (let i = 0; i < n; i++) smooth[i * 3 + c] = b[i]!
  }
  return smooth
}

function growMask(img: Rgb, edges: Uint8Array): GarmentMasks {
  const { width: w, height: h } = img
  const n = w * h
  // Region growing runs at ≤ GROW_SIDE_PX (2×2 box-averaged steps); the mask is upsampled after.
  if (Math.max(w, h) > GROW_SIDE_PX) {
    const half = halve(img)
    const m = growMask(half, halveEdges(edges, w, h))
    const up = (p: Plane): Plane => {
      const u = resizePlane(p, w, h)
      // Re-sharpen the bilinear edge to about a pixel of the full size.
      for (let i = 0; i < u.data.length; i++) u.data[i] = clamp((u.data[i]! - 0.5) * 2 + 0.5, 0, 1)
      return u
    }
    return { shape: up(m.shape), matte: up(m.matte) }
  }
  // Denoise a little (JPEG blocks) before comparing neighbours.
  const smooth = smoothRgb(img)
  // The background's colour where each pixel is (`backgroundField`): a studio backdrop lit from
  // above is a few levels darker at the top than at the sides, and a garment part of the
  // backdrop's own colour (a white print on a light grey sweep) is told from it only by that.
  const field = backgroundField(img)
  const dBg = new Float32Array(n)
  // Brighter than the background (luma): a shadow never is.
  const brighter = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const r = smooth[i * 3]! - field[i * 3]!
    const g = smooth[i * 3 + 1]! - field[i * 3 + 1]!
    const b = smooth[i * 3 + 2]! - field[i * 3 + 2]!
    dBg[i] = Math.sqrt(r * r + g * g + b * b)
    brighter[i] = 0.299 * r + 0.587 * g + 0.114 * b > 0 ? 1 : 0
  }
  // How much the background itself varies: the border ring's spread around its colour. A seamless
  // studio sweep or a rendered packshot background is flat (spread ≈ 0) and a garment differing
  // from it by a few levels (a white skirt on light grey) is still a garment; a photographed
  // backdrop with noise, vignetting or texture needs the wider bounds. (A smooth gradient along
  // the border is the field's, not spread.)
  const spread = borderSpread(w, h, dBg)
  const core = clamp(3 * spread, CORE_MIN, CORE_DISTANCE)
  // Reaching a pixel brighter than the background through small steps (growth through a gradient)
  // is bounded by the spread as well: shadows (darker) are reached up to GLOBAL_DISTANCE, but light
  // only changes brightness that much on a backdrop whose border shows it.
  const brightBound = clamp(4 * spread, BRIGHT_MIN, GLOBAL_DISTANCE)
  // On a flat background the garment's outline (a sharp step at full resolution) stops the growth
  // through gradients: a garment shaded past the background's level (a white skirt's pleats on
  // light grey) is not reached through it. Pixels of the background's own colour still join.
  const barrier = spread <= FLAT_SPREAD ? edges : null

  // Region growing from the border (1 = background).
  const isBg = new Uint8Array(n)
  const stack = new Int32Array(n)
  const nb = new Int32Array(4)
  let sp = 0
  const seed = (i: number) => {
    if (isBg[i] === 0 && dBg[i]! < (brighter[i] === 1 ? brightBound : GLOBAL_DISTANCE)) {
      isBg[i] = 1
      stack[sp++] = i
    }
  }
  for (let x = 0; x < w; x++) (seed(x), seed((h - 1) * w + x))
  for (let y = 0; y < h; y++) (seed(y * w), seed(y * w + w - 1))
  const step = (from: number, to: number) => {
    if (isBg[to] !== 0) return
    const dt = dBg[to]!
    if (dt >= (brighter[to] === 1 ? brightBound : GLOBAL_DISTANCE)) return
    let ok = dt < core
    if (!ok && (barrier === null || barrier[to] === 0)) {
      const r = smooth[to * 3]! - smooth[from * 3]!
      const g = smooth[to * 3 + 1]! - smooth[from * 3 + 1]!
      const b = smooth[to * 3 + 2]! - smooth[from * 3 + 2]!
      ok = Math.sqrt(r * r + g * g + b * b) < LOCAL_STEP && dt < dBg[from]! + LOCAL_STEP
    }
    if (ok) {
      isBg[to] = 1
      stack[sp++] = to
    }
  }
  while (sp > 0) {
    const p = stack[--sp]!
    const x = p % w
    if (x > 0) step(p, p - 1)
    if (x < w - 1) step(p, p + 1)
    if (p >= w) step(p, p - w)
    if (p < n - w) step(p, p + w)
  }
  // The outline band that the barrier held: the background's own anti-aliased edge pixels. Two
  // rounds of the ordinary rules (the fixed core and local step, no barrier) peel it off, without
  // reaching further in.
  if (barrier !== null) {
    for (let round = 0; round < 2; round++) {
      const add: number[] = []
      for (let p = 0; p < n; p++) {
        if (isBg[p] === 1 || barrier[p] === 0) continue
        for (const q of neighbours4(p, w, n, nb)) {
          if (q < 0 || isBg[q] === 0) continue
          if (
            dBg[p]! < CORE_DISTANCE ||
            (distRgb(smooth, p, q) < LOCAL_STEP && dBg[p]! < dBg[q]! + LOCAL_STEP)
          ) {
            add.push(p)
            break
          }
        }
      }
      for (const p of add) isBg[p] = 1
    }
  }

  // Soft shadows cast on the backdrop beside the garment (a ramp of a few pixels, darker, of the
  // backdrop's own hue): too steep for the local step and, on a flat backdrop, an edge to the
  // barrier, they were kept as garment and drawn as a grey or white rim around it. Grown into
  // from the background through steps up to SHADOW_STEP, only over pixels that are the
  // backdrop's colour darkened (luma ≥ SHADOW_MIN_LUMA of the field's, same chromaticity) and
  // never across a sharp step (`outlineEdges` bit 1: a light garment's outline).
  const shapeBg = isBg.slice()
  const shadowLike = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    if (isBg[i] === 1 || brighter[i] === 1) continue
    const fr = field[i * 3]!
    const fg3 = field[i * 3 + 1]!
    const fb = field[i * 3 + 2]!
    const fs = fr + fg3 + fb
    const r = smooth[i * 3]!
    const g = smooth[i * 3 + 1]!
    const b = smooth[i * 3 + 2]!
    const ps = r + g + b
    if (fs <= 0 || ps <= 0 || ps < SHADOW_MIN_LUMA * fs) continue
    const dc = Math.max(
      Math.abs(r / ps - fr / fs),
      Math.abs(g / ps - fg3 / fs),
      Math.abs(b / ps - fb / fs),
    )
    if (dc <= SHADOW_CHROMA) shadowLike[i] = 1
  }
  for (let i = 0; i < n; i++) if (isBg[i] === 1) stack[sp++] = i
  while (sp > 0) {
    const p = stack[--sp]!
    // Not out of a step either: the peeled rim of a light garment's outline (above) is one.
    if ((edges[p]! & 2) !== 0) continue
    for (const q of neighbours4(p, w, n, nb)) {
      if (q < 0 || isBg[q] === 1 || shadowLike[q] === 0 || (edges[q]! & 2) !== 0) continue
      // A shadow darkens towards what casts it: never lighter again on the way in.
      if (
        distRgb(smooth, p, q) >= SHADOW_STEP ||
        lumaOf(smooth, q) > lumaOf(smooth, p) + SHADOW_RISE
      ) {
        continue
      }
      isBg[q] = 1
      stack[sp++] = q
    }
  }

  const shape = finishMask(shapeBg, w, h)
  const matte = finishMask(isBg, w, h)
  for (let i = 0; i < n; i++) matte.data[i] = Math.min(matte.data[i]!, shape.data[i]!)
  return { shape, matte }
}

/** The garment (not background, the large components) with its outline closed and softened. */
function finishMask(isBg: Uint8Array, w: number, h: number): Plane {
  const n = w * h
  // Garment = not background; keep the large components.
  const fg: Plane = { width: w, height: h, data: new Float32Array(n) }
  for (let i = 0; i < n; i++) fg.data[i] = isBg[i] === 1 ? 0 : 1
  const { labels, sizes } = components(fg)
  const largest = Math.max(0, ...sizes.slice(1))
  const keep = sizes.map((s, i) => i > 0 && s >= Math.max(0.05 * largest, 0.001 * n))
  for (let i = 0; i < n; i++) {
    const k = keep[labels[i]!] === true
    fg.data[i] = k ? 1 : 0
  }

  // Regions the growth could not reach from the border (prints close to the background colour,
  // see-through pockets) stay garment: a white print on a white-background photo must not become
  // a hole. Soften the outline by one pixel.
  // Close small bites along the outline (light print touching the edge of the garment).
  // Then pull the outline in by a pixel (no background halo) and soften it.
  const r = Math.max(1, Math.round(0.006 * Math.max(w, h)))
  return boxBlur(erode(erode(dilate(fg, r), r), 1), 1)
}

/** Widest gap (row run, × the photo's longer side) openNarrowGaps opens; also the shortest gap's height. */
const GAP_MAX = 0.03
/** Garment past each end of a gap's row run, at least (× the longer side): not a light garment's outline rim. */
const GAP_SIDE = 0.006

/**
 * Narrow strips of backdrop between two parts of the garment (the legs of trousers that nearly
 * touch, a sleeve hanging by the body), a few pixels wide at the photo's resolution, are lost by
 * the region growing (a pixel or two at its scale, smoothed, then closed by finishMask), and are
 * often in the garment's own soft shadow. Here, at the photo's resolution:
 * - grown from the background into the garment over pixels of the backdrop's colour or its shade
 *   (its chromaticity within SHADOW_CHROMA, at least SHADOW_MIN_LUMA of its luma, at most
 *   BRIGHT_MIN brighter), not on a sharp step (`outlineEdges` bit 1), through steps under
 *   SHADOW_STEP, never lighter by more than SHADOW_RISE on the way in (a shade darkens towards
 *   what casts it);
 * - of what is reached, the row runs at most GAP_MAX long with garment for GAP_SIDE past both ends
 *   (between two parts: not a shadow beside the outer edge, not between a light garment's 1–2 px
 *   outline rim and a motif on it);
 * - only where the strip opens at its lower end onto the backdrop, within GAP_MAX below it, as a
 *   gap between legs or under a sleeve hangs (white fabric between dark motifs, reached along a
 *   faint outline, opens nowhere below), and reaches GAP_MAX up (a notch in a light hem is not one).
 * A region of the backdrop's colour enclosed by the garment (a white print) is not reached and
 * stays garment; so does the model's skin seen through lace (not the backdrop's colour).
 */
function openNarrowGaps(img: Rgb, edges: Uint8Array, m: GarmentMasks): GarmentMasks {
  const { width: w, height: h } = img
  const n = w * h
  const smooth = smoothRgb(img)
  const field = backgroundField(img)
  const garment = new Uint8Array(n)
  for (let i = 0; i < n; i++) garment[i] = m.shape.data[i]! > 0.5 ? 1 : 0
  // 1: a garment pixel of the backdrop's colour or shade; 2: reached from the background.
  const like = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    if (garment[i] === 0 || (edges[i]! & 2) !== 0) continue
    const fl = lumaOf(field, i)
    const l = lumaOf(smooth, i)
    if (l < SHADOW_MIN_LUMA * fl || l > fl + BRIGHT_MIN) continue
    const fs = field[i * 3]! + field[i * 3 + 1]! + field[i * 3 + 2]!
    const ps = smooth[i * 3]! + smooth[i * 3 + 1]! + smooth[i * 3 + 2]!
    if (fs <= 0 || ps <= 0) continue
    let dc = 0
    for (let c = 0; c < 3; c++) {
      dc = Math.max(dc, Math.abs(smooth[i * 3 + c]! / ps - field[i * 3 + c]! / fs))
    }
    if (dc <= SHADOW_CHROMA) like[i] = 1
  }
  const stack = new Int32Array(n)
  const nb = new Int32Array(4)
  let sp = 0
  for (let i = 0; i < n; i++) if (garment[i] === 0) stack[sp++] = i
  while (sp > 0) {
    const p = stack[--sp]!
    for (const q of neighbours4(p, w, n, nb)) {
      if (
        q < 0 ||
        like[q] !== 1 ||
        distRgb(smooth, p, q) >= SHADOW_STEP ||
        lumaOf(smooth, q) > lumaOf(smooth, p) + SHADOW_RISE
      ) {
        continue
      }
      like[q] = 2
      stack[sp++] = q
    }
  }
  // Row runs of reached pixels between two parts of the garment.
  const maxRun = Math.max(2, Math.round(GAP_MAX * Math.max(w, h)))
  const side = Math.max(2, Math.round(GAP_SIDE * Math.max(w, h)))
  const solid = (y: number, x: number, dir: 1 | -1): boolean => {
    for (let j = 0; j < side; j++, x += dir) {
      if (x < 0 || x >= w || garment[y * w + x] === 0) return false
    }
    return true
  }
  const open = new Uint8Array(n)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (like[y * w + x] !== 2) continue
      let e = x
      while (e + 1 < w && like[y * w + e + 1] === 2) e++
      if (e - x + 1 <= maxRun && solid(y, x - 1, -1) && solid(y, e + 1, 1)) {
        open.fill(1, y * w + x, y * w + e + 1)
      }
      x = e
    }
  }
  // Open at the lower end: down from the strip's lowest pixels over reached ones (the soft
  // shadow the garment casts below its hem), the backdrop within GAP_MAX. Those pixels open too.
  const reached: Plane = { width: w, height: h, data: new Float32Array(n) }
  for (let i = 0; i < n; i++) reached.data[i] = like[i] === 2 ? 1 : 0
  const { labels, sizes } = components(reached)
  const below = new Uint8Array(sizes.length)
  const mouth: number[] = []
  for (let i = 0; i < n - w; i++) {
    if (open[i] !== 1 || open[i + w] === 1) continue
    const from = mouth.length
    let q = i + w
    for (let k = 0; k < maxRun && q < n && garment[q] === 1 && like[q] === 2; k++, q += w) {
      mouth.push(q)
    }
    if (q < n && garment[q] === 0) below[labels[i]!] = 1
    else mouth.length = from
  }
  for (const q of mouth) open[q] = 1
  // Rows of a strip broken by a noisy pixel are closed over (a few pixels, garment only).
  let gap: Plane = { width: w, height: h, data: new Float32Array(n) }
  for (let i = 0; i < n; i++) gap.data[i] = open[i] === 1 && below[labels[i]!] === 1 ? 1 : 0
  gap = erode(dilate(gap, 2), 2)
  for (let i = 0; i < n; i++) gap.data[i] = gap.data[i]! > 0.5 && garment[i] === 1 ? 1 : 0
  // At least GAP_MAX high.
  const strips = components(gap)
  const top = new Int32Array(strips.sizes.length).fill(h)
  const bottom = new Int32Array(strips.sizes.length).fill(-1)
  for (let i = 0; i < n; i++) {
    const l = strips.labels[i]!
    const y = Math.floor(i / w)
    top[l] = Math.min(top[l]!, y)
    bottom[l] = Math.max(bottom[l]!, y)
  }
  const keep = (i: number) => {
    const l = strips.labels[i]!
    return l > 0 && bottom[l]! - top[l]! + 1 >= maxRun
  }
  let opened = 0
  for (let i = 0; i < n; i++) if (keep(i)) opened++
  if (opened === 0) return m
  const shape: Plane = { width: w, height: h, data: m.shape.data.slice() }
  const matte: Plane = { width: w, height: h, data: m.matte.data.slice() }
  for (let i = 0; i < n; i++) {
    if (keep(i)) {
      shape.data[i] = 0
      matte.data[i] = 0
    }
  }
  return { shape, matte }
}

/** Border samples farther than this (RGB distance) from the border's median colour are not backdrop. */
const FIELD_OUTLIER = 0.1
/** Half-window (× the side's length) of the running median along each side of the border ring. */
const FIELD_WINDOW = 1 / 16

/**
 * The backdrop's colour at every pixel (RGB 0..1, interleaved): a Coons patch over the border
 * ring's four sides (the mean of the outer 2 px at each position, then a running median along the
 * side, samples far from the border's median colour — a garment cut by the frame — left out, and
 * gaps bridged linearly between the backdrop on either side). A flat backdrop gives its one colour; a
 * vertical or horizontal light gradient is followed across the photo.
 */
export function backgroundField(img: Rgb): Float32Array {
  const { width: w, height: h, data } = img
  const bg = borderColor(img)
  const px = (x: number, y: number, c: number) => data[(y * w + x) * 3 + c]! / 255
  const side = (len: number, at: (k: number, c: number) => number): Float32Array => {
    const raw: number[][] = []
    for (let k = 0; k < len; k++) {
      const c3 = [at(k, 0), at(k, 1), at(k, 2)]
      const d = Math.hypot(c3[0]! - bg[0], c3[1]! - bg[1], c3[2]! - bg[2])
      raw.push(d <= FIELD_OUTLIER ? c3 : [])
    }
    const half = Math.max(1, Math.round(FIELD_WINDOW * len))
    const out = new Float32Array(len * 3)
    const known = new Uint8Array(len)
    const buf = new Float64Array(2 * half + 1)
    for (let k = 0; k < len; k++) {
      for (let c = 0; c < 3; c++) {
        let nv = 0
        for (let j = Math.max(0, k - half); j <= Math.min(len - 1, k + half); j++) {
          if (raw[j]!.length === 3) buf[nv++] = raw[j]![c]!
        }
        // The upper median (what a sort puts at nv >> 1).
        if (nv > 0) {
          out[k * 3 + c] = selectInPlace(buf.subarray(0, nv), nv >> 1)
          known[k] = 1
        }
      }
    }
    // Where a garment covers a whole window: linear between the backdrop on either side of it (the
    // nearest one at an end, the median colour when the side has none).
    let prev = -1
    for (let k = 0; k <= len; k++) {
      if (k < len && known[k] === 0) continue
      for (let j = prev + 1; j < k; j++) {
        const t = (j - prev) / (k - prev)
        for (let c = 0; c < 3; c++) {
          const a = prev >= 0 ? out[prev * 3 + c]! : k < len ? out[k * 3 + c]! : bg[c]!
          const b = k < len ? out[k * 3 + c]! : a
          out[j * 3 + c] = a + (b - a) * (prev >= 0 && k < len ? t : 0)
        }
      }
      prev = k
    }
    return out
  }
  const ring = (a: number, b: number) => (a + b) / 2
  const top = side(w, (x, c) => ring(px(x, 0, c), px(x, Math.min(1, h - 1), c)))
  const bottom = side(w, (x, c) => ring(px(x, h - 1, c), px(x, Math.max(0, h - 2), c)))
  const left = side(h, (y, c) => ring(px(0, y, c), px(Math.min(1, w - 1), y, c)))
  const right = side(h, (y, c) => ring(px(w - 1, y, c), px(Math.max(0, w - 2), y, c)))
  const corner = (a: Float32Array, i: number, b: Float32Array, j: number, c: number) =>
    (a[i * 3 + c]! + b[j * 3 + c]!) / 2
  const field = new Float32Array(w * h * 3)
  for (let c = 0; c < 3; c++) {
    const c00 = corner(top, 0, left, 0, c)
    const c10 = corner(top, w - 1, right, 0, c)
    const c01 = corner(bottom, 0, left, h - 1, c)
    const c11 = corner(bottom, w - 1, right, h - 1, c)
    for (let y = 0; y < h; y++) {
      const v = h > 1 ? y / (h - 1) : 0
      for (let x = 0; x < w; x++) {
        const u = w > 1 ? x / (w - 1) : 0
        field[(y * w + x) * 3 + c] =
          (1 - v) * top[x * 3 + c]! +
          v * bottom[x * 3 + c]! +
          (1 - u) * left[y * 3 + c]! +
          u * right[y * 3 + c]! -
          ((1 - u) * (1 - v) * c00 + u * (1 - v) * c10 + (1 - u) * v * c01 + u * v * c11)
      }
    }
  }
  return field
}

/**
 * The background's own variation: the 90th percentile of the (smoothed) border ring's distance to
 * the border colour. Past the ring's outer pixel (the smoothing reads beyond it).
 */
function borderSpread(w: number, h: number, dBg: Float32Array): number {
  const d: number[] = []
  for (let x = 1; x < w - 1; x++) d.push(dBg[w + x]!, dBg[(h - 2) * w + x]!)
  for (let y = 2; y < h - 2; y++) d.push(dBg[y * w + 1]!, dBg[y * w + w - 2]!)
  d.sort((a, b) => a - b)
  return d.length === 0 ? 0 : d[Math.floor(0.9 * (d.length - 1))]!
}

/** Fraction of the image the mask covers (> 0.5). */
export function maskArea(m: Plane): number {
  let a = 0
  for (let i = 0; i < m.data.length; i++) if (m.data[i]! > 0.5) a++
  return a / m.data.length
}

/** 2×2 box downsample. */
export function halve(img: Rgb): Rgb {
  const w = img.width >> 1
  const h = img.height >> 1
  const out = new Uint8Array(w * h * 3)
  const W = img.width
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = (2 * y * W + 2 * x) * 3
      const b = a + W * 3
      for (let c = 0; c < 3; c++) {
        out[(y * w + x) * 3 + c] =
          (img.data[a + c]! + img.data[a + 3 + c]! + img.data[b + c]! + img.data[b + 3 + c]! + 2) >>
          2
      }
    }
  }
  return { width: w, height: h, data: out }
}
