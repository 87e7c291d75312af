/**
 * Sleeve geometry (fit-sleeve.ts) on real photos of the try-on set with the real person networks:
 * tryon/person_06 (TUNE: full body, three-quarter, her right arm hanging, her left arm raised
 * with the hand on her head, the wrist hidden behind it). The garment side is a sleeve's landmarks
 * written by hand (a flat-lay long sleeve and a tee's short one), so each figure can be checked.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../media/image.ts'
import {
  armHeld,
  armPath,
  ARM_CAPSULE_UPPER,
  ARM_LOST_MASK,
  HANG_ARM_MARGIN,
  SHORT_MAX,
  underarmCorner,
  WORN_SLEEVE,
  belowArmpitCut,
  bodyStop,
  HANG_SHARE,
  LOST_ARM_UPPER,
  fitSleeve,
  sleeveLength,
  sureArm,
  raiseTurn,
  trimToSleeve,
  LONG_ARM,
  type SleeveFrame,
} from './fit-sleeve.ts'
import { fitParts, SLEEVE_K } from './fit.ts'
import { extractGarmentMask } from './garment-mask.ts'
import { maskBbox, topLandmarks, type SleeveLandmarks } from './garment-shape.ts'
import { analyzePerson, type PersonAnalysis, type PersonModels } from './person.ts'
import { openPersonModels } from './person-models.testing.ts'
import { LM } from './pose.ts'
import { dist, dot, mid, mul, norm, plane, sub, type Point } from './raster.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const DEV = resolve(ROOT, '../shared/media')
const SET = join(DEV, 'tryon')
const MODELS = join(ROOT, 'models', 'dist')
const TIMEOUT_MS = 120_000

let release: () => Promise<void> = async () => {}
let p06: PersonAnalysis
let models: PersonModels

beforeAll(async () => {
  ;({ models, release } = await openPersonModels(MODELS))
  const img = await decodeImage(join(SET, 'person_06.jpg'), { what: 'person image' })
  p06 = await analyzePerson({ width: img.width, height: img.height, data: img.rgb }, models)
}, TIMEOUT_MS)

afterAll(async () => {
  await release()
})

const HANGING = [LM.rightShoulder, LM.rightElbow, LM.rightWrist] as const
const RAISED = [LM.leftShoulder, LM.leftElbow, LM.leftWrist] as const

/** A flat-lay garment's image-left sleeve hanging beside the body: shoulder seams 300 px apart. */
const GARMENT_SHOULDERS = 300
const longSleeve = (lengthPx: number): SleeveLandmarks => ({
  shoulder: { x: 100, y: 100 },
  armpit: { x: 104, y: 200 },
  cuff: { x: 102 - 0.15 * lengthPx, y: 150 + lengthPx },
  cuffHalfWidth: 30,
})

function frameOf(p: PersonAnalysis): SleeveFrame {
  const sw = p.shoulderWidth
  const sMid = mid(p.points[LM.leftShoulder]!, p.points[LM.rightShoulder]!)
  return {
    s: (0.9 * sw) / GARMENT_SHOULDERS,
    sw,
    centre: sMid,
    garmentShoulders: GARMENT_SHOULDERS,
    // The torso fit's scale is 1.2–1.6 × the skeleton's on the set's persons.
    worn: (1.3 * 0.9 * sw) / GARMENT_SHOULDERS,
  }
}

/** The seam the torso fit gives the image-left sleeve (person_06's right arm): beside the joint. */
function seam(p: PersonAnalysis, arm: readonly number[], side: -1 | 1): [Point, Point] {
  const j = p.points[arm[0]!]!
  const sw = p.shoulderWidth
  return [
    { x: j.x + side * 0.05 * sw, y: j.y - 0.22 * sw },
    { x: j.x - side * 0.05 * sw, y: j.y + 0.3 * sw },
  ]
}

