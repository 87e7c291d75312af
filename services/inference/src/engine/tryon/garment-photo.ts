/**
 * Garment photos that show the garment worn by a person (`garment_photo_type: model`): find the
 * wearer, decide whether the photo is one, and cut the garment out of the person.
 *
 * - Wearer: BlazePose on the garment photo (blazepose-full on the whole photo — its presence flag
 *   is the person test — then blazepose-heavy on the ROI its alignment points give) with the heavy
 *   pass's segmentation as the person mask.
 * - Worn or not (`auto`): a ghost mannequin or a flat-laid tee can make BlazePose see a torso, but it
 *   has no skin. The photo shows a wearer when at least two of the body's extremities that the pose
 *   puts in the frame (face, each hand, each ankle) lie on the foreground and are skin-coloured
 *   (a broad YCbCr skin rule over a small disc there).
 * - Extraction: the person (foreground ∩ pose segmentation) minus the head (the face, and
 *   everything above the middle of the neck), minus the skin (a chroma model sampled from the face
 *   and hands — each photo's own skin tone, with the broad rule as fallback; on the arms and the
 *   neck down the sternum any skin-rule colour unless a skin-coloured garment colour is nearer),
 *   minus the hands and the feet (below the ankles: shoes). What is left is clothing. Skin seen
 *   through the garment (lace, mesh: enclosed by it left, right and above) is garment again,
 *   repainted in the garment's colour (`seeThrough`, `rgb`). The clothing is split between an
 *   upper garment (colours sampled on the torso between shoulders and hips) and a lower one
 *   (colours sampled on the thighs) by the nearest palette colour, with the hip line as the prior
 *   between them; when the torso's and the thighs' palettes are the same, the model wears one
 *   garment from shoulders to thighs (a dress).
 * - Held objects: a blob by a hand that is not the garment's stuff is an object held or worn
 *   against it (a bag, a phone), not garment: on a patterned garment (a check, a print) a smooth
 *   one, on a plain garment one of a colour the fabric does not take as it shades (`offShading`);
 *   the garment hidden behind it is its outline carried on from the rows above and below, or where
 *   the object hangs past the garment its other side mirrored about the wearer's midline, painted
 *   like see-through skin (`heldObject`, `behindObject`, `mirroredBehind`).
 * - Hands on the garment: the wearer's hand resting on it (on a strap, a lapel) leaves a hole where
 *   the hand cut takes it out and skin where the cut misses its fingers; inside the garment's
 *   outline both are garment, repainted from the fabric beside them (`behindHands`,
 *   `fillFromNeighbours`).
 * - Category (garment_mode `auto`): one garment over torso and thighs → full; only the torso (or
 *   only the legs) in the frame → upper (lower); an outfit of a separate top and bottom → upper
 *   when the frame's bottom edge cuts the bottom garment (framed around the top), upper when the
 *   bottom is jeans under a top that is not denim (`styledWithJeans`), else the garment that
 *   fills more of its own body region (torso and arms for a top, hips and legs for a bottom) — an
 *   outfit shot stays ambiguous, garment_mode picks one explicitly (`decidedBy` says which rule).
 */
import type { ModelSession } from '../session.ts'
import type { GarmentCategory } from './garment-shape.ts'
import {
  cropFromPose,
  cropToTensor,
  decodeLandmarks,
  LM,
  POSE_INPUT,
  segmentationToImage,
  wholeImageCrop,
  type Landmark,
} from './pose.ts'
import { halve } from './garment-mask.ts'
import {
  boxBlur,
  clamp,
  components,
  dilate,
  dist,
  drawCapsule,
  drawEllipse,
  erode,
  fillPolygon,
  lerp,
  mid,
  plane,
  resizePlane,
  type Plane,
  type Point,
  type Rgb,
} from './raster.ts'

export interface WearerModels {
  poseFull: ModelSession
  poseHeavy: ModelSession
}

export interface Wearer {
  points: Landmark[]
  presence: number
  /** Person probability (0..1) from the heavy pass's segmentation. */
  seg: Plane
}

/** Presence flag under which no wearer is taken. */
export const WEARER_MIN_PRESENCE = 0.5
/** A landmark counts when its score is at least this. */
const MIN_SCORE = 0.5
const POSE_OUTPUTS = ['ld_3d', 'output_poseflag', 'activation_segmentation'] as const

/** The person on a garment photo, or null when the pose network finds none. */
export async function findWearer(img: Rgb, models: WearerModels): Promise<Wearer | null> {
  const input = new Float32Array(POSE_INPUT * POSE_INPUT * 3)
  const crop1 = wholeImageCrop(img.width, img.height)
  cropToTensor(img, crop1, input)
  const r1 = await models.poseFull.run(
    { input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } },
    ['ld_3d', 'output_poseflag'],
  )
  const presence = r1.output_poseflag!.data[0]!
  if (presence < WEARER_MIN_PRESENCE) return null
  const crop2 = cropFromPose(decodeLandmarks(r1.ld_3d!.data, crop1))
  cropToTensor(img, crop2, input)
  const r2 = await models.poseHeavy.run(
    { input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } },
    POSE_OUTPUTS,
  )
  const p2 = r2.output_poseflag!.data[0]!
  if (p2 < WEARER_MIN_PRESENCE) return null
  return {
    points: decodeLandmarks(r2.ld_3d!.data, crop2),
    presence: p2,
    seg: segmentationToImage(r2.activation_segmentation!.data, crop2, img.width, img.height),
  }
}

type Rgb3 = [number, number, number]

// ---- skin ---------------------------------------------------------------------------------------

const ycbcr = (r: number, g: number, b: number): [number, number, number] => [
  0.299 * r + 0.587 * g + 0.114 * b,
  128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
  128 + 0.5 * r - 0.418688 * g - 0.081312 * b,
]

/** The broad skin rule (light to dark skin under studio light): chroma in the skin cluster. */
export function skinRule(r: number, g: number, b: number): boolean {
  const [y, cb, cr] = ycbcr(r, g, b)
  return y > 35 && cb >= 77 && cb <= 135 && cr >= 133 && cr <= 180 && cr - cb > 8
}

const inFrame = (p: Point, w: number, h: number): boolean =>
  p.x >= 0 && p.y >= 0 && p.x < w && p.y < h
const seen = (p: Landmark, w: number, h: number): boolean =>
  p.score >= MIN_SCORE && inFrame(p, w, h)

/** Shoulder width of the wearer (or its best stand-in when the shoulders are not both seen). */
export function bodyScale(pts: readonly Landmark[], w: number, h: number): number {
  const sl = pts[LM.leftShoulder]!
  const sr = pts[LM.rightShoulder]!
  if (seen(sl, w, h) && seen(sr, w, h)) return Math.max(dist(sl, sr), 0.02 * Math.max(w, h))
  const hl = pts[LM.leftHip]!
  const hr = pts[LM.rightHip]!
  if (seen(hl, w, h) && seen(hr, w, h)) return Math.max(1.5 * dist(hl, hr), 0.02 * Math.max(w, h))
  return 0.25 * Math.min(w, h)
}

/** Discs where skin shows on almost every wearer: the face below the eyes and the backs of the hands. */
function skinProbeDiscs(
  pts: readonly Landmark[],
  w: number,
  h: number,
  sw: number,
): { c: Point; r: number }[] {
  const out: { c: Point; r: number }[] = []
  const nose = pts[LM.nose]!
  const mouth = mid(pts[LM.mouthLeft]!, pts[LM.mouthRight]!)
  // The face between nose and mouth is skin on every wearer; the hands (their middle, away from
  // the cuffs) only stand in when the face is cropped off.
  if (seen(nose, w, h) && seen(pts[LM.mouthLeft]!, w, h) && seen(pts[LM.mouthRight]!, w, h)) {
    return [{ c: lerp(nose, mouth, 0.4), r: 0.05 * sw }]
  }
  for (const [wr, ix] of [
    [LM.leftWrist, LM.leftIndex],
    [LM.rightWrist, LM.rightIndex],
  ] as const) {
    if (seen(pts[wr]!, w, h)) out.push({ c: lerp(pts[wr]!, pts[ix]!, 0.7), r: 0.035 * sw })
  }
  return out
}

