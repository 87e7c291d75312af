/**
 * What the person wears now: a segmentation of the person photo into skin, the old top, the old
 * bottom and hair, seeded by the pose (stage 4 input, used by composite.ts to take the old garment
 * off before the new one is drawn).
 *
 * Contract — in: the person photo and its analysis (landmarks, selfie mask, head / hands / arms
 * regions). Out (`Clothing`, planes at the photo's size, 0..1): `skin`, `upper` (the old top,
 * sleeves included), `lower` (the old trousers / skirt / shorts, or the part of a dress below the
 * hips), `hairFront` (hair that falls below the neck line in front of the shoulders or chest), the
 * skin prototypes found, and the old top's hem height on the body axis.
 *
 * How (on a work grid of WORK_SIDE px on the long side, planes upsampled bilinearly):
 * 1. Colour features per pixel: CIE L*a*b* with the chroma divided by lightness (`ca`, `cb`), which
 *    is nearly constant when the light on a surface changes (a fold, a shadow), plus L* itself at a
 *    low weight (L_WEIGHT): shading moves a pixel little, a different material moves it far.
 * 2. Seeds from the pose, each a small disc: skin on the face (cheeks, upper lip), the neck, the
 *    palms and — when they pass the skin test — forearms, upper arms and shins; the old top on a
 *    grid inside the torso quadrilateral (shoulders → hips) and on the upper arms; the old bottom on
 *    the thighs; hair in the head region above the eyes and beside the face (not backdrop-coloured). Skin seeds are kept only when their hue
 *    lies in the range of human skin of every tone (Lab hue 15°–85°, chroma 6–60) and near the
 *    robust centre of the face / hand seeds (the face wins over a beige sleeve); top and bottom
 *    seeds that look like that skin are dropped (a V-neck, bare legs under shorts).
 * 3. Each class is summarised by up to PROTOTYPES colour prototypes (k-means on its seeds; skin:
 *    the person's own skin prototypes, `skinProtos`); each pixel of the person mask goes to the
 *    class of its nearest prototype (skin: the strict test above, or its distance to `skinProtos`
 *    plus SKIN_PROTO_MARGIN where that is under SKIN_PROTO_R and under the distance to every
 *    garment prototype, top's and bottom's alike, so pale shins below beige shorts are skin and
 *    the shorts' shaded folds are not), with spatial rules from
 *    the pose: the split between top and bottom is where the top's colours end on the body axis,
 *    or the hip line when they run on well into the thighs (a dress, DRESS_REACH: its skirt is the
 *    bottom); the bottom never above the waist band (half way from the hips up to the shoulders)
 *    nor on the arms above the hips, the top never below the knees, hair only near the head. A
 *    pixel far from every prototype (an accessory: a bag, a belt, a watch) is none of them.
 * 4. The class scores are smoothed before the choice (no speckle), the top and bottom masks are
 *    closed over thin details (stripes, a logo) and cut to the person mask; hands and head are
 *    never clothing. Hair in front of the body is the hair-class pixels below the neck line that
 *    are connected to the hair on the head.
 */
import { LM } from './pose.ts'
import type { PersonAnalysis } from './person.ts'
import {
  boxBlur,
  clamp,
  components,
  dist,
  dilate,
  erode,
  lerp,
  median,
  mid,
  plane,
  resizePlane,
  type Plane,
  type Point,
  type Rgb,
} from './raster.ts'

/** Long side of the work grid, px. */
export const WORK_SIDE = 384
/** Weight of L* against the lightness-normalised chroma in the colour distance. */
export const L_WEIGHT = 0.3
/** Colour prototypes per class (k-means). */
export const PROTOTYPES = 6
/** A pixel farther than this from every prototype belongs to no class (accessories). */
export const FAR = 28
/** Skin seeds farther than this (chroma) from the face / palm centre are not skin. */
export const SKIN_R0 = 8
/** Below the neck line a pixel is hair only when it is this much nearer the hair than the top. */
export const HAIR_MARGIN = 2
/** The skin class competes with the garments up to this multiple of the strict skin radius. */
export const SKIN_LOOSE = 1.6
/**
 * A pixel within this distance (features as `labOf`) of one of the person's own skin prototypes,
 * and nearer them by SKIN_PROTO_MARGIN than every garment prototype, costs the skin class that
 * distance plus the margin, as a garment costs its distance to its own prototypes. With no skin
 * found (face cut off, arms covered) only the strict skin test applies.
 */
export const SKIN_PROTO_R = 8
export const SKIN_PROTO_MARGIN = 1
/** Strands finer than the work grid are looked for this far (× shoulder width) around the hair found on it. */
export const HAIR_REACH = 0.05
/**
 * The old top's colours running down the body axis this far (× the torso length) below the hip
 * joints make it a dress: past the crotch and well into the thighs, where a top's hem never is
 * (a long untucked top ends within a quarter of the torso length below the hips).
 */
export const DRESS_REACH = 0.4

export type ClothingClass = 'skin' | 'upper' | 'lower' | 'hair'
const CLASSES: readonly ClothingClass[] = ['skin', 'upper', 'lower', 'hair']

