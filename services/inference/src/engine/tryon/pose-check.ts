/**
 * Can this pose be dressed? (part of stage 1, person analysis; the refusal itself is decided in
 * fit.ts once the garment's category is known.)
 *
 * Contract — in: the 33 landmarks (image pixels, with scores) and the photo's size. Out:
 * `PoseCheck`: the measures below and, per body part a garment needs, null when the engine can
 * dress it or a sentence saying what was found. Only pose geometry is used (visibility, in-frame,
 * joint angles, torso and leg proportions, forearms over the torso): nothing about the photo's
 * file, framing label or size class.
 *
 * - body (every garment): the torso must be upright and face the camera. A back view puts the
 *   person's left shoulder on the image's left (BlazePose names joints by the person's own side);
 *   a side view lines the shoulders up with the camera (the shoulder line spans less than
 *   MIN_FACING × the torso length across the body);
 *   a torso tipped more than MAX_TILT_DEG from vertical is lying or bending over; a torso shorter
 *   than MIN_TORSO_RATIO × the shoulder width is bent towards the camera (crouching, bowing) — a
 *   standing adult's shoulder-to-hip length is about 1.3–1.8 × the shoulder-joint distance.
 * - arms (tops and dresses): arms crossed over the torso (both wrists past the body axis on the
 *   other side, elbows seen) are refused. Otherwise the forearms and hands may lie in front of the
 *   torso (hands together in front of the chest, on the belly: they are drawn in front of the
 *   garment), but when they hide more than
 *   MAX_TORSO_OCCLUSION (a third) of it the front of the garment would be hidden and the sleeves
 *   would have to be drawn folded across the body. Forearms are capsules 0.18 × the shoulder width
 *   thick, hands 0.24 ×.
 * - legs (bottoms and dresses), judged only on the legs whose knees are in the photo: standing legs
 *   drop from hip to knee by about 0.8–1.0 × the torso length; seated or crouching, the thighs point
 *   at the camera or sideways and the drop is short (below MIN_THIGH_DROP), or the knee is folded
 *   (hip–knee–ankle angle below MIN_KNEE_DEG). Both legs must be so (one raised leg is a pose a
 *   garment still follows).
 */
import { LM, type Landmark } from './pose.ts'
import { dist, mid, type Point } from './raster.ts'

export const MAX_TILT_DEG = 40
export const MIN_TORSO_RATIO = 0.8
export const MAX_TORSO_OCCLUSION = 1 / 3
export const MIN_THIGH_DROP = 0.4
export const MIN_KNEE_DEG = 80
/**
 * Facing below this (the shoulder line across the body, as a share of the torso length) is a side
 * view: a person facing the camera measures about 0.55–0.7, turned three-quarters 0.4–0.6, seen
 * from the side 0.1–0.3 (the shoulders line up with the camera).
 */
export const MIN_FACING = 0.35
/** A wrist counts as crossed when it lies this much (× shoulder width) past the body axis on the other side. */
export const CROSS_MARGIN = 0.1
/** A back view must reverse the shoulders by at least this × the torso length (turns are not backs). */
const BACK_MARGIN = 0.15
/** A joint counts when it is in the photo and the model is at least this sure of it. */
const MIN_JOINT_SCORE = 0.5

export interface PoseCheck {
  /** Torso tilt from vertical, degrees (0 = upright, shoulders above hips). */
  tiltDeg: number
  /** Shoulder-to-hip length / shoulder-joint distance. */
  torsoRatio: number
  /** (person's left shoulder x − right shoulder x) / torso length: > 0 facing the camera, < 0 facing away. */
  facing: number
  /** Share of the shoulder–hip quad covered by the forearms and hands (0..1). */
  torsoOcclusion: number
  /** Both wrists past the body axis on the other side (arms crossed over the torso). */
  crossed: boolean
  /** Per leg whose knee is in the photo: hip-to-knee drop along the body axis / torso length. */
  thighDrops: number[]
  /** Per leg whose knee and ankle are in the photo: hip–knee–ankle angle, degrees (180 = straight). */
  kneeAngles: number[]
  /** What stops each garment part; null = dressable. */
  body: string | null
  arms: string | null
  legs: string | null
}