/**
 * The photo's own skin colours: a palette (k-means) of the skin-rule pixels on the face and the
 * hands, so shading and skin tone are the wearer's. Empty when neither is seen.
 */
export function skinPalette(img: Rgb, pts: readonly Landmark[], sw: number): Rgb3[] {
  const { width: w, height: h, data } = img
  const region = plane(w, h)
  for (const { c, r } of skinProbeDiscs(pts, w, h, sw)) {
    for (let y = Math.max(0, Math.floor(c.y - r)); y <= Math.min(h - 1, c.y + r); y++) {
      for (let x = Math.max(0, Math.floor(c.x - r)); x <= Math.min(w - 1, c.x + r); x++) {
        if ((x - c.x) ** 2 + (y - c.y) ** 2 > r * r) continue
        const i = y * w + x
        if (skinRule(data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!)) region.data[i] = 1
      }
    }
  }
  return palette(img, region, 3)
}

// ---- worn or not ---------------------------------------------------------------------------------

export interface WornEvidence {
  /** Extremities (face, hands, ankles) the pose puts in the frame. */
  extremities: number
  /** … of which lie on the foreground and are skin-coloured. */
  skinExtremities: number
  worn: boolean
}

/** Whether the photo shows a person wearing the garment (see the module comment). */
export function wornEvidence(img: Rgb, fg: Plane, wearer: Wearer): WornEvidence {
  const { width: w, height: h, data } = img
  const pts = wearer.points
  const sw = bodyScale(pts, w, h)
  const probes: { c: Point; r: number }[] = []
  const nose = pts[LM.nose]!
  if (seen(nose, w, h)) {
    probes.push({ c: lerp(nose, mid(pts[LM.mouthLeft]!, pts[LM.mouthRight]!), 0.3), r: 0.06 * sw })
  }
  for (const [wr, ix] of [
    [LM.leftWrist, LM.leftIndex],
    [LM.rightWrist, LM.rightIndex],
  ] as const) {
    if (seen(pts[wr]!, w, h)) probes.push({ c: lerp(pts[wr]!, pts[ix]!, 0.5), r: 0.05 * sw })
  }
  for (const [an, kn] of [
    [LM.leftAnkle, LM.leftKnee],
    [LM.rightAnkle, LM.rightKnee],
  ] as const) {
    if (seen(pts[an]!, w, h)) probes.push({ c: lerp(pts[an]!, pts[kn]!, 0.15), r: 0.05 * sw })
  }
  let skinHits = 0
  for (const { c, r } of probes) {
    let n = 0
    let s = 0
    for (let y = Math.max(0, Math.floor(c.y - r)); y <= Math.min(h - 1, c.y + r); y++) {
      for (let x = Math.max(0, Math.floor(c.x - r)); x <= Math.min(w - 1, c.x + r); x++) {
        if ((x - c.x) ** 2 + (y - c.y) ** 2 > r * r) continue
        n++
        const i = y * w + x
        if (fg.data[i]! > 0.5 && skinRule(data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!)) s++
      }
    }
    if (n > 0 && s / n >= 0.3) skinHits++
  }
  return { extremities: probes.length, skinExtremities: skinHits, worn: skinHits >= 2 }
}

// ---- extraction ----------------------------------------------------------------------------------

/** k-means (k ≤ 4) of the colours under `region`, subsampled; clusters under 5 % dropped. */
export function palette(img: Rgb, region: Plane, k = 4): Rgb3[] {
  const idx: number[] = []
  for (let i = 0; i < region.data.length; i++) if (region.data[i]! > 0.5) idx.push(i)
  if (idx.length < 20) return []
  const step = Math.max(1, Math.floor(idx.length / 3000))
  const px: Rgb3[] = []
  for (let j = 0; j < idx.length; j += step) {
    const i = idx[j]! * 3
    px.push([img.data[i]!, img.data[i + 1]!, img.data[i + 2]!])
  }
  // Deterministic start: pixels spread along the luma order.
  const byLuma = [...px].sort((a, b) => a[0] + a[1] + a[2] - (b[0] + b[1] + b[2]))
  let centres: Rgb3[] = Array.from(
    { length: k },
    (_, c) => [...byLuma[Math.floor(((c + 0.5) / k) * (byLuma.length - 1))]!] as Rgb3,
  )
  const assign = new Int32Array(px.length)
  for (let it = 0; it < 8; it++) {
    const sums = centres.map(() => [0, 0, 0, 0])
    px.forEach((p, j) => {
      let best = 0
      let bd = Infinity
      centres.forEach((c, ci) => {
        const d = (p[0] - c[0]) ** 2 + (p[1] - c[1]) ** 2 + (p[2] - c[2]) ** 2
        if (d < bd) {
          bd = d
          best = ci
        }
      })
      assign[j] = best
      const s = sums[best]!
      s[0]! += p[0]
      s[1]! += p[1]
      s[2]! += p[2]
      s[3]! += 1
    })
    centres = centres.map((c, ci) => {
      const s = sums[ci]!
      return s[3]! > 0 ? [s[0]! / s[3]!, s[1]! / s[3]!, s[2]! / s[3]!] : c
    })
  }
  const counts = centres.map(() => 0)
  for (const a of assign) counts[a]!++
  return centres.filter((_, ci) => counts[ci]! >= 0.05 * px.length)
}

const nearest = (pal: readonly Rgb3[], r: number, g: number, b: number): number => {
  let bd = Infinity
  for (const c of pal) {
    bd = Math.min(bd, Math.sqrt((r - c[0]) ** 2 + (g - c[1]) ** 2 + (b - c[2]) ** 2))
  }
  return bd
}

const nearestChroma = (pal: readonly Rgb3[], r: number, g: number, b: number): number => {
  const s = r + g + b + 1e-6
  const pr = r / s
  const pg = g / s
  let bd = Infinity
  for (const c of pal) {
    const cs = c[0] + c[1] + c[2] + 1e-6
    const d = (pr - c[0] / cs) ** 2 + (pg - c[1] / cs) ** 2
    if (d < bd) bd = d
  }
  return Math.sqrt(bd)
}

/** Share of `region`'s pixels within `tol` of a colour of `pal`. */
function coveredBy(img: Rgb, region: Plane, pal: readonly Rgb3[], tol: number): number {
  let n = 0
  let c = 0
  for (let i = 0; i < region.data.length; i += 3) {
    if (region.data[i]! <= 0.5) continue
    n++
    if (nearest(pal, img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!) < tol) c++
  }
  return n === 0 ? 0 : c / n
}

/** RGB distance under which a pixel belongs to a palette's garment. */
const PALETTE_TOL = 48
/**
 * Chromaticity distance (r = R/(R+G+B), g = G/(R+G+B)) to the wearer's skin palette under which a
 * skin-rule colour is skin. Chromaticity, not RGB: shading changes a colour's brightness, and a
 * beige or cream knit is as bright as light skin but less red.
 */
const SKIN_CHROMA_TOL = 0.03
/** Share of skin a hole enclosed by the garment needs to be the wearer seen through it. */
const SEE_THROUGH_SKIN = 0.25
/** How far down from the shoulders to the hips a neckline's bare skin may reach (a deep V). */
const NECKLINE_DEPTH = 0.45
/** Radius (× the shoulder width) of the arm capsules where skin is looked for more loosely. */
const ARM_R_SW = 0.14
/** RGB distance to both garments' palettes past which a pixel belongs to neither (a bag, a belt). */
const OTHER_TOL = 70
/** Vertical runs of the worn garment's mask shorter than this × the shoulder width are dropped. */
const SLIVER_SW = 0.15