export interface Clothing {
  width: number
  height: number
  skin: Plane
  upper: Plane
  lower: Plane
  /** Hair below the neck line, in front of the shoulders / chest: stays in front of a new top. */
  hairFront: Plane
  /** Face, hair and neck skin of the head region: never repainted (0..1). */
  protect: Plane
  /** `upper` and `lower` on the work grid (binary), for morphology at low cost. */
  upperWork: Plane
  lowerWork: Plane
  /** Skin colour (RGB 0..255, the median of the accepted skin seeds), or null when none was found. */
  skinRgb: [number, number, number] | null
  /**
   * This person's own skin colours (features as `labOf`): prototypes of the accepted skin seeds
   * (face, neck, limbs) and of the palms' seeds near them (hands are often paler or redder than the
   * face); empty when no skin was found. composite.ts tells skin from a skin-hued old garment with
   * these and the garment's own prototypes, not with a hue gate.
   */
  skinProtos: Vec3[]
  /** The old top's, the old bottom's and the hair's colour prototypes (features as `labOf`; empty: none found). */
  upperProtos: Vec3[]
  lowerProtos: Vec3[]
  hairProtos: Vec3[]
  /** The old top's lowest row on the body axis (photo px), or null when no top was found. */
  topHemY: number | null
  /**
   * The person wears a dress (one garment from the shoulders past the crotch): `upper` is its part
   * above the hip line, `lower` its skirt, and `topHemY` the hip line (it is never an untucked top).
   */
  dress: boolean
  /** How many seed pixels each class got (work grid). */
  seeds: Record<ClothingClass, number>
}

interface Features {
  w: number
  h: number
  /** Work px per photo px. */
  k: number
  L: Float32Array
  ca: Float32Array
  cb: Float32Array
  /** Raw Lab a*, b* (for the skin-hue test). */
  a: Float32Array
  b: Float32Array
  mask: Float32Array
}

const SRGB_TO_LINEAR = new Float32Array(256)
for (let i = 0; i < 256; i++) {
  const c = i / 255
  SRGB_TO_LINEAR[i] = c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
}
const labF = (t: number): number => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)

/** Box-averaged work grid of the photo, converted to the features above. */
function features(img: Rgb, mask: Plane): Features {
  const k = Math.min(1, WORK_SIDE / Math.max(img.width, img.height))
  const w = Math.max(1, Math.round(img.width * k))
  const h = Math.max(1, Math.round(img.height * k))
  const n = w * h
  const L = new Float32Array(n)
  const ca = new Float32Array(n)
  const cb = new Float32Array(n)
  const A = new Float32Array(n)
  const B = new Float32Array(n)
  const m = resizePlane(mask, w, h).data
  const sx = img.width / w
  const sy = img.height / h
  const W = img.width
  const d = img.data
  for (let v = 0; v < h; v++) {
    const y0 = Math.floor(v * sy)
    const y1 = Math.max(y0 + 1, Math.floor((v + 1) * sy))
    for (let u = 0; u < w; u++) {
      const x0 = Math.floor(u * sx)
      const x1 = Math.max(x0 + 1, Math.floor((u + 1) * sx))
      let r = 0
      let g = 0
      let bl = 0
      let c = 0
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = (y * W + x) * 3
          r += SRGB_TO_LINEAR[d[i]!]!
          g += SRGB_TO_LINEAR[d[i + 1]!]!
          bl += SRGB_TO_LINEAR[d[i + 2]!]!
          c++
        }
      }
      r /= c
      g /= c
      bl /= c
      const X = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.9505
      const Y = 0.2126 * r + 0.7152 * g + 0.0722 * bl
      const Z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.089
      const fx = labF(X)
      const fy = labF(Y)
      const fz = labF(Z)
      const j = v * w + u
      const l = 116 * fy - 16
      L[j] = l
      A[j] = 500 * (fx - fy)
      B[j] = 200 * (fy - fz)
      const s = 60 / Math.max(l, 20)
      ca[j] = A[j]! * s
      cb[j] = B[j]! * s
    }
  }
  return { w, h, k, L, ca, cb, a: A, b: B, mask: m }
}

/** The colour features of one RGB pixel (as on the work grid). */
export function labOf(r8: number, g8: number, b8: number): Vec3 {
  return labInto(r8, g8, b8, [0, 0, 0])
}

