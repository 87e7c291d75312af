/**
 * fit.ts on real photos: a top is drawn at the body's size (its chest from the silhouette's shoulder
 * span, `shoulderSpan`), not at two thirds of it (0.9 × the shoulder-joint distance between the
 * seams, before). The outlines were read by hand off the photos on a 10 px grid.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GARMENT_WORK_SIDE_PX } from '../../jobs/try-on.ts'
import { decodeImage } from '../../media/image.ts'
import { LM } from './pose.ts'
import { dist, norm, sub } from './raster.ts'
import { shoulderSpan } from './fit.ts'
import { openTryOnEngine, type TryOnEngineWithDetails } from './tryon-engine.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const DEV = resolve(ROOT, '../shared/media')
const MODELS = join(ROOT, 'models', 'dist')
const TIMEOUT_MS = 120_000

let engine: TryOnEngineWithDetails
beforeAll(async () => {
  engine = await openTryOnEngine({ modelsDir: MODELS })
}, TIMEOUT_MS)
afterAll(async () => {
  await engine.close()
})

/** The engine's result for a person and a garment photo under DEV (paths relative to it). */
async function dress(personFile: string, garmentFile: string) {
  const person = await decodeImage(join(DEV, personFile), { what: 'person' })
  const garment = await decodeImage(join(DEV, garmentFile), {
    what: 'garment',
    maxWorkSidePx: GARMENT_WORK_SIDE_PX,
  })
  return engine.tryOnDetailed(person, garment, {
    preprocessGarment: true,
    garmentMode: 'auto',
    removeBackground: false,
  })
}

describe('tops sized from the body (fit.ts)', () => {
  it(
    "dev person_02 × dev garment_upper_01 (the README's example): the tee as wide as his body, down to his jeans",
    async () => {
      const r = await dress('person_02.jpg', 'garment_upper_01.jpg')
      const p = r.details.person
      const sl = p.points[LM.rightShoulder]!
      const sr = p.points[LM.leftShoulder]!
      const sw = dist(sl, sr)
      // His outline at shoulder height, read by hand: x 228–512 on the 768 px photo (284 px, the
      // black tee's sleeves included); the joints lie well inside it.
      const span = shoulderSpan(p, sl, sr, norm(sub(p.points[LM.rightHip]!, sl)))
      expect(span.left).not.toBeNull()
      expect(span.right).not.toBeNull()
      const spanPx = (1 + span.left! + span.right!) * sw
      expect(spanPx).toBeGreaterThan(255)
      expect(spanPx).toBeLessThan(310)
      // The torso part's armpits (targets 3 and 4: neck, shoulders, armpits, …) lie CHEST_SPAN
      // (0.7) × the span apart: about 200 px; at 0.9 × the joints they were ~150 px apart.
      const torso = r.details.parts.find((x) => x.name === 'torso')!
      const armpits = dist(torso.targets[3]!, torso.targets[4]!)
      expect(armpits).toBeGreaterThan(0.6 * spanPx)
      expect(armpits).toBeLessThan(0.8 * spanPx)
      expect(armpits).toBeGreaterThan(0.95 * sw)
      // Its hem reaches his jeans (fit.ts HEM_STRETCH): the old tee ended at the hip joints' line
      // (y 471, clothing.ts `topHemY`), the new one's own proportions put its hem at y 443 and a
      // painted belly showed between them. Targets 8–10 are the hem's corners and centre.
      const hipY = (p.points[LM.leftHip]!.y + p.points[LM.rightHip]!.y) / 2
      const hem = torso.targets.slice(8, 11)
      for (const t of hem) expect(t.y).toBeGreaterThan(hipY - 0.05 * sw)
      for (const t of hem) expect(t.y).toBeLessThan(hipY + 0.15 * sw)
    },
    TIMEOUT_MS,
  )

  it(
    'tryon person_14 × tryon garment_upper_06: the shirt reaches where his longer old tee ended',
    async () => {
      const r = await dress('tryon/person_14.jpg', 'tryon/garment_upper_06.jpg')
      const p = r.details.person
      const sw = p.shoulderWidth
      // His olive tee hangs untucked over the jeans down to y ≈ 834 (read by hand), 0.24 × his
      // joint distance below the hip joints; the shirt's own proportions end it at y ≈ 743, and a
      // painted band showed between the two. Now its hem reaches the old one (within 1.3 × its length).
      const hipY = (p.points[LM.leftHip]!.y + p.points[LM.rightHip]!.y) / 2
      expect(r.details.composite.clothing?.topHemY ?? 0).toBeGreaterThan(hipY + 0.15 * sw)
      const hem = r.details.parts.find((x) => x.name === 'torso')!.targets.slice(8, 11)
      for (const t of hem) expect(t.y).toBeGreaterThan(815)
      for (const t of hem) expect(t.y).toBeLessThan(870)
    },
    TIMEOUT_MS,
  )
})

describe('bottoms sized from the body (fit.ts)', () => {
  it(
    'tryon person_11 × tryon garment_lower_04 (an on-model skirt): as wide as his legs, no painted leg beside it',
    async () => {
      const r = await dress('tryon/person_11.jpg', 'tryon/garment_lower_04.jpg')
      const p = r.details.person
      const c = r.details.composite
      const sw = p.shoulderWidth
      // The skirt is drawn as slim as it is on its model, leaning with her stance: on his wider
      // jeans it left a painted leg 40 px wide beside it (at half-way hips → knees: skirt x
      // 252–458, his legs 265–485). Now each row spans his body (the person mask off the arms and
      // hands) at the hips, half-way to the knees and at the knees, within 0.06 × his shoulders.
      const hipY = (p.points[LM.leftHip]!.y + p.points[LM.rightHip]!.y) / 2
      const kneeY = (p.points[LM.leftKnee]!.y + p.points[LM.rightKnee]!.y) / 2
      const span = (y: number, on: (i: number) => boolean): [number, number] => {
        let a = -1
        let b = -1
        for (let x = 0; x < p.width; x++) {
          if (!on(y * p.width + x)) continue
          if (a < 0) a = x
          b = x
        }
        return [a, b]
      }
      for (const f of [0.5, 0.75, 1]) {
        const y = Math.round(hipY + f * (kneeY - hipY))
        const body = span(
          y,
          (i) => p.mask.data[i]! > 0.5 && p.arms.data[i]! < 0.5 && p.hands.data[i]! < 0.5,
        )
        const skirt = span(y, (i) => c.garment.data[i]! > 0.5)
        expect(skirt[0]).toBeLessThan(body[0] + 0.06 * sw)
        expect(skirt[1]).toBeGreaterThan(body[1] - 0.06 * sw)
        expect(skirt[1] - skirt[0]).toBeGreaterThan(0.95 * (body[1] - body[0]))
      }
    },
    TIMEOUT_MS,
  )
})
