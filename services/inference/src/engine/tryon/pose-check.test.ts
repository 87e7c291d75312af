/**
 * pose-check.ts on synthetic skeletons (a standing person facing the camera, then the same person
 * seen from the back, turned three-quarters and sideways, seated, crouching, with the arms crossed
 * and with the hands together in front of the belly, one knee raised), and
 * the refusal per garment category (fit.ts `assertDressable`). The real-photo cases are in
 * person.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { assertDressable } from './fit.ts'
import type { PersonAnalysis } from './person.ts'
import { checkPose, MAX_TORSO_OCCLUSION, MIN_FACING } from './pose-check.ts'
import { LM, type Landmark } from './pose.ts'

const W = 600
const H = 1000

/** A standing person facing the camera: their left side on the image's right. */
function standing(): Landmark[] {
  const p: Landmark[] = Array.from({ length: 35 }, () => ({ x: 300, y: 100, score: 0.99 }))
  const set = (i: number, x: number, y: number, score = 0.99) => (p[i] = { x, y, score })
  set(LM.nose, 300, 100)
  set(LM.leftShoulder, 360, 200)
  set(LM.rightShoulder, 240, 200)
  set(LM.leftElbow, 380, 330)
  set(LM.rightElbow, 220, 330)
  set(LM.leftWrist, 385, 450)
  set(LM.rightWrist, 215, 450)
  set(LM.leftIndex, 388, 490)
  set(LM.rightIndex, 212, 490)
  set(LM.leftPinky, 380, 485)
  set(LM.rightPinky, 220, 485)
  set(LM.leftHip, 335, 400)
  set(LM.rightHip, 265, 400)
  set(LM.leftKnee, 340, 600)
  set(LM.rightKnee, 260, 600)
  set(LM.leftAnkle, 340, 800)
  set(LM.rightAnkle, 260, 800)
  return p
}

const analysis = (points: Landmark[]): PersonAnalysis =>
  ({ pose: checkPose(points, W, H) }) as PersonAnalysis

function refusal(category: 'upper' | 'lower' | 'full', points: Landmark[]): string | null {
  try {
    assertDressable(category, analysis(points))
    return null
  } catch (e) {
    expect(e).toBeInstanceOf(AppError)
    expect((e as AppError).code).toBe('unsupported_pose')
    return (e as AppError).message
  }
}

