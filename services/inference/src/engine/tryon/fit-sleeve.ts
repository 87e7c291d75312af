/**
 * Sleeve correspondences (part of stage 3, called by fit.ts `fitTop`): where a garment's sleeve goes
 * on the person's arm.
 *
 * Contract — in: the person analysis, the torso frame of the top (scale `s` garment → person pixels,
 * shoulder-joint distance `sw`, the centre between the placed shoulder seams, the garment's
 * shoulder-seam distance), one sleeve's landmarks and its mask on the garment photo, the arm's joint
 * indices (shoulder, elbow, wrist) and where the torso fit put that side's shoulder seam and
 * armpit. Out: the sleeve's `WarpPart` (layer 'sleeve'), or null when the garment has no sleeve on
 * that side.
 *
 * Geometry:
 * - The arm (`armPath`): the sleeve's axis starts at the middle of the shoulder–armpit seam and runs
 *   along the upper arm (shoulder → elbow joint) for the upper arm's length, then along the forearm
 *   to the wrist joint. A joint is used only when the landmark model is sure of it (score ≥
 *   MIN_ARM_SCORE, in the photo) and the chain is an arm: an upper arm ARM_UPPER × the torso length
 *   long, a forearm FOREARM × the upper arm, the elbow and wrist no lower than an arm reaches
 *   (ARM_REACH × the torso length below the shoulders, along the body axis) — a knee or ankle
 *   taken for an elbow or wrist would draw the sleeve down a leg. Without a sure elbow the sleeve
 *   keeps the direction it has on the garment photo (turned into the body's frame); without a sure
 *   wrist it goes on straight past the elbow.
 * - A bent sleeve (worn on a bent arm on a model photo, `SleeveLandmarks.elbow`) is drawn from its
 *   upper part (root → elbow) along the whole arm, at the whole sleeve's length; its forearm part
 *   lies folded across the body on the photo (drawn along the arm it twisted into a swirl).
 * - The length: a short sleeve keeps its own length (the garment's, × the sleeve scale `s`; a
 *   hanging one at the torso's scale, below);
 *   a long one is a share of the person's arm, its length over LONG_ARM × the garment's
 *   shoulder-seam distance (a sleeve that long reaches the wrist), so it ends at the wrist on a
 *   bent or raised arm and on a three-quarter turn (whose shoulders look narrow, its arms do not);
 *   between LONG_FROM and LONG_FULL of that share the two are blended.
 * - The width: the sleeve's own (root to cuff) scaled like the torso, never narrower than the arm
 *   in it (measured from the axis outwards on the person mask; on an arm the segmentation lost,
 *   `armHeld` below ARM_LOST_MASK, where the mask is below 0.5 on the axis: person.ts's arm capsule,
 *   LOST_ARM_UPPER / LOST_ARM_FORE), at most 1.6 × its own.
 * - The sides: a long sleeve's armpit edge goes on the arm's inner side, the side facing the body
 *   when the arm hangs: its normal turns with the arm (same handedness as the body's down and
 *   inward directions), so a hanging, raised or bent arm never swaps the sleeve's edges (which
 *   folds it). A short sleeve (cuff before the elbow) keeps the side its root seam gives, as before.
 * - A raised arm (`raiseTurn`): a short sleeve on a sure upper arm that stands out from the body
 *   farther than the sleeve does on the garment photo, and at least RAISE_FROM (50°), turns about
 *   its shoulder seam point, root seam and all, by the angle between the sleeve and the upper arm
 *   (blended in over RAISE_BLEND), so it lies along the upper arm, its armpit edge underneath; left
 *   upright on the torso, the seam and the rows up the arm folded it into a band across the torso.
 *   Hanging arms: unchanged.
 * - A short sleeve (up to HANG_SHARE of the arm) on an arm that is not turned hangs down the arm
 *   below its armhole seam (`hangingRows`): seen from the front the seam is edge-on from the placed
 *   shoulder point down to the placed armpit; the sleeve's outer edge continues from the shoulder
 *   point down the upper arm for its top length, its inner edge from the armpit for its underarm
 *   length (the cuff slanted as worn), both at the torso fit's scale (`worn`, × WORN_SLEEVE; the
 *   outer cuff at most SHORT_MAX of the upper arm below the shoulder joint), the underarm's end at
 *   the hem's inner corner on the photo (`underarmCorner`); each row widened outward to cover the
 *   arm, the inner edge on the line through the armpit along the arm or on the arm's inner side
 *   where that lies farther in (ARM_CAPSULE_UPPER: the arm composite.ts draws in front of the
 *   torso); anchors inward of that edge and on the torso's side of the seam keep the spline from
 *   folding the chest onto the sleeve. Its rows were put along the arm from the seam's middle for
 *   its own length: the cuff came level with the armpit, the sleeve squeezed beside its own seam and
 *   twisted into a flap (the README example); at the skeleton's scale, with the inner corner on the
 *   hem and the inner edge outward of the arm it was a small crescent at the shoulder with the
 *   painted arm showing between it and the torso.
 * - A longer short sleeve (up to LONG_FROM) hangs from its seam, its armpit edge against the body:
 *   on an arm that is not turned, no row reaches in past the line through the placed armpit along
 *   the arm (`bodyStop` moves the row out). Centred on a hanging arm, a sleeve wider than the arm
 *   covered the chest with its armpit half, its cuff (a white trim) a streak across the torso.
 * - The mask: a long sleeve's loses what lies beside it on the photo (`trimToSleeve`); a short
 *   sleeve's what lies on the body's side of its armpit edge (`belowArmpitCut`: the torso under the
 *   armpit, which its spline dragged in over the chest as a wedge).
 */