describe('sureArm / armPath: the joints a sleeve follows', () => {
  it('the hanging arm has a sure elbow and wrist; the raised one only its elbow (the wrist is behind the head)', () => {
    expect(sureArm(p06, HANGING)).toBe('elbow-wrist')
    expect(sureArm(p06, RAISED)).toBe('elbow')
    const root = p06.points[LM.rightShoulder]!
    const path = armPath(p06, HANGING, root, { x: 0, y: 1 })
    expect(path.points).toHaveLength(3)
    // From the shoulder joint, the path is the joints themselves.
    expect(dist(path.points[1]!, p06.points[LM.rightElbow]!)).toBeLessThan(1)
    expect(dist(path.points[2]!, p06.points[LM.rightWrist]!)).toBeLessThan(1)
    // The raised arm goes up to its elbow and on past it the way the upper arm points.
    const up = armPath(p06, RAISED, p06.points[LM.leftShoulder]!, { x: 0, y: 1 })
    expect(up.joints).toBe('elbow')
    expect(up.dir.y).toBeLessThan(0)
  })

  it('armHeld: the segmentation holds the hanging arm and lost the raised one (sunlit trees behind it)', () => {
    const hanging = armHeld(p06, HANGING, sureArm(p06, HANGING) as 'elbow-wrist')
    const raised = armHeld(p06, RAISED, sureArm(p06, RAISED) as 'elbow')
    console.log('person_06 armHeld [hanging, raised]:', [hanging, raised])
    // 1.00 and 0.35 (person_02's hanging arm, whose landmarks lie on its outer edge, holds 1.00;
    // on the bone alone 0.28, and its sleeve was wrongly given the whole capsule).
    expect(hanging).toBeGreaterThan(0.9)
    expect(raised).toBeLessThan(ARM_LOST_MASK - 0.1)
  })

  it('an elbow or wrist where no arm reaches (a knee taken for it) is not followed', () => {
    const legAsArm: PersonAnalysis = {
      ...p06,
      points: p06.points.map((q, i) =>
        i === LM.rightElbow ? { ...p06.points[LM.rightKnee]! } : q,
      ),
    }
    expect(sureArm(legAsArm, HANGING)).toBe('none')
    const path = armPath(legAsArm, HANGING, p06.points[LM.rightShoulder]!, { x: -0.3, y: 1 })
    expect(path.joints).toBe('none')
    expect(path.dir).toEqual({ x: -0.3, y: 1 })
    const ankleAsWrist: PersonAnalysis = {
      ...p06,
      points: p06.points.map((q, i) =>
        i === LM.rightWrist ? { ...p06.points[LM.rightAnkle]! } : q,
      ),
    }
    expect(sureArm(ankleAsWrist, HANGING)).toBe('elbow')
    const unsure: PersonAnalysis = {
      ...p06,
      points: p06.points.map((q, i) => (i === LM.rightElbow ? { ...q, score: 0.2 } : q)),
    }
    expect(sureArm(unsure, HANGING)).toBe('none')
  })
})

