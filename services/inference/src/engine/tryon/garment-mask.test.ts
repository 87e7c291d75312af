import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../media/image.ts'
import {
  backgroundField,
  extractGarmentMask,
  extractGarmentMasks,
  KEY_DISTANCE,
  maskArea,
} from './garment-mask.ts'
import { bottomLandmarks, maskBbox } from './garment-shape.ts'
import { components } from './raster.ts'

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
    const img = await decodeImage(join(MEDIA, 'garment_lower_01.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, {
      preprocess: true,
    })
    const area = maskArea(m)
    expect(area).toBeGreaterThan(0.15)
    expect(area).toBeLessThan(0.35)
    for (const [x, y] of [
      [2, 2],
      [img.width - 3, 2],
      [2, img.height - 3],
      [img.width - 3, img.height - 3],
    ]) {
      expect(m.data[y! * img.width + x!]).toBe(0)
    }
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

  it("a white garment on a flat light-grey packshot background, shaded through the background's level, with a drop shadow", () => {
    // 242 grey background (no noise, as a rendered packshot); a skirt-like trapezoid whose left
    // part is 4–11 levels brighter than the background (within the 0.035 core distance a noisy
    // backdrop needs) and whose right part, in shade, 7–12 levels darker (reached through the
    // smoothed outline's small steps without the outline barrier); a soft shadow
    // a little below it.
    const w = 300
    const h = 400
    const data = new Uint8Array(w * h * 3).fill(242)
    const inside = (x: number, y: number) =>
      y >= 120 && y <= 260 && x >= 100 - (y - 120) * 0.3 && x <= 200 + (y - 120) * 0.3
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let v = 242
        if (inside(x, y)) {
          const t = (x - 60) / 180 // 0 at the left, 1 at the right of the hem
          v =
            t < 0.55
              ? Math.round(252 - 10 * t + ((x * 7 + y * 3) % 3) - 1)
              : Math.round(234 - 6 * (t - 0.55) + ((x * 7 + y * 3) % 3) - 1)
        } else if (y > 268 && y < 298 && x > 70 && x < 230) {
          v = Math.round(
            242 - 14 * Math.sin((Math.PI * (y - 268)) / 30) * Math.sin((Math.PI * (x - 70)) / 160),
          )
        }
        data.fill(v, (y * w + x) * 3, (y * w + x) * 3 + 3)
      }
    }
    const m = extractGarmentMask({ width: w, height: h, data }, null, { preprocess: true })
    let inter = 0
    let union = 0
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const a = m.data[y * w + x]! > 0.5
        const b = inside(x, y)
        if (a && b) inter++
        if (a || b) union++
      }
    }
    expect(inter / union).toBeGreaterThan(0.85)
    // The shadow is background.
    expect(m.data[283 * w + 150]).toBeLessThan(0.5)
  })

  it('garment_lower_05 (a white pleated skirt, small on light grey) is found whole', async () => {
    const img = await decodeImage(join(MEDIA, 'tryon', 'garment_lower_05.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, {
      preprocess: true,
    })
    const box = maskBbox(m)!
    // The skirt spans about x 0.25–0.76, y 0.39–0.62 of the photo; its mask fills most of its box.
    expect((box.x1 - box.x0) / img.width).toBeGreaterThan(0.45)
    expect((box.y1 - box.y0) / img.height).toBeGreaterThan(0.18)
    expect(
      maskArea(m) / (((box.x1 - box.x0 + 1) * (box.y1 - box.y0 + 1)) / (img.width * img.height)),
    ).toBeGreaterThan(0.6)
  })

  it('a white print on a garment shot on white is not a hole (garment_upper_02)', async () => {
    const img = await decodeImage(join(MEDIA, 'garment_upper_02.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, {
      preprocess: true,
    })
    const box = maskBbox(m)!
    // The centre of the tee (inside the white oval print) is garment.
    const cx = Math.round((box.x0 + box.x1) / 2)
    const cy = Math.round(box.y0 + 0.55 * (box.y1 - box.y0))
    let on = 0
    for (let dy = -10; dy <= 10; dy++) {
      for (let dx = -10; dx <= 10; dx++) {
        on += m.data[(cy + dy) * img.width + cx + dx]! > 0.5 ? 1 : 0
      }
    }
    expect(on).toBe(21 * 21)
  })

  it("a big print whose white is the backdrop's own colour, on a sweep a few levels darker at the top, is found whole (garment_lower_03)", async () => {
    // Navy swim shorts with a white lettering print and white bands down to the hem, on a light
    // grey sweep (219 at the top, 227 at the sides, 224 at the bottom): the white is 0–6 levels
    // from the backdrop beside it. Measured against one border colour the gradient read as a noisy
    // backdrop and the growth ran through the white bands (0.35 of the photo left, in three pieces).
    const img = await decodeImage(join(MEDIA, 'tryon', 'garment_lower_03.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    const w = img.width
    const m = extractGarmentMask({ width: w, height: img.height, data: img.rgb }, null, {
      preprocess: true,
    })
    expect(maskArea(m)).toBeGreaterThan(0.42)
    expect(maskArea(m)).toBeLessThan(0.5)
    const { sizes } = components({ ...m, data: m.data.map((v) => (v > 0.5 ? 1 : 0)) })
    const big = sizes.slice(1).filter((n) => n > 0.01 * w * img.height)
    expect(big).toHaveLength(1)
    // Across the white band at two thirds of the height, the row is garment from side to side.
    const box = maskBbox(m)!
    const y = Math.round(box.y0 + 0.62 * (box.y1 - box.y0))
    let on = 0
    for (let x = box.x0; x <= box.x1; x++) on += m.data[y * w + x]! > 0.5 ? 1 : 0
    expect(on / (box.x1 - box.x0 + 1)).toBeGreaterThan(0.9)
    for (const [x, yy] of [
      [2, 2],
      [w - 3, img.height - 3],
    ]) {
      expect(m.data[yy! * w + x!]).toBe(0)
    }
  })
})