import type { SleeveLandmarks } from './garment-shape.ts'
import type { WarpPart } from './fit.ts'
import type { PersonAnalysis } from './person.ts'
import { LM } from './pose.ts'
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
  sub,
  type Plane,
  type Point,
} from './raster.ts'

/** The torso fit's frame that a sleeve hangs from. */
export interface SleeveFrame {
  /** Garment pixels → person pixels of a sleeve (fit.ts: SLEEVE_K × the shoulder-joint distance). */
  s: number
  /** Shoulder-joint distance on the person. */
  sw: number
  /** Centre between the placed shoulder seams. */
  centre: Point
  /** Distance between the garment's shoulder seams (garment pixels). */
  garmentShoulders: number
  /**
   * Garment pixels → person pixels of the torso fit (fit.ts: the chest drawn at its worn size, from
   * the silhouette): a short sleeve hanging down the arm takes its lengths from it (`hangingRows`).
   */
  worn: number
}

/** A joint is used when the landmark model's score is at least this. */
export const MIN_ARM_SCORE = 0.5
/** Upper arm length (shoulder → elbow joint) / torso length (shoulder centre → hip centre). */
export const ARM_UPPER = [0.3, 1.2] as const
/** Forearm length (elbow → wrist) / upper arm length. */
export const FOREARM = [0.5, 1.6] as const
/** Elbow and wrist no lower than this × the torso length below the shoulder centre (body axis). */
export const ARM_REACH = 1.5
/** A sleeve this × the garment's shoulder-seam distance long reaches the wrist. */
export const LONG_ARM = 1.4
/**
 * Sleeve length / (LONG_ARM × shoulder seams): below LONG_FROM its own length, above LONG_FULL the
 * arm's share. Tees and short-sleeve shirts measure 0.1–0.45; a sleeve reaching past the middle of
 * the forearm 0.7 and more. (The flared blouse tryon/garment_upper_03 measures 0.65: its
 * ghost-mannequin sleeves hang foreshortened; with LONG_FROM 0.55 its longer, straight sleeve
 * lowered person_03's paired SSIM from 0.810 to 0.778.)
 */
export const LONG_FROM = 0.7
export const LONG_FULL = 0.9

/** The person's arm as the sleeve axis follows it, from the seam's middle. */
export interface ArmPath {
  /** Polyline from the sleeve root: [root, elbow, wrist], [root, elbow] or [root]. */
  points: Point[]
  /** Direction past the last point (the garment's own when the elbow is not sure). */
  dir: Point
  /** Which joints were used. */
  joints: 'elbow-wrist' | 'elbow' | 'none'
}

const cross = (a: Point, b: Point): number => a.x * b.y - a.y * b.x

/**
 * The arm chain for a sleeve rooted at `root`: the sure, plausible joints of `arm` (shoulder, elbow,
 * wrist indices). `fallback` is the sleeve's direction on the garment turned into the body frame.
 */
export function armPath(
  p: PersonAnalysis,
  arm: readonly number[],
  root: Point,
  fallback: Point,
): ArmPath {
  const sure = sureArm(p, arm)
  if (sure === 'none') return { points: [root], dir: fallback, joints: 'none' }
  const jS = p.points[arm[0]!]!
  const jE = p.points[arm[1]!]!
  const jW = p.points[arm[2]!]!
  const dir1 = norm(sub(jE, jS))
  // The bend sits the upper arm's length from the root, along the upper arm (the root is beside
  // the shoulder joint, so the sleeve's axis runs parallel to the bone, as worn).
  const elbow = add(root, mul(dir1, dist(jS, jE)))
  if (sure === 'elbow') return { points: [root, elbow], dir: dir1, joints: 'elbow' }
  const wrist = add(jW, sub(elbow, jE))
  return { points: [root, elbow, wrist], dir: norm(sub(jW, jE)), joints: 'elbow-wrist' }
}

/**
 * Which joints of `arm` (shoulder, elbow, wrist indices) are sure and make an arm (see the
 * module's comment): both elbow and wrist, the elbow only, or neither.
 */