describe('fitSleeve: a long sleeve follows the arm to the wrist', () => {
  it('on the hanging arm its cuff is at the wrist, its armpit edge towards the body, never narrower than the arm', () => {
    const sl = longSleeve(LONG_ARM * GARMENT_SHOULDERS)
    const frame = frameOf(p06)
    const [tS, tA] = seam(p06, HANGING, -1)
    const part = fitSleeve(p06, frame, 'sleeve-left', sl, plane(400, 800), HANGING, tS, tA)!
    expect(part.layer).toBe('sleeve')
    // Root seam, then four rows (upper arm, elbow, forearm, cuff), inner point first.
    expect(part.targets).toHaveLength(10)
    const cuffIn = part.targets[8]!
    const cuffOut = part.targets[9]!
    const cuff = mid(cuffIn, cuffOut)
    const wrist = p06.points[LM.rightWrist]!
    expect(dist(cuff, wrist)).toBeLessThan(0.15 * p06.shoulderWidth)
    // The arm hangs on the image left of the torso: the inner edge is to its right.
    for (let r = 0; r < 4; r++) {
      expect(part.targets[2 + 2 * r]!.x).toBeGreaterThan(part.targets[3 + 2 * r]!.x)
      expect(part.sources[2 + 2 * r]!.x).toBeGreaterThan(part.sources[3 + 2 * r]!.x)
    }
    // The elbow row sits at the elbow (offset by the seam's middle from the joint).
    const elbowRow = mid(part.targets[4]!, part.targets[5]!)
    const offset = sub(mid(tS, tA), p06.points[LM.rightShoulder]!)
    const elbow = p06.points[LM.rightElbow]!
    expect(dist(elbowRow, { x: elbow.x + offset.x, y: elbow.y + offset.y })).toBeLessThan(1)
    expect(dist(cuffIn, cuffOut) / 2).toBeGreaterThanOrEqual(30 * frame.s - 1e-9)
  })

  it('on the raised arm it goes up the upper arm, its armpit edge underneath', () => {
    const sl = longSleeve(LONG_ARM * GARMENT_SHOULDERS)
    // The image-right sleeve: mirror the landmarks.
    const mirror = (q: Point): Point => ({ x: 600 - q.x, y: q.y })
    const slR: SleeveLandmarks = {
      shoulder: mirror(sl.shoulder),
      armpit: mirror(sl.armpit),
      cuff: mirror(sl.cuff),
      cuffHalfWidth: sl.cuffHalfWidth,
    }
    const [tS, tA] = seam(p06, RAISED, 1)
    const part = fitSleeve(p06, frameOf(p06), 'sleeve-right', slR, plane(600, 800), RAISED, tS, tA)!
    const jS = p06.points[LM.leftShoulder]!
    const jE = p06.points[LM.leftElbow]!
    const up = sub(jE, jS)
    // Rows go up along the arm (the wrist is not sure: straight on past the elbow).
    const rows = [0, 1, 2, 3].map((r) => mid(part.targets[2 + 2 * r]!, part.targets[3 + 2 * r]!))
    for (let r = 1; r < 4; r++) expect(rows[r]!.y).toBeLessThan(rows[r - 1]!.y)
    // The inner (armpit) point of each row is below the arm's axis: on the side away from the head.
    const below = { x: -up.y, y: up.x } // perpendicular, pointing down for an arm going up-right
    const sign = below.y > 0 ? 1 : -1
    for (let r = 0; r < 4; r++) {
      const inner = part.targets[2 + 2 * r]!
      expect(sign * dot(sub(inner, rows[r]!), below)).toBeGreaterThan(0)
    }
  })

  it('on the raised arm the segmentation lost, a narrow sleeve is as wide as an arm on the upper arm', () => {
    // A sleeve that narrows to a slim cuff (14 px half-width against the root's 50).
    const mirror = (q: Point): Point => ({ x: 600 - q.x, y: q.y })
    const slim = longSleeve(LONG_ARM * GARMENT_SHOULDERS)
    const slR: SleeveLandmarks = {
      shoulder: mirror(slim.shoulder),
      armpit: mirror(slim.armpit),
      cuff: mirror(slim.cuff),
      cuffHalfWidth: 14,
    }
    const [tS, tA] = seam(p06, RAISED, 1)
    const frame = frameOf(p06)
    const part = fitSleeve(p06, frame, 'sleeve-right', slR, plane(600, 800), RAISED, tS, tA)!
    const sw = p06.shoulderWidth
    // Row 0: the middle of the upper arm, where the segmentation lost the arm …
    const p = part.targets[2]!
    const q = part.targets[3]!
    const c = mid(p, q)
    expect(p06.mask.data[Math.round(c.y) * p06.width + Math.round(c.x)]!).toBeLessThan(0.5)
    console.log('person_06 raised arm, mid upper arm: half-width / sw', dist(p, q) / 2 / sw)
    // … the sleeve is as wide as person.ts's upper arm capsule there (0.121; its own is 0.107 and
    // the mask measured nothing: the sleeve's own before).
    expect(dist(p, q) / 2).toBeGreaterThanOrEqual(1.1 * LOST_ARM_UPPER * sw - 1e-6)
  })

  it('a short sleeve keeps its own length; a long one is the share of the arm its length says', () => {
    const frame = frameOf(p06)
    const [tS, tA] = seam(p06, HANGING, -1)
    const path = armPath(p06, HANGING, mid(tS, tA), { x: 0, y: 1 })
    const armLength =
      dist(path.points[0]!, path.points[1]!) + dist(path.points[1]!, path.points[2]!)
    const tee = sleeveLength(0.45 * GARMENT_SHOULDERS, frame, path)
    expect(tee.length).toBeCloseTo(0.45 * GARMENT_SHOULDERS * frame.s, 6)
    const long = sleeveLength(LONG_ARM * GARMENT_SHOULDERS, frame, path)
    expect(long.length).toBeCloseTo(armLength, 6)
    // Longer than the arm on the photo: still ends at the wrist.
    expect(sleeveLength(2 * GARMENT_SHOULDERS, frame, path).length).toBeCloseTo(armLength, 6)
    // A three-quarter turn: person_06's shoulders look narrow, so the garment's own length
    // (scaled by them) would end the long sleeve near the elbow.
    expect(LONG_ARM * GARMENT_SHOULDERS * frame.s).toBeLessThan(0.75 * armLength)
    // The tee's part: the seam, two rows and the anchors that hold a hanging sleeve's spline (two
    // inward of its armpit edge, four on the torso's side of its seam).
    const part = fitSleeve(
      p06,
      frame,
      'sleeve-left',
      longSleeve(0.45 * GARMENT_SHOULDERS),
      plane(400, 800),
      HANGING,
      tS,
      tA,
    )!
    expect(part.targets).toHaveLength(12)
  })
})

