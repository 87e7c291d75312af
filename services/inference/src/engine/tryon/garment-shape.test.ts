/**
 * Garment category and landmarks from the silhouette (garment-shape.ts): synthetic masks for shapes
 * nobody has a photo of (a strappy top, an open cardigan whose hanging sleeves touch its fronts, an
 * A-line skirt, a sleeveless maxi dress…) and the product photos of ../shared/media(/tryon).
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../media/image.ts'
import { extractGarmentMask } from './garment-mask.ts'
import {
  bottomLandmarks,
  detectCategory,
  maskBbox,
  topLandmarks,
  type GarmentCategory,
} from './garment-shape.ts'
import { drawCapsule, fillPolygon, plane, type Plane } from './raster.ts'

const SHARED = resolve(fileURLToPath(new URL('../../../../../../shared/media', import.meta.url)))

type Draw = (m: Plane) => void
const rect = (m: Plane, x0: number, y0: number, x1: number, y1: number) =>
  fillPolygon(m, [
    { x: x0, y: y0 },
    { x: x1, y: y0 },
    { x: x1, y: y1 },
    { x: x0, y: y1 },
  ])
const poly = (m: Plane, ...p: [number, number][]) =>
  fillPolygon(
    m,
    p.map(([x, y]) => ({ x, y })),
  )
const cap = (m: Plane, ax: number, ay: number, bx: number, by: number, r: number) =>
  drawCapsule(m, { x: ax, y: ay }, { x: bx, y: by }, r)

const mask = (w: number, h: number, draw: Draw): Plane => {
  const m = plane(w, h)
  draw(m)
  return m
}

const SHAPES: Record<string, { w: number; h: number; draw: Draw; category: GarmentCategory }> = {
  'strappy bustier top (two straps over a bodice)': {
    w: 300,
    h: 300,
    category: 'upper',
    draw: (m) => {
      cap(m, 118, 30, 122, 110, 5)
      cap(m, 182, 30, 178, 110, 5)
      poly(m, [100, 105], [200, 105], [212, 250], [88, 250])
    },
  },
  'open cardigan, fronts apart, hanging sleeves touching the fronts': {
    w: 320,
    h: 400,
    category: 'upper',
    draw: (m) => {
      poly(m, [120, 20], [200, 20], [250, 60], [70, 60])
      cap(m, 80, 70, 62, 340, 24)
      cap(m, 240, 70, 258, 340, 24)
      poly(m, [80, 50], [152, 50], [152, 360], [80, 360])
      poly(m, [168, 50], [240, 50], [240, 360], [168, 360])
      rect(m, 140, 20, 180, 110)
    },
  },
  'long-sleeve top laid flat, sleeves hanging apart from the body': {
    w: 320,
    h: 360,
    category: 'upper',
    draw: (m) => {
      poly(m, [130, 20], [190, 20], [225, 45], [95, 45])
      rect(m, 100, 40, 220, 300)
      cap(m, 95, 55, 55, 290, 16)
      cap(m, 225, 55, 265, 290, 16)
    },
  },
  'tee (short sleeves out to the sides)': {
    w: 320,
    h: 320,
    category: 'upper',
    draw: (m) => {
      poly(m, [130, 20], [190, 20], [230, 40], [90, 40])
      rect(m, 95, 35, 225, 280)
      poly(m, [95, 38], [40, 90], [65, 120], [100, 95])
      poly(m, [225, 38], [280, 90], [255, 120], [220, 95])
    },
  },
  'A-line midi skirt': {
    w: 320,
    h: 400,
    category: 'lower',
    draw: (m) => {
      rect(m, 110, 30, 210, 50)
      poly(m, [110, 48], [210, 48], [275, 370], [45, 370])
    },
  },
  'straight skirt': {
    w: 300,
    h: 360,
    category: 'lower',
    draw: (m) => rect(m, 90, 30, 210, 330),
  },
  'sleeveless maxi dress (straps, bodice, long flared skirt)': {
    w: 320,
    h: 520,
    category: 'full',
    draw: (m) => {
      cap(m, 130, 20, 128, 80, 6)
      cap(m, 190, 20, 192, 80, 6)
      poly(m, [115, 75], [205, 75], [200, 190], [120, 190])
      poly(m, [120, 185], [200, 185], [260, 490], [60, 490])
    },
  },
  'trousers (waistband, crotch, two legs)': {
    w: 300,
    h: 420,
    category: 'lower',
    draw: (m) => {
      rect(m, 90, 20, 210, 40)
      poly(m, [90, 38], [210, 38], [218, 140], [82, 140])
      poly(m, [82, 135], [148, 135], [140, 400], [88, 400])
      poly(m, [152, 135], [218, 135], [212, 400], [160, 400])
    },
  },
  'pleated mini skirt with a belt, its buckle standing above the waistband (wider than long)': {
    w: 400,
    h: 260,
    category: 'lower',
    draw: (m) => {
      rect(m, 170, 30, 196, 80)
      poly(m, [110, 42], [300, 46], [302, 80], [108, 80])
      poly(m, [108, 78], [302, 78], [340, 200], [70, 200])
    },
  },
  shorts: {
    w: 300,
    h: 260,
    category: 'lower',
    draw: (m) => {
      rect(m, 90, 20, 210, 40)
      poly(m, [90, 38], [210, 38], [220, 140], [80, 140])
      poly(m, [80, 135], [146, 135], [140, 220], [72, 220])
      poly(m, [154, 135], [220, 135], [228, 220], [160, 220])
    },
  },
}

describe('category from the silhouette: synthetic shapes', () => {
  it.each(Object.entries(SHAPES))('%s', (_name, s) => {
    const m = mask(s.w, s.h, s.draw)
    const e = detectCategory(m, maskBbox(m)!)
    expect(e.category).toBe(s.category)
  })

  it('reads the structure it decides from: straps are top lobes, hanging sleeves are sleeve rows, trousers have a crotch', () => {
    const strappy = mask(300, 300, SHAPES['strappy bustier top (two straps over a bodice)']!.draw)
    expect(detectCategory(strappy, maskBbox(strappy)!).topLobes).toBe(2)
    const longSleeve = mask(
      320,
      360,
      SHAPES['long-sleeve top laid flat, sleeves hanging apart from the body']!.draw,
    )
    expect(detectCategory(longSleeve, maskBbox(longSleeve)!).sleeveRows).toBeGreaterThan(0.5)
    const trousers = mask(300, 420, SHAPES['trousers (waistband, crotch, two legs)']!.draw)
    const e = detectCategory(trousers, maskBbox(trousers)!)
    expect(e.legs).toBe(true)
    // The crotch is at y ≈ 135 of a garment spanning 20..400.
    expect(e.crotchAt).toBeGreaterThan((130 - 20) / 381)
    expect(e.crotchAt).toBeLessThan((142 - 20) / 381)
    const cardigan = mask(
      320,
      400,
      SHAPES['open cardigan, fronts apart, hanging sleeves touching the fronts']!.draw,
    )
    expect(detectCategory(cardigan, maskBbox(cardigan)!).legs).toBe(false)
  })
})

describe('landmarks on synthetic shapes', () => {
  it('trousers: waistband at the top, crotch at the split, two legs ending at the hem', () => {
    const m = mask(300, 420, SHAPES['trousers (waistband, crotch, two legs)']!.draw)
    const lm = bottomLandmarks(m, maskBbox(m)!)
    expect(lm.legs).toBe(true)
    expect(Math.abs(lm.waistL.x - 90)).toBeLessThan(4)
    expect(Math.abs(lm.waistR.x - 210)).toBeLessThan(4)
    expect(Math.abs(lm.crotch.y - 136)).toBeLessThan(6)
    expect(Math.abs(lm.crotch.x - 150)).toBeLessThan(4)
    expect(lm.hemLOuter.y).toBeGreaterThan(392)
    expect(lm.hemLInner.x).toBeLessThan(lm.hemRInner.x)
  })

  it('wide legs that touch down to just above the hem: one tube, not legs with the crotch at the hem', () => {
    const m = mask(300, 420, (q) => {
      rect(q, 90, 20, 210, 40)
      poly(q, [90, 38], [210, 38], [222, 400], [78, 400])
    })
    // Only the last 4 % of the length shows a gap between the two hems.
    for (let y = 385; y <= 400; y++) for (let x = 146; x <= 154; x++) m.data[y * 300 + x] = 0
    const lm = bottomLandmarks(m, maskBbox(m)!)
    expect(lm.legs).toBe(false)
    expect(detectCategory(m, maskBbox(m)!).legs).toBe(false)
  })

  it('a waistband with a buckle standing above it: the waist is the waistband, not the buckle', () => {
    const m = mask(
      400,
      260,
      SHAPES[
        'pleated mini skirt with a belt, its buckle standing above the waistband (wider than long)'
      ]!.draw,
    )
    const lm = bottomLandmarks(m, maskBbox(m)!)
    // The buckle is 27 px wide, the waistband 190 (its top edge slants: the first row past 0.6 × the widest is ~120).
    expect(lm.waistR.x - lm.waistL.x).toBeGreaterThan(100)
    expect(lm.legs).toBe(false)
  })

  it('A-line skirt: one tube, the waist narrower than the hem', () => {
    const m = mask(320, 400, SHAPES['A-line midi skirt']!.draw)
    const lm = bottomLandmarks(m, maskBbox(m)!)
    expect(lm.legs).toBe(false)
    expect(lm.waistR.x - lm.waistL.x).toBeLessThan(110)
    expect(lm.hemROuter.x - lm.hemLOuter.x).toBeGreaterThan(210)
    expect(lm.hemLOuter.y).toBeGreaterThan(360)
  })

  it('sleeveless maxi dress: neck and shoulders at the straps, hem at the bottom, no sleeves', () => {
    const m = mask(
      320,
      520,
      SHAPES['sleeveless maxi dress (straps, bodice, long flared skirt)']!.draw,
    )
    const lm = topLandmarks(m, maskBbox(m)!, 'full')
    expect(lm.shoulderL.y).toBeLessThan(90)
    expect(lm.shoulderR.y).toBeLessThan(90)
    expect(lm.hemL.y).toBeGreaterThan(480)
    expect(lm.hemR.x - lm.hemL.x).toBeGreaterThan(180)
    expect(lm.sleeveL).toBeNull()
    expect(lm.sleeveR).toBeNull()
  })

  it('long-sleeve top with hanging sleeves: each cuff at the end of its sleeve, outside the body', () => {
    const m = mask(
      320,
      360,
      SHAPES['long-sleeve top laid flat, sleeves hanging apart from the body']!.draw,
    )
    const lm = topLandmarks(m, maskBbox(m)!, 'upper')
    expect(lm.sleeveL).not.toBeNull()
    expect(lm.sleeveR).not.toBeNull()
    expect(lm.sleeveL!.cuff.y).toBeGreaterThan(250)
    expect(lm.sleeveR!.cuff.y).toBeGreaterThan(250)
    expect(lm.sleeveL!.cuff.x).toBeLessThan(90)
    expect(lm.sleeveR!.cuff.x).toBeGreaterThan(230)
    expect(lm.hemL.y).toBeGreaterThan(290)
  })
})

interface Label {
  file: string
  category: GarmentCategory
  photo: string
}

describe('category from the silhouette: product photos (flat, ghost mannequin)', () => {
  const labels = (
    JSON.parse(readFileSync(join(SHARED, 'tryon', 'labels.json'), 'utf8')) as { garments: Label[] }
  ).garments
  const photos = [
    ...labels
      // On-model photos go through garment-photo.ts (the wearer's pose), not the silhouette.
      .filter((l) => l.photo !== 'on-model')
      .map((l) => ({ path: join(SHARED, 'tryon', l.file), category: l.category })),
    ...(
      [
        'garment_upper_01',
        'garment_upper_02',
        'garment_lower_01',
        'garment_lower_02',
        'garment_full_01',
      ] as const
    ).map((f) => ({
      path: join(SHARED, `${f}.jpg`),
      category: f.split('_')[1] as GarmentCategory,
    })),
  ]
  it.each(photos)('$path is $category', async ({ path, category }) => {
    const img = await decodeImage(path, { what: 'garment', maxWorkSidePx: 768 })
    const m = extractGarmentMask({ width: img.width, height: img.height, data: img.rgb }, null, {
      preprocess: true,
    })
    expect(detectCategory(m, maskBbox(m)!).category).toBe(category)
  })
})