export function sureArm(p: PersonAnalysis, arm: readonly number[]): ArmPath['joints'] {
  const pts = p.points
  const jS = pts[arm[0]!]!
  const jE = pts[arm[1]!]!
  const jW = pts[arm[2]!]!
  const sMid = mid(pts[LM.leftShoulder]!, pts[LM.rightShoulder]!)
  const hMid = mid(pts[LM.leftHip]!, pts[LM.rightHip]!)
  const torso = dist(sMid, hMid)
  const down = norm(sub(hMid, sMid))
  const sure = (q: (typeof pts)[number]): boolean =>
    q.score >= MIN_ARM_SCORE && q.x >= 0 && q.y >= 0 && q.x < p.width && q.y < p.height
  const reachable = (q: Point): boolean => dot(sub(q, sMid), down) <= ARM_REACH * torso
  const upper = dist(jS, jE)
  const elbowOk =
    torso > 0 &&
    sure(jS) &&
    sure(jE) &&
    upper >= ARM_UPPER[0] * torso &&
    upper <= ARM_UPPER[1] * torso &&
    reachable(jE)
  if (!elbowOk) return 'none'
  const fore = dist(jE, jW)
  const wristOk =
    sure(jW) && fore >= FOREARM[0] * upper && fore <= FOREARM[1] * upper && reachable(jW)
  return wristOk ? 'elbow-wrist' : 'elbow'
}

/**
 * An arm the segmentation lost: the person mask along its bone (`armHeld`) holds less than this on
 * average (fully lost from ARM_LOST_MASK − ARM_LOST_BLEND). composite.ts then trusts the arm's
 * capsule instead of the mask for its sleeve.
 */
export const ARM_LOST_MASK = 0.5
export const ARM_LOST_BLEND = 0.15

/**
 * How much of the arm (shoulder, elbow, wrist indices; `sure` joints) the person mask holds: along
 * the bone — the upper arm from its middle (nearer the shoulder it lies against the torso), and the
 * forearm when the wrist is sure — the most the mask holds within ARM_HELD_ACROSS × the shoulder
 * width across it (the landmarks of a thin arm close to the body often lie on its edge: person_02's
 * hanging arm holds 0.28 on the bone itself, 1.0 with it), averaged, 0..1.
 */
export const ARM_HELD_ACROSS = 0.1

export function armHeld(
  a: PersonAnalysis,
  arm: readonly number[],
  sure: 'elbow-wrist' | 'elbow',
): number {
  const segs: [Point, Point][] = [
    [lerp(a.points[arm[0]!]!, a.points[arm[1]!]!, 0.5), a.points[arm[1]!]!],
  ]
  if (sure === 'elbow-wrist') segs.push([a.points[arm[1]!]!, a.points[arm[2]!]!])
  const across = Math.max(1, Math.round(ARM_HELD_ACROSS * a.shoulderWidth))
  let sum = 0
  let n = 0
  for (const [p, q] of segs) {
    const steps = Math.max(2, Math.ceil(dist(p, q)))
    const side = perp(norm(sub(q, p)))
    for (let k = 0; k <= steps; k++) {
      const c = lerp(p, q, k / steps)
      if (c.x < 0 || c.y < 0 || c.x >= a.width || c.y >= a.height) continue
      let best = 0
      for (let o = -across; o <= across; o++) {
        const x = Math.round(c.x + side.x * o)
        const y = Math.round(c.y + side.y * o)
        if (x < 0 || y < 0 || x >= a.width || y >= a.height) continue
        best = Math.max(best, a.mask.data[y * a.width + x]!)
      }
      sum += best
      n++
    }
  }
  return n > 0 ? sum / n : 1
}

/** The point `a` along the path (past its end along `dir`) and the direction there. */
function along(path: ArmPath, a: number): { at: Point; dir: Point } {
  const P = path.points
  let rest = a
  for (let i = 0; i + 1 < P.length; i++) {
    const l = dist(P[i]!, P[i + 1]!)
    const dir = norm(sub(P[i + 1]!, P[i]!))
    if (rest <= l) return { at: add(P[i]!, mul(dir, rest)), dir }
    rest -= l
  }
  return { at: add(P[P.length - 1]!, mul(path.dir, rest)), dir: path.dir }
}

/** Length of the path from the root to its last point. */
const pathLength = (path: ArmPath): number => {
  let l = 0
  for (let i = 0; i + 1 < path.points.length; i++) l += dist(path.points[i]!, path.points[i + 1]!)
  return l
}

/**
 * Half-width of an arm the segmentation lost, × the shoulder width, where the mask cannot measure
 * it: person.ts's arm capsules (upper arm, forearm).
 */
export const LOST_ARM_UPPER = 0.11
export const LOST_ARM_FORE = 0.085

const maskAt = (p: PersonAnalysis, q: Point): number => {
  const x = Math.round(q.x)
  const y = Math.round(q.y)
  return x < 0 || y < 0 || x >= p.width || y >= p.height ? 0 : p.mask.data[y * p.width + x]!
}