const sub = (a: Point, b: Point): Point => ({ x: a.x - b.x, y: a.y - b.y })
const dot = (a: Point, b: Point): number => a.x * b.x + a.y * b.y
const f2 = (v: number): string => v.toFixed(2)

function angleDeg(a: Point, b: Point, c: Point): number {
  const u = sub(a, b)
  const v = sub(c, b)
  const cos = dot(u, v) / ((Math.hypot(u.x, u.y) || 1) * (Math.hypot(v.x, v.y) || 1))
  return (Math.acos(Math.max(-1, Math.min(1, cos))) * 180) / Math.PI
}

/** Distance from p to the segment ab. */
function segDist(p: Point, a: Point, b: Point): number {
  const ab = sub(b, a)
  const t = Math.max(0, Math.min(1, dot(sub(p, a), ab) / (dot(ab, ab) || 1)))
  return Math.hypot(p.x - (a.x + ab.x * t), p.y - (a.y + ab.y * t))
}

/** Inside the convex quad a→b→c→d (either winding). */
function inQuad(p: Point, q: readonly Point[]): boolean {
  let sign = 0
  for (let i = 0; i < 4; i++) {
    const a = q[i]!
    const b = q[(i + 1) % 4]!
    const cr = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
    if (cr === 0) continue
    const s = Math.sign(cr)
    if (sign === 0) sign = s
    else if (s !== sign) return false
  }
  return true
}

