/**
 * BlazePose landmark model pre/post (blazepose-full / -heavy: `input_1` [1,256,256,3] RGB 0..1, a
 * square person crop; `ld_3d` [1,195] = 39 × (x, y, z, visibility logit, presence logit) in crop
 * pixels; `output_poseflag` [1,1] presence probability; `activation_segmentation` [1,256,256,1]
 * logits). Crops are axis-aligned squares in image pixels that may reach outside the image (zero
 * border), the same letterboxing as @vladmandic/human's `prepareImage` without a detector.
 */
import { clamp, type Plane, type Point, type Rgb } from './raster.ts'

export const POSE_INPUT = 256

/** The 33 BlazePose body landmarks (indices into `Pose.points`); left/right are the person's own. */
export const LM = {
  nose: 0,
  leftEyeInner: 1,
  leftEye: 2,
  leftEyeOuter: 3,
  rightEyeInner: 4,
  rightEye: 5,
  rightEyeOuter: 6,
  leftEar: 7,
  rightEar: 8,
  mouthLeft: 9,
  mouthRight: 10,
  leftShoulder: 11,
  rightShoulder: 12,
  leftElbow: 13,
  rightElbow: 14,
  leftWrist: 15,
  rightWrist: 16,
  leftPinky: 17,
  rightPinky: 18,
  leftIndex: 19,
  rightIndex: 20,
  leftThumb: 21,
  rightThumb: 22,
  leftHip: 23,
  rightHip: 24,
  leftKnee: 25,
  rightKnee: 26,
  leftAnkle: 27,
  rightAnkle: 28,
  leftHeel: 29,
  rightHeel: 30,
  leftFootIndex: 31,
  rightFootIndex: 32,
  /** Alignment points of the model: hip centre and a point one "body half-size" away. */
  alignCenter: 33,
  alignScale: 34,
} as const

export interface Landmark extends Point {
  /** Visibility × presence (0..1): how sure the model is that the point is in the frame and unoccluded. */
  score: number
}

export interface Pose {
  /** 35 points (33 body + 2 alignment) in image pixels. */
  points: Landmark[]
  /** Probability that a person is present (output_poseflag). */
  presence: number
}

/** A square crop in image pixels. */
export interface Crop {
  cx: number
  cy: number
  size: number
}

/** The whole image letterboxed into a square (first pass, no detector). */
export const wholeImageCrop = (w: number, h: number): Crop => ({
  cx: w / 2,
  cy: h / 2,
  size: Math.max(w, h),
})

/**
 * MediaPipe's ROI from the alignment points: centred on the hip centre, side 2 × 1.25 × the
 * distance to the scale point (the pose_landmark_by_roi rule, without rotation: our people stand).
 */
export function cropFromPose(points: readonly Point[]): Crop {
  const c = points[LM.alignCenter]!
  const s = points[LM.alignScale]!
  const half = Math.hypot(s.x - c.x, s.y - c.y)
  return { cx: c.x, cy: c.y, size: 2 * half * 1.25 }
}

/**
 * Fills `out` (S·S·3 RGB, 0..1 by default, `range` otherwise) with the crop, bilinear, zero (the
 * range's low end) outside the image.
 */
export function cropToTensor(
  img: Rgb,
  crop: Crop,
  out: Float32Array,
  S = POSE_INPUT,
  range: readonly [number, number] = [0, 1],
): void {
  const [lo, hi] = range
  const k = (hi - lo) / 255
  const scale = crop.size / S
  const x0 = crop.cx - crop.size / 2
  const y0 = crop.cy - crop.size / 2
  const { width: w, height: h, data } = img
  for (let v = 0; v < S; v++) {
    const sy = y0 + (v + 0.5) * scale - 0.5
    for (let u = 0; u < S; u++) {
      const sx = x0 + (u + 0.5) * scale - 0.5
      const o = (v * S + u) * 3
      if (sx < -0.5 || sy < -0.5 || sx > w - 0.5 || sy > h - 0.5) {
        out[o] = lo
        out[o + 1] = lo
        out[o + 2] = lo
        continue
      }
      const fx = clamp(sx, 0, w - 1)
      const fy = clamp(sy, 0, h - 1)
      const xa = Math.floor(fx)
      const ya = Math.floor(fy)
      const xb = Math.min(xa + 1, w - 1)
      const yb = Math.min(ya + 1, h - 1)
      const ax = fx - xa
      const ay = fy - ya
      const i00 = (ya * w + xa) * 3
      const i01 = (ya * w + xb) * 3
      const i10 = (yb * w + xa) * 3
      const i11 = (yb * w + xb) * 3
      for (let c = 0; c < 3; c++) {
        const top = data[i00 + c]! * (1 - ax) + data[i01 + c]! * ax
        const bot = data[i10 + c]! * (1 - ax) + data[i11 + c]! * ax
        out[o + c] = (top * (1 - ay) + bot * ay) * k + lo
      }
    }
  }
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x))