/** Distance from `from` along `dir` while inside the person mask (arms included). */
function scanMask(p: PersonAnalysis, from: Point, dir: Point, maxDist: number): number {
  let d = 0
  for (; d < maxDist; d++) {
    const x = Math.round(from.x + dir.x * d)
    const y = Math.round(from.y + dir.y * d)
    if (x < 0 || y < 0 || x >= p.width || y >= p.height || p.mask.data[y * p.width + x]! < 0.5) {
      break
    }
  }
  return d
}

/**
 * The sleeve's length on the person: its own scaled length for a short sleeve, the arm's share for
 * a long one (see the module's comment), blended in between.
 */
export function sleeveLength(
  gLen: number,
  frame: SleeveFrame,
  path: ArmPath,
): { length: number; armShare: number } {
  const own = gLen * frame.s
  const armShare = gLen / (LONG_ARM * frame.garmentShoulders)
  if (path.joints !== 'elbow-wrist') return { length: own, armShare }
  const t = clamp((armShare - LONG_FROM) / (LONG_FULL - LONG_FROM), 0, 1)
  const onArm = Math.min(armShare, 1) * pathLength(path)
  return { length: (1 - t) * own + t * onArm, armShare }
}

export function fitSleeve(
  p: PersonAnalysis,
  frame: SleeveFrame,
  name: 'sleeve-left' | 'sleeve-right',
  sl: SleeveLandmarks | null,
  mask: Plane,
  arm: readonly number[],
  tS: Point,
  tA: Point,
): WarpPart | null {
  if (sl === null) return null
  const { s, sw, centre: mp } = frame
  const gRoot = mid(sl.shoulder, sl.armpit)
  // A bent sleeve (worn on a bent arm, `sl.elbow`) is drawn from its upper part, root to elbow,
  // along the whole arm: its forearm part lies folded across the body on the photo (drawn along
  // the arm from there it twisted into a swirl). Its length is still the whole sleeve's.
  const gEnd = sl.elbow ?? sl.cuff
  const gAxis = norm(sub(gEnd, gRoot))
  const gLen = dist(gEnd, gRoot)
  const fullLen = sl.elbow === undefined ? gLen : gLen + dist(sl.elbow, sl.cuff)
  const tRoot = mid(tS, tA)
  // Body frame: down (shoulder centre → hip centre) and across (image-right).
  const pts = p.points
  const down = norm(
    sub(
      mid(pts[LM.leftHip]!, pts[LM.rightHip]!),
      mid(pts[LM.leftShoulder]!, pts[LM.rightShoulder]!),
    ),
  )
  const right = { x: down.y, y: -down.x }
  const toBody = (v: Point): Point => add(mul(right, v.x), mul(down, v.y))
  let path = armPath(p, arm, tRoot, norm(toBody(gAxis)))
  const { length: len, armShare } = sleeveLength(fullLen, frame, path)
  // Inner (armpit-side) normals: towards the body for a sleeve hanging straight down, turning with
  // the sleeve. On the garment photo down is +y and across +x; the image-left sleeve's inner side
  // is towards +x.
  const inward = name === 'sleeve-left' ? 1 : -1
  const hand = Math.sign(cross({ x: 0, y: 1 }, { x: inward, y: 0 }))
  const inner = (dir: Point): Point => {
    const n = perp(dir)
    return Math.sign(cross(dir, n)) === hand ? n : mul(n, -1)
  }
  const gIn = inner(gAxis)
  const rootHalf = dist(sl.shoulder, sl.armpit) / 2
  // Control rows along the sleeve: its middle and cuff; a sleeve past the elbow also at the elbow
  // (its bend) and halfway down the forearm.
  const elbowAt = path.points.length > 1 ? dist(path.points[0]!, path.points[1]!) : Infinity
  const long = len > 1.05 * elbowAt
  // A short sleeve on a raised or outstretched arm turns about its shoulder seam point with the
  // upper arm (`raiseTurn`): its root seam with it, so the sleeve lies along the upper arm instead
  // of folding between a seam left upright on the torso and rows up the arm.
  const turn = long ? 0 : raiseTurn(norm(toBody(gAxis)), path, down)
  const lostArm = path.joints !== 'none' && armHeld(p, arm, path.joints) < ARM_LOST_MASK
  const tA2 = turn === 0 ? tA : add(tS, rotate(sub(tA, tS), turn))
  if (turn !== 0) path = armPath(p, arm, mid(tS, tA2), norm(toBody(gAxis)))
  const src: Point[] = [sl.shoulder, sl.armpit]
  const dst: Point[] = [tS, tA2]
  if (!long && turn === 0 && armShare <= HANG_SHARE) {
    const under = underarmCorner(mask, sl)
    const hang = hangingRows(p, frame, sl, path, pts[arm[0]!]!, tS, tA, lostArm, toBody, under)
    // The torso below the sleeve goes: on the body's side of the underarm edge (armpit → its
    // corner), where that corner is found, else of the line through the armpit along the sleeve.
    const cutIn = under === null ? gIn : underInner(sl, under)
    return {
      name,
      mask: belowArmpitCut(mask, sl.armpit, cutIn),
      targets: [tS, hang.armpit, ...hang.targets],
      sources: [...src, ...hang.sources],
      layer: 'sleeve',
    }
  }
  const rows = long ? [0.5 * elbowAt, elbowAt, (elbowAt + len) / 2, len] : [0.5 * len, len]
  // A short sleeve's rows lie beside its root seam (on a hanging arm the seam runs along the arm),
  // where no side is right: it keeps the side the seam gives (the garment's armpit side of its
  // axis matched to the person's), as before the sleeves followed the forearm. A long sleeve's rows
  // are well clear of the seam: its armpit edge goes on the arm's inner side.
  const gN = perp(gAxis)
  const gSide = Math.sign(dot(sub(sl.armpit, sl.shoulder), gN)) || 1
  const normal = (dir: Point): Point => {
    if (long) return inner(dir)
    const n = perp(dir)
    const pSide = Math.sign(dot(sub(tA2, tS), n)) || 1
    return pSide !== gSide ? mul(n, -1) : n
  }
  const gNormal = long ? gIn : gN
  for (const a of rows) {
    const f = a / len
    const { at, dir } = along(path, a)
    let n = normal(dir)
    if (long && a === elbowAt && path.points.length > 2) {
      // At the bend: the normal halfway between the upper arm's and the forearm's.
      const d1 = norm(sub(path.points[1]!, path.points[0]!))
      n = norm(add(inner(d1), inner(path.dir)))
    }
    const gc = add(gRoot, mul(gAxis, f * gLen))
    const hw = rootHalf + (sl.cuffHalfWidth - rootHalf) * f
    // A sleeve is never narrower than the arm in it: measure the arm from the axis outwards (away
    // from the torso, where the arm's edge is the silhouette's edge).
    const out = dot(n, sub(at, mp)) >= 0 ? n : mul(n, -1)
    // On an arm the segmentation lost (armHeld) the mask cannot measure it where it is below 0.5
    // on the axis: there the arm is as wide as person.ts's arm capsules.
    const armHalf =
      lostArm && maskAt(p, at) < 0.5
        ? (a <= elbowAt ? LOST_ARM_UPPER : LOST_ARM_FORE) * sw
        : scanMask(p, at, out, 0.5 * sw)
    const hwP = clamp(Math.max(hw * s, 1.1 * armHalf), hw * s, 1.6 * hw * s)
    // A short sleeve hangs from its root seam, its armpit edge against the body: no row reaches
    // in past the line through the placed armpit along the arm (`bodyStop`). Centred on a
    // hanging arm, a sleeve wider than the arm covered the chest with its armpit half and drew
    // its cuff (a white trim) as a streak across the torso.
    const shift = long || turn !== 0 ? { x: 0, y: 0 } : bodyStop(at, n, hwP, dir, tA, mp)
    src.push(add(gc, mul(gNormal, hw)), sub(gc, mul(gNormal, hw)))
    dst.push(add(add(at, mul(n, hwP)), shift), add(sub(at, mul(n, hwP)), shift))
  }
  const partMask = long ? trimToSleeve(mask, sl) : belowArmpitCut(mask, sl.armpit, gIn)
  return { name, mask: partMask, targets: dst, sources: src, layer: 'sleeve' }
}

