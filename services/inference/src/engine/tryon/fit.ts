/**
 * Correspondences (stage 3 input): where each garment landmark goes on the person.
 *
 * Contract — in: the garment's category, landmarks and mask (garment pixels) and the person
 * analysis. Out: `WarpPart[]`, each a piece of the garment that moves as one (torso or dress body,
 * a sleeve, a trouser leg, a skirt) with its mask on the garment photo and matching control points
 * (person pixels ↔ garment pixels) for a thin-plate spline, plus its layer in the occlusion order.
 *
 * Geometry:
 * - Tops and dresses are sized from the body's silhouette: the garment's chest (armpit to armpit)
 *   is drawn CHEST_SPAN × the body's shoulder span (`shoulderSpan`: the person mask's edges at
 *   shoulder height, the upper arms' outline included), its shoulder seams centred on that span
 *   LIFT × the shoulder-joint distance above the joints; every other landmark keeps its position
 *   relative to the shoulders, scaled across by that factor and down the body by it × the person's
 *   torso length / (TORSO_SPAN × the span) (clamped 0.8–1.4), so the garment's length follows its
 *   proportions on the photo and the person's torso (a three-quarter turn narrows the shoulders,
 *   not the torso). A garment photographed worn (`TopLandmarks.wearer`) is drawn at the scale of
 *   the body it is worn on instead: across, the person's shoulder-joint distance / the wearer's;
 *   down, the person's shoulder-to-hip length / the wearer's (the wearer's joints stand inside the
 *   garment as the person's will; its chest on the photo is that body's plus the ease and the
 *   sleeves hanging against it, so the chest rule drew an on-model cardigan a third too small).
 *   Sleeves scale with the skeleton instead (SLEEVE_K × the joint distance),
 *   except a short one hanging down the arm, whose lengths follow the torso's scale (fit-sleeve.ts
 *   `hangingRows`); a sleeve's part of the garment reaches down to its hem's lowest row
 *   (`sleeveBottom`).
 *   Waist and hem widths are widened to the person's torso silhouette where the garment would be
 *   narrower than the body (clothes stretch). A top whose hem would end above where the old top
 *   ended is lengthened below its armpits to reach it (`hemStretch`, HEM_STRETCH; not a crop
 *   top). Each sleeve (fit-sleeve.ts) follows the arm: its root stays on the shoulder–armpit seam
 *   and its axis goes along shoulder → elbow → wrist where those joints are sure and make an arm;
 *   a short sleeve ends at its own scaled length, a long one at the share of the arm its length
 *   says (at the wrist); never narrower than the arm.
 * - Bottoms are placed from the waist: the waistband sits WAIST_RISE × the hip-joint distance above
 *   the hip joints and its width matches the person's silhouette there; rise and leg length keep
 *   the garment's proportions, and each leg follows hip → knee → ankle for the scaled leg length,
 *   with its scaled widths. A skirt's rows (waistband, hips, the knees of one whose hem is well
 *   below them, hem) are as wide as the garment at that scale but never narrower than the body
 *   across them (`bodyAcross`: the legs as undress.ts paints them, within the person mask) ×
 *   SKIRT_EASE, and centred on the body there: an on-model skirt is as slim as its model and leans
 *   with her stance, and a narrower skirt left a painted leg showing beside it.
 */
import { AppError } from '@tailor/proto'
import { fitSleeve, type SleeveFrame } from './fit-sleeve.ts'
import { LM, type Landmark } from './pose.ts'
import { ANKLE_R, KNEE_R, KNEE_SURE, THIGH_R } from './undress.ts'
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
 * A top's chest (the garment's armpit-to-armpit width) is drawn CHEST_SPAN × the body's shoulder
 * span on the silhouette (`shoulderSpan`: edge to edge at shoulder height, the upper arms' outline
 * included): the body's chest below the armpits is about 0.7 of that span, and a worn top stands a
 * little off it (ease). The chest, not the shoulder seams, sets the size: a strap top's "shoulders"
 * are its straps, a dropped shoulder's seams sit out on the arm. BlazePose's shoulder joints lie
 * well inside the outline (on the set the span is 1.28–1.58 × the joint distance), which is why
 * tops placed from the joints alone (0.9 × their distance between the seams) came out about two
 * thirds of their worn size.
 */