/** `labOf` written into `out` (per-pixel loops: no array allocated per pixel). */
export function labInto(r8: number, g8: number, b8: number, out: Vec3): Vec3 {
  const r = SRGB_TO_LINEAR[r8]!
  const g = SRGB_TO_LINEAR[g8]!
  const bl = SRGB_TO_LINEAR[b8]!
  const fx = labF((0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.9505)
  const fy = labF(0.2126 * r + 0.7152 * g + 0.0722 * bl)
  const fz = labF((0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.089)
  const l = 116 * fy - 16
  const s = 60 / Math.max(l, 20)
  out[0] = l * L_WEIGHT
  out[1] = 500 * (fx - fy) * s
  out[2] = 200 * (fy - fz) * s
  return out
}

/** Lab hue and chroma of human skin of every tone (the gate for skin seeds). */
function skinHued(a: number, b: number, L: number): boolean {
  const C = Math.hypot(a, b)
  const hue = (Math.atan2(b, a) * 180) / Math.PI
  return C >= 6 && C <= 60 && hue >= 15 && hue <= 85 && L >= 12 && L <= 95
}

export type Vec3 = [number, number, number]

const fvec = (f: Features, j: number): Vec3 => [f.L[j]! * L_WEIGHT, f.ca[j]!, f.cb[j]!]
const d2 = (p: Vec3, q: Vec3): number =>
  (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2
export const nearestD2 = (v: Vec3, protos: readonly Vec3[]): number => {
  let bd = Infinity
  for (const p of protos) bd = Math.min(bd, d2(v, p))
  return bd
}

/** Index of the prototype nearest to `v` (the first on a tie), -1 when none is nearer than √maxD2. */
export function nearestIndex(v: Vec3, protos: readonly Vec3[], maxD2 = Infinity): number {
  let best = -1
  let bd = maxD2
  for (let i = 0; i < protos.length; i++) {
    const d = d2(v, protos[i]!)
    if (d < bd) ((bd = d), (best = i))
  }
  return best
}

/** The prototypes nearest to at least `share` of the samples (a garment's main colours). */
export function mainColours(
  samples: readonly Vec3[],
  protos: readonly Vec3[],
  share: number,
): Vec3[] {
  const counts = protos.map(() => 0)
  for (const v of samples) counts[Math.max(0, nearestIndex(v, protos))]!++
  return protos.filter((_, i) => counts[i]! >= share * samples.length)
}

/** Deterministic k-means (k-means++-style farthest-point start from the median seed). */
export function kmeans(samples: Vec3[], k: number): Vec3[] {
  if (samples.length === 0) return []
  const centres: Vec3[] = []
  // Start from the per-channel median: stable, and inside the data.
  const med = [0, 1, 2].map((c) => median(samples.map((s) => s[c]!))) as Vec3
  centres.push(med)
  const near = samples.map((s) => d2(s, med))
  while (centres.length < Math.min(k, samples.length)) {
    let best = -1
    let bd = 0
    for (let i = 0; i < samples.length; i++) if (near[i]! > bd) ((bd = near[i]!), (best = i))
    // Below 4 units apart a new centre adds nothing.
    if (best < 0 || bd < 16) break
    const c = samples[best]!.slice() as Vec3
    centres.push(c)
    for (let i = 0; i < samples.length; i++) near[i] = Math.min(near[i]!, d2(samples[i]!, c))
  }
  for (let it = 0; it < 8; it++) {
    const sum = centres.map(() => [0, 0, 0, 0])
    for (const s of samples) {
      const bi = nearest(s, centres)
      const acc = sum[bi]!
      acc[0]! += s[0]
      acc[1]! += s[1]
      acc[2]! += s[2]
      acc[3]!++
    }
    for (let c = 0; c < centres.length; c++) {
      const acc = sum[c]!
      if (acc[3]! > 0) centres[c] = [acc[0]! / acc[3]!, acc[1]! / acc[3]!, acc[2]! / acc[3]!]
    }
  }
  // A prototype that only a handful of seeds chose is noise (a stray pixel of another class).
  const counts = centres.map(() => 0)
  for (const s of samples) {
    counts[nearest(s, centres)]!++
  }
  return centres.filter((_, c) => counts[c]! >= Math.max(3, 0.04 * samples.length))
}

/** Pixels (work grid indices) of a disc, inside the grid and the person mask. */
function disc(f: Features, c: Point, r: number, out: number[]): void {
  const ri = Math.max(1, Math.round(r))
  const cx = Math.round(c.x)
  const cy = Math.round(c.y)
  for (let y = cy - ri; y <= cy + ri; y++) {
    if (y < 0 || y >= f.h) continue
    for (let x = cx - ri; x <= cx + ri; x++) {
      if (x < 0 || x >= f.w || (x - cx) ** 2 + (y - cy) ** 2 > ri * ri) continue
      const j = y * f.w + x
      if (f.mask[j]! > 0.6) out.push(j)
    }
  }
}

export function segmentClothing(img: Rgb, a: PersonAnalysis): Clothing {
  const f = features(img, a.mask)
  const { w, h, k } = f
  const n = w * h
  const P = a.points.map((p) => ({ x: p.x * k, y: p.y * k, score: p.score }))
  const pt = (i: number) => P[i]!
  const sw = a.shoulderWidth * k
  const inFrame = (p: Point) => p.x >= 0 && p.y >= 0 && p.x < w && p.y < h
  const seen = (i: number) => pt(i).score > 0.5 && inFrame(pt(i))
  const headW = resizePlane(a.head, w, h).data
  const handsW = resizePlane(a.hands, w, h).data
  const armsW = resizePlane(a.arms, w, h).data
  const sR = 0.035 * sw

  // --- skin seeds ---
  const faceSeeds: number[] = []
  const faceSeen = seen(LM.nose) && seen(LM.mouthLeft) && seen(LM.mouthRight)
  const mouth = mid(pt(LM.mouthLeft), pt(LM.mouthRight))
  const shoulderMid = mid(pt(LM.leftShoulder), pt(LM.rightShoulder))
  if (faceSeen) {
    const nose = pt(LM.nose)
    for (const [eye, corner] of [
      [LM.leftEye, LM.mouthLeft],
      [LM.rightEye, LM.mouthRight],
    ] as const) {
      disc(f, lerp(pt(eye), pt(corner), 0.55), sR, faceSeeds)
    }
    disc(f, lerp(nose, mouth, 0.45), 0.6 * sR, faceSeeds)
  }
  // The neck: between the mouth (or, face cut off, a point above the shoulder line) and the shoulders.
  const chin =
    inFrame(mouth) && pt(LM.mouthLeft).score > 0.3
      ? mouth
      : { x: shoulderMid.x, y: shoulderMid.y - 0.45 * sw }
  disc(f, lerp(chin, shoulderMid, 0.5), 0.6 * sR, faceSeeds)
  const handSeeds: number[] = []
  for (const [wr, ix, pk] of [
    [LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    if (!seen(wr)) continue
    disc(f, lerp(pt(wr), mid(pt(ix), pt(pk)), 0.5), 0.6 * sR, handSeeds)
  }
  const limbSeeds: number[] = []
  for (const [s, e, wr] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
  ] as const) {
    if (seen(e)) disc(f, lerp(pt(s), pt(e), 0.6), sR, limbSeeds)
    if (seen(e) && seen(wr)) disc(f, lerp(pt(e), pt(wr), 0.6), sR, limbSeeds)
  }
  for (const [kn, an] of [
    [LM.leftKnee, LM.leftAnkle],
    [LM.rightKnee, LM.rightAnkle],
  ] as const) {
    if (seen(kn) && seen(an)) disc(f, lerp(pt(kn), pt(an), 0.4), sR, limbSeeds)
  }
  const hued = (j: number) => skinHued(f.a[j]!, f.b[j]!, f.L[j]!)
  let anchor = faceSeeds.filter(hued)
  if (anchor.length < 8) anchor = [...anchor, ...handSeeds.filter(hued)]
  if (anchor.length < 8) anchor = [...anchor, ...limbSeeds.filter(hued)]
  const skin = skinModel(f, anchor, [...faceSeeds, ...handSeeds, ...limbSeeds].filter(hued))
  const skinLike = (j: number) => skin !== null && skinCost(f, j, skin) < 1
  // The person's skin prototypes: the accepted seeds plus the palms within 2 × SKIN_R0 of their
  // centre (a hand in a pocket of beige trousers is farther from the face's tone than that, mostly).
  // They compete with the garments' prototypes pixel by pixel (below) and are handed on to
  // composite.ts, which tells skin from a skin-hued old garment with them.
  const palms = handSeeds.filter(
    (j) =>
      hued(j) &&
      (skin === null || Math.hypot(f.ca[j]! - skin.ca, f.cb[j]! - skin.cb) < 2 * SKIN_R0),
  )
  const skinCells = [...(skin?.cells ?? []), ...palms]
  const skinProtos =
    skinCells.length >= 8
      ? kmeans(
          skinCells.map((j) => fvec(f, j)),
          4,
        )
      : []

  // --- clothing seeds ---
  const sl = pt(LM.leftShoulder)
  const sr = pt(LM.rightShoulder)
  const hl = pt(LM.leftHip)
  const hr = pt(LM.rightHip)
  const upperSeeds: number[] = []
  for (const u of [0.2, 0.35, 0.5, 0.65, 0.8]) {
    for (const v of [0.15, 0.3, 0.45, 0.6, 0.75, 0.9]) {
      const top = lerp(sl, sr, u)
      const bot = lerp(hl, hr, u)
      disc(f, lerp(top, bot, v), sR, upperSeeds)
    }
  }
  for (const [s, e] of [
    [LM.leftShoulder, LM.leftElbow],
    [LM.rightShoulder, LM.rightElbow],
  ] as const) {
    disc(f, lerp(pt(s), pt(e), 0.35), sR, upperSeeds)
  }
  const lowerSeeds: number[] = []
  const hipsSeen = inFrame(hl) && inFrame(hr)
  if (hipsSeen) {
    for (const [hp, kn] of [
      [LM.leftHip, LM.leftKnee],
      [LM.rightHip, LM.rightKnee],
    ] as const) {
      for (const t of [0.15, 0.3, 0.45]) {
        const q = lerp(pt(hp), pt(kn), t)
        if (inFrame(q)) disc(f, q, sR, lowerSeeds)
      }
    }
    const pelvis = lerp(mid(hl, hr), mid(pt(LM.leftKnee), pt(LM.rightKnee)), 0.12)
    if (inFrame(pelvis)) disc(f, pelvis, sR, lowerSeeds)
  }
  const notOther = (j: number) => handsW[j]! < 0.3 && headW[j]! < 0.3 && !skinLike(j)
  const upperSamples = upperSeeds.filter(notOther).map((j) => fvec(f, j))
  const upperProtos = kmeans(upperSamples, PROTOTYPES)
  // Where the top ends on the body axis, from colour: walking down from the middle of the torso,
  // the first of three rows in a row where under 30 % of a band (± 0.15 × shoulder width) is near
  // a top prototype. The landmarks' hip line is often off on half-body photos; this is not.
  const hipMid = mid(hl, hr)
  const torsoLen = Math.max(1, dist(shoulderMid, hipMid))
  const hipLineY = (hl.y + hr.y) / 2
  const hemScan = scanHem(f, upperProtos, shoulderMid, hipMid, sw)
  // An old garment whose colours run on down the body axis past the crotch, well into the thighs, is
  // a dress (or a top and a skirt of one colour, which is the same to take off): its hem is not a
  // top's hem. Then the hip line splits it: above is its top, below its skirt (`lower`).
  const dress = hipsSeen && hemScan !== null && hemScan > hipLineY + DRESS_REACH * torsoLen
  if (hemScan !== null && !dress) {
    const axisLen = Math.max(1, dist(shoulderMid, hipMid))
    for (const t of [0.1, 0.2, 0.3]) {
      const y = hemScan + t * axisLen
      for (const dx of [-0.12, 0.12]) {
        const q = {
          x:
            shoulderMid.x +
            ((hipMid.x - shoulderMid.x) * (y - shoulderMid.y)) / (hipMid.y - shoulderMid.y || 1) +
            dx * sw,
          y,
        }
        if (inFrame(q)) disc(f, q, sR, lowerSeeds)
      }
    }
  }
  // Bottom seeds may land on a top that hangs over the hips (or on a dress): where the top and the
  // bottom share colours, the hip line decides (spatial penalties below).
  const lowerSamples = lowerSeeds
    .filter((j) => notOther(j) && armsW[j]! < 0.3)
    .map((j) => fvec(f, j))
  // Hair seeds: the head region above the eyes, and beside the face down to the neck line (where
  // long hair hangs), away from the face itself; never what looks like skin or like the backdrop
  // (the person mask is loose around hair).
  const hairSeeds: number[] = []
  if (faceSeen && seen(LM.leftEye) && seen(LM.rightEye)) {
    const eyeY = Math.min(pt(LM.leftEye).y, pt(LM.rightEye).y)
    const fc = mid(pt(LM.leftEar), pt(LM.rightEar))
    const ear = Math.max(dist(pt(LM.leftEar), pt(LM.rightEar)), 0.35 * sw)
    const bgSamples: Vec3[] = []
    for (let j = 0; j < n; j += 7) if (f.mask[j]! < 0.05) bgSamples.push(fvec(f, j))
    const bgProtos = kmeans(bgSamples, 4)
    const neckLine = shoulderMid.y - 0.1 * sw
    for (let y = 0; y < Math.min(h, Math.floor(neckLine)); y++) {
      for (let x = 0; x < w; x++) {
        if ((x + y) % 2 !== 0) continue
        const j = y * w + x
        const beside = Math.abs(x - fc.x) > 0.55 * ear
        if (!(y < eyeY || beside) || headW[j]! < 0.9 || f.mask[j]! < 0.9 || skinLike(j)) continue
        if (bgProtos.length > 0 && nearestD2(fvec(f, j), bgProtos) < 10 ** 2) continue
        hairSeeds.push(j)
      }
    }
  }
  const hairSamples = hairSeeds.map((j) => fvec(f, j))
  const hairProtos = kmeans(hairSamples, 3)
  const protos: Record<ClothingClass, Vec3[]> = {
    skin: [],
    // Long hair over the chest falls on the top's seeds: a minor top prototype that is the hair's
    // colour is the hair (the main one, from the seeds' median, always stays).
    upper: upperProtos.filter(
      (v, i) => i === 0 || hairProtos.length === 0 || nearestD2(v, hairProtos) > 6 ** 2,
    ),
    lower: kmeans(lowerSamples, PROTOTYPES),
    hair: hairProtos,
  }

  // --- spatial rules (work grid) ---
  // The split between top and bottom: the colour hem when found (not a dress), else the hip line.
  const hipY = dress ? hipLineY : (hemScan ?? hipLineY)
  const waistBandY = hipY - 0.5 * torsoLen
  const kneeY = Math.max(hipY + 0.3 * torsoLen, (pt(LM.leftKnee).y + pt(LM.rightKnee).y) / 2)
  const neckY = shoulderMid.y - 0.1 * sw
  // Shoes are not trousers: nothing below the ankles (when both are seen) is the bottom.
  const footY =
    seen(LM.leftAnkle) && seen(LM.rightAnkle)
      ? Math.max(pt(LM.leftAnkle).y, pt(LM.rightAnkle).y) + 0.06 * sw
      : Infinity
  const hairBottom = shoulderMid.y + 1.1 * sw

  const mouthSeen = inFrame(mouth) && pt(LM.mouthLeft).score > 0.3
  const mouthY = faceSeen || mouthSeen ? mouth.y : shoulderMid.y - 0.45 * sw

  // --- per-class costs (colour distance + spatial penalty), smoothed, then the cheapest class ---
  // Skin costs 0 inside its own test and FAR beyond; the garments and hair cost their distance to
  // the nearest prototype. The top fades out below the hips, the bottom above them.
  // Capped so that smoothing does not let a far class swamp a thin structure (a strand of hair).
  const BIG = 1.5 * FAR
  const cost: Record<ClothingClass, Plane> = {
    skin: plane(w, h, BIG),
    upper: plane(w, h, BIG),
    lower: plane(w, h, BIG),
    hair: plane(w, h, BIG),
  }
  const flat = (ps: readonly Vec3[]) => Float32Array.from(ps.flat())
  const pu = flat(protos.upper)
  const pl = flat(protos.lower)
  const ph = flat(protos.hair)
  const ps = flat(skinProtos)
  const nearest = (pr: Float32Array, l: number, a1: number, b1: number): number => {
    let bd = Infinity
    for (let q = 0; q < pr.length; q += 3) {
      const dd = (l - pr[q]!) ** 2 + (a1 - pr[q + 1]!) ** 2 + (b1 - pr[q + 2]!) ** 2
      if (dd < bd) bd = dd
    }
    return Math.sqrt(bd)
  }
  for (let y = 0; y < h; y++) {
    const belowHips = clamp((y - hipY) / Math.max(1, kneeY - hipY), 0, 1)
    const aboveHips = clamp((hipY - y) / Math.max(1, hipY - waistBandY), 0, 1)
    const upperPenalty = 12 * belowHips
    const lowerPenalty = 25 * Math.sqrt(aboveHips)
    for (let x = 0; x < w; x++) {
      const j = y * w + x
      if (f.mask[j]! < 0.3) continue
      const l = f.L[j]! * L_WEIGHT
      const a1 = f.ca[j]!
      const b1 = f.cb[j]!
      if (skin !== null) {
        // Competes with the garments up to SKIN_LOOSE × the strict radius (a beige garment that
        // was seeded is nearer its own prototype).
        const c = skinCost(f, j, skin)
        cost.skin.data[j] = c < SKIN_LOOSE ? c * 0.45 * FAR : BIG
      }
      if (ps.length > 0) {
        // This person's own skin colours, in the garments' units: pale shins under beige shorts
        // are nearer the skin prototypes (seeded on them) than the shorts' own, the shorts nearer
        // theirs.
        const d = nearest(ps, l, a1, b1)
        // … and nearer them than any of the garments' own colours, wherever those are (a shaded
        // fold of beige shorts is nearer the top's beige than the face's tone).
        const dg = Math.min(
          pu.length > 0 ? nearest(pu, l, a1, b1) : Infinity,
          pl.length > 0 ? nearest(pl, l, a1, b1) : Infinity,
        )
        if (d < SKIN_PROTO_R && d + SKIN_PROTO_MARGIN < dg) {
          cost.skin.data[j] = Math.min(cost.skin.data[j]!, d + SKIN_PROTO_MARGIN)
        }
      }
      if (pu.length > 0 && y <= kneeY) cost.upper.data[j] = nearest(pu, l, a1, b1) + upperPenalty
      if (pl.length > 0 && y >= waistBandY && y <= footY && !(armsW[j]! > 0.5 && y < hipY)) {
        cost.lower.data[j] = nearest(pl, l, a1, b1) + lowerPenalty
      }
      // Hair must beat the top by a margin (dark hair on a dark top: the top wins).
      if (ph.length > 0 && y <= hairBottom && Math.abs(x - shoulderMid.x) <= 1.0 * sw) {
        const ch = nearest(ph, l, a1, b1)
        cost.hair.data[j] =
          pu.length > 0 && y > neckY && ch > nearest(pu, l, a1, b1) - HAIR_MARGIN ? BIG : ch
      }
    }
  }
  const smoothR = Math.max(1, 0.012 * sw)
  const sm: Record<ClothingClass, Float32Array> = {
    skin: boxBlur(cost.skin, smoothR).data,
    upper: boxBlur(cost.upper, smoothR).data,
    lower: boxBlur(cost.lower, smoothR).data,
    // Hair is not smoothed: strands are a pixel or two wide on the work grid.
    hair: cost.hair.data,
  }
  const cls: Record<ClothingClass, Plane> = {
    skin: plane(w, h),
    upper: plane(w, h),
    lower: plane(w, h),
    hair: plane(w, h),
  }
  const unknown = plane(w, h)
  for (let j = 0; j < n; j++) {
    if (f.mask[j]! < 0.5) continue
    let best: ClothingClass | null = null
    let bd = FAR
    for (const c of CLASSES) {
      if (sm[c][j]! < bd) ((bd = sm[c][j]!), (best = c))
    }
    if (best !== null) cls[best].data[j] = 1
    else if ((headW[j]! < 0.5 || Math.floor(j / w) >= mouthY) && handsW[j]! < 0.5) {
      unknown.data[j] = 1
    }
  }
  // Small unclassified patches that touch a garment are part of it (a collar, a cuff, a logo, a
  // stripe no seed fell on); large ones are something else (a bag) and stay.
  {
    const { labels, sizes } = components(unknown)
    const touch = sizes.map(() => [0, 0])
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const j = y * w + x
        const l = labels[j]!
        if (l === 0) continue
        for (const q of [
          x > 0 ? j - 1 : -1,
          x < w - 1 ? j + 1 : -1,
          y > 0 ? j - w : -1,
          y < h - 1 ? j + w : -1,
        ]) {
          if (q < 0) continue
          if (cls.upper.data[q]! > 0.5) touch[l]![0]!++
          if (cls.lower.data[q]! > 0.5) touch[l]![1]!++
        }
      }
    }
    const maxArea = 0.06 * sw * sw
    for (let j = 0; j < n; j++) {
      const l = labels[j]!
      if (l === 0 || sizes[l]! > maxArea) continue
      const [tu, tl] = touch[l]!
      if (tu! + tl! === 0) continue
      if (tu! >= tl!) cls.upper.data[j] = 1
      else cls.lower.data[j] = 1
    }
  }
  // Close the garments over thin details (stripes, a logo, a seam), then keep them in the mask and
  // off the head and hands.
  const closeR = Math.max(1, 0.02 * sw)
  const upperW = erode(dilate(cls.upper, closeR), closeR)
  const lowerW = erode(dilate(cls.lower, closeR), closeR)
  // The head region (person.ts) reaches down to a line above the shoulder joints: the face, hair and
  // neck there are protected, but a collar or the top of the shoulders below the mouth is clothing.
  // The face itself (chin and beard included) is always protected: an ellipse around the face
  // landmarks and one around the mouth and chin, whenever the mouth or nose is in the frame.
  const faceC = mid(pt(LM.leftEar), pt(LM.rightEar))
  const earSpan = Math.max(dist(pt(LM.leftEar), pt(LM.rightEar)), 0.35 * sw)
  const faceIn = inFrame(mouth) || inFrame(pt(LM.nose))
  const inFace = (x: number, y: number) =>
    faceIn &&
    (((x - faceC.x) / (0.62 * earSpan)) ** 2 +
      ((y - (faceC.y + 0.1 * earSpan)) / (0.95 * earSpan)) ** 2 <=
      1 ||
      // the chin and a beard below the mouth
      ((x - mouth.x) / (0.45 * earSpan)) ** 2 + ((y - mouth.y) / (0.5 * earSpan)) ** 2 <= 1)
  const protectW = plane(w, h)
  for (let j = 0; j < n; j++) {
    const y = Math.floor(j / w)
    const garment = cls.upper.data[j]! > 0.5 || upperW.data[j]! > 0.5
    protectW.data[j] = headW[j]! > 0.5 && (y < mouthY || !garment || inFace(j % w, y)) ? 1 : 0
  }
  for (let j = 0; j < n; j++) {
    // In the hand regions only what is clearly not skin (a cuff, a hem behind the fingers) is clothing.
    const off = f.mask[j]! < 0.5 || protectW.data[j]! > 0.5 || (handsW[j]! > 0.3 && hued(j))
    if (off || cls.skin.data[j]! > 0.5 || cls.hair.data[j]! > 0.5) {
      upperW.data[j] = 0
      lowerW.data[j] = 0
    }
    if (upperW.data[j]! > 0.5) lowerW.data[j] = 0
  }
  // Hair in front: hair pixels below the neck line connected to the hair on the head.
  const hairZone = plane(w, h)
  for (let y = 0; y < Math.min(h, Math.ceil(hairBottom)); y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x
      if (cls.hair.data[j]! > 0.5 || (headW[j]! > 0.5 && y < neckY && !skinLike(j))) {
        hairZone.data[j] = 1
      }
    }
  }
  const { labels } = components(hairZone)
  const onHead = new Set<number>()
  for (let y = 0; y < Math.min(h, Math.floor(neckY)); y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x
      if (labels[j]! > 0 && headW[j]! > 0.5) onHead.add(labels[j]!)
    }
  }
  const hairFrontW = plane(w, h)
  for (let y = Math.max(0, Math.floor(neckY)); y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x
      if (labels[j]! > 0 && onHead.has(labels[j]!) && cls.hair.data[j]! > 0.5) {
        hairFrontW.data[j] = 1
      }
    }
  }

  // The old top's hem on the body axis: the lowest top row within a quarter shoulder width of the
  // axis through the shoulder and hip centres.
  let topHemY: number | null = null
  const hc = mid(hl, hr)
  for (let y = h - 1; y >= Math.max(0, Math.floor(shoulderMid.y)) && topHemY === null; y--) {
    const t = torsoLen > 0 ? (y - shoulderMid.y) / (hc.y - shoulderMid.y || 1) : 0
    const cx = shoulderMid.x + (hc.x - shoulderMid.x) * t
    let count = 0
    let total = 0
    for (
      let x = Math.max(0, Math.round(cx - 0.25 * sw));
      x <= Math.min(w - 1, Math.round(cx + 0.25 * sw));
      x++
    ) {
      total++
      if (upperW.data[y * w + x]! > 0.5) count++
    }
    if (total > 0 && count > 0.5 * total) topHemY = (y + 1) / k
  }
  // A top reaches at most a quarter of the torso length below the hips (longer is a tunic or a
  // dress, or a bottom of the top's colour merged into it).
  // The hips are the colour split when one was found (the landmarks' hip line is often high on
  // half-body photos), never more than half a torso below the landmarks' hips.
  const hipRef = Math.max(
    Math.max(hl.y, hr.y),
    Math.min(hemScan ?? -Infinity, Math.max(hl.y, hr.y) + 0.5 * torsoLen),
  )
  if (topHemY !== null) topHemY = Math.min(topHemY, (hipRef + 0.25 * torsoLen) / k)
  if (dress && topHemY !== null) topHemY = Math.min(topHemY, hipLineY / k)

  const skinRgb = skin === null ? null : medianRgb(img, skin.cells, w, k)
  const up = (p: Plane) => upsampleSparse(boxBlur(p, 0.5), img.width, img.height)
  // Strands are finer than the work grid: near the hair found there, each photo pixel is hair when
  // its own colour is nearer the hair than the top.
  const hairFront = plane(img.width, img.height)
  if (hairFrontW.data.some((v) => v > 0)) {
    const near = upsampleSparse(
      dilate(hairFrontW, Math.max(2, HAIR_REACH * sw)),
      img.width,
      img.height,
    ).data
    const scratch: Vec3 = [0, 0, 0]
    for (let i = 0; i < near.length; i++) {
      if (near[i]! < 0.1) continue
      const v = labInto(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!, scratch)
      const dh = nearestD2(v, protos.hair)
      const du = protos.upper.length > 0 ? nearestD2(v, protos.upper) : Infinity
      if (
        Math.sqrt(dh) < FAR &&
        Math.sqrt(dh) < Math.sqrt(du) - HAIR_MARGIN &&
        a.head.data[i]! < 0.5
      ) {
        hairFront.data[i] = 1
      }
    }
  }
  return {
    width: img.width,
    height: img.height,
    skin: up(cls.skin),
    upper: up(upperW),
    lower: up(lowerW),
    // Hard-edged: a strand is a pixel or two wide, and a blurred edge would let the new top through it.
    hairFront,
    protect: up(protectW),
    upperWork: upperW,
    lowerWork: lowerW,
    skinRgb,
    skinProtos,
    upperProtos: protos.upper,
    lowerProtos: protos.lower,
    hairProtos: protos.hair,
    topHemY,
    dress,
    seeds: {
      skin: skin?.cells.length ?? 0,
      upper: upperSamples.length,
      lower: lowerSamples.length,
      hair: hairSamples.length,
    },
  }
}

