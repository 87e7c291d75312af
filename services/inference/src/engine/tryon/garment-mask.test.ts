import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../media/image.ts'
import { extractGarmentMask, KEY_DISTANCE, maskArea } from './garment-mask.ts'
import { bottomLandmarks, maskBbox } from './garment-shape.ts'

const MEDIA = resolve(fileURLToPath(new URL('../../../../../../shared/media', import.meta.url)))

describe('preprocess_garment "false": the photo is already cut out', () => {
  it('uses the alpha channel when there is one', () => {
    const w = 4
    const h = 2
    const rgb = { width: w, height: h, data: new Uint8Array(w * h * 3).fill(250) }
    const alpha = Uint8Array.of(0, 64, 128, 255, 255, 255, 0, 0)
    const m = extractGarmentMask(rgb, alpha, { preprocess: false })
    expect(Array.from(m.data, (v) => Math.round(v * 255))).toEqual(Array.from(alpha))
  })

  it('otherwise keys out the border colour within KEY_DISTANCE, nothing else', () => {
    const w = 8
    const h = 8
    const data = new Uint8Array(w * h * 3).fill(240)
    const near = Math.round(240 - (KEY_DISTANCE * 255) / Math.sqrt(3) + 2) // just inside the key
    const far = Math.round(240 - (KEY_DISTANCE * 255) / Math.sqrt(3) - 2) // just outside
    data.fill(near, (3 * w + 3) * 3, (3 * w + 4) * 3)
    data.fill(far, (4 * w + 4) * 3, (4 * w + 5) * 3)
    const m = extractGarmentMask({ width: w, height: h, data }, null, { preprocess: false })
    expect(m.data[3 * w + 3]).toBe(0)
    expect(m.data[4 * w + 4]).toBe(1)
    expect(maskArea(m)).toBeCloseTo(1 / 64, 6)
  })
})

describe('preprocess_garment "true": background removal on product photos', () => {
  it('pink jeans on white (light on light): the garment is found, corners and the gap between the legs are background', async () => {
    const img = await decodeImage(join(MEDIA, 'garment_lower_01.jpg'), { what: 'garment', maxWorkSidePx: 768 })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, { preprocess: true })
    const area = maskArea(m)
    expect(area).toBeGreaterThan(0.15)
    expect(area).toBeLessThan(0.35)
    for (const [x, y] of [[2, 2], [img.width - 3, 2], [2, img.height - 3], [img.width - 3, img.height - 3]]) expect(m.data[y! * img.width + x!]).toBe(0)
    const box = maskBbox(m)!
    const lm = bottomLandmarks(m, box)
    expect(lm.legs).toBe(true)
    const gapX = Math.round((lm.hemLInner.x + lm.hemRInner.x) / 2)
    const gapY = Math.round(lm.hemLInner.y - 5)
    expect(m.data[gapY * img.width + gapX]).toBeLessThan(0.5)
    // The legs themselves are garment.
    const legX = Math.round((lm.hemLOuter.x + lm.hemLInner.x) / 2)
    expect(m.data[gapY * img.width + legX]).toBeGreaterThan(0.5)
  })

  it('a white print on a garment shot on white is not a hole (garment_upper_02)', async () => {
    const img = await decodeImage(join(MEDIA, 'garment_upper_02.jpg'), { what: 'garment', maxWorkSidePx: 768 })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, { preprocess: true })
    const box = maskBbox(m)!
    // The centre of the tee (inside the white oval print) is garment.
    const cx = Math.round((box.x0 + box.x1) / 2)
    const cy = Math.round(box.y0 + 0.55 * (box.y1 - box.y0))
    let on = 0
    for (let dy = -10; dy <= 10; dy++) for (let dx = -10; dx <= 10; dx++) on += m.data[(cy + dy) * img.width + cx + dx]! > 0.5 ? 1 : 0
    expect(on).toBe(21 * 21)
  })
})
