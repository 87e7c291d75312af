/**
 * Correspondences (stage 3 input): where each garment landmark goes on the person.
 *
 * Contract — in: the garment's category, landmarks and mask (garment pixels) and the person
 * analysis. Out: `WarpPart[]`, each a piece of the garment that moves as one (torso or dress body,
 * a sleeve, a trouser leg, a skirt) with its mask on the garment photo and matching control points
 * (person pixels ↔ garment pixels) for a thin-plate spline, plus its layer in the occlusion order.
 *
 * Geometry:
 * - Tops and dresses are placed by a similarity transform of the torso frame: the garment's
 *   shoulder seams go K_SHOULDER × the shoulder-joint distance apart, centred LIFT × that distance
 *   above the joints; every other landmark keeps its position relative to the shoulders, scaled
 *   across by that factor and down the body by it × the person's torso length / TORSO_RATIO × the
 *   shoulder width (clamped 0.8–1.4), so the garment's length follows its proportions on the photo
 *   and the person's torso (a three-quarter turn narrows the shoulders, not the torso).
 *   Waist and hem widths are widened to the person's torso silhouette where the garment would be
 *   narrower than the body (clothes stretch). Each sleeve (fit-sleeve.ts) follows the arm: its root stays
 *   on the shoulder–armpit seam and its axis goes along shoulder → elbow → wrist where those joints
 *   are sure and make an arm; a short sleeve ends at its own scaled length, a long one at the
 *   share of the arm its length says (at the wrist); never narrower than the arm.
 * - Bottoms are placed from the waist: the waistband sits WAIST_RISE × the hip-joint distance above
 *   the hip joints and its width matches the person's silhouette there; rise and leg length keep
 *   the garment's proportions, and each leg follows hip → knee → ankle for the scaled leg length,
 *   with its scaled widths.
 */
import { AppError } from '@tailor/proto'
import { fitSleeve, type SleeveFrame } from './fit-sleeve.ts'
import { LM } from './pose.ts'
import type {
  GarmentCategory,
  GarmentLandmarks,
  SleeveLandmarks,
  TopLandmarks,
  BottomLandmarks,
} from './garment-shape.ts'
import type { PersonAnalysis } from './person.ts'
import {
  add,
  clamp,
  dist,
  dot,
  lerp,
  mid,
  mul,
  norm,
  perp,
  plane,
  sub,
  type Plane,
  type Point,
} from './raster.ts'

export interface WarpPart {
  name: 'torso' | 'sleeve-left' | 'sleeve-right' | 'leg-left' | 'leg-right' | 'skirt'
  /** The part's mask on the garment photo (0..1). */
  mask: Plane
  /** Control points in person pixels … */
  targets: Point[]
  /** … and the garment pixels they take their colour from. */
  sources: Point[]
  /** 'body' parts go behind the arms, 'sleeve' parts in front of them. */
  layer: 'body' | 'sleeve'
}

/**
 * Shoulder-seam distance of a top on the body / shoulder-joint distance (the landmark model's joints
 * with the whole body in its ROI). Fitted with TORSO_RATIO on the six paired photos (the person
 * wears the very garment): 0.9 with 1.55 puts all six above the engine before issue 10 (paired SSIM
 * in the garment box); 1.05 with 1.65 drew the tees wider and longer than worn.
 * By eye the worn tees are larger than 0.9 draws them (person_01 and _02: ~1.17× longer), yet every
 * larger fit lowers the paired SSIM on every pair (docs/tryon-eval.md, "Still wrong"): each pixel
 * left alone on a paired photo is exact, each one redrawn carries the warp's error.
 */
export const K_SHOULDER = 0.9
/** Height of the shoulder seams above the joints, × the joint distance. */
export const LIFT = 0.22
/** Waistband of a bottom above the hip joints, × the hip-joint distance. */
export const WAIST_RISE = 0.2
/**
 * Shoulder-to-hip-joint length / shoulder-joint distance of the body a garment's proportions are
 * taken to be made for: standing adults facing the camera measure 1.5–1.8 (BlazePose joints);
 * fitted with K_SHOULDER on the paired photos.
 */