interface SkinModel {
  /** Chroma centre. */
  ca: number
  cb: number
  /** Chroma radius of the skin test. */
  radius: number
  /** L* range of the skin test. */
  lo: number
  hi: number
  /** The accepted seed cells. */
  cells: number[]
}

/**
 * The skin model from the seeds: the robust centre (median chroma) of the anchor seeds (the face
 * and neck when seen, else the palms), every hued seed within SKIN_R0 of it accepted, their median
 * chroma as the centre, a test radius of 2.5 robust standard deviations (between 4.5 and 7 units) and an L* range from the
 * seeds' 10th–90th percentiles widened for shadow and highlight. Null when fewer than 8 seeds pass.
 */
function skinModel(
  f: Features,
  anchor: readonly number[],
  all: readonly number[],
): SkinModel | null {
  if (anchor.length < 8) return null
  const med = (v: number[]) => v.sort((p, q) => p - q)[v.length >> 1]!
  const aca = med(anchor.map((j) => f.ca[j]!))
  const acb = med(anchor.map((j) => f.cb[j]!))
  const cells = all.filter((j) => Math.hypot(f.ca[j]! - aca, f.cb[j]! - acb) < SKIN_R0)
  if (cells.length < 8) return null
  const ca = med(cells.map((j) => f.ca[j]!))
  const cb = med(cells.map((j) => f.cb[j]!))
  const sigma = 1.4826 * med(cells.map((j) => Math.hypot(f.ca[j]! - ca, f.cb[j]! - cb)))
  const Ls = cells.map((j) => f.L[j]!).sort((p, q) => p - q)
  const p10 = Ls[Math.floor(0.1 * (Ls.length - 1))]!
  const p90 = Ls[Math.floor(0.9 * (Ls.length - 1))]!
  return {
    ca,
    cb,
    radius: clamp(2.5 * sigma, 4.5, 7),
    lo: 0.55 * p10,
    hi: Math.min(100, 1.12 * p90 + 4),
    cells,
  }
}

