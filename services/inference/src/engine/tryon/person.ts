/**
 * Person analysis (stage 1 of the try-on engine).
 *
 * Contract — in: the person photo (upright RGB). Out (`PersonAnalysis`, all in that photo's pixels):
 * 33 body landmarks (+2 alignment points) with scores; a soft person mask (0..1); the head region
 * (face and hair: never covered by a garment); forearm and hand regions (drawn in front of the
 * garment's torso); the shoulder width that sets every other scale. Throws `no_person_detected`
 * when no usable person is found (no pose, or shoulders not in the frame).
 *
 * How: MediaPipe selfie segmentation for the mask (the whole photo squashed to 256², upsampled
 * bilinear); the BlazePose detector on the whole photo letterboxed gives the person's ROI (hip
 * centre and body radius, MediaPipe's rule); when it finds nobody (it keys on the face, so a face cut
 * off by the frame can defeat it) the ROI comes from the segmentation mask instead. Landmarks in two
 * passes: blazepose-full on that ROI (its presence flag is the person test), then blazepose-heavy
 * on the ROI that the first pass's alignment points give (the MediaPipe tracking rule). The ROI must
 * hold the whole body, the part outside the photo included (zero border): on a half-body or torso
 * photo a ROI cut to the photo makes the model squeeze the body into it (hips drawn at the chest).
 */
import { AppError } from '@tailor/proto'
import type { ModelSession } from '../session.ts'
import { checkPose, type PoseCheck } from './pose-check.ts'
import {
  cropFromDetection,
  cropFromPose,
  cropToTensor,
  decodeDetection,
  decodeLandmarks,
  DETECTOR_INPUT,
  DETECTOR_RANGE,
  LM,
  POSE_INPUT,
  wholeImageCrop,
  type Crop,
  type Landmark,
} from './pose.ts'
import {
  clamp,
  components,
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
  /** Presence flag of the first landmark pass. */
  presence: number
  /** Where the first landmark ROI came from: the person detector, or the segmentation mask when it found nobody. */
  roiSource: RoiSource
  /** The detector's probability for its best anchor. */
  detectionScore: number
  /** Pose measures and what they rule out (pose-check.ts); fit.ts refuses per garment category. */
  pose: PoseCheck
}

export interface PersonModels {
  /** blazepose-detector: finds the person (it keys on the face and shoulders) and gives the first ROI. */
  detector: ModelSession
  /** blazepose-full: the first landmark pass on that ROI, and the person test. */
  poseFull: ModelSession
  /** blazepose-heavy: the refined pass on the ROI that the first pass's alignment points give. */
  poseHeavy: ModelSession
  selfie: ModelSession
}

export const MIN_PRESENCE = 0.5
export const MIN_SHOULDER_SCORE = 0.5
/** Below this detection probability the ROI comes from the segmentation mask instead. */
export const MIN_DETECTION = 0.5
/** The mask must cover this share of the photo for the mask ROI to be tried. */
const MIN_MASK_SHARE = 0.02
const SELFIE_INPUT = 256
const POSE_OUTPUTS = ['ld_3d', 'output_poseflag'] as const

/** How the landmark model's first ROI was found (for tests and the contact sheets). */
export type RoiSource = 'detector' | 'mask'

export interface AnalyzeOptions {
  /** 'mask' skips the detector and takes the ROI from the segmentation mask (the fallback path, for tests). */
  roi?: 'auto' | 'mask'
}

