/**
 * Person analysis (stage 1 of the try-on engine).
 *
 * Contract — in: the person photo (upright RGB). Out (`PersonAnalysis`, all in that photo's pixels):
 * 33 body landmarks (+2 alignment points) with scores; a soft person mask (0..1); the head region
 * (face and hair: never covered by a garment); forearm and hand regions (drawn in front of the
 * garment's torso); the shoulder width that sets every other scale. Throws `no_person_detected`
 * when no usable person is found (no pose, or shoulders not in the frame).
 *
 * How: BlazePose landmarks in two passes (blazepose-full on the whole photo letterboxed — its
 * presence flag is the person test — then blazepose-heavy on the ROI that the first pass's
 * alignment points give, the MediaPipe tracking rule) and MediaPipe selfie segmentation for the
 * mask (the whole photo squashed to 256², upsampled bilinear).
 */
import { AppError } from '@tailor/proto'
import type { ModelSession } from '../session.ts'
import { cropFromPose, cropToTensor, decodeLandmarks, LM, POSE_INPUT, wholeImageCrop, type Landmark } from './pose.ts'
import {
  clamp,
  dist,
  drawCapsule,
  drawEllipse,
  lerp,
  mid,
  plane,
  resizePlane,
  type Plane,
  type Point,
  type Rgb,
} from './raster.ts'

export interface PersonAnalysis {
  width: number
  height: number
  points: Landmark[]
  /** Selfie segmentation, person probability 0..1. */
  mask: Plane
  /** Face and hair (0..1): kept from the photo, in front of everything. */
  head: Plane
  /** Hands (0..1): kept from the photo, in front of every garment part. */
  hands: Plane
  /** Forearms and upper arms (0..1), within the person mask: in front of torso and legs, behind sleeves. */
  arms: Plane
  /** Distance between the shoulder joints, px. */
  shoulderWidth: number
  /** Presence flag of the first pass. */
  presence: number
}

export interface PersonModels {
  /** blazepose-full: the whole-photo pass and the person test. */
  poseFull: ModelSession
  /** blazepose-heavy: the refined pass on the person ROI. */
  poseHeavy: ModelSession
  selfie: ModelSession
}

export const MIN_PRESENCE = 0.5
export const MIN_SHOULDER_SCORE = 0.5
const SELFIE_INPUT = 256
const POSE_OUTPUTS = ['ld_3d', 'output_poseflag'] as const

export async function analyzePerson(img: Rgb, models: PersonModels, timings?: Record<string, number>): Promise<PersonAnalysis> {
  const { width: w, height: h } = img
  const input = new Float32Array(POSE_INPUT * POSE_INPUT * 3)
  let t = performance.now()
  const crop1 = wholeImageCrop(w, h)
  cropToTensor(img, crop1, input)
  const r1 = await models.poseFull.run({ input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } }, POSE_OUTPUTS)
  const presence = r1.output_poseflag!.data[0]!
  const first = decodeLandmarks(r1.ld_3d!.data, crop1)
  if (presence < MIN_PRESENCE) {
    throw new AppError('no_person_detected', 'No person was found in the person image.')
  }
  const crop2 = cropFromPose(first)
  cropToTensor(img, crop2, input)
  const r2 = await models.poseHeavy.run({ input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } }, POSE_OUTPUTS)
  const points = decodeLandmarks(r2.ld_3d!.data, crop2)
  if (timings) timings.pose = performance.now() - t
  const sl = points[LM.leftShoulder]!
  const sr = points[LM.rightShoulder]!
  const inFrame = (p: Point) => p.x >= 0 && p.y >= 0 && p.x < w && p.y < h
  if (r2.output_poseflag!.data[0]! < MIN_PRESENCE || sl.score < MIN_SHOULDER_SCORE || sr.score < MIN_SHOULDER_SCORE || !inFrame(sl) || !inFrame(sr)) {
    throw new AppError('no_person_detected', 'No usable person was found in the person image: both shoulders must be visible.')
  }
  const shoulderWidth = dist(sl, sr)
  if (shoulderWidth < 0.04 * Math.max(w, h)) {
    throw new AppError('no_person_detected', 'The person in the person image is too small to dress.')
  }

  t = performance.now()
  const sel = new Float32Array(SELFIE_INPUT * SELFIE_INPUT * 3)
  squashToTensor(img, SELFIE_INPUT, sel)
  const rs = await models.selfie.run({ input_1: { data: sel, dims: [1, SELFIE_INPUT, SELFIE_INPUT, 3] } }, ['activation_10'])
  const mask = resizePlane({ width: SELFIE_INPUT, height: SELFIE_INPUT, data: rs.activation_10!.data }, w, h)
  if (timings) timings.segmentation = performance.now() - t

  t = performance.now()
  const regions = bodyRegions(points, mask, shoulderWidth)
  if (timings) timings.regions = performance.now() - t
  return { width: w, height: h, points, mask, shoulderWidth, presence, ...regions }
}

