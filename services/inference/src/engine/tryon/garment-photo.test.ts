/**
 * Garment photos worn by a model (garment-photo.ts) and the garment stage end to end
 * (analyzeGarment: garment_photo_type auto / flat-lay / model) with the real BlazePose networks.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GarmentMode, GarmentPhotoType } from '../../jobs/try-on.ts'
import { decodeImage } from '../../media/image.ts'
import { loadModelSpec } from '../manifest.ts'
import { ModelSession } from '../session.ts'
import { extractGarmentMask } from './garment-mask.ts'
import { findWearer, skinRule, wornEvidence, type WearerModels } from './garment-photo.ts'
import { maskBbox } from './garment-shape.ts'
import { LM } from './pose.ts'
import type { Rgb } from './raster.ts'
import { analyzeGarment } from './tryon-engine.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const TRYON = resolve(ROOT, '../shared/media/tryon')
const MODELS = join(ROOT, 'models', 'dist')
let models: WearerModels

beforeAll(async () => {
  models = {
    poseFull: await ModelSession.open(await loadModelSpec(MODELS, 'blazepose-full'), {
      executionProviders: ['cpu'],
    }),
    poseHeavy: await ModelSession.open(await loadModelSpec(MODELS, 'blazepose-heavy'), {
      executionProviders: ['cpu'],
    }),
  }
}, 120_000)
afterAll(async () => {
  await models?.poseFull.release()
  await models?.poseHeavy.release()
})

const load = async (file: string): Promise<Rgb> => {
  const img = await decodeImage(join(TRYON, file), { what: 'garment', maxWorkSidePx: 768 })
  return { width: img.width, height: img.height, data: img.rgb }
}

/** The garment stage on a photo without alpha, preprocessed, with the request's two modes. */
function analyze(
  img: Rgb,
  garmentMode: GarmentMode = 'auto',
  photoType: GarmentPhotoType = 'auto',
) {
  return analyzeGarment(img, null, { preprocess: true, garmentMode, photoType }, models)
}

describe('skin rule', () => {
  it('takes light and dark skin tones, not grey, white, black, blue or a saturated red', () => {
    for (const [r, g, b] of [
      [224, 172, 140],
      [198, 134, 100],
      [141, 85, 60],
      [92, 56, 40],
    ] as const) {
      expect(skinRule(r, g, b)).toBe(true)
    }
    for (const [r, g, b] of [
      [128, 128, 128],
      [250, 250, 250],
      [15, 15, 15],
      [60, 90, 170],
      [220, 20, 30],
    ] as const) {
      expect(skinRule(r, g, b)).toBe(false)
    }
  })
})

describe('is the garment worn? (auto)', () => {
  it.each([
    ['garment_upper_08.jpg', true],
    ['garment_lower_04.jpg', true],
    ['garment_upper_01.jpg', false],
    ['garment_upper_07.jpg', false],
    ['garment_lower_01.jpg', false],
    ['garment_full_03.jpg', false],
  ] as const)(
    '%s → %s',
    async (file, worn) => {
      const img = await load(file)
      const wearer = await findWearer(img, models)
      const fg = extractGarmentMask(img, null, { preprocess: true })
      expect(wearer !== null && wornEvidence(img, fg, wearer).worn).toBe(worn)
    },
    60_000,
  )
})

