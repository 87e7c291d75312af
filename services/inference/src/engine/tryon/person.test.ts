/**
 * Person analysis (stage 1) on real photos of the try-on set (../shared/media/tryon, TUNE persons
 * only) with the real networks: the landmarks land in the hand-labelled body boxes on every framing
 * (half body, torso with the face cut off, full body, arms crossed, three-quarter), the
 * segmentation-mask ROI (the path taken when the detector finds nobody) finds the same body, a
 * photo cropped at the mouth still finds the person, and a pose that cannot be dressed is refused
 * with `unsupported_pose` and a sentence saying what was found.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { promisify } from 'node:util'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError, HTTP_STATUS } from '@tailor/proto'
import { decodeImage } from '../../media/image.ts'
import { FFMPEG_BIN } from '../../media/video.ts'
import { assertDressable } from './fit.ts'
import { analyzePerson, type PersonAnalysis, type PersonModels } from './person.ts'
import { openPersonModels } from './person-models.testing.ts'
import { LM } from './pose.ts'
import { dist, mid, type Point, type Rgb } from './raster.ts'
import { openTryOnEngine } from './tryon-engine.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const SET = resolve(ROOT, '../shared/media/tryon')
const DEV_MEDIA = resolve(ROOT, '../shared/media')
const MODELS = join(ROOT, 'models', 'dist')
/** The TUNE persons of the try-on set (coord/TRYON.md); holdout photos are only reported on. */
const TUNE = [
  'person_01',
  'person_02',
  'person_06',
  'person_07',
  'person_11',
  'person_12',
  'person_15',
] as const
/** The HOLDOUT persons: only checked here, never tuned on. */
const HOLDOUT = [
  'person_03',
  'person_04',
  'person_05',
  'person_08',
  'person_09',
  'person_13',
  'person_14',
  'person_16',
] as const
/** The boxes are hand labels good to about ±0.02 and meant to be dilated by 5 % (SOURCES.md). */
const BOX_DILATE = 0.05
const TIMEOUT_MS = 120_000

interface Labels {
  persons: { file: string; framing: string; boxes: { upper: number[]; lower: number[] } }[]
}
let labels: Labels
let models: PersonModels
let release: () => Promise<void> = async () => {}

beforeAll(async () => {
  labels = JSON.parse(await readFile(join(SET, 'labels.json'), 'utf8')) as Labels
  ;({ models, release } = await openPersonModels(MODELS))
}, TIMEOUT_MS)

afterAll(async () => {
  await release()
})

const load = async (name: string): Promise<Rgb> => {
  const img = await decodeImage(join(SET, `${name}.jpg`), { what: 'person image' })
  return { width: img.width, height: img.height, data: img.rgb }
}
const boxOf = (name: string, part: 'upper' | 'lower') =>
  labels.persons.find((p) => p.file === `${name}.jpg`)!.boxes[part]
const inBox = (p: Point, b: number[], img: { width: number; height: number }): boolean =>
  p.x >= (b[0]! - BOX_DILATE) * img.width &&
  p.x <= (b[2]! + BOX_DILATE) * img.width &&
  p.y >= (b[1]! - BOX_DILATE) * img.height &&
  p.y <= (b[3]! + BOX_DILATE) * img.height

/**
 * Every joint in the labelled box of the body region it belongs to (SOURCES.md's conventions: the
 * upper box runs from the top of the shoulders to the crotch and spans both arms down to the
 * wrists, hands below the hip line excluded, raised arms up to the elbow; the lower box runs from
 * the waistband to the ankles or the image bottom and spans hips and legs, a kicked leg included):
 * - shoulders and elbows in the upper box;
 * - wrists: a wrist above the shoulders (a raised hand, on the head) is not labelled; one below
 *   the upper box (a hand hanging past the crotch) must lie within its width; any other in it;
 * - hip joints in both boxes (below the waistband, above the crotch);
 * - knees and ankles in the lower box, when the photo shows them (in the frame, score ≥ 0.5).
 * Joints outside the photo (the legs of a half-body photo, placed by the model beyond the frame)
 * are not checked.
 */
