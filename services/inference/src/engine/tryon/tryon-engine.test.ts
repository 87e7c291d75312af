/**
 * The try-on engine on the real media in ../shared/media with the real networks from models/dist
 * (CPU): every person × every garment, the figures the issue asks for (printed), and the bad-input
 * table at the use-case level.
 */
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { tryOn, type TryOnRequest } from '../../jobs/try-on.ts'
import { decodeImage, encodeJpeg, encodePng } from '../../media/image.ts'
import { LM } from './pose.ts'
import { dilate, drawCapsule, fillPolygon, plane, threshold, type Plane } from './raster.ts'
import { openTryOnEngine, type TryOnEngineWithDetails } from './tryon-engine.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const MEDIA = resolve(ROOT, '../shared/media')
const MODELS = join(ROOT, 'models', 'dist')
const PERSONS = ['person_01', 'person_02', 'person_03', 'person_04'] as const
const GARMENTS = {
  garment_upper_01: 'upper',
  garment_upper_02: 'upper',
  garment_lower_01: 'lower',
  garment_lower_02: 'lower',
  garment_full_01: 'full',
} as const
const ENGINE_TIMEOUT_MS = 300_000
const CASE_TIMEOUT_MS = 120_000
/** Mean absolute difference (0..255) allowed in the face box after a JPEG round trip. */
const FACE_MAE_MAX = 2.5
/** Dilation of the person mask for the "inside the person" figure, × shoulder width. */
const INSIDE_DILATE = 0.06

let engine: TryOnEngineWithDetails
let work: string
const figures: Record<string, Record<string, number | string>> = {}

beforeAll(async () => {
  engine = await openTryOnEngine({ modelsDir: MODELS })
  work = await mkdtemp(join(tmpdir(), 'tailor-tryon-test-'))
}, ENGINE_TIMEOUT_MS)

afterAll(async () => {
  await engine?.close()
  if (work) await rm(work, { recursive: true, force: true })
  console.log('try-on figures (person × garment):')
  console.table(figures)
})

const opts = { preprocessGarment: true, garmentMode: 'auto' as const, removeBackground: false }

const countIn = (m: Plane, region: Plane): { inter: number; a: number; b: number } => {
  let inter = 0
  let a = 0
  let b = 0
  for (let i = 0; i < m.data.length; i++) {
    const x = m.data[i]! > 0.5
    const y = region.data[i]! > 0.5
    if (x) a++
    if (y) b++
    if (x && y) inter++
  }
  return { inter, a, b }
}