export function checkPose(pts: readonly Landmark[], width: number, height: number): PoseCheck {
  const known = (p: Landmark): boolean =>
    p.score >= MIN_JOINT_SCORE && p.x >= 0 && p.y >= 0 && p.x < width && p.y < height
  const sL = pts[LM.leftShoulder]!
  const sR = pts[LM.rightShoulder]!
  const hL = pts[LM.leftHip]!
  const hR = pts[LM.rightHip]!
  const sMid = mid(sL, sR)
  const hMid = mid(hL, hR)
  const sw = dist(sL, sR) || 1
  const torsoLen = dist(sMid, hMid) || 1
  const axis = { x: (hMid.x - sMid.x) / torsoLen, y: (hMid.y - sMid.y) / torsoLen }
  const tiltDeg = (Math.acos(Math.max(-1, Math.min(1, axis.y))) * 180) / Math.PI
  // The shoulder line's direction across the body (the person's right → left); its length is the
  // shoulder width whatever the turn, so a three-quarter view shrinks it but keeps its sign.
  const across = { x: axis.y, y: -axis.x } // image-right when the torso points down
  const facing = dot(sub(sL, sR), across) / torsoLen
  const torsoRatio = torsoLen / sw

  let body: string | null = null
  if (tiltDeg > MAX_TILT_DEG) {
    body = `The person's torso is tipped ${Math.round(tiltDeg)}° from upright (lying down, bending over or upside down); try-on needs a person standing upright.`
  } else if (facing < -BACK_MARGIN) {
    body =
      'The person is seen from the back (their left shoulder is on the left of the photo); try-on needs a person facing the camera, turned at most three-quarters.'
  } else if (facing < MIN_FACING) {
    body = `The person is turned sideways to the camera (their shoulders span only ${f2(Math.max(0, facing))} × the torso length across the body); try-on needs a person facing the camera, turned at most three-quarters.`
  } else if (torsoRatio < MIN_TORSO_RATIO) {
    body = `The person's torso is foreshortened to ${f2(torsoRatio)} × the shoulder width (bent towards the camera, crouching or bowing); try-on needs an upright torso.`
  }

  // Forearms and hands over the torso quad, sampled on a grid of the quad's bounding box.
  const quad = [sL, sR, hR, hL]
  const fore: [Point, Point, number][] = []
  for (const [e, w, ix, pk] of [
    [LM.leftElbow, LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightElbow, LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    const E = pts[e]!
    const W = pts[w]!
    if (E.score < MIN_JOINT_SCORE && W.score < MIN_JOINT_SCORE) continue
    fore.push([E, W, 0.09 * sw])
    fore.push([W, mid(pts[ix]!, pts[pk]!), 0.12 * sw])
  }
  const xs = quad.map((p) => p.x)
  const ys = quad.map((p) => p.y)
  const x0 = Math.min(...xs)
  const x1 = Math.max(...xs)
  const y0 = Math.min(...ys)
  const y1 = Math.max(...ys)
  const step = Math.max(1, Math.min(x1 - x0, y1 - y0) / 48)
  let inside = 0
  let covered = 0
  for (let y = y0 + step / 2; y < y1; y += step) {
    for (let x = x0 + step / 2; x < x1; x += step) {
      const p = { x, y }
      if (!inQuad(p, quad)) continue
      inside++
      if (fore.some(([a, b, r]) => segDist(p, a, b) <= r)) covered++
    }
  }
  const torsoOcclusion = inside > 0 ? covered / inside : 0
  // Arms crossed: both wrists past the body axis on the other side, between the shoulders and the
  // hips, each with its elbow seen (a crossed wrist is often hidden under the other arm, so its own
  // score is not asked for).
  const crossed = (
    [
      [LM.leftWrist, LM.leftElbow, sL],
      [LM.rightWrist, LM.rightElbow, sR],
    ] as const
  ).every(([wi, ei, s]) => {
    const W = pts[wi]!
    const own = Math.sign(dot(sub(s, sMid), across))
    const off = dot(sub(W, sMid), across) / sw
    const down = dot(sub(W, sMid), axis) / torsoLen
    return (
      pts[ei]!.score >= MIN_JOINT_SCORE &&
      own !== 0 &&
      off * own < -CROSS_MARGIN &&
      down > 0.1 &&
      down < 1.05
    )
  })
  const arms = crossed
    ? "The person's arms are crossed over the torso (each wrist lies past the middle of the body on the other side); a top or dress would be mostly hidden and its sleeves would have to be folded across the body."
    : torsoOcclusion > MAX_TORSO_OCCLUSION
      ? `The person's forearms and hands cover ${Math.round(torsoOcclusion * 100)} % of their torso (arms crossed or held in front of the body); a top or dress would be mostly hidden.`
      : null

  const thighDrops: number[] = []
  const kneeAngles: number[] = []
  for (const [hi, ki, ai] of [
    [LM.leftHip, LM.leftKnee, LM.leftAnkle],
    [LM.rightHip, LM.rightKnee, LM.rightAnkle],
  ] as const) {
    const H = pts[hi]!
    const K = pts[ki]!
    const A = pts[ai]!
    if (!known(K)) continue
    thighDrops.push(dot(sub(K, H), axis) / torsoLen)
    if (known(A)) kneeAngles.push(angleDeg(H, K, A))
  }
  let legs: string | null = null
  const shortThighs = thighDrops.length > 0 && thighDrops.every((d) => d < MIN_THIGH_DROP)
  const foldedKnees = kneeAngles.length === 2 && kneeAngles.every((a) => a < MIN_KNEE_DEG)
  if (shortThighs || foldedKnees) {
    const what = shortThighs
      ? `the thighs drop only ${thighDrops.map(f2).join(' and ')} × the torso length from hip to knee`
      : `the knees are folded to ${kneeAngles.map((a) => Math.round(a)).join('° and ')}°`
    legs = `The person appears to be seated or crouching (${what}); trousers, skirts and dresses need standing legs.`
  }
  return {
    tiltDeg,
    torsoRatio,
    facing,
    torsoOcclusion,
    crossed,
    thighDrops,
    kneeAngles,
    body,
    arms,
    legs,
  }
}