describe('garment stage on a model photo', () => {
  it('garment_lower_04 (skirt worn with a cardigan, auto): the skirt alone — no cardigan, head, hands, legs or shoes', async () => {
    const img = await load('garment_lower_04.jpg')
    const g = await analyze(img)
    expect(g.photoType).toBe('model')
    expect(g.category).toBe('lower')
    const wearer = (await findWearer(img, models))!
    const p = wearer.points
    const box = maskBbox(g.mask)!
    const hipY = (p[LM.leftHip]!.y + p[LM.rightHip]!.y) / 2
    const shoulderY = (p[LM.leftShoulder]!.y + p[LM.rightShoulder]!.y) / 2
    const ankleY = Math.min(p[LM.leftAnkle]!.y, p[LM.rightAnkle]!.y)
    // Starts at the waist (below the chest), ends above the ankles (no shoes).
    expect(box.y0).toBeGreaterThan(shoulderY + 0.5 * (hipY - shoulderY))
    expect(box.y1).toBeLessThan(ankleY + 0.02 * img.height)
    // The thighs are covered.
    const knee = p[LM.leftKnee]!
    const thigh = {
      x: Math.round((p[LM.leftHip]!.x + knee.x) / 2),
      y: Math.round((p[LM.leftHip]!.y + knee.y) / 2),
    }
    expect(g.mask.data[thigh.y * img.width + thigh.x]).toBeGreaterThan(0.5)
    // Landmarks: a skirt (one tube), waistband above the hem.
    expect(g.landmarks.kind).toBe('bottom')
    if (g.landmarks.kind === 'bottom') {
      expect(g.landmarks.legs).toBe(false)
      expect(g.landmarks.hemLOuter.y - g.landmarks.waistL.y).toBeGreaterThan(0.5 * (ankleY - hipY))
    }
  }, 60_000)

  it('garment_lower_04: the bag held against the skirt is not skirt — its outline follows the labelled waist → hem corners', async () => {
    const img = await load('garment_lower_04.jpg')
    const g = await analyze(img)
    expect(g.category).toBe('lower')
    // Hand labels (bench/tryon-eval/garment-landmarks.json, fractions): waistL/R, hemLOuter/ROuter.
    const [wl, wr, hl, hr] = [
      [0.395, 0.345],
      [0.645, 0.345],
      [0.345, 0.84],
      [0.635, 0.835],
    ] as const
    const W = img.width
    const H = img.height
    // Rows from the hips to below the bag (the bag hangs at 0.5–0.65 of the height, image left).
    for (let fy = 0.45; fy <= 0.8; fy += 0.05) {
      const y = Math.round(fy * H)
      let x0 = -1
      let x1 = -1
      for (let x = 0; x < W; x++) {
        if (g.mask.data[y * W + x]! > 0.5) {
          if (x0 < 0) x0 = x
          x1 = x
        }
      }
      const t = (fy - wl[1]) / (hl[1] - wl[1])
      const left = wl[0] + t * (hl[0] - wl[0])
      const right = wr[0] + ((fy - wr[1]) / (hr[1] - wr[1])) * (hr[0] - wr[0])
      expect(Math.abs(x0 / W - left), `left edge at ${fy.toFixed(2)}`).toBeLessThan(0.035)
      expect(Math.abs(x1 / W - right), `right edge at ${fy.toFixed(2)}`).toBeLessThan(0.035)
    }
  }, 60_000)

  it('garment_upper_08: the shoulder bag worn against the plain cardigan is not cardigan (another colour than the knit takes as it shades)', async () => {
    const img = await load('garment_upper_08.jpg')
    const g = await analyze(img)
    expect(g.category).toBe('upper')
    const share = (fx0: number, fx1: number, fy0: number, fy1: number): number => {
      let n = 0
      let on = 0
      for (let y = Math.round(fy0 * img.height); y <= fy1 * img.height; y++) {
        for (let x = Math.round(fx0 * img.width); x <= fx1 * img.width; x++) {
          n++
          if (g.mask.data[y * img.width + x]! > 0.5) on++
        }
      }
      return on / n
    }
    // The bag below the cardigan's hem, beside the hip (garment before the colour rule).
    expect(share(0.54, 0.59, 0.44, 0.5)).toBeLessThan(0.1)
    // The cardigan's left front stays.
    expect(share(0.38, 0.45, 0.3, 0.38)).toBeGreaterThan(0.9)
  }, 60_000)

  it('garment_upper_08: the cardigan behind the hand holding the strap on the chest is cardigan (no hole, no fingers)', async () => {
    const img = await load('garment_upper_08.jpg')
    const g = await analyze(img)
    expect(g.category).toBe('upper')
    const rgb = g.rgb ?? img.data
    // Skin-coloured: the red-difference chroma (Cr) of the model's fingers, above the cream knit's
    // and its shading's (132-145).
    const skinColoured = (i: number) =>
      128 + 0.5 * rgb[i * 3]! - 0.418688 * rgb[i * 3 + 1]! - 0.081312 * rgb[i * 3 + 2]! >= 150
    const shares = (fx0: number, fx1: number, fy0: number, fy1: number) => {
      let n = 0
      let on = 0
      let skin = 0
      for (let y = Math.round(fy0 * img.height); y <= fy1 * img.height; y++) {
        for (let x = Math.round(fx0 * img.width); x <= fx1 * img.width; x++) {
          const i = y * img.width + x
          n++
          if (g.mask.data[i]! <= 0.5) continue
          on++
          if (skinColoured(i)) skin++
        }
      }
      return { on: on / n, skin: skin / n }
    }
    // The hand and its cut-out wrist on the chest, beside the button band, above the bag (before:
    // 69 % garment, the rest a hole).
    const hand = shares(0.44, 0.56, 0.28, 0.38)
    // The fingers round the strap (before: 84 % garment, 35 % of it skin-coloured).
    const fingers = shares(0.446, 0.485, 0.289, 0.322)
    expect(hand.on).toBeGreaterThan(0.97)
    expect(fingers.skin).toBeLessThan(0.02)
  }, 60_000)

  /** The top on a model photo: below the mouth, above the knees, both sides of the torso covered. */
  async function expectTop(file: string, g: Awaited<ReturnType<typeof analyze>>) {
    const img = await load(file)
    const p = (await findWearer(img, models))!.points
    const box = maskBbox(g.mask)!
    const mouthY = (p[LM.mouthLeft]!.y + p[LM.mouthRight]!.y) / 2
    const kneeY = Math.min(p[LM.leftKnee]!.y, p[LM.rightKnee]!.y)
    expect(box.y0).toBeGreaterThan(mouthY)
    expect(box.y1).toBeLessThan(kneeY)
    // Both sides of the torso, 40 % of the way from shoulder to hip, are garment.
    for (const [s, hp] of [
      [LM.leftShoulder, LM.leftHip],
      [LM.rightShoulder, LM.rightHip],
    ] as const) {
      const c = {
        x: Math.round(p[s]!.x + 0.4 * (p[hp]!.x - p[s]!.x)),
        y: Math.round(p[s]!.y + 0.4 * (p[hp]!.y - p[s]!.y)),
      }
      let on = 0
      for (let dy = -5; dy <= 5; dy++) {
        for (let dx = -5; dx <= 5; dx++) {
          on += g.mask.data[(c.y + dy) * img.width + c.x + dx]! > 0.5 ? 1 : 0
        }
      }
      expect(on).toBeGreaterThan(0.8 * 121)
    }
    expect(g.landmarks.kind).toBe('top')
  }

  it('garment_upper_08 (open cardigan worn with jeans, auto): the cardigan — a top styled with jeans is the product', async () => {
    const g = await analyze(await load('garment_upper_08.jpg'))
    expect(g.photoType).toBe('model')
    expect(g.worn?.garments).toBe('two')
    expect(g.worn?.decidedBy).toBe('jeans')
    expect(g.category).toBe('upper')
    await expectTop('garment_upper_08.jpg', g)
  }, 60_000)

  it('garment_upper_08 with garment_mode upper: the cardigan, without the face, the jeans or the shoes', async () => {
    const g = await analyze(await load('garment_upper_08.jpg'), 'upper', 'model')
    expect(g.photoType).toBe('model')
    expect(g.category).toBe('upper')
    expect(g.worn?.decidedBy).toBe('request')
    await expectTop('garment_upper_08.jpg', g)
  }, 60_000)

  it('garment_lower_04 with garment_mode upper: the cardigan worn over the skirt, not the skirt', async () => {
    const g = await analyze(await load('garment_lower_04.jpg'), 'upper')
    expect(g.category).toBe('upper')
    await expectTop('garment_lower_04.jpg', g)
  }, 60_000)

  it('garment_upper_08 with garment_mode lower: the jeans, two legs (a gap between them), waistband above the crotch', async () => {
    const img = await load('garment_upper_08.jpg')
    const g = await analyze(img, 'lower')
    expect(g.photoType).toBe('model')
    expect(g.landmarks.kind).toBe('bottom')
    const p = (await findWearer(img, models))!.points
    if (g.landmarks.kind === 'bottom') {
      expect(g.landmarks.legs).toBe(true)
      const hipY = (p[LM.leftHip]!.y + p[LM.rightHip]!.y) / 2
      const kneeY = (p[LM.leftKnee]!.y + p[LM.rightKnee]!.y) / 2
      expect(g.landmarks.waistL.y).toBeLessThan(hipY)
      expect(g.landmarks.crotch.y).toBeGreaterThan(hipY - 0.1 * (kneeY - hipY))
      expect(g.landmarks.crotch.y).toBeLessThan(kneeY)
    }
  }, 60_000)

  it("garment_full_04 (lace dress, auto): the model's arms and neck are left out, the legs seen through the lace are dress painted in its colour", async () => {
    const img = await load('garment_full_04.jpg')
    const g = await analyze(img)
    expect(g.photoType).toBe('model')
    expect(g.category).toBe('full')
    const p = (await findWearer(img, models))!.points
    const sw = Math.hypot(
      p[LM.leftShoulder]!.x - p[LM.rightShoulder]!.x,
      p[LM.leftShoulder]!.y - p[LM.rightShoulder]!.y,
    )
    const rgb = g.rgb ?? img.data
    // Mean mask and share of skin-rule colours (in the pixels drawn) over a disc.
    const disc = (c: { x: number; y: number }, r: number) => {
      let n = 0
      let on = 0
      let skin = 0
      for (let y = Math.round(c.y - r); y <= c.y + r; y++) {
        for (let x = Math.round(c.x - r); x <= c.x + r; x++) {
          if ((x - c.x) ** 2 + (y - c.y) ** 2 > r * r) continue
          const i = y * img.width + x
          n++
          on += g.mask.data[i]!
          if (skinRule(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!)) skin++
        }
      }
      return { on: on / n, skin: skin / n }
    }
    const at = (a: number, b: number, t: number) => ({
      x: p[a]!.x + t * (p[b]!.x - p[a]!.x),
      y: p[a]!.y + t * (p[b]!.y - p[a]!.y),
    })
    // Bare arms: the elbows are not garment.
    for (const e of [LM.leftElbow, LM.rightElbow]) {
      expect(disc(p[e]!, 0.05 * sw).on).toBeLessThan(0.1)
    }
    // The V-neck's skin just below the shoulder line is not garment.
    const sm = at(LM.leftShoulder, LM.rightShoulder, 0.5)
    expect(disc({ x: sm.x, y: sm.y + 0.15 * sw }, 0.05 * sw).on).toBeLessThan(0.1)
    // Above the knees the legs show through the lace: garment, and not skin-coloured.
    for (const [hp, kn] of [
      [LM.leftHip, LM.leftKnee],
      [LM.rightHip, LM.rightKnee],
    ] as const) {
      const d = disc(at(hp, kn, 0.85), 0.05 * sw)
      expect(d.on).toBeGreaterThan(0.95)
      expect(d.skin).toBeLessThan(0.2)
    }
  }, 60_000)

  it('flat-lay forces the whole foreground even on a model photo; model on a ghost-mannequin photo is no_garment_detected', async () => {
    const img = await load('garment_lower_04.jpg')
    const g = await analyze(img, 'auto', 'flat-lay')
    expect(g.photoType).toBe('flat-lay')
    const ghost = await load('garment_upper_01.jpg')
    await expect(analyze(ghost, 'auto', 'model')).rejects.toMatchObject({
      code: 'no_garment_detected',
    })
    const g2 = await analyze(ghost)
    expect(g2.photoType).toBe('flat-lay')
    expect(g2.category).toBe('upper')
  }, 60_000)
})