export const TORSO_RATIO = 1.55
/** Height of the garment's back collar above the shoulder seams, × the joint distance. */
export const NECK_RISE = 0.15

/** Distance from `from` along `dir` while inside the person mask and off the arms. */
function scanOut(p: PersonAnalysis, from: Point, dir: Point, maxDist: number): number {
  let d = 0
  for (; d < maxDist; d++) {
    const x = Math.round(from.x + dir.x * d)
    const y = Math.round(from.y + dir.y * d)
    if (x < 0 || y < 0 || x >= p.width || y >= p.height) break
    const i = y * p.width + x
    if (p.mask.data[i]! < 0.5 || (d > 2 && p.arms.data[i]! > 0.5)) break
  }
  return d
}

/** Whether segments ab and cd cross (proper intersection). */
export function segmentsCross(a: Point, b: Point, c: Point, d: Point): boolean {
  const o = (p: Point, q: Point, r: Point) =>
    Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x))
  return o(a, b, c) * o(a, b, d) < 0 && o(c, d, a) * o(c, d, b) < 0
}

/** Left/right in the image (x small = image left), whatever way the person faces. */
function imageSides(a: Point, b: Point): [Point, Point] {
  return a.x <= b.x ? [a, b] : [b, a]
}

/**
 * The pose findings that stop this category (pose-check.ts): every garment needs an upright torso
 * facing the camera, tops and dresses a torso not hidden by the forearms, bottoms and dresses
 * standing legs. Throws AppError `unsupported_pose` with the finding's sentence.
 */
export function assertDressable(category: GarmentCategory, person: PersonAnalysis): void {
  const { body, arms, legs } = person.pose
  const why = body ?? (category !== 'lower' ? arms : null) ?? (category !== 'upper' ? legs : null)
  if (why !== null) throw new AppError('unsupported_pose', why)
}

export function fitParts(
  category: GarmentCategory,
  lm: GarmentLandmarks,
  garmentMask: Plane,
  person: PersonAnalysis,
): WarpPart[] {
  assertDressable(category, person)
  if (lm.kind === 'top') return fitTop(category, lm, garmentMask, person)
  return fitBottom(lm, garmentMask, person)
}

