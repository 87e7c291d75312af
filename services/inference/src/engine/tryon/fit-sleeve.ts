/**
 * Sleeve correspondences (part of stage 3, called by fit.ts `fitTop`): where a garment's sleeve goes
 * on the person's arm.
 *
 * Contract — in: the person analysis, the torso frame of the top (scale `s` garment → person pixels,
 * shoulder-joint distance `sw`, the centre between the placed shoulder seams), one sleeve's
 * landmarks and its mask on the garment photo, the arm's joint indices (shoulder, elbow, wrist) and
 * where the torso fit put that side's shoulder seam and armpit. Out: the sleeve's `WarpPart` (layer
 * 'sleeve'), or null when the garment has no sleeve on that side.
 *
 * Geometry: the sleeve's root stays on the shoulder–armpit seam and its cuff goes along
 * shoulder → elbow (→ wrist when the sleeve is longer than the upper arm) at the sleeve's scaled
 * length, never narrower than the arm.
 */
import type { SleeveLandmarks } from './garment-shape.ts'
import type { WarpPart } from './fit.ts'
import type { PersonAnalysis } from './person.ts'
import {
  add,
  clamp,
  dist,
  dot,
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
  /** Garment pixels → person pixels across the body. */
  s: number
  /** Shoulder-joint distance on the person. */
  sw: number
  /** Centre between the placed shoulder seams. */
  centre: Point
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
  const jS = p.points[arm[0]!]!
  const jE = p.points[arm[1]!]!
  const jW = p.points[arm[2]!]!
  const gRoot = mid(sl.shoulder, sl.armpit)
  const gAxis = norm(sub(sl.cuff, gRoot))
  const gLen = dist(sl.cuff, gRoot)
  const gN = perp(gAxis)
  const tRoot = mid(tS, tA)
  const len = gLen * s
  // Person sleeve axis: from the root along the upper arm, bending at the elbow if longer.
  const upper = dist(jS, jE)
  const dir1 = norm(sub(jE, jS))
  const dir2 = norm(sub(jW, jE))
  const along = (a: number): { at: Point; dir: Point } =>
    a <= upper
      ? { at: add(tRoot, mul(dir1, a)), dir: dir1 }
      : { at: add(add(tRoot, mul(dir1, upper)), mul(dir2, a - upper)), dir: dir2 }
  const src: Point[] = [sl.shoulder, sl.armpit]
  const dst: Point[] = [tS, tA]
  // The cuff's across-axis orientation must match: the garment normal points towards gN; on the
  // person the normal that points the same way relative to shoulder→armpit is chosen.
  const gSide = Math.sign(dot(sub(sl.armpit, sl.shoulder), gN)) || 1
  for (const f of [0.5, 1]) {
    const a = f * len
    const { at, dir } = along(a)
    let n = perp(dir)
    const pSide = Math.sign(dot(sub(tA, tS), n)) || 1
    if (pSide !== gSide) n = mul(n, -1)
    const gc = add(gRoot, mul(gAxis, f * gLen))
    const hw =
      f === 1 ? sl.cuffHalfWidth : (sl.cuffHalfWidth + dist(sl.shoulder, sl.armpit) / 2) / 2
    // A sleeve is never narrower than the arm in it: measure the arm from the axis outwards (away
    // from the torso, where the arm's edge is the silhouette's edge).
    const out = dot(n, sub(at, mp)) >= 0 ? n : mul(n, -1)
    const armHalf = scanMask(p, at, out, 0.5 * sw)
    const hwP = clamp(Math.max(hw * s, 1.1 * armHalf), hw * s, 1.6 * hw * s)
    src.push(add(gc, mul(gN, hw)), sub(gc, mul(gN, hw)))
    dst.push(add(at, mul(n, hwP)), sub(at, mul(n, hwP)))
  }
  return { name, mask, targets: dst, sources: src, layer: 'sleeve' }
}