/**
 * A short sleeve hangs down the arm (`hangingRows`) up to this length / (LONG_ARM × the garment's
 * shoulder seams) (`sleeveLength`'s share): tees and short-sleeve shirts (0.1–0.45). Longer ones
 * that still count as short (up to LONG_FROM: the flared blouse tryon/garment_upper_03, 0.65, whose
 * cuff passes the elbow of person_03's bent arm) keep the rows along the arm from the seam's
 * middle (hanging, its paired SSIM fell from 0.808 to 0.782).
 */
export const HANG_SHARE = 0.5
/** The rows (share of the sleeve's edges from its root seam) of a short sleeve hanging down the arm. */
export const HANG_ROWS = [0.5, 1] as const
/** A hanging short sleeve is at least this × the arm's width (measured at each row) wide… */
export const HANG_ARM_MARGIN = 1.08
/** …and at most this × its own width (× the scale) at that row, unless the arm needs more. */
export const HANG_MAX_OWN = 1.6
/** The torso-side anchor of a hanging short sleeve: this × its root seam's length inward of it. */
export const HANG_ANCHOR = 0.5
/**
 * A hanging short sleeve's lengths (top and underarm) are its own on the photo × the torso fit's
 * scale (`worn`: the chest at its worn size, 1.2–1.6 × the skeleton's scale SLEEVE_K on the set's
 * persons) × WORN_SLEEVE, so the sleeve is in proportion to the top as worn; at SLEEVE_K the
 * sleeves were small caps at the shoulders. Fitted on the paired photos (the very garment worn):
 * 1.0 drew tryon person_01's and person_05's sleeves longer than they are (paired SSIM 0.832 and
 * 0.901, under their floors), 0.9 0.837 / 0.908, 0.8 0.840 / 0.912 (main at f1f0c7a); with the
 * lengthened hems of a445f7b 0.85 0.838 / 0.904, 0.8 0.840 / 0.906 (person_05's floor 0.902). By
 * eye the sleeves end close to where those persons' own do.
 */