describe('fitSleeve: a short sleeve on a raised arm lies along the upper arm', () => {
  /** A tee's image-right sleeve (0.45 × the shoulder seams long), mirrored from the image-left one. */
  const mirror = (q: Point): Point => ({ x: 600 - q.x, y: q.y })
  const tee = longSleeve(0.45 * GARMENT_SHOULDERS)
  const teeR: SleeveLandmarks = {
    shoulder: mirror(tee.shoulder),
    armpit: mirror(tee.armpit),
    cuff: mirror(tee.cuff),
    cuffHalfWidth: tee.cuffHalfWidth,
  }

  it('on person_06 raised arm: root seam turned about the shoulder, cuff its own length up the upper arm, not folded', () => {
    const frame = frameOf(p06)
    const [tS, tA] = seam(p06, RAISED, 1)
    const part = fitSleeve(p06, frame, 'sleeve-right', teeR, plane(600, 800), RAISED, tS, tA)!
    // The seam and two rows (middle, cuff), as for any short sleeve.
    expect(part.targets).toHaveLength(6)
    const jS = p06.points[LM.leftShoulder]!
    const jE = p06.points[LM.leftElbow]!
    const up = norm(sub(jE, jS))
    expect(up.y).toBeLessThan(0)
    // The shoulder seam point stays; the armpit point turns with the arm, by the angle between
    // the sleeve's direction on the garment (in the body's frame) and the upper arm.
    expect(part.targets[0]).toEqual(tS)
    expect(dist(part.targets[1]!, tA)).toBeGreaterThan(0.3 * p06.shoulderWidth)
    const root = mid(part.targets[0]!, part.targets[1]!)
    const angle = (a: Point, b: Point): number =>
      Math.atan2(a.x * b.y - a.y * b.x, a.x * b.x + a.y * b.y)
    const body = norm(
      sub(
        mid(p06.points[LM.leftHip]!, p06.points[LM.rightHip]!),
        mid(p06.points[LM.leftShoulder]!, p06.points[LM.rightShoulder]!),
      ),
    )
    const gAxis = norm(sub(teeR.cuff, mid(teeR.shoulder, teeR.armpit)))
    const gDir = {
      x: body.y * gAxis.x + body.x * gAxis.y,
      y: -body.x * gAxis.x + body.y * gAxis.y,
    }
    const turned = angle(gDir, up)
    expect(Math.abs(turned)).toBeGreaterThan(Math.PI / 2)
    expect(angle(sub(tA, tS), sub(part.targets[1]!, tS))).toBeCloseTo(turned, 6)
    // The rows lie on the upper arm's line from the root, the cuff at the sleeve's own length.
    const len = dist(teeR.cuff, mid(teeR.shoulder, teeR.armpit)) * frame.s
    const rows = [0, 1].map((r) => mid(part.targets[2 + 2 * r]!, part.targets[3 + 2 * r]!))
    const across = { x: -up.y, y: up.x }
    for (const [r, f] of [
      [0, 0.5],
      [1, 1],
    ] as const) {
      const v = sub(rows[r]!, root)
      expect(dot(v, up)).toBeCloseTo(f * len, 6)
      expect(Math.abs(dot(v, across))).toBeLessThan(1e-6)
    }
    // The cuff is up the arm, above the shoulder seam (the old geometry left it on the torso).
    expect(rows[1]!.y).toBeLessThan(tS.y)
    // Not folded: the garment's armpit point and the rows' armpit-side points keep one side of the
    // axis on the person as on the garment.
    const gAcross = { x: -gAxis.y, y: gAxis.x }
    const gSide = Math.sign(dot(sub(teeR.armpit, teeR.shoulder), gAcross))
    const pSide = Math.sign(dot(sub(part.targets[1]!, part.targets[0]!), across))
    for (let r = 0; r < 2; r++) {
      const gRowSide = Math.sign(
        dot(sub(part.sources[2 + 2 * r]!, part.sources[3 + 2 * r]!), gAcross),
      )
      const pRowSide = Math.sign(
        dot(sub(part.targets[2 + 2 * r]!, part.targets[3 + 2 * r]!), across),
      )
      expect(gRowSide * gSide).toBe(pRowSide * pSide)
    }
  })

  it('on the hanging arm, or without a sure elbow, it does not turn', () => {
    const frame = frameOf(p06)
    const [tS, tA] = seam(p06, HANGING, -1)
    const part = fitSleeve(p06, frame, 'sleeve-left', tee, plane(400, 800), HANGING, tS, tA)!
    expect(part.targets[0]).toEqual(tS)
    // The armpit end only moves straight across the arm (in to its inner side), not about the
    // shoulder point.
    const along = norm(sub(p06.points[LM.rightElbow]!, p06.points[LM.rightShoulder]!))
    expect(dot(sub(part.targets[1]!, tA), along)).toBeCloseTo(0, 6)
    const down = { x: 0, y: 1 }
    const hanging = armPath(p06, HANGING, mid(tS, tA), down)
    expect(raiseTurn(norm({ x: -0.3, y: 1 }), hanging, down)).toBe(0)
    const none = armPath(p06, [LM.leftShoulder, LM.leftKnee, LM.leftAnkle], mid(tS, tA), down)
    expect(none.joints).toBe('none')
    expect(raiseTurn(norm({ x: 0.3, y: 1 }), none, down)).toBe(0)
  })
})