function jointsOutsideBoxes(name: string, a: PersonAnalysis): string[] {
  const P = a.points
  const up = boxOf(name, 'upper')
  const low = boxOf(name, 'lower')
  const inFrame = (p: Point) => p.x >= 0 && p.y >= 0 && p.x < a.width && p.y < a.height
  const shown = (j: number) => inFrame(P[j]!) && P[j]!.score >= 0.5
  const shoulderY = Math.min(P[LM.leftShoulder]!.y, P[LM.rightShoulder]!.y)
  const bad: string[] = []
  const check = (label: string, j: number, ok: boolean) => {
    if (!ok) {
      const p = P[j]!
      bad.push(`${label} (${(p.x / a.width).toFixed(2)}, ${(p.y / a.height).toFixed(2)})`)
    }
  }
  for (const [label, j] of [
    ['left shoulder', LM.leftShoulder],
    ['right shoulder', LM.rightShoulder],
    ['left elbow', LM.leftElbow],
    ['right elbow', LM.rightElbow],
  ] as const) {
    if (label.includes('shoulder') || inFrame(P[j]!)) check(label, j, inBox(P[j]!, up, a))
  }
  for (const [label, j] of [
    ['left wrist', LM.leftWrist],
    ['right wrist', LM.rightWrist],
  ] as const) {
    const p = P[j]!
    if (!inFrame(p) || p.y < shoulderY) continue
    const below = p.y > (up[3]! + BOX_DILATE) * a.height
    check(label, j, below ? inBox({ x: p.x, y: up[1]! * a.height }, up, a) : inBox(p, up, a))
  }
  for (const [label, j] of [
    ['left hip', LM.leftHip],
    ['right hip', LM.rightHip],
  ] as const) {
    check(label, j, inBox(P[j]!, up, a) && inBox(P[j]!, low, a))
  }
  for (const [label, j] of [
    ['left knee', LM.leftKnee],
    ['right knee', LM.rightKnee],
    ['left ankle', LM.leftAnkle],
    ['right ankle', LM.rightAnkle],
  ] as const) {
    if (shown(j)) check(label, j, inBox(P[j]!, low, a))
  }
  return bad.map((b) => `${name} ${b}`)
}

/**
 * Joints known to miss their box, pinned so that a change either way shows. person_14 (torso from
 * the mouth to the upper thighs, turned three-quarters, tee worn untucked): the model puts the hip
 * joints at 0.68–0.69 of the height, 0.06 above the labelled top of the jeans (0.75) — 1.64 × the
 * shoulder-joint distance below the shoulders, the ratio of a person facing the camera, while the
 * turn foreshortens that distance; with the legs out of the frame nothing else tells the model
 * the torso is longer. Another landmark pass on the ROI of its own alignment points (MediaPipe's
 * tracking rule) moves them to 0.71, a flipped pass to 0.70–0.71: no fix, only noise at the box's
 * edge. What it costs: a top fitted to these hips ends a little high on him.
 */
const KNOWN_MISSES: Record<string, readonly string[]> = {
  person_14: ['left hip', 'right hip'],
}