export const WORN_SLEEVE = 0.8
/** …its outer cuff at most this × the upper arm below the shoulder joint (it ends above the elbow). */
export const SHORT_MAX = 0.8
/** The upper arm's length, × the shoulder-joint distance, where the elbow is not sure. */
export const UPPER_ARM_SW = 0.95
/**
 * The upper arm that composite.ts draws in front of the torso (person.ts `arms`: a capsule this ×
 * the shoulder width around the shoulder → elbow line): a hanging short sleeve's inner edge covers
 * it (HANG_ARM_MARGIN × it inward of the line), so no painted arm shows between sleeve and torso.
 */
export const ARM_CAPSULE_UPPER = 0.11

/**
 * A short sleeve on an arm that hangs (not turned by `raiseTurn`): seen from the front, its armhole
 * seam is edge-on from the placed shoulder seam point `tS` down to the placed armpit `tA`, and the
 * sleeve hangs below it along the upper arm. Its outer edge continues from `tS` down the arm for the
 * sleeve's top length (garment: shoulder → outer cuff corner), its inner edge from `tA` for its
 * underarm length (armpit → inner cuff corner), both at the worn scale (WORN_SLEEVE; the outer cuff
 * at most SHORT_MAX of the upper arm below the shoulder joint `joint`), so the cuff is slanted as
 * worn. The inner edge is the line through `tA` along the arm, or the arm's inner side where that
 * lies farther in (ARM_CAPSULE_UPPER around the joint's line: the arm drawn in front of the torso).
 * Each row is widened outward (away from the body) to cover the arm (HANG_ARM_MARGIN × from its
 * inner edge to the arm's outer silhouette) and narrowed outward to HANG_MAX_OWN × its own width ×
 * the scale where the arm does not need that much. The rows are HANG_ROWS; sources first the outer,
 * then the inner point of each row.
 */
export function hangingRows(
  p: PersonAnalysis,
  frame: SleeveFrame,
  sl: SleeveLandmarks,
  path: ArmPath,
  joint: Point,
  tS: Point,
  tA: Point,
  lostArm: boolean,
  toBody: (v: Point) => Point,
  under: Point | null = null,
): { armpit: Point; sources: Point[]; targets: Point[] } {
  const { sw, centre, worn } = frame
  const k = worn * WORN_SLEEVE
  const gRoot = mid(sl.shoulder, sl.armpit)
  const gAxis = norm(sub(sl.cuff, gRoot))
  const gN = perp(gAxis)
  // The cuff's outer corner is on the shoulder's side of the sleeve's axis, its inner on the armpit's.
  const side = Math.sign(dot(sub(sl.shoulder, gRoot), gN)) || 1
  const gOut = add(sl.cuff, mul(gN, side * sl.cuffHalfWidth))
  const gInn = under ?? sub(sl.cuff, mul(gN, side * sl.cuffHalfWidth))
  // Down the upper arm (the sure one), else the sleeve's own direction in the body's frame.
  const dir = path.points.length > 1 ? norm(sub(path.points[1]!, path.points[0]!)) : path.dir
  const upper = path.points.length > 1 ? dist(path.points[0]!, path.points[1]!) : UPPER_ARM_SW * sw
  let topLen = dist(sl.shoulder, gOut) * k
  let underLen = dist(sl.armpit, gInn) * k
  // A short sleeve ends above the elbow: both edges shortened alike (the cuff keeps its slant).
  const maxTop = SHORT_MAX * upper - dot(sub(tS, joint), dir)
  if (topLen > maxTop && topLen > 0) {
    const c = clamp(maxTop / topLen, 0.5, 1)
    topLen *= c
    underLen *= c
  }
  const across = perp(dir)
  const out = dot(across, sub(tA, centre)) >= 0 ? across : mul(across, -1)
  const bone = path.points[0]!
  // The inner edge: the line through the armpit along the arm, or the arm's inner side where that
  // lies farther in (the seam's armpit end with it).
  const armIn = Math.min(0, dot(sub(joint, tA), out) - HANG_ARM_MARGIN * ARM_CAPSULE_UPPER * sw)
  const armpit = add(tA, mul(out, armIn))
  const sources: Point[] = []
  const targets: Point[] = []
  const inners: Point[] = []
  for (const f of HANG_ROWS) {
    const gO = lerp(sl.shoulder, gOut, f)
    const gI = lerp(sl.armpit, gInn, f)
    const inner = add(armpit, mul(dir, f * underLen))
    let outer = add(tS, mul(dir, f * topLen))
    // Widths across the arm, measured from the inner edge outward.
    const own = Math.abs(dot(sub(gO, gI), perp(gAxis))) * frame.s
    const at = dot(sub(outer, inner), out)
    // The arm at this row: from its bone (the sleeve root's line along the arm) outward.
    const mid0 = lerp(inner, outer, 0.5)
    const onBone = add(bone, mul(dir, dot(sub(mid0, bone), dir)))
    const start = maskAt(p, mid0) >= 0.5 ? mid0 : onBone
    const armEdge =
      lostArm && maskAt(p, start) < 0.5
        ? dot(sub(onBone, inner), out) + LOST_ARM_UPPER * sw
        : dot(sub(start, inner), out) + scanMask(p, start, out, 0.5 * sw)
    const need = HANG_ARM_MARGIN * Math.max(0, armEdge)
    const want = Math.max(need, Math.min(at, HANG_MAX_OWN * own), own)
    outer = add(outer, mul(out, want - at))
    sources.push(gO, gI)
    targets.push(outer, inner)
    inners.push(inner)
  }
  // Anchors inward of the armpit edge (the garment below its underarm edge, the person inward of
  // the sleeve's inner edge): the underarm edge, level on a flat lay, turns a quarter onto the arm;
  // unanchored, the spline folded the chest onto it and drew the sleeve's underarm there as a
  // streak.
  const reach = HANG_ANCHOR * dist(sl.shoulder, sl.armpit)
  const gUnder = norm(sub(gInn, sl.armpit))
  const gBelow =
    dot(perp(gUnder), sub(sl.armpit, sl.shoulder)) >= 0 ? perp(gUnder) : mul(perp(gUnder), -1)
  HANG_ROWS.forEach((f, r) => {
    sources.push(add(lerp(sl.armpit, gInn, f), mul(gBelow, reach)))
    targets.push(add(inners[r]!, mul(out, -reach * worn)))
  })
  // Anchors on the torso's side of the root seam, where the torso fit puts them (from the
  // shoulder seam point, garment across and down turned into the body's frame, × the torso's
  // scale): without them the spline, turned a quarter about the seam, swung back over the chest and
  // drew the sleeve's seam allowance there as a streak.
  const gSeam = sub(sl.armpit, sl.shoulder)
  const gBody = norm(
    dot(perp(gSeam), sub(sl.armpit, sl.cuff)) >= 0 ? perp(gSeam) : mul(perp(gSeam), -1),
  )
  for (const [q, m] of [
    [sl.shoulder, 1],
    [gRoot, 1],
    [sl.armpit, 1],
    [gRoot, 2],
  ] as const) {
    const g = add(q, mul(gBody, m * reach))
    sources.push(g)
    targets.push(add(tS, mul(toBody(sub(g, sl.shoulder)), worn)))
  }
  return { armpit, sources, targets }
}