/** Clears, column by column, the runs of `m` shorter than `minLen` pixels (in place). */
export function dropSlivers(m: Plane, minLen: number): void {
  const { width: w, height: h, data } = m
  for (let x = 0; x < w; x++) {
    let start = -1
    for (let y = 0; y <= h; y++) {
      const on = y < h && data[y * w + x]! > 0.5
      if (on && start < 0) start = y
      if (!on && start >= 0) {
        if (y - start < minLen) for (let k = start; k < y; k++) data[k * w + x] = 0
        start = -1
      }
    }
  }
}

/** The bottom garment is cut by the frame when it spans this × the shoulder width at the bottom edge. */
const CUT_SW = 0.3

/** Columns of `m` that are on in any of the rows from `y0` to the bottom. */
function rowSpan(m: Plane, y0: number): number {
  let n = 0
  for (let x = 0; x < m.width; x++) {
    for (let y = Math.max(0, y0); y < m.height; y++) {
      if (m.data[y * m.width + x]! > 0.5) {
        n++
        break
      }
    }
  }
  return n
}

/** Longest side the extraction works at. */
export const WORN_SIDE_PX = 400

export interface WornGarment {
  mask: Plane
  /** The category the photo shows (garment_mode auto) and what it was decided from. */
  category: GarmentCategory
  garments: 'one' | 'two' | 'upper-only' | 'lower-only'
  /** Share of the torso (+ arms) region that the upper garment covers, and of hips + legs for the lower. */
  upperFill: number
  lowerFill: number
  /**
   * What decided `category`: the request (garment_mode), which garments are seen (one, or only a
   * top or only a bottom), the framing (the bottom garment cut by the frame's bottom edge), the jeans cue (a top
   * worn with jeans), or the fill comparison.
   */
  decidedBy: 'request' | 'garments' | 'framing' | 'jeans' | 'fill'
  /** The lower garment is a pair of jeans worn under a top that is not denim (`styledWithJeans`). */
  withJeans: boolean
  /** The garment spans the gap between the legs (a skirt or a dress), not two legs. */
  tube: boolean
  /** Where the crotch is on the wearer (hip joints → knees, a fifth of the way), when the hips are seen. */
  crotch?: Point
  /** An object held or worn against the garment (`heldObject`), cut out of `mask`. */
  held: Plane
  /** The garment hidden behind the wearer's hands resting on it (`behindHands`), in `mask`. */
  hands: Plane
  /** Clothing (the person minus head, skin, hands, feet) and the skin found, for tests and sheets. */
  clothing: Plane
  skin: Plane
  /**
   * The wearer's skin seen through the garment (lace, mesh, a sheer panel): the wearer's pixels off
   * the garment (skin, and the thin mesh over it) with the garment
   * left and right of it in its row and above it in its column (`enclosed`). It is
   * garment, not a hole, and the photo's pixels there are repainted in `fillColour` (`rgb`).
   */
  seeThrough: Plane
  /** The garment colour the see-through skin is painted in (the commonest colour around it). */
  fillColour?: Rgb3
  /** The photo with the see-through skin repainted; present only when there is some. */
  rgb?: Uint8Array
}

/**
 * Cuts the garment out of the person on a model photo. `want` is the category to cut (garment_mode),
 * or null to decide it (see the module comment).
 */