describe('narrow strips of backdrop between two parts of the garment are background', () => {
  const masks = async (file: string) => {
    const img = await decodeImage(join(MEDIA, file), { what: 'garment', maxWorkSidePx: 768 })
    const rgb = { width: img.width, height: img.height, data: img.rgb }
    return { img, ...extractGarmentMasks(rgb, null, { preprocess: true }) }
  }
  /** The row's garment runs (> 0.5), as [x0, x1]. */
  const runsOf = (m: { width: number; data: Float32Array }, y: number): [number, number][] => {
    const out: [number, number][] = []
    for (let x = 0; x < m.width; x++) {
      if (m.data[y * m.width + x]! <= 0.5) continue
      const x0 = x
      while (x + 1 < m.width && m.data[y * m.width + x + 1]! > 0.5) x++
      out.push([x0, x])
    }
    return out
  }

  it('tryon/garment_lower_01: the shaded strip between wide legs that nearly touch is open from the hems up to the crotch', async () => {
    // The legs are 3–10 px apart at 576 px wide, the strip grey in their shadow (luma 195–205 on a
    // 248 backdrop) at the top: one tube at the region growing's scale, legs and crotch lost.
    const { img, shape, matte } = await masks('tryon/garment_lower_01.jpg')
    const box = maskBbox(shape)!
    // Hand label: the crotch at 0.29 of the photo's height, the hems at 0.94.
    for (const f of [0.33, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) {
      const y = Math.round(f * img.height)
      for (const m of [shape, matte]) {
        const runs = runsOf(m, y).filter(([a, b]) => b - a > 0.1 * (box.x1 - box.x0))
        expect(runs).toHaveLength(2)
        // The gap between them is at the middle of the garment.
        const mid = (runs[0]![1] + runs[1]![0]) / 2
        expect(Math.abs(mid - (box.x0 + box.x1) / 2)).toBeLessThan(0.03 * img.width)
      }
    }
    const lm = bottomLandmarks(shape, box)
    expect(lm.legs).toBe(true)
    expect(Math.abs(lm.crotch.y / img.height - 0.29)).toBeLessThan(0.04)
  })

  it('dev garment_lower_01: the gap between skinny legs is open up to where they meet, not where it narrows', async () => {
    // Hand label: the crotch at 0.315 of the height; the region growing closed the gap at 0.43.
    const { img, shape } = await masks('garment_lower_01.jpg')
    const lm = bottomLandmarks(shape, maskBbox(shape)!)
    expect(lm.legs).toBe(true)
    expect(Math.abs(lm.crotch.y / img.height - 0.315)).toBeLessThan(0.04)
  })

  it('tryon/garment_upper_09: the backdrop between a hanging sleeve and the body is open up under the armpit', async () => {
    const { shape } = await masks('tryon/garment_upper_09.jpg')
    const box = maskBbox(shape)!
    // Sleeve, body, sleeve: the region growing closed the wedges above 0.72 of the height.
    for (const f of [0.66, 0.7]) {
      const runs = runsOf(shape, Math.round(box.y0 + f * (box.y1 - box.y0)))
      expect(runs).toHaveLength(3)
    }
  })

  it('backdrop-coloured parts of a garment that open nowhere below stay garment: white stripes between motifs', async () => {
    // tryon/garment_lower_02: off-white trousers (0.1 darker than the backdrop, neutral: its
    // shade) with black flower columns, reached from the backdrop along their faint outline; rows
    // of white between two flowers are as narrow as a gap between legs.
    const { shape } = await masks('tryon/garment_lower_02.jpg')
    const box = maskBbox(shape)!
    const lm = bottomLandmarks(shape, box)
    for (let y = box.y0 + 2; y < lm.crotch.y - 2; y++) expect(runsOf(shape, y)).toHaveLength(1)
    for (let y = lm.crotch.y + 4; y < box.y1 - 4; y += 2) expect(runsOf(shape, y)).toHaveLength(2)
  })
})

describe('soft shadows cast on the backdrop are not garment (no rim around the drawn garment)', () => {
  it('garment_lower_01: in the matte the shadow ramp beside the jeans is background, the jeans start at their own edge', async () => {
    // On white (248), the jeans cast a soft shadow on the backdrop: 8 px at 576 px wide going
    // 240 → 189 towards the denim. It was kept as garment and drawn as a light grey rim.
    const img = await decodeImage(join(MEDIA, 'tryon', 'garment_lower_01.jpg'), {
      what: 'garment',
      maxWorkSidePx: 768,
    })
    const w = img.width
    const rgb = { width: w, height: img.height, data: img.rgb }
    const { shape, matte: m } = extractGarmentMasks(rgb, null, { preprocess: true })
    const field = backgroundField(rgb)
    const box = maskBbox(m)!
    expect(maskArea(m)).toBeGreaterThan(0.33)
    for (const f of [0.2, 0.45, 0.7]) {
      const y = Math.round(box.y0 + f * (box.y1 - box.y0))
      let x = 0
      while (x < w && m.data[y * w + x]! <= 0.5) x++
      // The first garment pixel of the row is denim, far darker than the backdrop there…
      const i = (y * w + x) * 3
      const luma = (d: ArrayLike<number>, k: number) =>
        0.299 * d[k]! + 0.587 * d[k + 1]! + 0.114 * d[k + 2]!
      expect(luma(img.rgb, i) / 255).toBeLessThan(0.8 * luma(field, i))
      // …and the shadow beside it, darker than the backdrop, is not garment.
      const j = (y * w + x - 4) * 3
      expect(luma(img.rgb, j) / 255).toBeLessThan(0.97 * luma(field, j))
      expect(m.data[y * w + x - 4]).toBeLessThan(0.5)
      // The outline the landmarks are read from keeps it (a shadow opened between the legs at
      // their hems but not above them moved the crotch and bent the fitted legs).
      expect(shape.data[y * w + x - 4]).toBeGreaterThan(0.5)
    }
    // The matte never reaches past the outline.
    for (let i = 0; i < m.data.length; i++) {
      if (m.data[i]! > shape.data[i]!) expect(m.data[i]).toBe(shape.data[i])
    }
  })
})

describe('backgroundField: the backdrop colour at every pixel from the border ring', () => {
  it('follows a vertical light gradient and ignores a garment cut by the frame', () => {
    const w = 64
    const h = 96
    const data = new Uint8Array(w * h * 3)
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        data.fill(200 + Math.round((20 * y) / (h - 1)), (y * w + x) * 3, (y * w + x) * 3 + 3)
      }
    }
    // A dark garment through the bottom edge, a fifth of its width.
    for (let y = 60; y < h; y++) {
      for (let x = 26; x < 38; x++) data.fill(30, (y * w + x) * 3, (y * w + x) * 3 + 3)
    }
    const f = backgroundField({ width: w, height: h, data })
    for (const [x, y] of [
      [32, 0],
      [32, 48],
      [5, 80],
      [32, 90],
      [60, 95],
    ]) {
      const want = (200 + (20 * y!) / (h - 1)) / 255
      expect(Math.abs(f[(y! * w + x!) * 3]! - want)).toBeLessThan(2 / 255)
    }
  })
})