function expectJointsInBoxes(name: string, a: PersonAnalysis): void {
  const bad = jointsOutsideBoxes(name, a)
  const joints = bad.map((b) => b.replace(/^\S+ (.*) \(.*$/, '$1'))
  expect(joints, bad.join('; ')).toEqual(KNOWN_MISSES[name] ?? [])
}

describe('every joint lands in its labelled body box', () => {
  // TUNE and HOLDOUT persons alike: this checks the pose stage, nothing in it is fitted to them.
  it.each([...TUNE, ...HOLDOUT])(
    '%s',
    async (name) => {
      const a = await analyzePerson(await load(name), models)
      expect(a.roiSource).toBe('detector')
      expectJointsInBoxes(name, a)
      // The same joints a quarter of the photo's width to the side are caught (the check can fail).
      const moved = { ...a, points: a.points.map((p) => ({ ...p, x: p.x + 0.25 * a.width })) }
      expect(jointsOutsideBoxes(name, moved).length).toBeGreaterThan(0)
      // Every person of the set stands facing the camera (three-quarter at most): nothing to
      // refuse but person_07's crossed arms (for a top or dress; see 'unsupported_pose on real
      // photos').
      expect([a.pose.body, name === 'person_07' ? null : a.pose.arms, a.pose.legs]).toEqual([
        null,
        null,
        null,
      ])
    },
    TIMEOUT_MS,
  )
})

describe('the segmentation-mask ROI (taken when the detector finds nobody)', () => {
  it.each(['person_12', 'person_11', 'person_01'] as const)(
    '%s: the same body as the detector ROI, in the labelled boxes',
    async (name) => {
      const img = await load(name)
      const viaDetector = await analyzePerson(img, models)
      const viaMask = await analyzePerson(img, models, undefined, { roi: 'mask' })
      expect(viaMask.roiSource).toBe('mask')
      expectJointsInBoxes(name, viaMask)
      for (const j of [
        LM.leftShoulder,
        LM.rightShoulder,
        LM.leftElbow,
        LM.rightElbow,
        LM.leftHip,
        LM.rightHip,
      ]) {
        expect(
          dist(viaMask.points[j]!, viaDetector.points[j]!) / viaDetector.shoulderWidth,
          `joint ${j}`,
        ).toBeLessThan(0.2)
      }
    },
    TIMEOUT_MS,
  )

  it(
    'a photo with no person in it still answers no_person_detected',
    async () => {
      const img = await load('person_15')
      const blank: Rgb = {
        width: img.width,
        height: img.height,
        data: new Uint8Array(img.data.length).fill(200),
      }
      await expect(analyzePerson(blank, models, undefined, { roi: 'mask' })).rejects.toMatchObject({
        code: 'no_person_detected',
      })
    },
    TIMEOUT_MS,
  )
})

describe('a photo cropped at the mouth (e-commerce framing) finds the person', () => {
  it.each(['person_15', 'person_02', 'person_01'] as const)(
    '%s cut at the mouth: shoulders and hips where the whole photo has them',
    async (name) => {
      const img = await load(name)
      const whole = await analyzePerson(img, models)
      const top = Math.round((whole.points[LM.mouthLeft]!.y + whole.points[LM.mouthRight]!.y) / 2)
      const cut: Rgb = {
        width: img.width,
        height: img.height - top,
        data: img.data.slice(top * img.width * 3),
      }
      for (const roi of ['auto', 'mask'] as const) {
        const a = await analyzePerson(cut, models, undefined, { roi })
        for (const j of [LM.leftShoulder, LM.rightShoulder, LM.leftHip, LM.rightHip]) {
          const moved = { x: a.points[j]!.x, y: a.points[j]!.y + top }
          expect(
            dist(moved, whole.points[j]!) / whole.shoulderWidth,
            `${roi} ROI, joint ${j}`,
          ).toBeLessThan(0.3)
        }
      }
    },
    TIMEOUT_MS,
  )
})

/** person_15 (standing, full body) turned 90° clockwise: a person lying down. */
async function lyingDown(): Promise<Rgb> {
  const img = await load('person_15')
  const { width: W, height: H } = img
  const rot = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      rot.set(img.data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3), (x * H + (H - 1 - y)) * 3)
    }
  }
  return { width: H, height: W, data: rot }
}