/** An underarm corner counts when it lies at least this (garment px) off the armpit → cuff chord. */
export const UNDER_MIN_PX = 3

/**
 * The hem's inner corner of a short sleeve on the garment photo (the end of its underarm edge): of
 * the sleeve's mask pixels outward of the armpit, the one farthest off the chord armpit → cuff on
 * the side away from the shoulder; null when none lies UNDER_MIN_PX off it (the cuff is that
 * corner). The landmarks' cuff is where the sleeve reaches farthest from its seam: on a ghost
 * mannequin's slanted sleeve that is its hem's outer corner, and its cuff half-width there (17 px on
 * dev garment_upper_01, whose hem is ~90 px long) put the inner corner on the hem itself, so the
 * hem was drawn down the arm's inner side and the sleeve curled into a crescent.
 */
export function underarmCorner(mask: Plane, sl: SleeveLandmarks): Point | null {
  const chord = sub(sl.cuff, sl.armpit)
  if (dot(chord, chord) <= 0) return null
  const n0 = perp(norm(chord))
  const away = dot(n0, sub(sl.shoulder, sl.armpit)) > 0 ? mul(n0, -1) : n0
  const outX = Math.sign(sl.cuff.x - sl.armpit.x) || 1
  let best: Point | null = null
  let far = UNDER_MIN_PX
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      if (mask.data[y * mask.width + x]! < 0.5 || outX * (x - sl.armpit.x) <= 0) continue
      const d = dot({ x: x - sl.armpit.x, y: y - sl.armpit.y }, away)
      if (d > far) {
        far = d
        best = { x, y }
      }
    }
  }
  return best
}

/** The normal of the underarm edge (armpit → `under`) on the body's side (away from the shoulder). */
export function underInner(sl: SleeveLandmarks, under: Point): Point {
  const n = perp(norm(sub(under, sl.armpit)))
  return dot(n, sub(sl.shoulder, sl.armpit)) > 0 ? mul(n, -1) : n
}

/**
 * How far (a vector) a short sleeve's row, centred at `at` with half-width `hw` along ±`n`, moves
 * out so that neither end lies inward (towards the body's centre `centre`) of the line through the
 * placed armpit `armpit` along the sleeve's direction `dir`; zero when neither does.
 */