function fitTop(
  category: GarmentCategory,
  g: TopLandmarks,
  gm: Plane,
  p: PersonAnalysis,
): WarpPart[] {
  const pts = p.points
  const [psL, psR] = imageSides(pts[LM.leftShoulder]!, pts[LM.rightShoulder]!)
  const [phL, phR] = imageSides(pts[LM.leftHip]!, pts[LM.rightHip]!)
  const sw = dist(psL, psR)
  // Torso frame: d along the body axis (shoulder centre → hip centre), u across it (image-right).
  const d = norm(sub(mid(phL, phR), mid(psL, psR)))
  const u = { x: d.y, y: -d.x }
  const us = norm(sub(psR, psL))
  const gsw = dist(g.shoulderL, g.shoulderR)
  const s = (sw * K_SHOULDER) / gsw
  // Lengths down the body follow the torso, widths the shoulders: a garment's proportions are those
  // of an average torso (shoulder-to-hip length TORSO_RATIO × the shoulder-joint distance). A
  // shorter torso (or shoulders that look wider) shortens the garment, a three-quarter turn (the
  // shoulders look narrower, the torso does not) keeps its length.
  const torsoRatio = dist(mid(psL, psR), mid(phL, phR)) / (sw || 1)
  const sv = s * clamp(torsoRatio / TORSO_RATIO, 0.8, 1.4)
  // Shoulder seams: on the (possibly tilted) shoulder line, outside the joints, a little above.
  const tShoulderL = sub(sub(psL, mul(us, ((K_SHOULDER - 1) / 2) * sw)), mul(d, LIFT * sw))
  const tShoulderR = sub(add(psR, mul(us, ((K_SHOULDER - 1) / 2) * sw)), mul(d, LIFT * sw))
  const mp = mid(tShoulderL, tShoulderR)
  const mg = mid(g.shoulderL, g.shoulderR)
  const map = (q: Point): Point => {
    const r = sub(q, mg)
    return add(mp, add(mul(u, r.x * s), mul(d, r.y * sv)))
  }
  /** Relative to a shoulder seam (armpits, sleeve roots follow their own shoulder). */
  const fromShoulder = (q: Point, gS: Point, tS: Point): Point =>
    add(tS, add(mul(u, (q.x - gS.x) * s), mul(d, (q.y - gS.y) * sv)))
  /** Garment row (L, R) → person points, widened to the torso silhouette at that height. */
  const widened = (l: Point, r: Point, maxGrow: number): [Point, Point] => {
    const c = map(mid(l, r))
    const half = (dist(l, r) / 2) * s
    const bodyL = scanOut(p, c, mul(u, -1), 1.2 * sw)
    const bodyR = scanOut(p, c, u, 1.2 * sw)
    const hl = clamp(bodyL * 1.04, half, half * maxGrow)
    const hr = clamp(bodyR * 1.04, half, half * maxGrow)
    return [sub(c, mul(u, hl)), add(c, mul(u, hr))]
  }
  const [tWaistL, tWaistR] = widened(g.waistL, g.waistR, 1.6)
  const [tHemL, tHemR] =
    category === 'full' ? [map(g.hemL), map(g.hemR)] : widened(g.hemL, g.hemR, 1.6)
  const torsoSrc = [
    g.neck,
    g.shoulderL,
    g.shoulderR,
    g.armpitL,
    g.armpitR,
    mid(g.waistL, g.waistR),
    g.waistL,
    g.waistR,
    g.hemL,
    g.hemR,
    mid(g.hemL, g.hemR),
  ]
  const tArmpitL = fromShoulder(g.armpitL, g.shoulderL, tShoulderL)
  const tArmpitR = fromShoulder(g.armpitR, g.shoulderR, tShoulderR)
  // The back collar (top of the neck opening on the photo) sits behind the neck, above the seams.
  const tNeck = sub(map({ x: g.neck.x, y: mg.y }), mul(d, NECK_RISE * sw))
  const torsoDst = [
    tNeck,
    tShoulderL,
    tShoulderR,
    tArmpitL,
    tArmpitR,
    mid(tWaistL, tWaistR),
    tWaistL,
    tWaistR,
    tHemL,
    tHemR,
    mid(tHemL, tHemR),
  ]

  // Part masks on the garment: sleeves outside the side lines above the sleeve's end, torso the rest
  // (overlapping, so the seam never opens).
  const sleeveEnd = (sl: SleeveLandmarks | null) =>
    sl === null ? -1 : Math.max(sl.armpit.y, sl.cuff.y + sl.cuffHalfWidth)
  const endL = sleeveEnd(g.sleeveL)
  const endR = sleeveEnd(g.sleeveR)
  const torsoMask = plane(gm.width, gm.height)
  const sleeveLMask = plane(gm.width, gm.height)
  const sleeveRMask = plane(gm.width, gm.height)
  // Torso and sleeves overlap by `seam` either side of the side line (the sleeve is drawn over the
  // torso), so the two splines never open a gap along the armhole.
  const seam = Math.max(4, 0.06 * (g.sideR(0) - g.sideL(0)))
  for (let y = 0; y < gm.height; y++) {
    const xl = g.sideL(y)
    const xr = g.sideR(y)
    for (let x = 0; x < gm.width; x++) {
      const i = y * gm.width + x
      const a = gm.data[i]!
      if (a <= 0) continue
      const inL = y <= endL && x < xl + seam
      const inR = y <= endR && x > xr - seam
      if (inL) sleeveLMask.data[i] = a
      if (inR) sleeveRMask.data[i] = a
      if (!(y <= endL && x < xl - seam) && !(y <= endR && x > xr + seam)) torsoMask.data[i] = a
    }
  }
  const parts: WarpPart[] = [
    { name: 'torso', mask: torsoMask, targets: torsoDst, sources: torsoSrc, layer: 'body' },
  ]

  // The image-left sleeve belongs to whichever arm is on the image left.
  const leftArmIsImageLeft = pts[LM.leftShoulder]!.x <= pts[LM.rightShoulder]!.x
  const armL = leftArmIsImageLeft
    ? [LM.leftShoulder, LM.leftElbow, LM.leftWrist]
    : [LM.rightShoulder, LM.rightElbow, LM.rightWrist]
  const armR = leftArmIsImageLeft
    ? [LM.rightShoulder, LM.rightElbow, LM.rightWrist]
    : [LM.leftShoulder, LM.leftElbow, LM.leftWrist]
  const frame: SleeveFrame = { s, sw, centre: mp, garmentShoulders: gsw }
  for (const part of [
    fitSleeve(p, frame, 'sleeve-left', g.sleeveL, sleeveLMask, armL, tShoulderL, tArmpitL),
    fitSleeve(p, frame, 'sleeve-right', g.sleeveR, sleeveRMask, armR, tShoulderR, tArmpitR),
  ]) {
    if (part !== null) parts.push(part)
  }
  return parts
}