/** blazepose-detector input side; its input is the whole photo letterboxed, RGB −1..1. */
export const DETECTOR_INPUT = 224
export const DETECTOR_RANGE = [-1, 1] as const
/**
 * Anchor centres of the detector (MediaPipe's SSD anchors for pose_detection: strides 8, 16, 32,
 * 32, 32 on a 224² input, fixed anchor size; layers of the same stride share a grid, so 28² × 2,
 * 14² × 2 and 7² × 6 anchors = 2254), in the order of the `person` output.
 */
const DETECTOR_ANCHORS: readonly Point[] = (() => {
  const out: Point[] = []
  for (const [fm, n] of [
    [28, 2],
    [14, 2],
    [7, 6],
  ] as const) {
    for (let y = 0; y < fm; y++) {
      for (let x = 0; x < fm; x++) {
        for (let k = 0; k < n; k++) out.push({ x: (x + 0.5) / fm, y: (y + 0.5) / fm })
      }
    }
  }
  return out
})()

export interface Detection {
  /** Detection probability of the best anchor. */
  score: number
  /** Hip centre and a point on the circle that encloses the whole body (MediaPipe keypoints 0, 1), image pixels. */
  hipCenter: Point
  bodyScale: Point
}

/**
 * The best anchor of the detector's `person` output ([2254 × 13]: score logit, box cx, cy, w, h,
 * then 4 keypoints x, y — offsets in input pixels from the anchor centre), decoded into image
 * pixels of the `crop` the input was made from. One person is dressed, so no suppression is needed.
 */
export function decodeDetection(raw: Float32Array, crop: Crop): Detection {
  let best = 0
  for (let i = 1; i < DETECTOR_ANCHORS.length; i++) if (raw[i * 13]! > raw[best * 13]!) best = i
  const a = DETECTOR_ANCHORS[best]!
  const x0 = crop.cx - crop.size / 2
  const y0 = crop.cy - crop.size / 2
  const kp = (k: number): Point => ({
    x: x0 + (raw[best * 13 + 5 + 2 * k]! / DETECTOR_INPUT + a.x) * crop.size,
    y: y0 + (raw[best * 13 + 6 + 2 * k]! / DETECTOR_INPUT + a.y) * crop.size,
  })
  return { score: sigmoid(raw[best * 13]!), hipCenter: kp(0), bodyScale: kp(1) }
}

/** MediaPipe's landmark ROI from a detection: centred on the hip centre, 2 × 1.25 × the body radius. */
export function cropFromDetection(d: Detection): Crop {
  const half = Math.hypot(d.bodyScale.x - d.hipCenter.x, d.bodyScale.y - d.hipCenter.y)
  return { cx: d.hipCenter.x, cy: d.hipCenter.y, size: 2 * half * 1.25 }
}

/** Decodes `ld_3d` (crop pixels) into image pixels. */
export function decodeLandmarks(ld: Float32Array, crop: Crop): Landmark[] {
  const scale = crop.size / POSE_INPUT
  const x0 = crop.cx - crop.size / 2
  const y0 = crop.cy - crop.size / 2
  const out: Landmark[] = []
  for (let i = 0; i < 35; i++) {
    const o = i * 5
    out.push({
      x: x0 + ld[o]! * scale,
      y: y0 + ld[o + 1]! * scale,
      score: sigmoid(ld[o + 3]!) * sigmoid(ld[o + 4]!),
    })
  }
  return out
}

/**
 * Maps the landmark model's segmentation logits (crop space, 256²) to a probability plane of the
 * image's size; pixels outside the crop get 0.
 */
export function segmentationToImage(
  logits: Float32Array,
  crop: Crop,
  width: number,
  height: number,
): Plane {
  const S = POSE_INPUT
  const out = new Float32Array(width * height)
  const inv = S / crop.size
  const x0 = crop.cx - crop.size / 2
  const y0 = crop.cy - crop.size / 2
  for (let y = 0; y < height; y++) {
    const v = (y + 0.5 - y0) * inv - 0.5
    if (v < -0.5 || v > S - 0.5) continue
    const fy = clamp(v, 0, S - 1)
    const ya = Math.floor(fy)
    const yb = Math.min(ya + 1, S - 1)
    const ay = fy - ya
    for (let x = 0; x < width; x++) {
      const u = (x + 0.5 - x0) * inv - 0.5
      if (u < -0.5 || u > S - 0.5) continue
      const fx = clamp(u, 0, S - 1)
      const xa = Math.floor(fx)
      const xb = Math.min(xa + 1, S - 1)
      const ax = fx - xa
      const top = logits[ya * S + xa]! * (1 - ax) + logits[ya * S + xb]! * ax
      const bot = logits[yb * S + xa]! * (1 - ax) + logits[yb * S + xb]! * ax
      out[y * width + x] = sigmoid(top * (1 - ay) + bot * ay)
    }
  }
  return { width, height, data: out }
}