/** Skin test: < 1 inside (chroma distance / radius, L* in range), ≥ 1 outside. */
function skinCost(f: Features, j: number, m: SkinModel): number {
  const L = f.L[j]!
  if (L < m.lo || L > m.hi) return 2
  return Math.hypot(f.ca[j]! - m.ca, f.cb[j]! - m.cb) / m.radius
}

/** The first row below the torso's middle where the top's colours stop on the body axis (work px), or null. */
function scanHem(
  f: Features,
  protos: readonly Vec3[],
  sm: Point,
  hc: Point,
  sw: number,
): number | null {
  if (protos.length === 0) return null
  const dy = hc.y - sm.y
  if (dy <= 0) return null
  let run = 0
  for (let y = Math.round(sm.y + 0.5 * dy); y < f.h; y++) {
    const cx = sm.x + ((hc.x - sm.x) * (y - sm.y)) / dy
    let near = 0
    let total = 0
    for (
      let x = Math.max(0, Math.round(cx - 0.15 * sw));
      x <= Math.min(f.w - 1, Math.round(cx + 0.15 * sw));
      x++
    ) {
      const j = y * f.w + x
      if (f.mask[j]! < 0.5) continue
      total++
      if (nearestD2(fvec(f, j), protos) < 12 ** 2) near++
    }
    if (total > 0 && near < 0.3 * total) run++
    else run = 0
    if (run >= 3) return y - 2
  }
  return null
}