export function extractWornGarment(
  img: Rgb,
  fg: Plane,
  wearer: Wearer,
  want: GarmentCategory | null,
): WornGarment {
  // Colour statistics and morphology at ≤ WORN_SIDE_PX (2×2 box-averaged steps); masks upsampled after.
  if (Math.max(img.width, img.height) > WORN_SIDE_PX) {
    const half = halve(img)
    const sx = half.width / img.width
    const sy = half.height / img.height
    const small = extractWornGarment(
      half,
      resizePlane(fg, half.width, half.height),
      {
        ...wearer,
        points: wearer.points.map((p) => ({ ...p, x: p.x * sx, y: p.y * sy })),
        seg: resizePlane(wearer.seg, half.width, half.height),
      },
      want,
    )
    const up = (m: Plane): Plane => {
      const u = resizePlane(m, img.width, img.height)
      // Re-sharpen the bilinear edge to about a pixel of the full size.
      for (let i = 0; i < u.data.length; i++) u.data[i] = clamp((u.data[i]! - 0.5) * 2 + 0.5, 0, 1)
      return u
    }
    const crotch = small.crotch ? { x: small.crotch.x / sx, y: small.crotch.y / sy } : undefined
    const seeThrough = up(small.seeThrough)
    const { rgb: _smallRgb, ...rest } = small
    const hands = up(small.hands)
    const mask = up(small.mask)
    const reach = Math.max(
      2,
      Math.round(HAND_ENCLOSED_SW * bodyScale(wearer.points, img.width, img.height)),
    )
    const rgb = wornRgb(img, mask, seeThrough, small.fillColour, hands, reach)
    return {
      ...rest,
      ...(crotch ? { crotch } : {}),
      ...(rgb ? { rgb } : {}),
      mask,
      held: up(small.held),
      hands,
      clothing: up(small.clothing),
      skin: up(small.skin),
      seeThrough,
    }
  }
  const { width: w, height: h } = img
  const n = w * h
  const pts = wearer.points
  const sw = bodyScale(pts, w, h)
  const P = (i: number) => pts[i]!

  // The person: the photo's foreground where the pose's segmentation agrees.
  const person = plane(w, h)
  const seg = dilate(
    { width: w, height: h, data: wearer.seg.data.map((v) => (v > 0.3 ? 1 : 0)) },
    Math.max(1, Math.round(0.03 * sw)),
  )
  for (let i = 0; i < n; i++) person.data[i] = fg.data[i]! > 0.5 && seg.data[i]! > 0.5 ? 1 : 0

  // Head: the face ellipse and everything above the middle of the neck.
  const head = plane(w, h)
  const sl = P(LM.leftShoulder)
  const sr = P(LM.rightShoulder)
  const shoulderMid = mid(sl, sr)
  const mouth = mid(P(LM.mouthLeft), P(LM.mouthRight))
  const mouthSeen =
    seen(P(LM.mouthLeft), w, h) || seen(P(LM.mouthRight), w, h) || seen(P(LM.nose), w, h)
  const neckY =
    mouthSeen && mouth.y < shoulderMid.y
      ? mouth.y + 0.55 * (shoulderMid.y - mouth.y)
      : shoulderMid.y - 0.3 * sw
  const slope = (sl.y - sr.y) / (sl.x - sr.x || 1e-6)
  const k = clamp(slope, -0.5, 0.5)
  for (let x = 0; x < w; x++) {
    const yCut = Math.min(h, Math.ceil(neckY + k * (x - shoulderMid.x)))
    for (let y = 0; y < yCut; y++) head.data[y * w + x] = 1
  }
  if (mouthSeen) {
    const earSpan = Math.max(dist(P(LM.leftEar), P(LM.rightEar)), 0.35 * sw)
    drawEllipse(head, lerp(P(LM.nose), mouth, 0.2), 0.6 * earSpan, 0.75 * earSpan)
  }

  const skinPal = skinPalette(img, pts, sw)
  // Hands and feet.
  const cut = plane(w, h)
  for (const [wr, ix, pk] of [
    [LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    if (!inFrame(P(wr), w, h)) continue
    const hl = Math.max(dist(P(wr), P(ix)), dist(P(wr), P(pk)), 0.12 * sw)
    drawCapsule(cut, P(wr), lerp(P(wr), P(ix), 1.3), 0.5 * hl)
    drawCapsule(cut, P(wr), lerp(P(wr), P(pk), 1.3), 0.5 * hl)
  }
  // Shoes and the floor's shadow: everything below the ankles.
  const ankles = [P(LM.leftAnkle), P(LM.rightAnkle)].filter((a) => seen(a, w, h))
  if (ankles.length > 0) {
    const ay = Math.round(ankles.reduce((s, a) => s + a.y, 0) / ankles.length)
    for (let i = Math.max(0, ay) * w; i < n; i++) cut.data[i] = 1
  }
  // Clothing candidates: the person minus head, hands and feet (skin is taken out below, once the
  // garments' own colours are known: a beige knit is not skin).
  const clothing = plane(w, h)
  for (let i = 0; i < n; i++) {
    clothing.data[i] = person.data[i]! > 0.5 && head.data[i]! < 0.5 && cut.data[i]! < 0.5 ? 1 : 0
  }

  // Seeds: the torso's centre (between shoulders and hips) and the thighs.
  const hl = P(LM.leftHip)
  const hr = P(LM.rightHip)
  const hipMid = mid(hl, hr)
  const torsoSeen = seen(sl, w, h) && seen(sr, w, h)
  const hipsSeen = seen(hl, w, h) && seen(hr, w, h) && hl.y < h - 0.02 * h
  const upperSeed = plane(w, h)
  if (torsoSeen) {
    // Chest to the middle of the belly: a high-waisted bottom starts above the hip joints.
    const q = [
      lerp(lerp(sr, sl, 0.2), lerp(hr, hl, 0.2), 0.15),
      lerp(lerp(sr, sl, 0.8), lerp(hr, hl, 0.8), 0.15),
      lerp(lerp(sr, sl, 0.8), lerp(hr, hl, 0.8), 0.55),
      lerp(lerp(sr, sl, 0.2), lerp(hr, hl, 0.2), 0.55),
    ]
    fillPolygon(upperSeed, q)
  }
  const lowerSeed = plane(w, h)
  let legsSeen = false
  for (const [hp, kn] of [
    [LM.leftHip, LM.leftKnee],
    [LM.rightHip, LM.rightKnee],
  ] as const) {
    if (!seen(P(hp), w, h) || !inFrame(lerp(P(hp), P(kn), 0.6), w, h)) continue
    legsSeen = true
    drawCapsule(
      lowerSeed,
      lerp(P(hp), P(kn), 0.25),
      lerp(P(hp), P(kn), seen(P(kn), w, h) ? 0.75 : 0.5),
      0.1 * sw,
    )
  }
  for (let i = 0; i < n; i++) {
    upperSeed.data[i] = upperSeed.data[i]! > 0.5 && clothing.data[i]! > 0.5 ? 1 : 0
    lowerSeed.data[i] = lowerSeed.data[i]! > 0.5 && clothing.data[i]! > 0.5 ? 1 : 0
  }
  // The garments' palettes, without the colours that are the wearer's skin (a V-neck, bare legs
  // under a skirt inside the seed regions).
  const isSkinColour = (c: Rgb3) =>
    skinRule(c[0], c[1], c[2]) && nearestChroma(skinPal, c[0], c[1], c[2]) < SKIN_CHROMA_TOL
  const upPal = torsoSeen ? palette(img, upperSeed).filter((c) => !isSkinColour(c)) : []
  const loPal = legsSeen ? palette(img, lowerSeed).filter((c) => !isSkinColour(c)) : []
  // Where bare skin is likely (the arms along their bones, the neck down to the shoulder line) a
  // skin-rule colour is skin unless a garment colour that is itself skin-coloured (a beige knit) is
  // nearer: the shoulders and arms catch other light than the face, and a white or grey garment's
  // chroma is no nearer to them than to the face.
  const skinLikeGarment = [...upPal, ...loPal].filter((c) => skinRule(c[0], c[1], c[2]))
  const limbs = plane(w, h)
  for (const [s, e, wr] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
  ] as const) {
    if (!seen(P(s), w, h)) continue
    drawCapsule(limbs, P(s), P(e), ARM_R_SW * sw)
    drawCapsule(limbs, P(e), P(wr), ARM_R_SW * sw)
  }
  if (torsoSeen) {
    // The neck down to the shoulder line, and the neckline's triangle down the sternum.
    const yTop = Math.max(0, Math.floor(neckY))
    fillPolygon(limbs, [
      { x: sr.x, y: yTop },
      { x: sl.x, y: yTop },
      sl,
      lerp(shoulderMid, hipMid, NECKLINE_DEPTH),
      sr,
    ])
  }
  // Skin: a skin-rule pixel nearer to the skin palette than to either garment's colours.
  const skin = plane(w, h)
  for (let i = 0; i < n; i++) {
    if (clothing.data[i]! < 0.5) continue
    const r = img.data[i * 3]!
    const g = img.data[i * 3 + 1]!
    const b = img.data[i * 3 + 2]!
    if (!skinRule(r, g, b)) continue
    const ds = nearestChroma(skinPal, r, g, b)
    if (limbs.data[i]! > 0.5) {
      if (ds < nearestChroma(skinLikeGarment, r, g, b)) skin.data[i] = 1
    } else if (
      ds < SKIN_CHROMA_TOL &&
      ds < nearestChroma(upPal, r, g, b) &&
      ds < nearestChroma(loPal, r, g, b)
    ) {
      skin.data[i] = 1
    }
  }
  for (let i = 0; i < n; i++) if (skin.data[i]! > 0.5) clothing.data[i] = 0
  const rc = Math.max(1, Math.round(0.01 * sw))
  const opened = dilate(erode(clothing, rc), rc)
  for (let i = 0; i < n; i++) clothing.data[i] = opened.data[i]!

  let garments: WornGarment['garments']
  if (upPal.length > 0 && loPal.length > 0) {
    const same =
      coveredBy(img, lowerSeed, upPal, PALETTE_TOL) >= 0.6 &&
      coveredBy(img, upperSeed, loPal, PALETTE_TOL) >= 0.6
    garments = same ? 'one' : 'two'
  } else garments = upPal.length > 0 ? 'upper-only' : 'lower-only'

  // Split the clothing between the two garments: nearest palette colour, the hip line as the prior
  // (above it a pixel needs to be clearly closer to the lower palette to go there, and below it
  // the reverse).
  const upper = plane(w, h)
  const lower = plane(w, h)
  const hipY = hipsSeen ? hipMid.y : h
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      if (clothing.data[i]! < 0.5) continue
      if (garments !== 'two') {
        if (garments === 'lower-only') lower.data[i] = 1
        else upper.data[i] = 1
        continue
      }
      const du = nearest(upPal, img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)
      const dl = nearest(loPal, img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)
      // Neither garment's colour (a bag, a belt, a third garment): left out.
      if (Math.min(du, dl) > OTHER_TOL) continue
      const bias = y < hipY ? 1.5 : 1 / 1.5
      if (du < dl * bias) upper.data[i] = 1
      else lower.data[i] = 1
    }
  }
  const keepSeeded = (m: Plane, seed: Plane): Plane => {
    const { labels, sizes } = components(m)
    const hit = new Set<number>()
    for (let i = 0; i < n; i++) if (seed.data[i]! > 0.5 && labels[i]! > 0) hit.add(labels[i]!)
    const largest = Math.max(0, ...[...hit].map((l) => sizes[l]!))
    const out = plane(w, h)
    for (let i = 0; i < n; i++) {
      out.data[i] = hit.has(labels[i]!) && sizes[labels[i]!]! >= 0.05 * largest ? 1 : 0
    }
    return out
  }
  const upperM = keepSeeded(upper, upperSeed)
  const lowerM = keepSeeded(lower, lowerSeed)

  // How completely each garment fills its own body region.
  const upperRegion = plane(w, h)
  const lowerRegion = plane(w, h)
  if (torsoSeen) {
    fillPolygon(upperRegion, [
      sr,
      sl,
      hipsSeen ? hl : lerp(sl, hl, 0.5),
      hipsSeen ? hr : lerp(sr, hr, 0.5),
    ])
    for (const [s, e, wr] of [
      [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
      [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
    ] as const) {
      drawCapsule(upperRegion, P(s), P(e), 0.1 * sw)
      drawCapsule(upperRegion, P(e), P(wr), 0.08 * sw)
    }
  }
  if (hipsSeen) {
    for (const [hp, kn, an] of [
      [LM.leftHip, LM.leftKnee, LM.leftAnkle],
      [LM.rightHip, LM.rightKnee, LM.rightAnkle],
    ] as const) {
      drawCapsule(lowerRegion, P(hp), P(kn), 0.13 * sw)
      drawCapsule(lowerRegion, P(kn), P(an), 0.09 * sw)
    }
  }
  const fill = (m: Plane, region: Plane): number => {
    let a = 0
    let b = 0
    for (let i = 0; i < n; i++) {
      if (region.data[i]! <= 0.5 || person.data[i]! <= 0.5) continue
      a++
      if (m.data[i]! > 0.5) b++
    }
    return a === 0 ? 0 : b / a
  }
  const upperFill = fill(upperM, upperRegion)
  const lowerFill = fill(lowerM, lowerRegion)

  // An outfit of a top and a bottom. The photo is framed around the top when its bottom edge cuts
  // the bottom garment (its hem is not in the frame: the top is shown whole, the bottom is not); a
  // top worn with jeans is the product (the jeans are the styling, see `styledWithJeans`); else the
  // garment that fills more of its own body region.
  const bottomCut =
    garments === 'two' && rowSpan(lowerM, h - 1 - Math.round(0.01 * h)) >= CUT_SW * sw
  const withJeans = garments === 'two' && hipsSeen && styledWithJeans(img, upperM, lowerM, pts)
  let category: GarmentCategory
  let decidedBy: WornGarment['decidedBy']
  if (want !== null) [category, decidedBy] = [want, 'request']
  else if (garments === 'one') [category, decidedBy] = ['full', 'garments']
  else if (garments === 'upper-only') [category, decidedBy] = ['upper', 'garments']
  else if (garments === 'lower-only') [category, decidedBy] = ['lower', 'garments']
  else if (bottomCut) [category, decidedBy] = ['upper', 'framing']
  else if (withJeans) [category, decidedBy] = ['upper', 'jeans']
  else [category, decidedBy] = [upperFill >= lowerFill ? 'upper' : 'lower', 'fill']

  let mask: Plane
  if (category === 'full') {
    mask = plane(w, h)
    for (let i = 0; i < n; i++) {
      mask.data[i] = upperM.data[i]! > 0.5 || lowerM.data[i]! > 0.5 ? 1 : 0
    }
  } else mask = category === 'upper' ? upperM : lowerM
  // Clean edges: close pinholes, drop crumbs, soften by a pixel.
  const r = Math.max(1, Math.round(0.01 * sw))
  mask = erode(dilate(mask, r), r)
  // An object held or worn against the garment (a bag at the hip), by a hand.
  const seed = category === 'upper' ? upperSeed : category === 'lower' ? lowerSeed : upperSeed
  // It hides part of the garment: what lies inside the garment's outline, carried on straight from
  // the rows above and below the object, is garment painted in its colour like the see-through skin.
  const held = heldObject(img, mask, seed, pts, sw)
  for (let i = 0; i < n; i++) if (held.data[i]! > 0.5) mask.data[i] = 0
  const hidden = behindObject(mask, held, Math.round(0.3 * sw))
  // An object that hangs past the garment (a shoulder bag below a short top) leaves no rows below
  // it to carry the outline to: there the garment's other side, mirrored, says what it hides.
  const mirrored = mirroredBehind(mask, held, pts, sw)
  for (let i = 0; i < n; i++) if (mirrored.data[i]! > 0.5) hidden.data[i] = 1
  // The wearer's hand resting on the garment (on a strap, a lapel, a button) hides it too: the hand
  // and the wrist the hand cut takes out leave a hole in it, and fingers the cut misses are skin
  // on it. Inside the garment's outline both are garment, repainted from the fabric beside them.
  // Skin on it: a skin-rule pixel redder (Cr − Cb) than nine in ten of the garment's pixels by
  // HAND_REDDER — a fabric's shading keeps its own chroma, a hand on it is the wearer's skin.
  const redness = (i: number) => {
    const [, cb, cr] = ycbcr(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)
    return cr - cb
  }
  const own: number[] = []
  for (let i = 0; i < n; i++) if (mask.data[i]! > 0.5) own.push(redness(i))
  own.sort((p, q) => p - q)
  const ownRed = own.length > 0 ? own[Math.floor(0.9 * (own.length - 1))]! : Infinity
  const bodySkin = (i: number) =>
    skinRule(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!) &&
    redness(i) > ownRed + HAND_REDDER
  const hands = behindHands(mask, person, pts, sw, bodySkin)
  // Skin seen through the garment (lace, mesh): garment, painted in the garment's colour.
  // Candidates: the wearer's pixels the garment leaves out (skin, and the thin mesh over it that the
  // opening above takes away), not the head, the hands or the feet.
  const bare = plane(w, h)
  for (let i = 0; i < n; i++) {
    bare.data[i] =
      person.data[i]! > 0.5 && head.data[i]! < 0.5 && cut.data[i]! < 0.5 && fg.data[i]! > 0.5
        ? 1
        : 0
  }
  const seeThrough = enclosed(mask, bare)
  // … where skin shows: a hole without skin (the backdrop between two trouser legs) stays a hole.
  {
    const { labels, sizes } = components(seeThrough)
    const skinIn = new Float64Array(sizes.length)
    for (let i = 0; i < n; i++) {
      const l = labels[i]!
      if (l > 0 && skin.data[i]! > 0.5) skinIn[l] = skinIn[l]! + 1
    }
    for (let i = 0; i < n; i++) {
      const l = labels[i]!
      if (l > 0 && skinIn[l]! < SEE_THROUGH_SKIN * sizes[l]!) seeThrough.data[i] = 0
    }
  }
  for (let i = 0; i < n; i++) if (hidden.data[i]! > 0.5) seeThrough.data[i] = 1
  for (let i = 0; i < n; i++) if (hands.data[i]! > 0.5) seeThrough.data[i] = 0
  const fillColour = commonBorderColour(img, mask, seeThrough)
  for (let i = 0; i < n; i++) if (seeThrough.data[i]! > 0.5) mask.data[i] = 1
  const handReach = Math.max(2, Math.round(HAND_ENCLOSED_SW * sw))
  const rgb = wornRgb(img, mask, seeThrough, fillColour, hands, handReach)
  for (let i = 0; i < n; i++) if (hands.data[i]! > 0.5) mask.data[i] = 1
  // Horizontal slivers (a floor shadow beside the feet, a strip of background between an arm and
  // the body): in each column, runs shorter than SLIVER_SW × the shoulder width are not garment.
  // Every part of a worn garment is taller than that (a strap is long, an arm or a hem is thick).
  dropSlivers(mask, Math.max(2, Math.round(SLIVER_SW * sw)))
  // … and the crumbs that leaves apart from the garment.
  {
    const { labels, sizes } = components(mask)
    const largest = Math.max(0, ...sizes.slice(1))
    for (let i = 0; i < n; i++) if (sizes[labels[i]!]! < 0.05 * largest) mask.data[i] = 0
  }

  const tube = category !== 'lower' || (hipsSeen && isTube(mask, pts))
  // The crotch on the body: a fifth of the way from the hip joints to the knees.
  const crotch = hipsSeen ? lerp(hipMid, mid(P(LM.leftKnee), P(LM.rightKnee)), 0.2) : undefined
  return {
    mask,
    category,
    garments,
    upperFill,
    lowerFill,
    decidedBy,
    withJeans,
    tube,
    ...(crotch ? { crotch } : {}),
    held,
    clothing,
    skin,
    seeThrough,
    hands,
    ...(fillColour ? { fillColour } : {}),
    ...(rgb ? { rgb } : {}),
  }
}

/**
 * Whether the garment spans the gap between the legs (a skirt or a dress: one tube), not two legs.
 * Sampled on the midline between the two legs (hip → knee → ankle), from a third of the way to
 * the knees down to the garment's hem: thighs may touch inside trousers, but somewhere above the
 * hem a gap shows.
 */
export function isTube(m: Plane, pts: readonly Landmark[]): boolean {
  const { width: w, height: h } = m
  const P = (i: number) => pts[i]!
  const along = (hp: Point, kn: Point, an: Point, t: number) =>
    t <= 1 ? lerp(hp, kn, t) : lerp(kn, an, t - 1)
  let on = 0
  let all = 0
  for (let t = 0.35; t <= 2.001; t += 0.05) {
    const a = along(P(LM.leftHip), P(LM.leftKnee), P(LM.leftAnkle), t)
    const b = along(P(LM.rightHip), P(LM.rightKnee), P(LM.rightAnkle), t)
    if (!inFrame(a, w, h) || !inFrame(b, w, h)) break
    const c = mid(a, b)
    const xi = Math.round(c.x)
    const yi = Math.round(c.y)
    if (xi < 0 || yi < 0 || xi >= w || yi >= h) continue
    // Past the garment's hem on both legs: stop.
    if (
      m.data[Math.round(a.y) * w + Math.round(a.x)]! <= 0.5 &&
      m.data[Math.round(b.y) * w + Math.round(b.x)]! <= 0.5
    ) {
      break
    }
    all++
    if (m.data[yi * w + xi]! > 0.5) on++
  }
  return all > 0 && on / all >= 0.85
}

/** Mean colour of the photo under `m`, as hue (degrees) and saturation (HSV), or null when empty. */
function meanHueSat(img: Rgb, m: Plane): { hue: number; sat: number } | null {
  let n = 0
  let r = 0
  let g = 0
  let b = 0
  for (let i = 0; i < m.data.length; i++) {
    if (m.data[i]! <= 0.5) continue
    n++
    r += img.data[i * 3]!
    g += img.data[i * 3 + 1]!
    b += img.data[i * 3 + 2]!
  }
  if (n === 0) return null
  ;[r, g, b] = [r / n, g / n, b / n]
  const mx = Math.max(r, g, b)
  const d = mx - Math.min(r, g, b)
  if (d === 0) return { hue: 0, sat: 0 }
  const hue =
    mx === r
      ? 60 * (((g - b) / d + 6) % 6)
      : mx === g
        ? 60 * ((b - r) / d + 2)
        : 60 * ((r - g) / d + 4)
  return { hue, sat: d / mx }
}

/** Denim blue: the mean colour's hue and saturation (washed light blue to dark indigo). */
export const DENIM_HUE: readonly [number, number] = [195, 245]
export const DENIM_SAT: readonly [number, number] = [0.12, 0.7]
const isDenim = (c: { hue: number; sat: number } | null): boolean =>
  c !== null &&
  c.hue >= DENIM_HUE[0] &&
  c.hue <= DENIM_HUE[1] &&
  c.sat >= DENIM_SAT[0] &&
  c.sat <= DENIM_SAT[1]

/**
 * An outfit photo of a top worn with jeans: the lower garment is two legs of denim blue and the
 * top is not denim. Jeans are what a product photo of a top is most often styled with, so the
 * top is the product (an on-model photo of jeans is usually framed around them: cropped at the
 * chest, or the top is not seen whole). The fill comparison alone picks the jeans on such photos:
 * legs in trousers fill their region almost completely, a top's region is broken by the arms,
 * skin, an open front or a bag. A denim top over jeans, or a blue skirt, is no such outfit.
 */
export function styledWithJeans(
  img: Rgb,
  upper: Plane,
  lower: Plane,
  pts: readonly Landmark[],
): boolean {
  return isDenim(meanHueSat(img, lower)) && !isDenim(meanHueSat(img, upper)) && !isTube(lower, pts)
}

/** A garment this textured (median of `texture` over its seed) is patterned: a print, a check. */
const PATTERNED = 0.35
/** On a patterned garment, texture under this share of the garment's is a smooth object's. */
const SMOOTH_SHARE = 0.3
/** A held object lies within this × the shoulder width of a wrist. */
const HELD_REACH_SW = 1.3
/** … and is at least this × the shoulder width across (both ways: area ≥ its square). */
const HELD_MIN_SW = 0.2
/**
 * On a plain garment, a colour this far (log-chroma, box-averaged) from the garment's own colour at
 * its brightness is another object's (a bag, a phone, a cup). The shading of a cream knit runs from
 * cream to tan; a pale pink leather bag at the same brightness is pinker (0.05–0.17 off against
 * the knit's ≤ 0.03, tryon/garment_upper_08).
 */
export const OFF_CHROMA = 0.03

/**
 * Local colour texture: the summed absolute RGB differences to the right and below (0..6 per
 * pixel, /255), box-averaged over radius `r`.
 */
export function texture(img: Rgb, r: number): Plane {
  const { width: w, height: h, data } = img
  const g = plane(w, h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      let s = 0
      for (let c = 0; c < 3; c++) {
        const v = data[i * 3 + c]!
        if (x + 1 < w) s += Math.abs(data[(i + 1) * 3 + c]! - v)
        if (y + 1 < h) s += Math.abs(data[(i + w) * 3 + c]! - v)
      }
      g.data[i] = s / 255
    }
  }
  return boxBlur(g, r)
}