describe('a short sleeve on a hanging arm hangs from the armpit, not over the chest', () => {
  const inwardOf = (tA: Point, dir: Point, centre: Point): Point => {
    const across = { x: -dir.y, y: dir.x }
    return dot(across, sub(centre, tA)) >= 0 ? across : { x: -across.x, y: -across.y }
  }

  it('bodyStop moves a row out by what it reaches past the armpit line, and leaves one clear of it', () => {
    const dir = { x: 0, y: 1 }
    const tA = { x: 100, y: 50 }
    const centre = { x: 300, y: 0 }
    // Centred 10 px outside the line, 40 px half-wide: 30 px past it, moved 30 px out.
    expect(bodyStop({ x: 90, y: 120 }, { x: 1, y: 0 }, 40, dir, tA, centre)).toEqual({
      x: -30,
      y: 0,
    })
    // 50 px outside, 40 px half-wide: clear.
    const clear = bodyStop({ x: 50, y: 120 }, { x: -1, y: 0 }, 40, dir, tA, centre)
    expect(Math.hypot(clear.x, clear.y)).toBe(0)
  })

  it('on person_06 hanging arm: the tee sleeve keeps its seam and width, its inner edge on the arm’s inner side, not the chest', () => {
    const frame = frameOf(p06)
    const [tS, tA] = seam(p06, HANGING, -1)
    const tee = longSleeve(0.45 * GARMENT_SHOULDERS)
    const part = fitSleeve(p06, frame, 'sleeve-left', tee, plane(400, 800), HANGING, tS, tA)!
    // The seam, two rows, six anchors (hangingRows).
    expect(part.targets).toHaveLength(12)
    expect(part.targets[0]).toEqual(tS)
    const joint = p06.points[LM.rightShoulder]!
    const dir = norm(sub(p06.points[LM.rightElbow]!, joint))
    const inward = inwardOf(tA, dir, frame.centre)
    // The seam's armpit end lies 0.05 × sw inward of the joint's line, less than the arm's inner
    // side (ARM_CAPSULE_UPPER × HANG_ARM_MARGIN): it moves in to that side, and no farther.
    const armSide = HANG_ARM_MARGIN * ARM_CAPSULE_UPPER * p06.shoulderWidth
    expect(dot(sub(tA, joint), inward)).toBeLessThan(armSide)
    expect(dot(sub(part.targets[1]!, joint), inward)).toBeCloseTo(armSide, 6)
    for (let r = 0; r < 2; r++) {
      const a = part.targets[2 + 2 * r]!
      const b = part.targets[3 + 2 * r]!
      const past = [a, b].map((q) => dot(sub(q, joint), inward))
      // Centred on the arm its armpit half lay over the chest; its edge is on the arm's inner side.
      expect(Math.max(...past)).toBeCloseTo(armSide, 6)
      // …and the row keeps its width (at least the sleeve's own).
      expect(dist(a, b) / 2).toBeGreaterThanOrEqual(30 * frame.s - 1e-9)
    }
  })

  it(
    'on a real tee (tryon/garment_upper_05, white tape trims) fitted to person_06: the sleeve part loses the torso under the armpit, keeps its cuff, and hangs outside the armpit',
    async () => {
      const img = await decodeImage(join(SET, 'garment_upper_05.jpg'), {
        what: 'garment',
        maxWorkSidePx: 768,
      })
      const rgb = { width: img.width, height: img.height, data: img.rgb }
      const gm = extractGarmentMask(rgb, null, { preprocess: true })
      const lm = topLandmarks(gm, maskBbox(gm)!, 'upper')
      const parts = fitParts('upper', lm, gm, p06)
      const sleeve = parts.find((q) => q.name === 'sleeve-left')!
      const sl = lm.sleeveL!
      const w = gm.width
      // Below the garment's armpit, inside the torso's side line: torso, never the sleeve.
      let under = 0
      let inTorso = 0
      for (let y = Math.ceil(sl.armpit.y) + 3; y < gm.height; y++) {
        for (let x = Math.ceil(lm.sideL(y)) + 3; x < w; x++) {
          if (gm.data[y * w + x]! < 0.5) continue
          under++
          if (sleeve.mask.data[y * w + x]! > 0) inTorso++
        }
      }
      expect(under).toBeGreaterThan(1000)
      expect(inTorso).toBe(0)
      // The cuff (the garment's own pixels there) is kept.
      const cx = Math.round(sl.cuff.x)
      const cy = Math.round(sl.cuff.y - 0.5 * sl.cuffHalfWidth)
      expect(gm.data[cy * w + cx]).toBeGreaterThan(0.5)
      expect(sleeve.mask.data[cy * w + cx]).toBeGreaterThan(0.5)
      // On the person, the sleeve's rows stay outside the line through its armpit along the arm.
      const tA = sleeve.targets[1]!
      const mp = mid(p06.points[LM.leftShoulder]!, p06.points[LM.rightShoulder]!)
      // The image-left sleeve is on her hanging right arm; its rows follow the upper arm.
      expect(p06.points[LM.rightShoulder]!.x).toBeLessThan(p06.points[LM.leftShoulder]!.x)
      const dir = norm(sub(p06.points[LM.rightElbow]!, p06.points[LM.rightShoulder]!))
      const inward = inwardOf(tA, dir, mp)
      for (const q of sleeve.targets.slice(2, 6)) expect(dot(sub(q, tA), inward)).toBeLessThan(1)
    },
    TIMEOUT_MS,
  )
})