export function bodyStop(
  at: Point,
  n: Point,
  hw: number,
  dir: Point,
  armpit: Point,
  centre: Point,
): Point {
  const across = perp(dir)
  const inward = dot(across, sub(centre, armpit)) >= 0 ? across : mul(across, -1)
  const past = Math.max(
    dot(sub(add(at, mul(n, hw)), armpit), inward),
    dot(sub(sub(at, mul(n, hw)), armpit), inward),
  )
  return past > 0 ? mul(inward, -past) : { x: 0, y: 0 }
}

/**
 * A short sleeve on a raised arm turns fully once the upper arm stands out from the body (its angle
 * to the body's down direction) this much (radians) farther than the sleeve does on the garment
 * photo; not at all when it stands out no farther (a hanging arm: unchanged), blended in between.
 */
export const RAISE_BLEND = Math.PI / 9
/**
 * …and only an upper arm raised at least this far (radians) from the body's down direction turns
 * one: a hanging arm (or hands on hips) stays as it was, even under a sleeve that hangs straight
 * down on a ghost mannequin (tryon/garment_upper_03: turned on person_03's hanging arm, the paired
 * SSIM fell from the floor's 0.805 to 0.803).
 */
export const RAISE_FROM = (50 * Math.PI) / 180

const rotate = (v: Point, a: number): Point => ({
  x: v.x * Math.cos(a) - v.y * Math.sin(a),
  y: v.x * Math.sin(a) + v.y * Math.cos(a),
})

/**
 * The angle (radians, image coordinates) a short sleeve turns about its shoulder seam point: from
 * its own direction on the garment (`gDir`, in the body frame) to the upper arm's, times how far the
 * arm is raised past the sleeve and past RAISE_FROM (RAISE_BLEND). 0 without a sure elbow (the same
 * trust as a long sleeve's: `sureArm`), on an arm that hangs no farther out than the sleeve, and on
 * one raised less than RAISE_FROM.
 */
export function raiseTurn(gDir: Point, path: ArmPath, down: Point): number {
  if (path.joints === 'none' || path.points.length < 2) return 0
  const aDir = norm(sub(path.points[1]!, path.points[0]!))
  const out = (v: Point): number => Math.acos(clamp(dot(v, down), -1, 1))
  const w = clamp((out(aDir) - Math.max(out(gDir), RAISE_FROM)) / RAISE_BLEND, 0, 1)
  if (w === 0) return 0
  return w * Math.atan2(cross(gDir, aDir), dot(gDir, aDir))
}

/** Pixels this far (garment px) past a short sleeve's armpit edge stay in its mask (anti-aliasing). */
export const ARMPIT_EDGE_PX = 2

/**
 * A short sleeve's mask without what lies on the body's side of its armpit edge (the line through
 * the garment's armpit along the sleeve, `inner` its armpit-side normal): the torso's side under the
 * armpit, which the side-line split gives the sleeve. The sleeve's spline drags those pixels in
 * over the chest as a wedge; the torso part draws them in place.
 */
export function belowArmpitCut(mask: Plane, armpit: Point, inner: Point): Plane {
  const out = { width: mask.width, height: mask.height, data: Float32Array.from(mask.data) }
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      const i = y * mask.width + x
      if (out.data[i]! > 0 && dot({ x: x - armpit.x, y: y - armpit.y }, inner) > ARMPIT_EDGE_PX) {
        out.data[i] = 0
      }
    }
  }
  return out
}

/** Sleeve mask pixels farther than this × the sleeve's local half-width (+ 4 px) from its axis go. */
export const SLEEVE_TRIM = 1.3

/**
 * The sleeve's mask without what lies beside it past its first quarter (the torso's side beside a
 * sleeve that hangs along it on the photo, which the side-line split gives the sleeve): those
 * pixels would be dragged along the arm and hang off the sleeve as strips. Near the root the mask is
 * kept whole (the seam with the torso overlaps on purpose).
 */
export function trimToSleeve(mask: Plane, sl: SleeveLandmarks): Plane {
  const root = mid(sl.shoulder, sl.armpit)
  // A bent sleeve: its upper part (fitSleeve).
  const axis = sub(sl.elbow ?? sl.cuff, root)
  const len2 = dot(axis, axis)
  if (len2 <= 0) return mask
  const rootHalf = dist(sl.shoulder, sl.armpit) / 2
  const out = { width: mask.width, height: mask.height, data: Float32Array.from(mask.data) }
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      const i = y * mask.width + x
      if (out.data[i]! <= 0) continue
      const v = { x: x - root.x, y: y - root.y }
      const f = dot(v, axis) / len2
      if (f < 0.25) continue
      const fc = Math.min(1, f)
      const off = Math.abs(cross(axis, v)) / Math.sqrt(len2)
      const hw = rootHalf + (sl.cuffHalfWidth - rootHalf) * fc
      if (off > SLEEVE_TRIM * hw + 4) out.data[i] = 0
    }
  }
  return out
}