describe('category detection from the garment photo alone', () => {
  it.each(Object.entries(GARMENTS))(
    '%s is %s',
    async (g, expected) => {
      const person = await decodeImage(join(MEDIA, 'person_02.jpg'), { what: 'person image' })
      const garment = await decodeImage(join(MEDIA, `${g}.jpg`), {
        what: 'garment image',
        maxWorkSidePx: 768,
      })
      const r = await engine.tryOnDetailed(person, garment, opts)
      expect(r.detectedCategory, JSON.stringify(r.details.evidence)).toBe(expected)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('every person × every garment', () => {
  const cases = PERSONS.flatMap((p) => Object.keys(GARMENTS).map((g) => [p, g] as const))
  it.each(cases)(
    '%s × %s completes: face unchanged, garment on the body, region covered',
    async (p, g) => {
      const dir = await mkdtemp(join(work, `${p}-${g}-`))
      const personPath = join(MEDIA, `${p}.jpg`)
      const person = await decodeImage(personPath, { what: 'person image' })
      const garment = await decodeImage(join(MEDIA, `${g}.jpg`), {
        what: 'garment image',
        maxWorkSidePx: 768,
      })
      const r = await engine.tryOnDetailed(person, garment, opts)
      const { details } = r
      const a = details.person
      expect(r.category).toBe(GARMENTS[g as keyof typeof GARMENTS])

      // The JPEG the use case writes, decoded again (what a client sees).
      const out = join(dir, 'result.jpg')
      await encodeJpeg(r.rgb, person.width, person.height, out)
      const back = await decodeImage(out, { what: 'result' })
      expect([back.width, back.height]).toEqual([person.width, person.height])

      // Face box from the face landmarks (0–10), widened by 20 %, clipped to the photo.
      const face = a.points
        .slice(0, 11)
        .filter((q) => q.x >= 0 && q.y >= 0 && q.x < person.width && q.y < person.height)
      let faceMae = Number.NaN
      if (face.length >= 3) {
        const xs = face.map((q) => q.x)
        const ys = face.map((q) => q.y)
        const fw = Math.max(...xs) - Math.min(...xs)
        const fh = Math.max(...ys) - Math.min(...ys)
        const x0 = Math.max(0, Math.floor(Math.min(...xs) - 0.2 * fw))
        const x1 = Math.min(person.width - 1, Math.ceil(Math.max(...xs) + 0.2 * fw))
        const y0 = Math.max(0, Math.floor(Math.min(...ys) - 0.2 * fh))
        const y1 = Math.min(person.height - 1, Math.ceil(Math.max(...ys) + 0.2 * fh))
        let sum = 0
        let n = 0
        for (let y = y0; y <= y1; y++) {
          for (let x = x0; x <= x1; x++) {
            for (let c = 0; c < 3; c++) {
              sum += Math.abs(
                back.rgb[(y * person.width + x) * 3 + c]! -
                  person.rgb[(y * person.width + x) * 3 + c]!,
              )
            }
            n += 3
          }
        }
        faceMae = sum / n
        expect(faceMae).toBeLessThan(FACE_MAE_MAX)
      }

      // Head region (face and hair above the neck, from the person mask and the landmarks): also
      // for people whose face is cut by the frame (person_03).
      let hs = 0
      let hn = 0
      // The compositor repaints an old collar below the mouth (composite.removed): not face or hair.
      const removed = details.composite.removed
      for (let i = 0; i < a.head.data.length; i++) {
        if (a.head.data[i]! < 0.99 || (removed !== undefined && removed.data[i]! > 0.01)) continue
        for (let c = 0; c < 3; c++) hs += Math.abs(back.rgb[i * 3 + c]! - person.rgb[i * 3 + c]!)
        hn += 3
      }
      const headMae = hs / Math.max(1, hn)
      if (hn > 0) expect(headMae).toBeLessThan(FACE_MAE_MAX)

      // Warped garment (before clipping) inside the dilated person mask.
      const warped = plane(person.width, person.height)
      // Final coverage (after clipping to the envelope and occlusion) and the raw warp output.
      const inside = dilate(threshold(a.mask, 0.5), INSIDE_DILATE * a.shoulderWidth)
      const cov = details.composite.garment
      const c1 = countIn(cov, inside)
      const insideFinal = c1.inter / Math.max(1, c1.a)
      for (const w of details.warpedCoverage) {
        for (let yy = 0; yy < w.height; yy++) {
          for (let xx = 0; xx < w.width; xx++) {
            const v = w.alpha[yy * w.width + xx]!
            const i = (w.y0 + yy) * person.width + w.x0 + xx
            if (v > warped.data[i]!) warped.data[i] = v
          }
        }
      }
      const c0 = countIn(warped, inside)
      const insideWarped = c0.inter / Math.max(1, c0.a)
      expect(insideFinal).toBeGreaterThanOrEqual(0.95)

      // Region the category must cover, cut to the person mask and off the arms.
      const region = plane(person.width, person.height)
      const P = a.points
      if (r.category === 'upper' || r.category === 'full') {
        // Torso: the quadrilateral shoulders → hips.
        // Shoulders down to the waist (3/4 of the way to the hip joints): the photo's tee is tucked in
        // there, so below it the photo shows the jeans whatever garment is tried on.
        const waist = (s: number, h: number) => ({
          x: P[s]!.x + 0.75 * (P[h]!.x - P[s]!.x),
          y: P[s]!.y + 0.75 * (P[h]!.y - P[s]!.y),
        })
        fillPolygon(region, [
          P[LM.leftShoulder]!,
          P[LM.rightShoulder]!,
          waist(LM.rightShoulder, LM.rightHip),
          waist(LM.leftShoulder, LM.leftHip),
        ])
      } else {
        // Upper legs: hip → 40 % of the way to the knee, radius a quarter of the hip distance.
        const hw = Math.hypot(
          P[LM.leftHip]!.x - P[LM.rightHip]!.x,
          P[LM.leftHip]!.y - P[LM.rightHip]!.y,
        )
        for (const [h, k] of [
          [LM.leftHip, LM.leftKnee],
          [LM.rightHip, LM.rightKnee],
        ] as const) {
          const hp = P[h]!
          const kp = P[k]!
          drawCapsule(
            region,
            hp,
            { x: hp.x + 0.4 * (kp.x - hp.x), y: hp.y + 0.4 * (kp.y - hp.y) },
            0.25 * hw,
          )
        }
      }
      // An untucked old top hangs in front of a new bottom, an old bottom in front of a new top below
      // the old top's hem (composite.inFront): not the garment's to cover.
      const inFront = details.composite.inFront
      for (let i = 0; i < region.data.length; i++) {
        if (
          a.mask.data[i]! < 0.5 ||
          a.arms.data[i]! > 0.5 ||
          a.hands.data[i]! > 0.5 ||
          a.head.data[i]! > 0.5
        ) {
          region.data[i] = 0
        }
        if (inFront && inFront.data[i]! > 0.5) region.data[i] = 0
      }
      const cr = countIn(cov, region)
      const coverage = cr.inter / Math.max(1, cr.b)
      const iou = cr.inter / Math.max(1, cr.a + cr.b - cr.inter)
      // Regions that fall outside the photo (half-body shots cut at the thigh) are not counted.
      if (cr.b > 0.005 * person.width * person.height) expect(coverage).toBeGreaterThanOrEqual(0.85)

      figures[`${p} × ${g}`] = {
        category: r.category,
        faceMAE: Number.isNaN(faceMae) ? 'n/a' : +faceMae.toFixed(2),
        headMAE: +headMae.toFixed(2),
        insideFinal: +insideFinal.toFixed(3),
        insideWarped: +insideWarped.toFixed(3),
        regionCoverage: +coverage.toFixed(3),
        regionIoU: +iou.toFixed(3),
        ms: Math.round(Object.values(r.timings).reduce((s, v) => s + v, 0)),
      }
    },
    CASE_TIMEOUT_MS,
  )
})

describe('person_01 × garment_upper_01 against the real photo of her wearing it', () => {
  it(
    'is closer to the photo on the torso than any other top',
    async () => {
      const person = await decodeImage(join(MEDIA, 'person_01.jpg'), { what: 'person image' })
      const torsoMae = async (g: string) => {
        const garment = await decodeImage(join(MEDIA, `${g}.jpg`), {
          what: 'garment image',
          maxWorkSidePx: 768,
        })
        const r = await engine.tryOnDetailed(person, garment, opts)
        const P = r.details.person.points
        const region = plane(person.width, person.height)
        // Shoulders down to the waist (3/4 of the way to the hip joints): the photo's tee is tucked in
        // there, so below it the photo shows the jeans whatever garment is tried on.
        const waist = (s: number, h: number) => ({
          x: P[s]!.x + 0.75 * (P[h]!.x - P[s]!.x),
          y: P[s]!.y + 0.75 * (P[h]!.y - P[s]!.y),
        })
        fillPolygon(region, [
          P[LM.leftShoulder]!,
          P[LM.rightShoulder]!,
          waist(LM.rightShoulder, LM.rightHip),
          waist(LM.leftShoulder, LM.leftHip),
        ])
        let sum = 0
        let n = 0
        // Mean absolute RGB difference over the torso (person mask, off the arms and hands), and the
        // difference of the mean colours (the print moves, the garment's colour must not).
        const mean = [0, 0, 0]
        const meanRef = [0, 0, 0]
        for (let i = 0; i < region.data.length; i++) {
          if (
            region.data[i]! < 0.5 ||
            r.details.person.mask.data[i]! < 0.5 ||
            r.details.person.arms.data[i]! > 0.5
          ) {
            continue
          }
          for (let c = 0; c < 3; c++) {
            sum += Math.abs(r.rgb[i * 3 + c]! - person.rgb[i * 3 + c]!)
            mean[c]! += r.rgb[i * 3 + c]!
            meanRef[c]! += person.rgb[i * 3 + c]!
          }
          n++
        }
        const colourDist = Math.hypot(...mean.map((m, c) => (m - meanRef[c]!) / n))
        return { mae: sum / (3 * n), colourDist }
      }
      const own = await torsoMae('garment_upper_01')
      const other = await torsoMae('garment_upper_02')
      console.log(
        `person_01 torso vs ground truth: MAE ${own.mae.toFixed(1)} (garment_upper_01) vs ${other.mae.toFixed(1)} (garment_upper_02); mean-colour distance ${own.colourDist.toFixed(1)} vs ${other.colourDist.toFixed(1)}`,
      )
      figures['ground truth person_01 torso'] = {
        ownMAE: +own.mae.toFixed(2),
        otherMAE: +other.mae.toFixed(2),
        ownColour: +own.colourDist.toFixed(2),
        otherColour: +other.colourDist.toFixed(2),
      }
      // 26.6 with the tee drawn K_SHOULDER 1.05 wide, 31.6 at 0.9 (fit.ts), which raised this very
      // pair's SSIM inside the garment box (pnpm eval:tryon, dev) from 0.774 to 0.818 and the mean
      // colour came closer (14.7 → 8.2): the print moves with the narrower fit.
      expect(own.mae).toBeLessThan(33)
      expect(own.mae).toBeLessThan(0.5 * other.mae)
      expect(own.colourDist).toBeLessThan(25)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('garment_mode overrides detection, preprocess_garment "false" takes the photo as cut out', () => {
  it(
    'every garment in every forced mode completes (no crash on a wrong override) and uses that mode',
    async () => {
      const person = await decodeImage(join(MEDIA, 'person_02.jpg'), { what: 'person image' })
      let k = 0
      for (const g of Object.keys(GARMENTS)) {
        const garment = await decodeImage(join(MEDIA, `${g}.jpg`), {
          what: 'garment image',
          maxWorkSidePx: 768,
        })
        for (const mode of ['upper', 'lower', 'full'] as const) {
          const preprocess = k++ % 2 === 0
          const r = await engine.tryOn(person, garment, {
            ...opts,
            garmentMode: mode,
            preprocessGarment: preprocess,
          })
          expect(r.category).toBe(mode)
          // Detection is only promised on the extracted mask (a plain key can bite into a print).
          if (preprocess) expect(r.detectedCategory).toBe(GARMENTS[g as keyof typeof GARMENTS])
        }
      }
    },
    2 * CASE_TIMEOUT_MS,
  )
})

describe('stages are replaceable', () => {
  it(
    'a compositor given at open replaces the built-in one; the other stages still run',
    async () => {
      const seen: string[] = []
      const custom = await openTryOnEngine({
        modelsDir: MODELS,
        stages: {
          compositor: {
            composite(person, a, warped) {
              seen.push(`${a.points.length} points, ${warped.length} parts`)
              const rgb = new Uint8Array(person.width * person.height * 3).fill(7)
              const flat = plane(person.width, person.height)
              return { rgb, garment: flat, envelope: flat }
            },
          },
        },
      })
      try {
        const person = await decodeImage(join(MEDIA, 'person_02.jpg'), { what: 'person image' })
        const garment = await decodeImage(join(MEDIA, 'garment_upper_01.jpg'), {
          what: 'garment image',
          maxWorkSidePx: 768,
        })
        const r = await custom.tryOn(person, garment, opts)
        expect(r.rgb.every((v) => v === 7)).toBe(true)
        expect(seen).toEqual(['35 points, 3 parts'])
      } finally {
        await custom.close()
      }
    },
    CASE_TIMEOUT_MS,
  )
})

describe('EXIF orientation', () => {
  it(
    'a person photo stored sideways with orientation 6 comes out upright at its displayed size',
    async () => {
      const dir = await mkdtemp(join(work, 'exif-'))
      const src = await decodeImage(join(MEDIA, 'person_02.jpg'), { what: 'person image' })
      const sideways = join(dir, 'sideways.jpg')
      await encodeJpeg(src.rgb, src.width, src.height, sideways, 95, { exifOrientation: 6 })
      const back = await decodeImage(sideways, { what: 'person image' })
      expect([back.width, back.height]).toEqual([src.width, src.height])
      let diff = 0
      for (let i = 0; i < src.rgb.length; i++) diff += Math.abs(back.rgb[i]! - src.rgb[i]!)
      expect(diff / src.rgb.length).toBeLessThan(3)
      const r = await tryOn(
        {
          personPath: sideways,
          garmentPath: join(MEDIA, 'garment_upper_02.jpg'),
          workDir: dir,
          options: opts,
        },
        { engine },
      )
      expect([r.width, r.height]).toEqual([src.width, src.height])
      const out = await decodeImage(r.outputPath, { what: 'result' })
      expect([out.width, out.height]).toEqual([src.width, src.height])
    },
    CASE_TIMEOUT_MS,
  )
})

describe('bad inputs (use case: decode, checks, engine)', () => {
  let dir: string
  const files: Record<string, string> = {}
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-tryon-bad-'))
    files.text = join(dir, 'not-an-image.jpg')
    await writeFile(files.text, 'this is not an image, just some text\n'.repeat(50))
    files.html = join(dir, 'page.html')
    await writeFile(
      files.html,
      '<!doctype html><html><head><title>Garment</title></head><body><img src="x.jpg"></body></html>\n',
    )
    files.wide = join(dir, 'absurd.png')
    await encodePng(new Uint8Array(20_000 * 4 * 3).fill(200), 20_000, 4, files.wide)
    files.tiny = join(dir, 'one.png')
    await encodePng(Uint8Array.of(255, 0, 0), 1, 1, files.tiny)
    const full = await readFile(join(MEDIA, 'person_02.jpg'))
    files.truncated = join(dir, 'truncated.jpg')
    await writeFile(files.truncated, full.subarray(0, Math.floor(full.length / 4)))
    // A product photo with nothing on it: a light studio backdrop with a soft vertical gradient.
    const w = 600
    const h = 800
    const blank = new Uint8Array(w * h * 3)
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        blank.fill(238 - Math.round((8 * y) / h), (y * w + x) * 3, (y * w + x) * 3 + 3)
      }
    }
    files.blank = join(dir, 'blank.jpg')
    await encodeJpeg(blank, w, h, files.blank)
  })
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })
  const run = (personPath: string, garmentPath: string, limits?: { maxBytes: number }) => {
    const req: TryOnRequest = { personPath, garmentPath, workDir: dir, options: opts }
    return tryOn(req, { engine, ...(limits ? { limits } : {}) })
  }
  const person = () => join(MEDIA, 'person_01.jpg')
  const garment = () => join(MEDIA, 'garment_upper_01.jpg')
  it.each([
    [
      'not an image (text) as the garment',
      () => run(person(), files.text!),
      'unsupported_image_format',
    ],
    ['an HTML page as the garment', () => run(person(), files.html!), 'unsupported_image_format'],
    [
      'an image of absurd dimensions (20000×4) as the person',
      () => run(files.wide!, garment()),
      'resolution_too_high',
    ],
    ['a 1×1 image as the person', () => run(files.tiny!, garment()), 'resolution_too_low'],
    ['a truncated JPEG as the person', () => run(files.truncated!, garment()), 'malformed_image'],
    [
      'a file over the size limit',
      () => run(person(), garment(), { maxBytes: 50_000 }),
      'file_size_too_large',
    ],
    ['a garment photo with no garment', () => run(person(), files.blank!), 'no_garment_detected'],
    [
      'a person photo with no person (a garment photo)',
      () => run(join(MEDIA, 'garment_lower_02.jpg'), garment()),
      'no_person_detected',
    ],
    [
      'a person photo with no person (an empty backdrop)',
      () => run(files.blank!, garment()),
      'no_person_detected',
    ],
  ] as const)(
    '%s',
    async (_name, call, code) => {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code, (err as Error).message).toBe(code)
    },
    CASE_TIMEOUT_MS,
  )
})