/** Median RGB of the photo pixels under the given work-grid cells. */
function medianRgb(
  img: Rgb,
  cells: readonly number[],
  w: number,
  k: number,
): [number, number, number] | null {
  if (cells.length === 0) return null
  const ch: number[][] = [[], [], []]
  for (const j of cells) {
    const x = Math.min(img.width - 1, Math.floor(((j % w) + 0.5) / k))
    const y = Math.min(img.height - 1, Math.floor((Math.floor(j / w) + 0.5) / k))
    for (let c = 0; c < 3; c++) ch[c]!.push(img.data[(y * img.width + x) * 3 + c]!)
  }
  const med = (v: number[]) => v.sort((p, q) => p - q)[v.length >> 1]!
  return [med(ch[0]!), med(ch[1]!), med(ch[2]!)]
}

/**
 * Bilinear upsampling (half-pixel centres) with per-column weights computed once; values clamped to
 * 0..`max` (masks: 1; colour and shading fields: Infinity).
 */
export function upsample(src: Plane, width: number, height: number, max = 1): Plane {
  return upsampleBox(src, width, height, { x0: 0, y0: 0, width, height }, max)
}

/**
 * `upsample(src, width, height, max)` over the box `box` of the result only (the same values; a
 * plane of the box's size): the fields that are only read inside a box need no full-size plane.
 */
