/**
 * tuck.ts on real photos (the person analysis and the clothing finder run for real): where the old
 * top ends over a visible old bottom, and photos with no bottom below the top. The hems were read by
 * hand off the photos (768 × 1024) on the body axis, a 10 px grid drawn on them.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../media/image.ts'
import { segmentClothing } from './clothing.ts'
import { analyzePerson, type PersonModels } from './person.ts'
import { openPersonModels } from './person-models.testing.ts'
import { LM } from './pose.ts'
import { mid } from './raster.ts'
import { oldBottomInFront } from './tuck.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const SET = resolve(ROOT, '../shared/media/tryon')
const MODELS = join(ROOT, 'models', 'dist')
const TIMEOUT_MS = 120_000

let models: PersonModels
let release: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({ models, release } = await openPersonModels(MODELS))
}, TIMEOUT_MS)

afterAll(async () => {
  await release()
})

async function bottomOf(name: string) {
  const img = await decodeImage(join(SET, `${name}.jpg`), { what: 'person image' })
  const rgb = { width: img.width, height: img.height, data: img.rgb }
  const a = await analyzePerson(rgb, models)
  return { a, r: oldBottomInFront(rgb, a, segmentClothing(rgb, a)) }
}

describe('oldBottomInFront: the old bottom below the old top (tuck.ts)', () => {
  // [photo, the old top's hem on the axis read by hand, what the person wears]
  const cases = [
    // tucked in (the coordinator's reading of the paired photos)
    ['person_02', 680, 'navy tee tucked into blue track pants'],
    // the hands hide the hem (570–660 on the axis): the blouse shows between them down to 580, the
    // skirt from 590; the hem is taken at the top of the hidden band (tuck.ts)
    ['person_03', 585, 'blouse tucked into a black skirt (the hands over its waistband)'],
    // the bow hangs over the jeans on the axis: their waistband at 583 beside it, the bow ends at 685
    ['person_04', 640, 'floral blouse tucked into white jeans, its bow half the band at 640'],
    // untucked
    ['person_01', 740, 'navy tee over beige cords'],
    ['person_05', 712, 'black tee over denim shorts'],
  ] as const
  for (const [name, hem, what] of cases) {
    it(
      `${name} (${what}): the hem within 20 px of ${hem}, the bottom below it in front, nothing above`,
      async () => {
        const { a, r } = await bottomOf(name)
        expect(r).not.toBeNull()
        expect(Math.abs(r!.hemY - hem)).toBeLessThanOrEqual(name === 'person_03' ? 25 : 20)
        const axis = mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!)
        const x = Math.round(axis.x)
        // (person_03: below her hands, which are not the skirt)
        const below = name === 'person_03' ? 680 : Math.round(r!.hemY + 0.15 * a.shoulderWidth)
        expect(r!.front.data[below * a.width + x]).toBeGreaterThan(0.5)
        let above = 0
        for (let i = 0; i < r!.hemY * a.width; i++) above = Math.max(above, r!.front.data[i]!)
        expect(above).toBe(0)
      },
      TIMEOUT_MS,
    )
  }

  it(
    'person_13 (a slip dress, no bottom below it): none, the new top hangs at its own length',
    async () => {
      const { r } = await bottomOf('person_13')
      expect(r).toBeNull()
    },
    TIMEOUT_MS,
  )
})