describe('unsupported_pose', () => {
  it(
    'a person lying down (person_15 turned 90°) is refused for every garment, with what was found',
    async () => {
      const a = await analyzePerson(await lyingDown(), models)
      expect(a.pose.tiltDeg).toBeGreaterThan(60)
      for (const category of ['upper', 'lower', 'full'] as const) {
        let err: unknown
        try {
          assertDressable(category, a)
        } catch (e) {
          err = e
        }
        expect(err).toBeInstanceOf(AppError)
        expect((err as AppError).code).toBe('unsupported_pose')
        expect((err as AppError).message).toMatch(/tipped \d+° from upright/)
      }
    },
    TIMEOUT_MS,
  )

  it(
    'through the engine: 422 unsupported_pose, no image',
    async () => {
      const engine = await openTryOnEngine({ modelsDir: MODELS })
      try {
        const p = await lyingDown()
        const g = await decodeImage(join(SET, 'garment_upper_01.jpg'), {
          what: 'garment image',
          maxWorkSidePx: 768,
        })
        const run = engine.tryOn(
          { width: p.width, height: p.height, rgb: p.data, alpha: null },
          g,
          { preprocessGarment: true, garmentMode: 'auto', removeBackground: false },
        )
        await expect(run).rejects.toMatchObject({
          code: 'unsupported_pose',
          message: expect.stringMatching(/upright/),
        })
        expect(HTTP_STATUS.unsupported_pose).toBe(422)
      } finally {
        await engine.close()
      }
    },
    TIMEOUT_MS,
  )
})

/**
 * Poses from real footage, not from the try-on set: frames of ../shared/media/video_02.mp4 (a woman
 * playing with a dog in a courtyard, filmed from her side), cut by ffmpeg to the left 560 × 720 px
 * where she is, and one frame of video_01.mp4 (a half-body portrait, hands held together in front
 * of the chest). At 0.0 s, 5.0 s and 9.0 s she bends over to the dog, at 2.5 s she stands upright;
 * in every one of them the camera sees her from the side.
 */