/**
 * How far each pixel's colour is from the colours the garment takes as it shades: a fabric keeps
 * its hue from light to shadow (a cream knit runs to tan along one line in log-chroma, ln R − ln G
 * against ln B − ln G), another material beside it lies off that line. The line is fitted to
 * `region`'s pixels (principal axis, refitted twice on the pixels within twice the median
 * distance, so an object that covers part of the region does not pull it); the result is each
 * pixel's distance to it, or null when `region` is too small.
 */
export function offShading(img: Rgb, region: Plane): Plane | null {
  const { width: w, height: h, data } = img
  const n = w * h
  const U = new Float32Array(n)
  const V = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    const g = Math.log(data[i * 3 + 1]! + 8)
    U[i] = Math.log(data[i * 3]! + 8) - g
    V[i] = Math.log(data[i * 3 + 2]! + 8) - g
  }
  let idx: number[] = []
  for (let i = 0; i < n; i++) if (region.data[i]! > 0.5) idx.push(i)
  if (idx.length < 50) return null
  let line = { cu: 0, cv: 0, nu: 0, nv: 1 }
  const distTo = (i: number) => Math.abs((U[i]! - line.cu) * line.nu + (V[i]! - line.cv) * line.nv)
  for (let it = 0; it < 3; it++) {
    let cu = 0
    let cv = 0
    for (const i of idx) {
      cu += U[i]!
      cv += V[i]!
    }
    cu /= idx.length
    cv /= idx.length
    let suu = 0
    let svv = 0
    let suv = 0
    for (const i of idx) {
      const du = U[i]! - cu
      const dv = V[i]! - cv
      suu += du * du
      svv += dv * dv
      suv += du * dv
    }
    // Principal axis angle; the line's normal is perpendicular to it.
    const th = 0.5 * Math.atan2(2 * suv, suu - svv)
    line = { cu, cv, nu: -Math.sin(th), nv: Math.cos(th) }
    const d = idx.map(distTo).sort((p, q) => p - q)
    const keep = 2 * d[d.length >> 1]!
    const next = idx.filter((i) => distTo(i) <= keep)
    if (next.length < 50) break
    idx = next
  }
  const out = plane(w, h)
  for (let i = 0; i < n; i++) out.data[i] = distTo(i)
  return out
}