describe('belowArmpitCut', () => {
  it('drops the pixels past the armpit edge by more than ARMPIT_EDGE_PX, keeps the rest', () => {
    const m = plane(100, 100)
    m.data.fill(1)
    const out = belowArmpitCut(m, { x: 50, y: 50 }, { x: 1, y: 0 })
    expect(out.data[50 * 100 + 52]).toBe(1)
    expect(out.data[50 * 100 + 53]).toBe(0)
    expect(out.data[10 * 100 + 20]).toBe(1)
    expect(m.data[50 * 100 + 53]).toBe(1)
  })
})

describe('trimToSleeve', () => {
  it('drops what lies beside a hanging sleeve past its first quarter, keeps its root whole', () => {
    const sl = longSleeve(400)
    const m = plane(400, 700)
    m.data.fill(1)
    const t = trimToSleeve(m, sl)
    const at = (x: number, y: number) => t.data[y * 400 + x]!
    // On the axis, at the cuff and halfway: kept.
    expect(at(Math.round(sl.cuff.x), Math.round(sl.cuff.y) - 5)).toBe(1)
    const half = mid(mid(sl.shoulder, sl.armpit), sl.cuff)
    expect(at(Math.round(half.x), Math.round(half.y))).toBe(1)
    // 120 px beside it (the torso's side on the photo): gone.
    expect(at(Math.round(half.x) + 120, Math.round(half.y))).toBe(0)
    // Beside the root (the armhole seam with the torso): kept.
    expect(at(160, 160)).toBe(1)
  })

  it('keeps only the upper part of a bent sleeve (worn on a bent arm): its forearm folds back across the body', () => {
    // Root (150, 150) → elbow (150, 350) → cuff back up and in at (60, 250).
    const sl: SleeveLandmarks = {
      shoulder: { x: 130, y: 120 },
      armpit: { x: 170, y: 180 },
      elbow: { x: 150, y: 350 },
      cuff: { x: 60, y: 250 },
      cuffHalfWidth: 20,
    }
    const m = plane(300, 400)
    m.data.fill(1)
    const t = trimToSleeve(m, sl)
    const at = (x: number, y: number) => t.data[y * 300 + x]!
    // Down the upper part and at the elbow: kept.
    expect(at(150, 260)).toBe(1)
    expect(at(150, 345)).toBe(1)
    // Three quarters along the root → cuff line, and the cuff (what a straight trim kept): gone.
    expect(at(83, 225)).toBe(0)
    expect(at(60, 250)).toBe(0)
  })
})