export function upsampleBox(
  src: Plane,
  width: number,
  height: number,
  box: { x0: number; y0: number; width: number; height: number },
  max = 1,
): Plane {
  const { width: sw, height: sh, data } = src
  const bw = box.width
  const bh = box.height
  const out = new Float32Array(bw * bh)
  const xi = new Int32Array(bw)
  const xa = new Float32Array(bw)
  for (let bx = 0; bx < bw; bx++) {
    const x = box.x0 + bx
    const fx = clamp(((x + 0.5) * sw) / width - 0.5, 0, sw - 1)
    xi[bx] = Math.min(Math.floor(fx), sw - 2 < 0 ? 0 : sw - 2)
    xa[bx] = sw > 1 ? fx - xi[bx]! : 0
  }
  const one = sw > 1 ? 1 : 0
  for (let by = 0; by < bh; by++) {
    const y = box.y0 + by
    const fy = clamp(((y + 0.5) * sh) / height - 0.5, 0, sh - 1)
    const y0 = Math.min(Math.floor(fy), sh - 2 < 0 ? 0 : sh - 2)
    const ay = sh > 1 ? fy - y0 : 0
    const r0 = y0 * sw
    const r1 = sh > 1 ? r0 + sw : r0
    const row = by * bw
    for (let bx = 0; bx < bw; bx++) {
      const i = xi[bx]!
      const ax = xa[bx]!
      const a0 = data[r0 + i]!
      const b0 = data[r1 + i]!
      const top = a0 + (data[r0 + i + one]! - a0) * ax
      const bot = b0 + (data[r1 + i + one]! - b0) * ax
      const v = top + (bot - top) * ay
      out[row + bx] = v < 0 ? 0 : v > max ? max : v
    }
  }
  return { width: bw, height: bh, data: out }
}