/**
 * An object held or worn against the garment (a bag, a clutch, a phone, a cup): the parts of `m`
 * within HELD_REACH_SW × the shoulder width of a wrist that are not the garment's stuff, in a blob
 * at least HELD_MIN_SW across, grown by the texture window (its outline). Not the garment's stuff:
 * on a patterned garment, smooth (texture under SMOOTH_SHARE of the garment's own, measured on
 * `seed`); on a plain one, another colour than the garment takes at that brightness (`offShading`
 * over OFF_CHROMA). A patterned garment's colours are many (a print's): only its texture tells.
 */
export function heldObject(
  img: Rgb,
  m: Plane,
  seed: Plane,
  pts: readonly Landmark[],
  sw: number,
): Plane {
  const { width: w, height: h } = m
  const n = w * h
  const out = plane(w, h)
  const rt = Math.max(1, Math.round(0.05 * sw))
  const t = texture(img, rt)
  const own: number[] = []
  const seedOn = plane(w, h)
  for (let i = 0; i < n; i++) {
    if (seed.data[i]! > 0.5 && m.data[i]! > 0.5) {
      own.push(t.data[i]!)
      seedOn.data[i] = 1
    }
  }
  if (own.length < 20) return out
  own.sort((a, b) => a - b)
  const level = own[Math.floor(own.length / 2)]!
  let foreign: (i: number) => boolean
  if (level >= PATTERNED) foreign = (i) => t.data[i]! < SMOOTH_SHARE * level
  else {
    const off = offShading(img, m)
    if (off === null) return out
    const offAvg = boxBlur(off, Math.max(1, Math.round(0.5 * rt)))
    // Plain: most of the garment lies on its line (half of it within OFF_CHROMA / 2).
    const d: number[] = []
    for (let i = 0; i < n; i++) if (m.data[i]! > 0.5) d.push(offAvg.data[i]!)
    d.sort((p, q) => p - q)
    if (d[d.length >> 1]! >= OFF_CHROMA / 2) return out
    foreign = (i) => offAvg.data[i]! > OFF_CHROMA
  }
  const reach = plane(w, h)
  for (const wr of [LM.leftWrist, LM.rightWrist]) {
    const p = pts[wr]!
    if (p.score >= MIN_SCORE) drawEllipse(reach, p, HELD_REACH_SW * sw, HELD_REACH_SW * sw)
  }
  let cand = plane(w, h)
  for (let i = 0; i < n; i++) {
    cand.data[i] = m.data[i]! > 0.5 && reach.data[i]! > 0.5 && foreign(i) ? 1 : 0
  }
  // At least HELD_MIN_SW across both ways: what survives an erosion by half of it (a strap, a
  // crease's shadow and a seam are thinner), grown back.
  const rHalf = Math.max(1, Math.round(0.5 * HELD_MIN_SW * sw))
  const core = erode(cand, rHalf)
  const back = dilate(core, rHalf)
  for (let i = 0; i < n; i++) cand.data[i] = back.data[i]! > 0.5 && cand.data[i]! > 0.5 ? 1 : 0
  const { labels, sizes } = components(cand)
  const minArea = (HELD_MIN_SW * sw) ** 2
  for (let i = 0; i < n; i++) out.data[i] = labels[i]! > 0 && sizes[labels[i]!]! >= minArea ? 1 : 0
  cand = dilate(out, rt + 1)
  for (let i = 0; i < n; i++) cand.data[i] = cand.data[i]! > 0.5 && m.data[i]! > 0.5 ? 1 : 0
  return cand
}

