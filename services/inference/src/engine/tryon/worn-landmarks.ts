/**
 * A top's landmarks on a photo of it worn (garment_photo_type `model`): the outline's
 * (garment-shape.ts `topLandmarks`), with what the wearer's pose knows better.
 *
 * - Centre: the torso's centre line is the wearer's midline (shoulder centre → hip centre) at the
 *   torso rows, not the middle of the mask's rows — an object held against one side (a bag, cut out
 *   of the mask) or an open front narrows those rows from one side.
 * - Hem: a run of the mask whose middle is on a forearm (within ARM_R_SW × the shoulder width of
 *   the elbow → wrist segment) and narrower than SLEEVE_RUN_SW × the shoulder width is the end of a
 *   sleeve hanging below the hem, not the hem.
 * - Cuffs: a sleeve that covers the upper arm (UPPER_COVER of the shoulder → elbow path on the
 *   mask) is a long sleeve; its cuff is where the mask ends along the forearm (elbow → wrist), or
 *   the wrist when it ends where the hands were cut out (within the hand's radius of the wrist).
 *   A far sleeve in shade, or one hanging against the body, has no outline of its own: the arm
 *   finds it. A bent arm's sleeve keeps its elbow (`SleeveLandmarks.elbow`), so the warp follows
 *   the bend instead of a straight line from the shoulder to the cuff across the chest.
 * - A hem corner hidden behind a held object (the object on its side of the midline at the other
 *   corner's height) is the other corner mirrored about the midline (a top is symmetric).
 */
import {
  topLandmarks,
  type Bbox,
  type GarmentCategory,
  type SleeveLandmarks,
  type TopLandmarks,
} from './garment-shape.ts'
import { LM, type Landmark } from './pose.ts'
import { clamp, dist, lerp, mid, type Plane, type Point } from './raster.ts'

/** A joint is used when its score is at least this. */
const MIN_SCORE = 0.5
/** A run whose middle is this × the shoulder width from the forearm is on it. */
export const ARM_R_SW = 0.15
/** … and narrower than this × the shoulder width is a sleeve's end, not the hem. */
export const SLEEVE_RUN_SW = 0.6
/** An armpit less than this × the torso width below its shoulder is not one … */
export const MIN_ARMPIT_DEPTH = 0.25
/** … and goes this × the torso width below it (topLandmarks' typical armhole depth). */
const ARMPIT_DEPTH = 0.42
/** A held object this × the shoulder width above or below a hem corner's height hides it. */
export const HIDDEN_SW = 0.2
/** Share of the upper arm's path on the mask for a sleeve that reaches past the elbow. */
export const UPPER_COVER = 0.6

const on = (m: Plane, p: Point): boolean => {
  const x = Math.round(p.x)
  const y = Math.round(p.y)
  return x >= 0 && y >= 0 && x < m.width && y < m.height && m.data[y * m.width + x]! > 0.5
}

/** Distance from `p` to the segment a–b. */
function segDist(p: Point, a: Point, b: Point): number {
  const dx = b.x - a.x
  const dy = b.y - a.y
  const t = clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy || 1), 0, 1)
  return Math.hypot(p.x - a.x - t * dx, p.y - a.y - t * dy)
}

interface Arm {
  shoulder: Point
  elbow: Point
  wrist: Point
  /** Radius of the hand cut out of the mask around the wrist (garment-photo.ts). */
  handR: number
}

/**
 * The sleeve along `arm`: null when the mask does not cover the upper arm (bare, or a short
 * sleeve: the outline's stays). Otherwise the cuff where the mask ends along the forearm.
 */
function armSleeve(m: Plane, arm: Arm): { elbow: Point; cuff: Point } | null {
  const steps = 20
  let covered = 0
  for (let k = 0; k < steps; k++) {
    if (on(m, lerp(arm.shoulder, arm.elbow, 0.3 + (0.7 * k) / (steps - 1)))) covered++
  }
  if (covered < UPPER_COVER * steps) return null
  const len = dist(arm.elbow, arm.wrist)
  let last = arm.elbow
  for (let s = 0; s <= len; s += 1) {
    const p = lerp(arm.elbow, arm.wrist, len === 0 ? 1 : s / len)
    if (on(m, p)) last = p
  }
  const cuff = dist(last, arm.wrist) <= arm.handR + 2 ? arm.wrist : last
  return { elbow: arm.elbow, cuff }
}

/** Half the sleeve's width across the forearm near its cuff (scanned on the mask both ways). */
function cuffHalfWidth(m: Plane, elbow: Point, cuff: Point, min: number): number {
  const len = dist(elbow, cuff)
  if (len === 0) return min
  const at = lerp(elbow, cuff, 0.8)
  const n = { x: -(cuff.y - elbow.y) / len, y: (cuff.x - elbow.x) / len }
  const reach = (dir: 1 | -1): number => {
    let r = 0
    while (
      r < 0.5 * len &&
      on(m, { x: at.x + dir * n.x * (r + 1), y: at.y + dir * n.y * (r + 1) })
    ) {
      r++
    }
    return r
  }
  return Math.max(min, (reach(1) + reach(-1)) / 2)
}

/**
 * The top's landmarks on a worn garment's mask `m` (box `box`), with the wearer's pose `pts`
 * (image pixels) and the object held against it (`held`, cut out of `m`; null when none).
 */