/**
 * `upsample(src, width, height, max)` where `src` is zero outside a small part of it (a mask): the
 * same full-size plane, computed only over the pixels whose bilinear neighbours are not all zero
 * (the rest stays 0, as upsample would give).
 */
export function upsampleSparse(src: Plane, width: number, height: number, max = 1): Plane {
  const { width: sw, height: sh, data } = src
  let u0 = sw
  let v0 = sh
  let u1 = -1
  let v1 = -1
  for (let v = 0; v < sh; v++) {
    for (let u = 0; u < sw; u++) {
      if (data[v * sw + u] === 0) continue
      if (u < u0) u0 = u
      if (u > u1) u1 = u
      if (v < v0) v0 = v
      if (v > v1) v1 = v
    }
  }
  const out = new Float32Array(width * height)
  if (u1 < 0) return { width, height, data: out }
  // Past these, both bilinear neighbours of a pixel lie outside [u0, u1] × [v0, v1].
  const x0 = clamp(Math.floor(((u0 - 1) * width) / sw) - 1, 0, width - 1)
  const x1 = clamp(Math.ceil(((u1 + 2) * width) / sw) + 1, 0, width - 1)
  const y0 = clamp(Math.floor(((v0 - 1) * height) / sh) - 1, 0, height - 1)
  const y1 = clamp(Math.ceil(((v1 + 2) * height) / sh) + 1, 0, height - 1)
  const bw = x1 - x0 + 1
  const part = upsampleBox(src, width, height, { x0, y0, width: bw, height: y1 - y0 + 1 }, max)
  for (let y = y0; y <= y1; y++) {
    out.set(part.data.subarray((y - y0) * bw, (y - y0 + 1) * bw), y * width + x0)
  }
  return { width, height, data: out }
}

/** Index of the centre nearest to `s` (squared distance; the first on a tie). */
function nearest(s: Vec3, centres: readonly Vec3[]): number {
  let bi = 0
  let bd = Infinity
  for (let c = 0; c < centres.length; c++) {
    const dd = d2(s, centres[c]!)
    if (dd < bd) ((bd = dd), (bi = c))
  }
  return bi
}