/**
 * The garment's outline past an object held against it (`obj`): in each run of rows the object
 * touches, widened by `margin` rows (the object's rim that was left on the garment), the outline's
 * left and right ends are carried on straight from the row above the run to the row below it.
 * Returns the object's pixels inside that outline (the garment hidden behind it); the pixels of `m`
 * outside it (what is left of the object's rim) are cleared, in place.
 */
export function behindObject(m: Plane, obj: Plane, margin: number): Plane {
  const { width: w, height: h } = m
  const out = plane(w, h)
  const ends = (y: number): [number, number] | null => {
    let l = -1
    let r = -1
    for (let x = 0; x < w; x++) {
      if (m.data[y * w + x]! > 0.5) {
        if (l < 0) l = x
        r = x
      }
    }
    return l < 0 ? null : [l, r]
  }
  const touched = new Uint8Array(h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (obj.data[y * w + x]! > 0.5) {
        for (let k = Math.max(0, y - margin); k <= Math.min(h - 1, y + margin); k++) touched[k] = 1
        break
      }
    }
  }
  for (let y = 0; y < h; y++) {
    if (!touched[y]) continue
    let y1 = y
    while (y1 + 1 < h && touched[y1 + 1]) y1++
    const a = y > 0 ? ends(y - 1) : null
    const b = y1 + 1 < h ? ends(y1 + 1) : null
    if (a && b) {
      for (let yy = y; yy <= y1; yy++) {
        const t = (yy - y + 1) / (y1 - y + 2)
        const l = a[0] + t * (b[0] - a[0])
        const r = a[1] + t * (b[1] - a[1])
        for (let x = 0; x < w; x++) {
          const i = yy * w + x
          const inside = x >= l && x <= r
          if (!inside) m.data[i] = 0
          else if (obj.data[i]! > 0.5) out.data[i] = 1
        }
      }
    }
    y = y1
  }
  return out
}

/**
 * The garment hidden behind a held object (`obj`), from the garment's other side: the object's
 * pixels whose mirror image about the wearer's midline (shoulder centre → hip centre, per row) is
 * on `m` in a run that reaches the midline (within 0.1 × the shoulder width): a garment is
 * left-right symmetric on the body, and its body's rows cross the midline — a sleeve hanging below
 * the hem on the other side does not.
 */
export function mirroredBehind(m: Plane, obj: Plane, pts: readonly Landmark[], sw: number): Plane {
  const { width: w, height: h } = m
  const out = plane(w, h)
  const P = (i: number) => pts[i]!
  const sure = (...ix: number[]) => ix.every((i) => P(i).score >= MIN_SCORE)
  if (!sure(LM.leftShoulder, LM.rightShoulder, LM.leftHip, LM.rightHip)) return out
  const sm = mid(P(LM.leftShoulder), P(LM.rightShoulder))
  const hm = mid(P(LM.leftHip), P(LM.rightHip))
  if (hm.y - sm.y <= 1) return out
  const near = Math.max(1, Math.round(0.1 * sw))
  const on = (y: number, x: number) => x >= 0 && x < w && m.data[y * w + x]! > 0.5
  for (let y = 0; y < h; y++) {
    const mx = Math.round(sm.x + ((hm.x - sm.x) * (y - sm.y)) / (hm.y - sm.y))
    for (let x = 0; x < w; x++) {
      if (obj.data[y * w + x]! <= 0.5) continue
      const xm = Math.round(2 * mx - x)
      if (!on(y, xm)) continue
      // Along the row from the image towards the midline, on the garment until near it.
      const dir = Math.sign(mx - xm)
      let k = xm
      while (on(y, k + dir) && Math.abs(mx - k) > near) k += dir
      if (Math.abs(mx - k) <= near) out.data[y * w + x] = 1
    }
  }
  return out
}

/** A hand's zone reaches this × the shoulder width past its cut (the pose's hand points miss by as much). */
const HAND_MARGIN_SW = 0.25
/** Skin on the garment by a hand is this much redder (Cr − Cb, 0..255 scale) than the garment's 90th percentile. */
const HAND_REDDER = 5
/** Garment within this × the shoulder width left, right and above encloses a hand resting on it. */
const HAND_ENCLOSED_SW = 0.5

/**
 * The garment hidden behind the wearer's hands resting on it (holding a strap, a lapel): in each
 * seen hand's zone (the hand cut, wrist → 1.3 × index and pinky, grown by HAND_MARGIN_SW × the
 * shoulder width), the wearer's pixels off `m` and the skin on it (`isSkin`, by pixel index) that
 * the rest of `m` encloses — on in their row on both sides and in their column above, each within
 * HAND_ENCLOSED_SW × the shoulder width. A hand hanging beside the garment, below its hem or on
 * its edge has no garment on one side; the backdrop between an arm and the body is not the wearer.
 */