export const CHEST_SPAN = 0.7
/** The span, × the shoulder-joint distance, is clamped to this; a side without a usable edge mirrors the other. */
export const SPAN_RANGE = [1.2, 1.65] as const
/** The span when neither side's edge is usable (× the joint distance; the set's median is 1.41). */
export const SPAN_FALLBACK = 1.42
/**
 * A sleeve's scale: the garment's shoulder-seam distance drawn as SLEEVE_K × the shoulder-joint
 * distance (the scale all of a top had before the chest set it; fitted then on the paired photos).
 */
export const SLEEVE_K = 0.9
/** Height of the shoulder seams above the joints, × the joint distance. */
export const LIFT = 0.22
/** Waistband of a bottom above the hip joints, × the hip-joint distance. */
export const WAIST_RISE = 0.2
/**
 * Shoulder-to-hip-joint length / shoulder span (silhouette) of the body a garment's proportions are
 * taken to be made for: the set's persons measure 1.0–1.25 (1.67 on a three-quarter turn).
 */
export const TORSO_SPAN = 1.15
/** Height of the garment's back collar above the shoulder seams, × the joint distance. */
export const NECK_RISE = 0.15
/**
 * A top (not a dress) whose hem lands above where the person's old top ended (`FitHints.wornHemY`:
 * its lowest row, or higher where a visible old bottom begins; without either, the hip joints'
 * line) is worn at its natural length: its part below the armpits is lengthened so that the hem
 * reaches that row plus HEM_OVERLAP × the joint distance (no painted skin band between the new hem
 * and the waistband), its whole length (shoulder seams to hem) at most HEM_STRETCH × its own.
 * A crop top — its shoulder-to-hem length under CROP_ASPECT × its armpit-to-armpit width (the set's
 * tees, shirts, blouses, tank and sweater measure 1.57–1.84) — stays cropped.
 */
export const HEM_STRETCH = 1.3
export const HEM_OVERLAP = 0.03
export const CROP_ASPECT = 1.3

/**
 * A skirt's waistband, hips and hem are at least this × the body's half-width across them
 * (`bodyAcross`) either side of the body's middle there.
 */
export const SKIRT_EASE = 1.06

/** What the compositor knows of the person's clothes, when the fit may use it. */
export interface FitHints {
  /**
   * Where the old top ended on the body axis (photo row): the higher of where the old bottom in
   * front of a new top begins (tuck.ts `hemY`) and the old top's lowest row (clothing.ts `topHemY`);
   * null: unknown.
   */
  wornHemY?: number | null
}

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

/** Rows (× the shoulder-joint distance below the joints, along the body axis) the shoulder span is read on. */
export const SPAN_ROWS = [0, 0.08, 0.16] as const
/** A side's silhouette edge counts when it lies within this range (× the joint distance) outside its joint. */
export const SPAN_OUT = [0.05, 0.6] as const

/**
 * The body's shoulders on the silhouette: from each shoulder joint outwards along the shoulder
 * line, how far the person mask reaches (× the joint distance), the median over SPAN_ROWS. The
 * arm capsules are not a stop (the shoulder's outline is the upper arm's). null for a side whose
 * edge is not within SPAN_OUT: an arm raised along the shoulder line, a mask that is lost there.
 */
export function shoulderSpan(
  p: PersonAnalysis,
  psL: Point,
  psR: Point,
  down: Point,
): { left: number | null; right: number | null } {
  const sw = dist(psL, psR)
  const us = norm(sub(psR, psL))
  const side = (j: Point, out: Point): number | null => {
    const reads: number[] = []
    for (const o of SPAN_ROWS) {
      const from = add(j, mul(down, o * sw))
      let d = 0
      const max = SPAN_OUT[1] * sw
      for (; d <= max; d++) {
        const x = Math.round(from.x + out.x * d)
        const y = Math.round(from.y + out.y * d)
        if (x < 0 || y < 0 || x >= p.width || y >= p.height) break
        if (p.mask.data[y * p.width + x]! < 0.5) break
      }
      reads.push(d / sw)
    }
    reads.sort((a, b) => a - b)
    const m = reads[Math.floor(reads.length / 2)]!
    return m >= SPAN_OUT[0] && m < SPAN_OUT[1] ? m : null
  }
  return { left: side(psL, mul(us, -1)), right: side(psR, us) }
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
  hints: FitHints = {},
): WarpPart[] {
  assertDressable(category, person)
  if (lm.kind === 'top') return fitTop(category, lm, garmentMask, person, hints.wornHemY ?? null)
  return fitBottom(lm, garmentMask, person)
}