export async function analyzePerson(
  img: Rgb,
  models: PersonModels,
  timings?: Record<string, number>,
  o: AnalyzeOptions = {},
): Promise<PersonAnalysis> {
  const { width: w, height: h } = img
  let t = performance.now()
  const sel = new Float32Array(SELFIE_INPUT * SELFIE_INPUT * 3)
  squashToTensor(img, SELFIE_INPUT, sel)
  const rs = await models.selfie.run(
    { input_1: { data: sel, dims: [1, SELFIE_INPUT, SELFIE_INPUT, 3] } },
    ['activation_10'],
  )
  const mask = resizePlane(
    { width: SELFIE_INPUT, height: SELFIE_INPUT, data: rs.activation_10!.data },
    w,
    h,
  )
  if (timings) timings.segmentation = performance.now() - t

  t = performance.now()
  const det = new Float32Array(DETECTOR_INPUT * DETECTOR_INPUT * 3)
  const whole = wholeImageCrop(w, h)
  cropToTensor(img, whole, det, DETECTOR_INPUT, DETECTOR_RANGE)
  const rd = await models.detector.run(
    { input: { data: det, dims: [1, DETECTOR_INPUT, DETECTOR_INPUT, 3] } },
    ['person'],
  )
  const detection = decodeDetection(rd.person!.data, whole)
  let roiSource: RoiSource = 'detector'
  let crop = cropFromDetection(detection)
  let passes = 1
  if (o.roi === 'mask' || detection.score < MIN_DETECTION || !(crop.size > 0.1 * Math.max(w, h))) {
    // The detector keys on the face: with the face cut off by the frame it may find nothing. The
    // person is then where the segmentation mask is; the landmark model is run on that region and
    // its own alignment points refine the ROI (once more than usual, as the first guess is rough).
    const fromMask = cropFromMask(mask)
    if (fromMask === null) {
      throw new AppError('no_person_detected', 'No person was found in the person image.')
    }
    crop = fromMask
    roiSource = 'mask'
    passes = 2
  }
  const input = new Float32Array(POSE_INPUT * POSE_INPUT * 3)
  let presence = 0
  for (let i = 0; i < passes; i++) {
    cropToTensor(img, crop, input)
    const r1 = await models.poseFull.run(
      { input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } },
      POSE_OUTPUTS,
    )
    presence = r1.output_poseflag!.data[0]!
    if (presence < MIN_PRESENCE) {
      throw new AppError('no_person_detected', 'No person was found in the person image.')
    }
    crop = cropFromPose(decodeLandmarks(r1.ld_3d!.data, crop))
  }
  cropToTensor(img, crop, input)
  const r2 = await models.poseHeavy.run(
    { input_1: { data: input, dims: [1, POSE_INPUT, POSE_INPUT, 3] } },
    POSE_OUTPUTS,
  )
  const points = decodeLandmarks(r2.ld_3d!.data, crop)
  if (timings) timings.pose = performance.now() - t
  const sl = points[LM.leftShoulder]!
  const sr = points[LM.rightShoulder]!
  const inFrame = (p: Point) => p.x >= 0 && p.y >= 0 && p.x < w && p.y < h
  if (
    r2.output_poseflag!.data[0]! < MIN_PRESENCE ||
    sl.score < MIN_SHOULDER_SCORE ||
    sr.score < MIN_SHOULDER_SCORE ||
    !inFrame(sl) ||
    !inFrame(sr)
  ) {
    throw new AppError(
      'no_person_detected',
      'No usable person was found in the person image: both shoulders must be visible.',
    )
  }
  const shoulderWidth = dist(sl, sr)
  if (shoulderWidth < 0.04 * Math.max(w, h)) {
    throw new AppError(
      'no_person_detected',
      'The person in the person image is too small to dress.',
    )
  }

  t = performance.now()
  const regions = bodyRegions(points, mask, shoulderWidth)
  if (timings) timings.regions = performance.now() - t
  const pose = checkPose(points, w, h)
  return {
    width: w,
    height: h,
    points,
    mask,
    shoulderWidth,
    presence,
    roiSource,
    detectionScore: detection.score,
    pose,
    ...regions,
  }
}

/**
 * A first landmark ROI from the segmentation mask (its largest blob): centred on the blob's box.
 * Where the blob reaches the top or bottom edge the body goes on outside the photo (a face cut off
 * at the mouth, legs cut at the thighs), so the square is twice the visible height — room for the
 * part the frame cut; otherwise the MediaPipe margin (1.25 ×) around the visible body.
 */