/** Whole image resized (aspect not kept) to size², RGB 0..1 — human's selfie pre-processing. */
function squashToTensor(img: Rgb, size: number, out: Float32Array): void {
  const sx = img.width / size
  const sy = img.height / size
  for (let v = 0; v < size; v++) {
    // Box-average the source rows/columns that fall in this cell (cheap anti-aliasing).
    const y0 = Math.floor(v * sy)
    const y1 = Math.max(y0 + 1, Math.floor((v + 1) * sy))
    for (let u = 0; u < size; u++) {
      const x0 = Math.floor(u * sx)
      const x1 = Math.max(x0 + 1, Math.floor((u + 1) * sx))
      let r = 0
      let g = 0
      let b = 0
      let n = 0
      for (let y = y0; y < y1; y += 2) {
        for (let x = x0; x < x1; x += 2) {
          const i = (y * img.width + x) * 3
          r += img.data[i]!
          g += img.data[i + 1]!
          b += img.data[i + 2]!
          n++
        }
      }
      const o = (v * size + u) * 3
      out[o] = r / n / 255
      out[o + 1] = g / n / 255
      out[o + 2] = b / n / 255
    }
  }
}

/**
 * Head, hands and arms from the landmarks, cut to the person mask.
 * - head: the person mask above the neck base (a little above the shoulder line, following its
 *   tilt) plus an ellipse around the face landmarks (in case the mask misses part of the face);
 * - hands: capsules from each wrist to its index and pinky tips, widened by the hand size;
 * - arms: capsules shoulder→elbow→wrist with radii proportional to the shoulder width.
 */
export function bodyRegions(pts: readonly Landmark[], mask: Plane, sw: number): { head: Plane; hands: Plane; arms: Plane } {
  const { width: w, height: h } = mask
  const head = plane(w, h)
  const sl = pts[LM.leftShoulder]!
  const sr = pts[LM.rightShoulder]!
  const shoulderMid = mid(sl, sr)
  const mouth = mid(pts[LM.mouthLeft]!, pts[LM.mouthRight]!)
  // Neck base: 35 % of the way from the shoulder line up to the mouth (at least 0.06·sw above it).
  const neckLift = Math.max(0.06 * sw, 0.35 * Math.max(0, shoulderMid.y - mouth.y))
  const slope = (sl.y - sr.y) / (sl.x - sr.x || 1e-6)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const lineY = shoulderMid.y - neckLift + slope * (x - shoulderMid.x)
      const i = y * w + x
      if (y < lineY) head.data[i] = clamp((lineY - y) / 2, 0, 1) * mask.data[i]!
    }
  }
  const face = pts.slice(0, 11)
  const fx = face.map((p) => p.x)
  const fy = face.map((p) => p.y)
  const fc = { x: (Math.min(...fx) + Math.max(...fx)) / 2, y: (Math.min(...fy) + Math.max(...fy)) / 2 }
  // The neck itself, down to just above the shoulder line: skin, not garment.
  drawEllipse(head, { x: shoulderMid.x + (mouth.x - shoulderMid.x) * 0.3, y: shoulderMid.y - 0.18 * sw }, 0.14 * sw, 0.09 * sw)
  const earSpan = Math.max(dist(pts[LM.leftEar]!, pts[LM.rightEar]!), 0.35 * sw)
  drawEllipse(head, { x: fc.x, y: fc.y - 0.1 * earSpan }, 0.62 * earSpan, 0.8 * earSpan)

  const hands = plane(w, h)
  for (const [wr, ix, pk, th] of [
    [LM.leftWrist, LM.leftIndex, LM.leftPinky, LM.leftThumb],
    [LM.rightWrist, LM.rightIndex, LM.rightPinky, LM.rightThumb],
  ] as const) {
    const W = pts[wr]!
    const handLen = Math.max(dist(W, pts[ix]!), dist(W, pts[pk]!), 0.12 * sw)
    const r = 0.45 * handLen
    drawCapsule(hands, W, lerp(W, pts[ix]!, 1.25), r)
    drawCapsule(hands, W, lerp(W, pts[pk]!, 1.25), r)
    drawCapsule(hands, W, lerp(W, pts[th]!, 1.1), 0.35 * handLen)
  }
  const arms = plane(w, h)
  for (const [s, e, wr] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
  ] as const) {
    drawCapsule(arms, lerp(pts[s]!, pts[e]!, 0.3), pts[e]!, 0.11 * sw)
    drawCapsule(arms, pts[e]!, pts[wr]!, 0.085 * sw)
  }
  for (let i = 0; i < w * h; i++) {
    const m = mask.data[i]!
    hands.data[i] = hands.data[i]! * m
    arms.data[i] = arms.data[i]! * m
  }
  return { head, hands, arms }
}