describe('checkPose', () => {
  it('a standing person facing the camera is dressable in every category', () => {
    const c = checkPose(standing(), W, H)
    expect(c.tiltDeg).toBeLessThan(5)
    expect(c.facing).toBeGreaterThan(0.3)
    expect(c.torsoRatio).toBeCloseTo(200 / 120, 1)
    expect(c.thighDrops).toHaveLength(2)
    for (const d of c.thighDrops) expect(d).toBeGreaterThan(0.9)
    expect([c.body, c.arms, c.legs]).toEqual([null, null, null])
    for (const cat of ['upper', 'lower', 'full'] as const) {
      expect(refusal(cat, standing())).toBeNull()
    }
  })

  it('seen from the back (their left shoulder on the image left): refused for every garment', () => {
    const p = standing()
    for (const [l, r] of [
      [LM.leftShoulder, LM.rightShoulder],
      [LM.leftHip, LM.rightHip],
    ] as const) {
      const a = p[l]!
      p[l] = p[r]!
      p[r] = a
    }
    expect(checkPose(p, W, H).facing).toBeLessThan(0)
    for (const cat of ['upper', 'lower', 'full'] as const) {
      expect(refusal(cat, p)).toMatch(/seen from the back/)
    }
  })

  it('a three-quarter turn (shoulders closer together, order kept) is dressed; a side view is refused', () => {
    const p = standing()
    p[LM.leftShoulder] = { x: 340, y: 200, score: 0.99 }
    p[LM.rightShoulder] = { x: 255, y: 200, score: 0.99 }
    expect(checkPose(p, W, H).facing).toBeGreaterThan(MIN_FACING)
    expect(checkPose(p, W, H).body).toBeNull()
    // Turned further: the shoulder line spans 0.3 × the torso length.
    p[LM.leftShoulder] = { x: 320, y: 200, score: 0.99 }
    p[LM.rightShoulder] = { x: 260, y: 200, score: 0.99 }
    for (const cat of ['upper', 'lower', 'full'] as const) {
      expect(refusal(cat, p)).toMatch(
        /turned sideways to the camera \(their shoulders span only 0\.30 × the torso length/,
      )
    }
  })

  it('seated, thighs towards the camera: tops are dressed, bottoms and dresses refused', () => {
    const p = standing()
    p[LM.leftKnee] = { x: 345, y: 440, score: 0.99 }
    p[LM.rightKnee] = { x: 255, y: 440, score: 0.99 }
    p[LM.leftAnkle] = { x: 345, y: 640, score: 0.99 }
    p[LM.rightAnkle] = { x: 255, y: 640, score: 0.99 }
    expect(refusal('upper', p)).toBeNull()
    expect(refusal('lower', p)).toMatch(/seated or crouching.*thighs drop only 0\.\d\d and 0\.\d\d/)
    expect(refusal('full', p)).toMatch(/seated or crouching/)
  })

  it('crouching: knees folded and the torso bent towards the camera — refused for every garment', () => {
    const p = standing()
    p[LM.leftHip] = { x: 335, y: 290, score: 0.99 }
    p[LM.rightHip] = { x: 265, y: 290, score: 0.99 }
    p[LM.leftKnee] = { x: 380, y: 250, score: 0.99 }
    p[LM.rightKnee] = { x: 220, y: 250, score: 0.99 }
    p[LM.leftAnkle] = { x: 350, y: 420, score: 0.99 }
    p[LM.rightAnkle] = { x: 250, y: 420, score: 0.99 }
    const c = checkPose(p, W, H)
    expect(c.torsoRatio).toBeLessThan(0.8)
    expect(refusal('upper', p)).toMatch(/foreshortened/)
    expect(refusal('lower', p)).toMatch(/foreshortened/)
  })

  it('one knee raised (the other leg standing) is still dressable', () => {
    const p = standing()
    p[LM.rightKnee] = { x: 200, y: 430, score: 0.99 }
    p[LM.rightAnkle] = { x: 230, y: 620, score: 0.99 }
    expect(checkPose(p, W, H).legs).toBeNull()
  })

  it('half body (knees outside the photo): the legs are not judged', () => {
    const p = standing()
    for (const j of [LM.leftKnee, LM.rightKnee, LM.leftAnkle, LM.rightAnkle]) {
      p[j] = { x: p[j]!.x, y: p[j]!.y + 500, score: 0.3 }
    }
    expect(checkPose(p, W, H).thighDrops).toEqual([])
    expect(refusal('lower', p)).toBeNull()
  })

  it('arms crossed over the torso: refused for tops and dresses, with what was found; a bottom is dressed', () => {
    // Arms crossed low on the belly (a street photo's usual pose): each wrist past the body axis.
    const crossed = standing()
    crossed[LM.leftElbow] = { x: 370, y: 340, score: 0.99 }
    crossed[LM.rightElbow] = { x: 230, y: 340, score: 0.99 }
    crossed[LM.leftWrist] = { x: 240, y: 320, score: 0.99 }
    crossed[LM.rightWrist] = { x: 360, y: 320, score: 0.99 }
    crossed[LM.leftIndex] = { x: 215, y: 315, score: 0.99 }
    crossed[LM.leftPinky] = { x: 215, y: 325, score: 0.99 }
    crossed[LM.rightIndex] = { x: 385, y: 315, score: 0.99 }
    crossed[LM.rightPinky] = { x: 385, y: 325, score: 0.99 }
    const c = checkPose(crossed, W, H)
    expect(c.crossed).toBe(true)
    expect(c.torsoOcclusion).toBeLessThanOrEqual(MAX_TORSO_OCCLUSION)
    expect(refusal('upper', crossed)).toMatch(/arms are crossed over the torso/)
    expect(refusal('full', crossed)).toMatch(/arms are crossed/)
    expect(refusal('lower', crossed)).toBeNull()
  })

  it('hands held together in front of the body (not crossed): dressable while they hide at most a third of the torso, refused past that', () => {
    // Hands meeting in front of the belly, each wrist on its own side of the body axis.
    const together = standing()
    together[LM.leftElbow] = { x: 375, y: 330, score: 0.99 }
    together[LM.rightElbow] = { x: 225, y: 330, score: 0.99 }
    together[LM.leftWrist] = { x: 320, y: 360, score: 0.99 }
    together[LM.rightWrist] = { x: 280, y: 360, score: 0.99 }
    together[LM.leftIndex] = { x: 305, y: 375, score: 0.99 }
    together[LM.leftPinky] = { x: 310, y: 380, score: 0.99 }
    together[LM.rightIndex] = { x: 295, y: 375, score: 0.99 }
    together[LM.rightPinky] = { x: 290, y: 380, score: 0.99 }
    const t = checkPose(together, W, H)
    expect(t.crossed).toBe(false)
    expect(t.torsoOcclusion).toBeGreaterThan(0.05)
    expect(t.torsoOcclusion).toBeLessThanOrEqual(MAX_TORSO_OCCLUSION)
    expect(refusal('upper', together)).toBeNull()

    // Hands and forearms held flat over the whole chest and belly.
    const covered = standing()
    covered[LM.leftElbow] = { x: 345, y: 390, score: 0.99 }
    covered[LM.rightElbow] = { x: 255, y: 390, score: 0.99 }
    covered[LM.leftWrist] = { x: 290, y: 230, score: 0.99 }
    covered[LM.rightWrist] = { x: 310, y: 230, score: 0.99 }
    for (const [ix, pk, x] of [
      [LM.leftIndex, LM.leftPinky, 270],
      [LM.rightIndex, LM.rightPinky, 330],
    ] as const) {
      covered[ix] = { x, y: 205, score: 0.99 }
      covered[pk] = { x, y: 215, score: 0.99 }
    }
    const c2 = checkPose(covered, W, H)
    expect(c2.torsoOcclusion).toBeGreaterThan(MAX_TORSO_OCCLUSION)
    expect(refusal('upper', covered)).toMatch(/forearms and hands cover \d+ % of their torso/)
    expect(refusal('full', covered)).toMatch(/forearms/)
    // A lower garment does not need the torso.
    expect(refusal('lower', covered)).toBeNull()
  })
})