export function cropFromMask(mask: Plane): Crop | null {
  const { width: w, height: h } = mask
  const { labels, sizes } = components(mask)
  let best = 0
  for (let i = 1; i < sizes.length; i++) if (best === 0 || sizes[i]! > sizes[best]!) best = i
  if (best === 0 || sizes[best]! < MIN_MASK_SHARE * w * h) return null
  let x0 = w
  let y0 = h
  let x1 = -1
  let y1 = -1
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (labels[y * w + x] !== best) continue
      if (x < x0) x0 = x
      if (x > x1) x1 = x
      if (y < y0) y0 = y
      if (y > y1) y1 = y
    }
  }
  const bw = x1 - x0 + 1
  const bh = y1 - y0 + 1
  const cut = y0 <= 1 || y1 >= h - 2
  return { cx: (x0 + x1 + 1) / 2, cy: (y0 + y1 + 1) / 2, size: Math.max(bw, bh) * (cut ? 2 : 1.25) }
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
 * The neck base: a line 35 % of the way from the shoulder line up to the mouth (at least 0.06 × the
 * shoulder width above it), following the shoulder line's tilt. `above(x, y)` is 1 above it, 0
 * below, with a 2 px ramp. Above it lie the head, the neck and hair; below it the garments.
 */
export function neckLine(
  pts: readonly Point[],
  sw: number,
): { above: (x: number, y: number) => number; y: (x: number) => number } {
  const sl = pts[LM.leftShoulder]!
  const sr = pts[LM.rightShoulder]!
  const shoulderMid = mid(sl, sr)
  const mouth = mid(pts[LM.mouthLeft]!, pts[LM.mouthRight]!)
  const neckLift = Math.max(0.06 * sw, 0.35 * Math.max(0, shoulderMid.y - mouth.y))
  const slope = (sl.y - sr.y) / (sl.x - sr.x || 1e-6)
  const y = (x: number): number => shoulderMid.y - neckLift + slope * (x - shoulderMid.x)
  return { y, above: (x, yy) => clamp((y(x) - yy) / 2, 0, 1) }
}

/**
 * Head, hands and arms from the landmarks, cut to the person mask.
 * - head: the person mask above the neck base (a little above the shoulder line, following its
 *   tilt) plus an ellipse around the face landmarks (in case the mask misses part of the face);
 * - hands: capsules from each wrist to its index and pinky tips, widened by the hand size;
 * - arms: capsules shoulder→elbow→wrist with radii proportional to the shoulder width.
 */
export function bodyRegions(
  pts: readonly Landmark[],
  mask: Plane,
  sw: number,
): { head: Plane; hands: Plane; arms: Plane } {
  const { width: w, height: h } = mask
  const head = plane(w, h)
  const sl = pts[LM.leftShoulder]!
  const sr = pts[LM.rightShoulder]!
  const shoulderMid = mid(sl, sr)
  const mouth = mid(pts[LM.mouthLeft]!, pts[LM.mouthRight]!)
  const neck = neckLine(pts, sw)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x
      head.data[i] = neck.above(x, y) * mask.data[i]!
    }
  }
  const face = pts.slice(0, 11)
  const fx = face.map((p) => p.x)
  const fy = face.map((p) => p.y)
  const fc = {
    x: (Math.min(...fx) + Math.max(...fx)) / 2,
    y: (Math.min(...fy) + Math.max(...fy)) / 2,
  }
  // The neck itself, down to just above the shoulder line: skin, not garment.
  drawEllipse(
    head,
    { x: shoulderMid.x + (mouth.x - shoulderMid.x) * 0.3, y: shoulderMid.y - 0.18 * sw },
    0.14 * sw,
    0.09 * sw,
  )
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