const execFileP = promisify(execFile)
async function frame(video: string, atS: number, crop: string | null): Promise<Rgb> {
  const dir = await mkdtemp(join(tmpdir(), 'tailor-pose-'))
  try {
    const out = join(dir, 'frame.png')
    await execFileP(FFMPEG_BIN, [
      '-v',
      'error',
      '-ss',
      String(atS),
      '-i',
      join(DEV_MEDIA, video),
      '-frames:v',
      '1',
      ...(crop ? ['-vf', `crop=${crop}`] : []),
      out,
    ])
    const img = await decodeImage(out, { what: 'person image' })
    return { width: img.width, height: img.height, data: img.rgb }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function refusal(category: 'upper' | 'lower' | 'full', a: PersonAnalysis): string | null {
  try {
    assertDressable(category, a)
    return null
  } catch (e) {
    expect(e).toBeInstanceOf(AppError)
    expect((e as AppError).code).toBe('unsupported_pose')
    return (e as AppError).message
  }
}

/**
 * Rows [y0, y1) of a photo squashed to a share k of their height (nearest row), the rest kept:
 * the thighs of a standing person squashed this way look like thighs pointing at the camera, as
 * a person seated on a stool facing the camera shows them.
 */
function squashRows(img: Rgb, y0: number, y1: number, k: number): Rgb {
  const W = img.width
  const band = Math.round((y1 - y0) * k)
  const H = img.height - (y1 - y0) + band
  const out = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) {
    const sy =
      y < y0
        ? y
        : y < y0 + band
          ? Math.min(y1 - 1, y0 + Math.floor((y - y0) / k))
          : y - band + (y1 - y0)
    out.set(img.data.subarray(sy * W * 3, (sy + 1) * W * 3), y * W * 3)
  }
  return { width: W, height: H, data: out }
}

/**
 * Full-body persons whose thighs, squashed to a twentieth, the pose model does not see as
 * foreshortened: it places the knees where standing legs would have them (thigh drops 0.49/0.48
 * and 0.61/0.59 × the torso length, over the 0.4 of MIN_THIGH_DROP) — both men in long trousers,
 * where the squashed trousers read as a longer pelvis. Pinned so that a change either way shows:
 * a seated person in long trousers facing the camera may be dressed with a bottom.
 */
const SEATED_MISSES = ['person_11', 'person_16']

describe('unsupported_pose on transformed real photos', () => {
  it(
    'seated facing the camera (the rows from the hips to the knees squashed to 5 %): refused for bottoms and dresses, dressed with a top',
    async () => {
      for (const name of ['person_15', 'person_13', 'person_11', 'person_16']) {
        const img = await load(name)
        const a = await analyzePerson(img, models)
        const hipY = Math.round((a.points[LM.leftHip]!.y + a.points[LM.rightHip]!.y) / 2)
        const kneeY = Math.round((a.points[LM.leftKnee]!.y + a.points[LM.rightKnee]!.y) / 2)
        const seated = await analyzePerson(squashRows(img, hipY, kneeY, 0.05), models)
        expect(refusal('upper', seated), `${name} upper`).toBeNull()
        if (SEATED_MISSES.includes(name)) {
          expect(refusal('lower', seated), `${name} lower (known miss)`).toBeNull()
          continue
        }
        for (const category of ['lower', 'full'] as const) {
          expect(refusal(category, seated), `${name} ${category}`).toMatch(
            /seated or crouching \(the thighs drop only/,
          )
        }
      }
    },
    2 * TIMEOUT_MS,
  )
})

describe('unsupported_pose on real photos and footage', () => {
  it(
    'video_02: seen from the side, standing (2.5 s) or bending over to the dog (0.0, 5.0, 9.0 s): refused for every garment',
    async () => {
      for (const at of [0, 2.5, 5, 9]) {
        const a = await analyzePerson(await frame('video_02.mp4', at, '560:720:0:0'), models)
        expect(a.pose.facing, `${at} s facing`).toBeLessThan(0.3)
        for (const category of ['upper', 'lower', 'full'] as const) {
          expect(refusal(category, a), `${at} s ${category}`).toMatch(
            /turned sideways to the camera/,
          )
        }
      }
    },
    TIMEOUT_MS,
  )

  it(
    'person_07 (arms crossed over the torso): a top or dress is refused with what was found',
    async () => {
      const a = await analyzePerson(await load('person_07'), models)
      expect(a.pose.crossed).toBe(true)
      expect(refusal('upper', a)).toMatch(/arms are crossed over the torso/)
      expect(refusal('full', a)).toMatch(/arms are crossed over the torso/)
    },
    TIMEOUT_MS,
  )

  it(
    'person_15 upside down (turned 180°): refused as tipped',
    async () => {
      const p = await load('person_15')
      const n = p.width * p.height
      const flipped = new Uint8Array(p.data.length)
      for (let i = 0; i < n; i++) flipped.set(p.data.subarray(i * 3, i * 3 + 3), (n - 1 - i) * 3)
      let err: unknown
      try {
        const a = await analyzePerson({ width: p.width, height: p.height, data: flipped }, models)
        assertDressable('upper', a)
      } catch (e) {
        err = e
      }
      // Either nobody is found upside down, or the pose is refused as tipped: never a garment drawn.
      expect(err).toBeInstanceOf(AppError)
      expect(['unsupported_pose', 'no_person_detected']).toContain((err as AppError).code)
      if ((err as AppError).code === 'unsupported_pose') {
        expect((err as AppError).message).toMatch(/tipped \d+° from upright/)
      }
    },
    TIMEOUT_MS,
  )

  it(
    'standing poses are dressed: video_01 (hands together in front of the chest) and the TUNE persons other than person_07',
    async () => {
      const v = await analyzePerson(await frame('video_01.mp4', 3, null), models)
      expect(v.pose.crossed).toBe(false)
      expect(refusal('upper', v)).toBeNull()
      for (const name of TUNE.filter((t) => t !== 'person_07')) {
        const a = await analyzePerson(await load(name), models)
        for (const category of ['upper', 'lower', 'full'] as const) {
          expect(refusal(category, a), `${name} ${category}`).toBeNull()
        }
      }
    },
    2 * TIMEOUT_MS,
  )
})