export function behindHands(
  m: Plane,
  person: Plane,
  pts: readonly Landmark[],
  sw: number,
  isSkin: (i: number) => boolean,
): Plane {
  const { width: w, height: h } = m
  const n = w * h
  const out = plane(w, h)
  const zone = plane(w, h)
  for (const [wr, ix, pk] of [
    [LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    const p = pts[wr]!
    if (!seen(p, w, h)) continue
    const hl = Math.max(dist(p, pts[ix]!), dist(p, pts[pk]!), 0.12 * sw)
    const r = 0.5 * hl + HAND_MARGIN_SW * sw
    drawCapsule(zone, p, lerp(p, pts[ix]!, 1.3), r)
    drawCapsule(zone, p, lerp(p, pts[pk]!, 1.3), r)
  }
  const body = plane(w, h)
  const cand = plane(w, h)
  let any = false
  for (let i = 0; i < n; i++) {
    const onM = m.data[i]! > 0.5
    const inZone = zone.data[i]! > 0.5
    const c = inZone && (onM ? isSkin(i) : person.data[i]! > 0.5)
    cand.data[i] = c ? 1 : 0
    body.data[i] = onM && !c ? 1 : 0
    if (c) any = true
  }
  if (!any) return out
  const R = Math.max(2, Math.round(HAND_ENCLOSED_SW * sw))
  const on = (x: number, y: number) => body.data[y * w + x]! > 0.5
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (cand.data[y * w + x]! <= 0.5) continue
      let left = false
      for (let k = x - 1; k >= Math.max(0, x - R) && !left; k--) left = on(k, y)
      if (!left) continue
      let right = false
      for (let k = x + 1; k <= Math.min(w - 1, x + R) && !right; k++) right = on(k, y)
      if (!right) continue
      let above = false
      for (let k = y - 1; k >= Math.max(0, y - R) && !above; k--) above = on(x, k)
      if (above) out.data[y * w + x] = 1
    }
  }
  return out
}

/**
 * The photo with the garment's hidden parts repainted, or undefined when there are none: the
 * see-through skin in `fill` (`paintSeeThrough`), and the garment behind the hands from the fabric
 * beside them (`fillFromNeighbours`).
 */
function wornRgb(
  img: Rgb,
  m: Plane,
  see: Plane,
  fill: Rgb3 | undefined,
  hands: Plane,
  reach: number,
): Uint8Array | undefined {
  const anyHand = hands.data.some((a) => a > 0.5)
  if (!fill && !anyHand) return undefined
  const out = fill ? paintSeeThrough(img, see, fill) : Uint8Array.from(img.data)
  if (anyHand) fillFromNeighbours(img, out, m, hands, reach)
  return out
}

/**
 * Repaints `region` in `out` from the garment around it: each pixel the inverse-distance mean of
 * the nearest garment pixels (on `m`, off `region`) left, right, above and below it within
 * `reach`, each taken two pixels further in where the garment goes on (past the outline's fringe),
 * from `img`; blended by the region's softness. The fabric's colour and its shading across the
 * hole carry on; a direction without garment within reach adds nothing.
 */
export function fillFromNeighbours(
  img: Rgb,
  out: Uint8Array,
  m: Plane,
  region: Plane,
  reach: number,
): void {
  const { width: w, height: h } = img
  const src = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < w && y < h && m.data[y * w + x]! > 0.5 && region.data[y * w + x]! <= 0.5
  const dirs = [
    [-1, 0],
    [1, 0],
    [0, -1],
    [0, 1],
  ] as const
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      const a = region.data[i]!
      if (a <= 0) continue
      const acc = [0, 0, 0]
      let wsum = 0
      for (const [dx, dy] of dirs) {
        let d = 1
        while (d <= reach && !src(x + d * dx, y + d * dy)) d++
        if (d > reach) continue
        const d2 = src(x + (d + 2) * dx, y + (d + 2) * dy) ? d + 2 : d
        const j = (y + d2 * dy) * w + x + d2 * dx
        const wt = 1 / d
        for (let c = 0; c < 3; c++) acc[c] = acc[c]! + wt * img.data[j * 3 + c]!
        wsum += wt
      }
      if (wsum === 0) continue
      for (let c = 0; c < 3; c++) {
        out[i * 3 + c] = Math.round((1 - a) * out[i * 3 + c]! + (a * acc[c]!) / wsum)
      }
    }
  }
}

/**
 * Pixels of `skin` (the wearer's pixels off the garment) with `m` on in their row on both sides and in their column above. Not below: the
 * legs seen through a lace skirt run on through its scalloped hem. A V-neck has no garment above it
 * (the head is cut off), bare arms and legs below the hem none beside them.
 */
export function enclosed(m: Plane, skin: Plane): Plane {
  const { width: w, height: h } = m
  const out = plane(w, h)
  const on = (i: number) => m.data[i]! > 0.5
  const left = new Int8Array(w * h)
  const above = new Int8Array(w * h)
  for (let y = 0; y < h; y++) {
    let seenL = 0
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      left[i] = seenL
      if (on(i)) seenL = 1
    }
  }
  for (let x = 0; x < w; x++) {
    let seenA = 0
    for (let y = 0; y < h; y++) {
      const i = y * w + x
      above[i] = seenA
      if (on(i)) seenA = 1
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x
      if (skin.data[i]! <= 0.5 || on(i) || !left[i] || !above[i]) continue
      let right = false
      for (let k = x + 1; k < w && !right; k++) right = on(y * w + k)
      if (right) out.data[i] = 1
    }
  }
  return out
}

/**
 * The commonest garment colour (3-colour palette, largest cluster) on the garment pixels beside
 * the see-through skin — the lace or mesh that lies over it — or undefined when there is none.
 */
function commonBorderColour(img: Rgb, m: Plane, see: Plane): Rgb3 | undefined {
  const { width: w, height: h } = m
  const near = dilate(see, 2)
  const border = plane(w, h)
  let count = 0
  for (let i = 0; i < w * h; i++) {
    if (see.data[i]! > 0.5) count++
    border.data[i] = near.data[i]! > 0.5 && see.data[i]! <= 0.5 && m.data[i]! > 0.5 ? 1 : 0
  }
  if (count === 0) return undefined
  const pal = palette(img, border, 3)
  if (pal.length === 0) return undefined
  const votes = pal.map(() => 0)
  for (let i = 0; i < w * h; i++) {
    if (border.data[i]! <= 0.5) continue
    const r = img.data[i * 3]!
    const g = img.data[i * 3 + 1]!
    const b = img.data[i * 3 + 2]!
    let best = 0
    let bd = Infinity
    pal.forEach((c, ci) => {
      const d = (r - c[0]) ** 2 + (g - c[1]) ** 2 + (b - c[2]) ** 2
      if (d < bd) {
        bd = d
        best = ci
      }
    })
    votes[best]!++
  }
  return pal[votes.indexOf(Math.max(...votes))]
}

/**
 * A copy of the photo with the see-through skin painted in `c`, shaded by each pixel's brightness
 * relative to the see-through skin's mean (folds stay), blended by the see-through mask's softness.
 */
export function paintSeeThrough(img: Rgb, see: Plane, c: Rgb3): Uint8Array {
  const out = Uint8Array.from(img.data)
  const luma = (i: number) =>
    0.299 * img.data[i * 3]! + 0.587 * img.data[i * 3 + 1]! + 0.114 * img.data[i * 3 + 2]!
  let sum = 0
  let cnt = 0
  for (let i = 0; i < see.data.length; i++) {
    if (see.data[i]! > 0.5) {
      sum += luma(i)
      cnt++
    }
  }
  if (cnt === 0) return out
  const mean = sum / cnt
  for (let i = 0; i < see.data.length; i++) {
    const a = see.data[i]!
    if (a <= 0) continue
    const k = clamp(luma(i) / Math.max(1, mean), 0.6, 1.4)
    for (let ch = 0; ch < 3; ch++) {
      out[i * 3 + ch] = Math.round((1 - a) * img.data[i * 3 + ch]! + a * clamp(c[ch]! * k, 0, 255))
    }
  }
  return out
}