function fitBottom(g: BottomLandmarks, gm: Plane, p: PersonAnalysis): WarpPart[] {
  const pts = p.points
  const leftIsImageLeft = pts[LM.leftHip]!.x <= pts[LM.rightHip]!.x
  const legL = leftIsImageLeft
    ? [LM.leftHip, LM.leftKnee, LM.leftAnkle]
    : [LM.rightHip, LM.rightKnee, LM.rightAnkle]
  const legR = leftIsImageLeft
    ? [LM.rightHip, LM.rightKnee, LM.rightAnkle]
    : [LM.leftHip, LM.leftKnee, LM.leftAnkle]
  // The landmark model sometimes pairs each hip with the other leg (a leg kicked up across the
  // frame): thighs that cross each other are untangled by giving each hip the other knee and ankle.
  if (segmentsCross(pts[legL[0]!]!, pts[legL[1]!]!, pts[legR[0]!]!, pts[legR[1]!]!)) {
    ;[legL[1], legR[1]] = [legR[1]!, legL[1]!]
    ;[legL[2], legR[2]] = [legR[2]!, legL[2]!]
  }
  const hipL = pts[legL[0]!]!
  const hipR = pts[legR[0]!]!
  const hw = dist(hipL, hipR)
  const u = norm(sub(hipR, hipL))
  const shoulderMid = mid(pts[LM.leftShoulder]!, pts[LM.rightShoulder]!)
  const hipMid = mid(hipL, hipR)
  const d = norm(sub(hipMid, shoulderMid))
  const uu = norm({ x: d.y, y: -d.x }) // image-right, perpendicular to the body axis
  const ux = dot(uu, u) < 0 ? mul(uu, -1) : uu
  // The waistband sits WAIST_RISE × the hip-joint distance above the hip joints; the garment's
  // waist width matches the person's silhouette there (from each side's joint line outwards, off
  // the arms), and everything else keeps the garment's proportions (rise, leg length).
  const waistP = sub(hipMid, mul(d, WAIST_RISE * hw))
  const wl = sub(waistP, mul(ux, hw / 2))
  const wr = add(waistP, mul(ux, hw / 2))
  const outL = scanOut(p, wl, mul(ux, -1), hw)
  const outR = scanOut(p, wr, ux, hw)
  const bodyWaist = clamp(hw + outL + outR, 1.2 * hw, 1.9 * hw)
  const gWaist = dist(g.waistL, g.waistR)
  const s = (bodyWaist * 1.02) / gWaist
  const gw0 = mid(g.waistL, g.waistR)
  const map = (q: Point): Point => {
    const r = sub(q, gw0)
    return add(waistP, add(mul(ux, r.x * s), mul(d, r.y * s)))
  }
  const waistC = mid(g.waistL, g.waistR)

  if (!g.legs) {
    const src = [
      g.waistL,
      g.waistR,
      waistC,
      g.hipL,
      g.hipR,
      g.hemLOuter,
      g.hemROuter,
      mid(g.hemLOuter, g.hemROuter),
    ]
    return [{ name: 'skirt', mask: gm, targets: src.map(map), sources: src, layer: 'body' }]
  }

  const split = g.crotch.x
  const maskL = plane(gm.width, gm.height)
  const maskR = plane(gm.width, gm.height)
  for (let y = 0; y < gm.height; y++) {
    for (let x = 0; x < gm.width; x++) {
      const i = y * gm.width + x
      const a = gm.data[i]!
      if (a <= 0) continue
      if (x < split + 3) maskL.data[i] = a
      if (x > split - 3) maskR.data[i] = a
    }
  }
  const leg = (
    name: 'leg-left' | 'leg-right',
    chain: Point[],
    gOuterTop: Point,
    gHemOuter: Point,
    gHemInner: Point,
    mask: Plane,
    outward: Point,
  ): WarpPart => {
    const gInnerTop = g.crotch
    const gTop = mid(gOuterTop, gInnerTop)
    const gHem = mid(gHemOuter, gHemInner)
    const gLen = dist(gTop, gHem)
    const len = gLen * s
    const tOuterTop = map(gOuterTop)
    const tInnerTop = map(gInnerTop)
    const tTop = mid(tOuterTop, tInnerTop)
    // Person leg polyline from the leg's top centre through knee and ankle (extended past the ankle).
    const poly = [tTop, chain[1]!, chain[2]!]
    const segs: { a: Point; dir: Point; len: number }[] = []
    for (let i = 0; i + 1 < poly.length; i++) {
      segs.push({
        a: poly[i]!,
        dir: norm(sub(poly[i + 1]!, poly[i]!)),
        len: dist(poly[i]!, poly[i + 1]!),
      })
    }
    const along = (a: number): { at: Point; dir: Point } => {
      let rest = a
      for (let i = 0; i < segs.length; i++) {
        const sg = segs[i]!
        if (rest <= sg.len || i === segs.length - 1) {
          return { at: add(sg.a, mul(sg.dir, rest)), dir: sg.dir }
        }
        rest -= sg.len
      }
      return { at: tTop, dir: d }
    }
    const src: Point[] = [name === 'leg-left' ? g.waistL : g.waistR, waistC, gOuterTop, gInnerTop]
    const dst: Point[] = [map(src[0]!), map(waistC), tOuterTop, tInnerTop]
    const topHalf = dist(gOuterTop, gInnerTop) / 2
    const hemHalf = dist(gHemOuter, gHemInner) / 2
    // The outer seam turns with the leg: the normal keeps the handedness it has on a leg hanging
    // along the body axis (a leg kicked up sideways must not swap its outer and inner edges).
    const hand = dot(perp(d), outward) < 0 ? -1 : 1
    for (const f of [0.33, 0.66, 1]) {
      const { at, dir } = along(f * len)
      const n = mul(perp(dir), hand)
      const half = (topHalf + (hemHalf - topHalf) * f) * s
      let inner = sub(at, mul(n, half))
      // The inner edge never crosses the body's midline (wide legs on converging thighs would fold).
      const side = dot(sub(inner, waistP), outward)
      if (side < 0.02 * hw) inner = add(inner, mul(outward, 0.02 * hw - side))
      src.push(lerp(gOuterTop, gHemOuter, f), lerp(gInnerTop, gHemInner, f))
      dst.push(add(at, mul(n, half)), inner)
    }
    return { name, mask, targets: dst, sources: src, layer: 'body' }
  }
  return [
    leg(
      'leg-left',
      legL.map((i) => pts[i]!),
      g.hipL,
      g.hemLOuter,
      g.hemLInner,
      maskL,
      mul(ux, -1),
    ),
    leg(
      'leg-right',
      legR.map((i) => pts[i]!),
      g.hipR,
      g.hemROuter,
      g.hemRInner,
      maskR,
      ux,
    ),
  ]
}