export function wornTopLandmarks(
  m: Plane,
  box: Bbox,
  category: GarmentCategory,
  pts: readonly Landmark[],
  held: Plane | null,
): TopLandmarks {
  const P = (i: number) => pts[i]!
  const sure = (...ix: number[]) => ix.every((i) => P(i).score >= MIN_SCORE)
  if (!sure(LM.leftShoulder, LM.rightShoulder)) return topLandmarks(m, box, category)
  const sw = dist(P(LM.leftShoulder), P(LM.rightShoulder))
  const sMid = mid(P(LM.leftShoulder), P(LM.rightShoulder))
  const hMid = sure(LM.leftHip, LM.rightHip) ? mid(P(LM.leftHip), P(LM.rightHip)) : null
  const midX = (y: number): number =>
    hMid === null || hMid.y === sMid.y
      ? sMid.x
      : sMid.x + ((hMid.x - sMid.x) * (y - sMid.y)) / (hMid.y - sMid.y)
  // Arms by image side: the wearer's right arm is on the image's left when they face the camera.
  const arms: Arm[] = []
  for (const [s, e, wr, ix, pk] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    if (!sure(s, e, wr)) continue
    const hl = Math.max(dist(P(wr), P(ix)), dist(P(wr), P(pk)), 0.12 * sw)
    arms.push({ shoulder: P(s), elbow: P(e), wrist: P(wr), handR: 0.5 * hl })
  }
  const sideArm = (dir: -1 | 1): Arm | null => {
    const a = arms.find((q) => dir * (q.shoulder.x - sMid.x) > 0)
    return a ?? null
  }
  const h = box.y1 - box.y0 + 1
  const l = topLandmarks(m, box, category, {
    // The midline at the rows the torso's width is measured on (a top's lower body).
    centreX: midX(box.y0 + (category === 'full' ? 0.4 : 0.75) * h),
    notHem: (r, y) => {
      const c = { x: (r.x0 + r.x1) / 2, y }
      return (
        r.x1 - r.x0 < SLEEVE_RUN_SW * sw &&
        arms.some((a) => segDist(c, a.elbow, a.wrist) <= ARM_R_SW * sw)
      )
    },
  })
  // Hem corners hidden behind a held object (on its side of the midline, at the height of the
  // other corner, within HIDDEN_SW × the shoulder width): the other one mirrored.
  const covers = (dir: -1 | 1, y0: number): boolean => {
    if (held === null) return false
    const r = HIDDEN_SW * sw
    for (let y = Math.max(0, Math.round(y0 - r)); y <= Math.min(held.height - 1, y0 + r); y++) {
      const c = midX(y)
      for (let x = 0; x < held.width; x++) {
        if (held.data[y * held.width + x]! > 0.5 && dir * (x - c) > 0) return true
      }
    }
    return false
  }
  let { hemL, hemR } = l
  const hidL = covers(-1, hemR.y)
  const hidR = covers(1, hemL.y)
  if (hidR && !hidL) hemR = { x: 2 * midX(hemL.y) - hemL.x, y: hemL.y }
  else if (hidL && !hidR) hemL = { x: 2 * midX(hemR.y) - hemR.x, y: hemR.y }
  const torsoW = Math.abs(l.sideR(l.hemR.y) - l.sideL(l.hemL.y))
  // The waist about the midline: the wider half of its row twice (an arm or a hand across the
  // body, or a held object cut out, narrows the row from one side).
  const wc = midX(l.waistL.y)
  const wHalf = Math.max(wc - l.waistL.x, l.waistR.x - wc)
  const waistL = { x: wc - wHalf, y: l.waistL.y }
  const waistR = { x: wc + wHalf, y: l.waistR.y }
  // An armpit found right under its shoulder is a notch in the sleeve's outline (a bent arm's
  // sleeve stands out from the body): the typical armhole depth instead (as topLandmarks does for a
  // sleeve against the body).
  const armpit = (a: Point, s: Point, side: (y: number) => number): Point => {
    if (a.y - s.y >= MIN_ARMPIT_DEPTH * torsoW) return a
    const y = s.y + ARMPIT_DEPTH * torsoW
    return { x: side(y), y }
  }
  const armpitL = armpit(l.armpitL, l.shoulderL, l.sideL)
  const armpitR = armpit(l.armpitR, l.shoulderR, l.sideR)
  // Sleeves along the arms.
  const sleeve = (
    own: SleeveLandmarks | null,
    shoulder: Point,
    armpit: Point,
    arm: Arm | null,
  ): SleeveLandmarks | null => {
    if (arm === null) return own
    const s = armSleeve(m, arm)
    if (s === null) return own
    const half = cuffHalfWidth(m, s.elbow, s.cuff, 0.05 * torsoW)
    const base = own ?? { shoulder, armpit, cuff: s.cuff, cuffHalfWidth: half }
    // The garment's elbow: only when the sleeve bends there (a straight arm keeps a straight axis).
    const root = mid(base.shoulder, base.armpit)
    const bend = segDist(s.elbow, root, s.cuff) > 0.25 * dist(root, s.cuff)
    return { ...base, cuff: s.cuff, cuffHalfWidth: half, ...(bend ? { elbow: s.elbow } : {}) }
  }
  const own = (sl: SleeveLandmarks | null, a: Point): SleeveLandmarks | null =>
    sl === null ? null : { ...sl, armpit: a }
  return {
    ...l,
    ...(hMid === null ? {} : { wearer: { shoulders: sMid, hips: hMid, shoulderWidth: sw } }),
    armpitL,
    armpitR,
    waistL,
    waistR,
    hemL,
    hemR,
    sleeveL: sleeve(own(l.sleeveL, armpitL), l.shoulderL, armpitL, sideArm(-1)),
    sleeveR: sleeve(own(l.sleeveR, armpitR), l.shoulderR, armpitR, sideArm(1)),
  }
}