describe('a short sleeve on a hanging arm hangs down it from its armhole seam (README pair)', () => {
  // dev/person_02 (arms hanging) × dev/garment_upper_01 (a ghost-mannequin tee whose dark sleeves
  // hang at a slant): the seam the torso fit places runs down the arm, edge-on, from the shoulder
  // point to the armpit. The sleeve came out as a small dark crescent at each shoulder: its lengths
  // at the skeleton's scale (SLEEVE_K), its hem's inner corner taken on the hem itself, its inner
  // edge outward of the arm (the painted arm showed between sleeve and torso).
  let p02: PersonAnalysis
  let tee: SleeveLandmarks
  let parts: ReturnType<typeof fitParts>
  let gsw: number
  let gm: ReturnType<typeof extractGarmentMask>

  beforeAll(async () => {
    const img = await decodeImage(join(DEV, 'person_02.jpg'), { what: 'person image' })
    p02 = await analyzePerson({ width: img.width, height: img.height, data: img.rgb }, models)
    const g = await decodeImage(join(DEV, 'garment_upper_01.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    gm = extractGarmentMask({ width: g.width, height: g.height, data: g.rgb }, null, {
      preprocess: true,
    })
    const lm = topLandmarks(gm, maskBbox(gm)!, 'upper')
    tee = lm.sleeveL!
    gsw = dist(lm.shoulderL, lm.shoulderR)
    parts = fitParts('upper', lm, gm, p02)
  }, TIMEOUT_MS)

  /** The cuff's outer (shoulder-side) corner on the garment. */
  const outerCorner = (sl: SleeveLandmarks): Point => {
    const root = mid(sl.shoulder, sl.armpit)
    const ax = norm(sub(sl.cuff, root))
    const n = { x: -ax.y, y: ax.x }
    const k = (Math.sign(dot(sub(sl.shoulder, root), n)) || 1) * sl.cuffHalfWidth
    return { x: sl.cuff.x + n.x * k, y: sl.cuff.y + n.y * k }
  }

  /** Checks the image-left sleeve (his right arm) fitted with the torso's scale `worn`. */
  const check = (
    part: NonNullable<ReturnType<typeof fitSleeve>>,
    worn: number,
    centre: Point,
  ): void => {
    const tS = part.targets[0]!
    const joint = p02.points[LM.rightShoulder]!
    const elbow = p02.points[LM.rightElbow]!
    const down = norm(sub(elbow, joint))
    expect(down.y).toBeGreaterThan(0.9)
    const upper = dist(joint, elbow)
    const across = { x: -down.y, y: down.x }
    const out = dot(across, sub(part.targets[1]!, centre)) >= 0 ? across : mul(across, -1)
    const gOut = outerCorner(tee)
    // Rows: (outer, inner) at the middle and the cuff.
    const cuffOut = part.targets[4]!
    expect(part.sources[4]!.x).toBeCloseTo(gOut.x, 6)
    // The outer edge runs from the shoulder point down the arm for the sleeve's top length at the
    // worn scale (× WORN_SLEEVE; at most SHORT_MAX of the upper arm below the joint).
    const topLen = Math.min(
      dist(tee.shoulder, gOut) * worn * WORN_SLEEVE,
      SHORT_MAX * upper - dot(sub(tS, joint), down),
    )
    expect(dot(sub(cuffOut, tS), down)).toBeGreaterThan(0.9 * topLen)
    // …which puts the cuff well down the upper arm (it ended 0.12 of it below the joint).
    const below = dot(sub(cuffOut, joint), down) / upper
    console.log('README pair: outer cuff below the shoulder joint / upper arm', below)
    expect(below).toBeGreaterThan(0.25)
    expect(below).toBeLessThanOrEqual(SHORT_MAX + 1e-6)
    // The inner edge covers the arm drawn in front of the torso (person.ts `arms`): at least
    // HANG_ARM_MARGIN × ARM_CAPSULE_UPPER × sw inward of the joints' line (it lay on the armpit's
    // line, outward of that line, and the painted arm showed between sleeve and torso).
    const armSide = HANG_ARM_MARGIN * ARM_CAPSULE_UPPER * p02.shoulderWidth
    for (const q of [part.targets[1]!, part.targets[3]!, part.targets[5]!]) {
      expect(dot(sub(joint, q), out)).toBeGreaterThanOrEqual(armSide - 1e-6)
    }
    // Every row: outer end outward of the inner one, covering the arm (the person mask ends
    // before the outer end).
    for (const r of [0, 1]) {
      const o = part.targets[2 + 2 * r]!
      const i = part.targets[3 + 2 * r]!
      expect(dot(sub(o, i), out)).toBeGreaterThan(0)
      const x = Math.round(o.x + out.x * 2)
      const y = Math.round(o.y + out.y * 2)
      expect(p02.mask.data[y * p02.width + x]!).toBeLessThan(0.5)
    }
  }

  it(
    'the sleeve hangs down the upper arm at the worn scale and covers the arm',
    () => {
      const sleeve = parts.find((q) => q.name === 'sleeve-left')!
      // A tee's sleeve: short, hanging.
      expect(dist(tee.cuff, mid(tee.shoulder, tee.armpit)) / (LONG_ARM * gsw)).toBeLessThan(
        HANG_SHARE,
      )
      // The seam and two rows (each outer, inner), then the anchors: 2 inward of the armpit edge,
      // 4 on the torso's side of the seam.
      expect(sleeve.targets).toHaveLength(12)
      const torso = parts.find((q) => q.name === 'torso')!
      const worn = dist(torso.targets[1]!, torso.targets[2]!) / gsw
      // The torso's scale is larger than the skeleton's (the sleeves' before).
      expect(worn).toBeGreaterThan((1.2 * SLEEVE_K * p02.shoulderWidth) / gsw)
      check(sleeve, worn, mid(torso.targets[1]!, torso.targets[2]!))
    },
    TIMEOUT_MS,
  )

  it(
    'the hem’s inner corner is found where the slanted hem meets the underarm, and the sleeve part keeps it',
    () => {
      const sleeve = parts.find((q) => q.name === 'sleeve-left')!
      const under = underarmCorner(sleeve.mask, tee)!
      const gOut = outerCorner(tee)
      console.log('dev garment_upper_01 left sleeve: underarm corner', under, 'cuff', tee.cuff)
      // On the photo the hem runs from the outer corner down to just below the armpit: the
      // underarm edge is short, the hem long (the cuff's half-width, 17 px, put the inner corner on
      // the hem, 85 px from the armpit and 34 px from the outer corner).
      expect(under.y).toBeGreaterThan(tee.cuff.y + 20)
      expect(dist(tee.armpit, under)).toBeLessThan(0.6 * dist(under, gOut))
      // The sleeve's inner cuff row takes its colour from that corner.
      expect(sleeve.sources[5]!).toEqual(under)
      // Its pixels belong to the sleeve part, not to the torso (which drew them as a dark wedge
      // beside the torso under the armpit).
      const torso = parts.find((q) => q.name === 'torso')!
      const i = Math.round(under.y - 2) * gm.width + Math.round(under.x)
      expect(gm.data[i]!).toBeGreaterThan(0.5)
      expect(sleeve.mask.data[i]!).toBeGreaterThan(0.5)
      expect(torso.mask.data[i]!).toBe(0)
    },
    TIMEOUT_MS,
  )

  it(
    'holds on a larger scale (the torso’s × 1.4)',
    () => {
      const torso = parts.find((q) => q.name === 'torso')!
      const sleeve = parts.find((q) => q.name === 'sleeve-left')!
      const tS = torso.targets[1]!
      const tA = torso.targets[3]!
      expect(sleeve.targets[0]).toEqual(tS)
      const sw = p02.shoulderWidth
      const worn = (1.4 * dist(torso.targets[1]!, torso.targets[2]!)) / gsw
      const centre = mid(tS, torso.targets[2]!)
      const frame: SleeveFrame = {
        s: (1.4 * SLEEVE_K * sw) / gsw,
        sw,
        centre,
        garmentShoulders: gsw,
        worn,
      }
      const arm = [LM.rightShoulder, LM.rightElbow, LM.rightWrist]
      const part = fitSleeve(p02, frame, 'sleeve-left', tee, sleeve.mask, arm, tS, tA)!
      expect(part.targets).toHaveLength(12)
      check(part, worn, centre)
    },
    TIMEOUT_MS,
  )
})