function fitTop(
  category: GarmentCategory,
  g: TopLandmarks,
  gm: Plane,
  p: PersonAnalysis,
  wornHemY: number | null,
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
  // The body's shoulder span on the silhouette, centred where its two edges are.
  const edges = shoulderSpan(p, psL, psR, d)
  const eL = edges.left ?? edges.right
  const eR = edges.right ?? edges.left
  const spanRaw = eL === null || eR === null ? SPAN_FALLBACK : 1 + eL + eR
  const span = clamp(spanRaw, SPAN_RANGE[0], SPAN_RANGE[1]) * sw
  const spanShift = eL === null || eR === null ? 0 : ((eR - eL) / 2) * sw
  // A garment photographed worn (g.wearer) is drawn at the scale of the body it is worn on: its
  // wearer's shoulder joints onto the person's across, shoulder-to-hip length down.
  const worn = g.wearer
  const s =
    worn !== undefined
      ? sw / worn.shoulderWidth
      : (CHEST_SPAN * span) / (dist(g.armpitL, g.armpitR) || gsw)
  // Lengths down the body follow the torso, widths the shoulders: a garment's proportions are those
  // of an average torso (shoulder-to-hip length TORSO_SPAN × the shoulder span). A shorter torso (or
  // shoulders that look wider) shortens the garment, a three-quarter turn (the shoulders look
  // narrower, the torso does not) keeps its length.
  const torsoRatio = dist(mid(psL, psR), mid(phL, phR)) / span
  const wornTorso = worn === undefined ? 0 : dist(worn.shoulders, worn.hips)
  const sv =
    worn !== undefined && wornTorso > 0
      ? dist(mid(psL, psR), mid(phL, phR)) / wornTorso
      : s * clamp(torsoRatio / TORSO_SPAN, 0.8, 1.4)
  // Shoulder seams: on the (possibly tilted) shoulder line, centred on the span, a little above the
  // joints, as far apart as the garment's proportions put them at this scale.
  const c0 = sub(add(mid(psL, psR), mul(us, spanShift)), mul(d, LIFT * sw))
  const tShoulderL = sub(c0, mul(us, (gsw / 2) * s))
  const tShoulderR = add(c0, mul(us, (gsw / 2) * s))
  const mp = mid(tShoulderL, tShoulderR)
  const mg = mid(g.shoulderL, g.shoulderR)
  const below =
    category === 'upper' ? hemStretch(g, mp, d, sv, sw, psL, psR, phL, phR, wornHemY) : null
  const map = (q: Point): Point => {
    const r = sub(q, mg)
    const down =
      below === null || q.y <= below.fromY
        ? r.y * sv
        : (below.fromY - mg.y) * sv + (q.y - below.fromY) * sv * below.k
    return add(mp, add(mul(u, r.x * s), mul(d, down)))
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
  // Torso and sleeves overlap by `seam` either side of the side line (the sleeve is drawn over the
  // torso), so the two splines never open a gap along the armhole.
  const seam = Math.max(4, 0.06 * (g.sideR(0) - g.sideL(0)))
  const sleeveEnd = (sl: SleeveLandmarks | null, side: (y: number) => number, out: -1 | 1) =>
    sl === null ? -1 : sleeveBottom(gm, sl, side, out, seam)
  const endL = sleeveEnd(g.sleeveL, g.sideL, -1)
  const endR = sleeveEnd(g.sleeveR, g.sideR, 1)
  const torsoMask = plane(gm.width, gm.height)
  const sleeveLMask = plane(gm.width, gm.height)
  const sleeveRMask = plane(gm.width, gm.height)
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
  // Sleeves follow the arm's bones, not the body's girth: their length and width scale with the
  // shoulder-joint distance (SLEEVE_K), whatever the chest (a broad or plus-size body does not
  // have longer arms; sleeves scaled with the chest ran past the elbow, over the hands).
  const frame: SleeveFrame = {
    s: (SLEEVE_K * sw) / gsw,
    sw,
    centre: mp,
    garmentShoulders: gsw,
    worn: s,
  }
  for (const part of [
    fitSleeve(p, frame, 'sleeve-left', g.sleeveL, sleeveLMask, armL, tShoulderL, tArmpitL),
    fitSleeve(p, frame, 'sleeve-right', g.sleeveR, sleeveRMask, armR, tShoulderR, tArmpitR),
  ]) {
    if (part !== null) parts.push(part)
  }
  return parts
}

/**
 * How a top's part below its armpits is lengthened (HEM_STRETCH): garment rows below `fromY` go
 * down the body `k` × as far as the fit's scale puts them; null when the hem already reaches the
 * target row, the garment is a crop top (CROP_ASPECT) or the torso frame is degenerate.
 */
export function hemStretch(
  g: TopLandmarks,
  mp: Point,
  d: Point,
  sv: number,
  sw: number,
  psL: Point,
  psR: Point,
  phL: Point,
  phR: Point,
  wornHemY: number | null,
): { fromY: number; k: number } | null {
  const mg = mid(g.shoulderL, g.shoulderR)
  const hemY = (g.hemL.y + g.hemR.y) / 2
  const fromY = (g.armpitL.y + g.armpitR.y) / 2
  const chest = dist(g.armpitL, g.armpitR)
  const length = (hemY - mg.y) * sv
  if (chest <= 0 || hemY - fromY <= 0 || length <= 0) return null
  if ((hemY - mg.y) / chest < CROP_ASPECT) return null
  // The target on the body axis (shoulder centre → hip centre): where the old top ended when known
  // (a tucked top: the waistband, above the hip joints), else the hip joints' line.
  const sm = mid(psL, psR)
  const hm = mid(phL, phR)
  if (hm.y - sm.y <= 1) return null
  const row = wornHemY ?? hm.y
  const at = add(sm, mul(sub(hm, sm), (row - sm.y) / (hm.y - sm.y)))
  const want = dot(sub(at, mp), d) + HEM_OVERLAP * sw
  if (want <= length) return null
  const grown = Math.min(want, HEM_STRETCH * length)
  const belowLen = (hemY - fromY) * sv
  return { fromY, k: 1 + (grown - length) / belowLen }
}

/**
 * The last garment row of a sleeve (`out`: -1 image-left, 1 image-right): below its armpit and its
 * cuff's half-width below the cuff, and on down while the row still reaches more than `seam` past
 * the side line by no more than the row above (a slanted hem draws in; a body flaring out below the
 * sleeve does not), for at most the cuff's distance from the armpit: a ghost mannequin's short
 * sleeve hangs at a slant, its hem's inner corner below the cuff point (dev garment_upper_01), and
 * those rows, given to the torso, were drawn as a dark wedge beside the torso under the armpit.
 */
export function sleeveBottom(
  gm: Plane,
  sl: SleeveLandmarks,
  side: (y: number) => number,
  out: -1 | 1,
  seam: number,
): number {
  let end = Math.max(sl.armpit.y, sl.cuff.y + sl.cuffHalfWidth)
  const limit = Math.min(gm.height - 1, end + dist(sl.armpit, sl.cuff))
  // How far row y reaches past the side line and the seam (0: not at all).
  const reach = (y: number): number => {
    const edge = side(y) + out * seam
    let far = 0
    for (let x = 0; x < gm.width; x++) {
      if (gm.data[y * gm.width + x]! > 0.5) far = Math.max(far, out * (x - edge))
    }
    return far
  }
  let prev = reach(Math.floor(end))
  for (let y = Math.floor(end) + 1; y <= limit; y++) {
    // A slanted hem draws in row by row; a body that flares out below the sleeve does not.
    const r = reach(y)
    if (r <= 0 || r > prev + 1) break
    prev = r
    end = y
  }
  return end
}

/**
 * The body across the body axis at `depth` (px along `d` below `o`), as the painted legs under a
 * new skirt are drawn (undress.ts `bodyModel`): each leg's axis (hip → knee → ankle, a knee under
 * KNEE_SURE straight below its hip, extended past the last joint and above the hip along `d`) and
 * from it outwards (along ∓`ux`) the person mask, arms included (a hand on the hip is in front of
 * it), at most the leg model's radius there (THIGH_R at the hip, KNEE_R at the knee, ANKLE_R at
 * the ankle, × `hw`). `left`, `right`: the outer edges, along `ux` from `o`.
 */
export function bodyAcross(
  p: PersonAnalysis,
  o: Point,
  d: Point,
  ux: Point,
  depth: number,
  chains: readonly (readonly Landmark[])[],
  hw: number,
): { left: number; right: number } {
  const edge = (chain: readonly Landmark[], out: -1 | 1): { x: number; e: number } => {
    const [hip, knee, ankle] = chain as [Landmark, Landmark, Landmark]
    const k = knee.score >= KNEE_SURE ? knee : add(hip, mul(d, dist(hip, knee)))
    const nodes = ankle.score > 0.2 ? [hip, k, ankle] : [hip, k]
    const radii = [THIGH_R, KNEE_R, ANKLE_R].map((r) => r * hw)
    const t = (q: Point) => dot(sub(q, o), d)
    let at = add(hip, mul(d, depth - t(hip)))
    let r = radii[0]!
    for (let i = 0; i + 1 < nodes.length && depth > t(hip); i++) {
      const a = nodes[i]!
      const b = nodes[i + 1]!
      const dir = norm(sub(b, a))
      // A segment that does not go down the body (a leg raised sideways) goes straight down.
      const step = dot(dir, d) > 0.3 ? dir : d
      const f = (depth - t(a)) / Math.max(1e-6, dot(mul(step, dist(a, b)), d))
      if (f <= 1 || i + 2 === nodes.length) {
        at = add(a, mul(step, Math.max(0, f) * dist(a, b)))
        r = radii[i]! + (radii[i + 1]! - radii[i]!) * clamp(f, 0, 1)
        break
      }
    }
    const x = dot(sub(at, o), ux)
    const px = Math.round(at.x)
    const py = Math.round(at.y)
    // Below the frame (a half-body photo), the leg model.
    if (px < 0 || py < 0 || px >= p.width || py >= p.height) return { x, e: r }
    let e = 0
    for (; e < r; e++) {
      const xx = Math.round(at.x + out * ux.x * e)
      const yy = Math.round(at.y + out * ux.y * e)
      if (xx < 0 || yy < 0 || xx >= p.width || yy >= p.height) break
      if (p.mask.data[yy * p.width + xx]! < 0.5) break
    }
    return { x, e }
  }
  const l = edge(chains[0]!, -1)
  const r = edge(chains[1]!, 1)
  return { left: Math.min(l.x - l.e, r.x), right: Math.max(r.x + r.e, l.x) }
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
    // Each row (waistband, hips, a long skirt's knees, hem) as wide as the garment makes it at this
    // scale, never narrower than the body across it (`bodyAcross`, × SKIRT_EASE), centred on the
    // body there: an on-model skirt is as slim as its model and hangs with her stance, and a knee
    // bent forward under a long skirt pushes it out.
    const chains = [legL, legR].map((c) => c.map((i) => pts[i]!))
    const bodyHw = Math.max(hw, 0.45 * p.shoulderWidth)
    const depthOf = (l: Point, r: Point) => dot(sub(map(mid(l, r)), waistP), d)
    const row = (l: Point, r: Point): [Point, Point] => {
      const depth = depthOf(l, r)
      const body = bodyAcross(p, waistP, d, ux, depth, chains, bodyHw)
      const half = Math.max((dist(l, r) / 2) * s, ((body.right - body.left) / 2) * SKIRT_EASE)
      const at = add(waistP, add(mul(d, depth), mul(ux, (body.left + body.right) / 2)))
      return [sub(at, mul(ux, half)), add(at, mul(ux, half))]
    }
    const src = [g.waistL, g.waistR, g.hipL, g.hipR, g.hemLOuter, g.hemROuter]
    // The knees' row, on a skirt whose hem is well below them.
    const dHip = depthOf(g.hipL, g.hipR)
    const dHem = depthOf(g.hemLOuter, g.hemROuter)
    const kneeDepth =
      chains
        .map(([hip, knee]) => {
          const k = knee!.score >= KNEE_SURE ? knee! : add(hip!, mul(d, dist(hip!, knee!)))
          return dot(sub(k, waistP), d)
        })
        .reduce((a, b) => a + b) / 2
    const fKnee = dHem > dHip ? (kneeDepth - dHip) / (dHem - dHip) : 0
    if (fKnee > 0.15 && fKnee < 0.85) {
      src.push(lerp(g.hipL, g.hemLOuter, fKnee), lerp(g.hipR, g.hemROuter, fKnee))
    }
    const dst: Point[] = []
    for (let i = 0; i < src.length; i += 2) dst.push(...row(src[i]!, src[i + 1]!))
    // The waistband's and the hem's middles.
    src.push(waistC, mid(g.hemLOuter, g.hemROuter))
    dst.push(mid(dst[0]!, dst[1]!), mid(dst[4]!, dst[5]!))
    return [{ name: 'skirt', mask: gm, targets: dst, sources: src, layer: 'body' }]
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
