/** The evaluation figures on constructed images, and the set's pairs from the real labels. */
import { describe, expect, it } from 'vitest'
import { compatible, loadEvalSet, showsLegs } from './eval-set.ts'
import {
  changedMask,
  oldGarmentLeft,
  oldGarmentMask,
  rectMask,
  regionFigures,
  regionRects,
  ssim,
  toPixels,
} from './metrics.ts'

const W = 40
const H = 60
const img = (f: (x: number, y: number) => number): Uint8Array => {
  const a = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) a.fill(f(x, y), (y * W + x) * 3, (y * W + x) * 3 + 3)
  }
  return a
}

describe('metrics', () => {
  it('SSIM is 1 for identical images and lower for a changed one', () => {
    const a = img((x, y) => (x * 7 + y * 3) % 256)
    const r = { x0: 5, y0: 5, x1: 35, y1: 55 }
    expect(ssim(a, a, W, r)).toBeCloseTo(1, 10)
    const b = img((x, y) => (x * 7 + y * 3 + (x % 2) * 40) % 256)
    expect(ssim(a, b, W, r)).toBeLessThan(0.9)
  })

  it('region score is the share of changed pixels inside the dilated box; box changed the share of the box', () => {
    const before = img(() => 100)
    // Change a 10×10 square inside the box and a 10×10 square outside it (below-left).
    const after = img((x, y) =>
      (x >= 10 && x < 20 && y >= 10 && y < 20) || (x >= 0 && x < 10 && y >= 50)
        ? 200
        : 100 + ((x + y) % 2) * 10,
    )
    const changed = changedMask(before, after, W, H)
    const rects = regionRects(
      'upper',
      { upper: [0.25, 0.1, 0.75, 0.5], lower: [0, 0.5, 1, 1] },
      W,
      H,
    )
    expect(rects).toEqual([{ x0: 10, y0: 6, x1: 30, y1: 30 }])
    const f = regionFigures(changed, rectMask(rects, W, H), rectMask(rects, W, H))
    expect(f.regionScore).toBeCloseTo(0.5, 6)
    expect(f.boxChanged).toBeCloseTo(100 / (20 * 24), 6)
    // Nothing changed: score 0, not NaN.
    expect(
      regionFigures(changedMask(before, before, W, H), rectMask(rects, W, H), rectMask(rects, W, H))
        .regionScore,
    ).toBe(0)
  })

  it('a dress uses the union of the two boxes; dilation grows by 5 % of the image and clips', () => {
    const rects = regionRects(
      'full',
      { upper: [0.2, 0.1, 0.8, 0.5], lower: [0.3, 0.4, 0.7, 1] },
      100,
      200,
      0.05,
    )
    expect(rects).toEqual([
      { x0: 15, y0: 10, x1: 85, y1: 110 },
      { x0: 25, y0: 70, x1: 75, y1: 200 },
    ])
    expect(toPixels([0, 0, 1, 1], 100, 200, 0.05)).toEqual({ x0: 0, y0: 0, x1: 100, y1: 200 })
  })
})

describe('old garment left', () => {
  // A 40×60 photo: light grey background, a skin-coloured head and arms, a red top (x 12–27,
  // y 12–35) and blue trousers below it.
  const rgbImg = (f: (x: number, y: number) => readonly [number, number, number]): Uint8Array => {
    const a = new Uint8Array(W * H * 3)
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) a.set(f(x, y), (y * W + x) * 3)
    return a
  }
  const SKIN = [224, 172, 140] as const
  const photo = (top: readonly [number, number, number]) =>
    rgbImg((x, y) => {
      if (y < 12 && x >= 16 && x < 24 && y >= 3) return SKIN
      if (y >= 12 && y < 36 && x >= 12 && x < 28) return top
      if (y >= 12 && y < 34 && ((x >= 8 && x < 12) || (x >= 28 && x < 32))) return SKIN
      if (y >= 36 && y < 58 && x >= 13 && x < 27) return [40, 60, 160]
      return [235, 235, 235]
    })
  const before = photo([200, 30, 40])
  const boxes = { upper: [0.2, 0.2, 0.8, 0.6], lower: [0.3, 0.6, 0.7, 1] } as const

  it('finds the old top inside the upper box: not the skin, the background or the trousers', () => {
    const m = oldGarmentMask(before, W, H, 'upper', boxes)!
    // The upper box is x 8–32, y 12–36: the red top is 16 × 24 = 384 pixels of it.
    expect(m.reduce((s, v) => s + v, 0)).toBe(16 * 24)
    expect(m[20 * W + 10]).toBe(0) // an arm
    expect(m[20 * W + 20]).toBe(1) // the top
  })

  it('is 1 for the photo unchanged, 0 when the top is replaced, the share in between', () => {
    expect(oldGarmentLeft(before, before, W, H, 'upper', boxes)).toBe(1)
    expect(oldGarmentLeft(before, photo([20, 120, 60]), W, H, 'upper', boxes)).toBe(0)
    // A new top drawn narrower: the old one's outer 4 columns on each side stay.
    const narrow = rgbImg((x, y) => {
      const j = (y * W + x) * 3
      const inNew = y >= 12 && y < 36 && x >= 16 && x < 24
      return inNew ? [20, 120, 60] : [before[j]!, before[j + 1]!, before[j + 2]!]
    })
    expect(oldGarmentLeft(before, narrow, W, H, 'upper', boxes)).toBeCloseTo(8 / 16, 6)
    // The trousers are the old garment of a lower garment.
    expect(oldGarmentLeft(before, narrow, W, H, 'lower', boxes)).toBe(1)
  })

  it('is null where no old garment is found (a bare torso)', () => {
    const bare = photo(SKIN)
    expect(oldGarmentLeft(bare, bare, W, H, 'upper', boxes)).toBeNull()
  })
})

describe('evaluation set', () => {
  it('lower garments and dresses go only on persons whose labelled boxes show the legs', async () => {
    const set = await loadEvalSet()
    const legs = set.persons.filter(showsLegs).map((p) => p.id)
    expect(legs).toEqual(
      expect.arrayContaining([
        'tryon/person_06',
        'tryon/person_09',
        'tryon/person_11',
        'tryon/person_13',
        'tryon/person_15',
        'tryon/person_16',
        'dev/person_02',
        'dev/person_03',
      ]),
    )
    expect(legs).not.toContain('tryon/person_07')
    for (const pair of set.pairs) expect(compatible(pair.person, pair.garment)).toBe(true)
    const uppers = set.garments.filter((g) => g.category === 'upper')
    for (const p of set.persons) {
      for (const g of uppers) {
        expect(
          set.pairs.some(
            (q) => q.person.id === p.id && q.garment.id === g.id && q.person.set === g.set,
          ) || p.set !== g.set,
        ).toBe(true)
      }
    }
    expect(
      set.pairs
        .filter((p) => p.paired)
        .map((p) => p.id)
        .sort(),
    ).toEqual([
      'dev/person_01 × dev/garment_upper_01',
      ...[1, 2, 3, 4, 5].map((i) => `tryon/person_0${i} × tryon/garment_upper_0${i}`),
    ])
    const splits = new Set(set.pairs.map((p) => p.split))
    expect([...splits].sort()).toEqual(['dev', 'holdout', 'mixed', 'tune'])
    expect(set.pairs.find((p) => p.id === 'tryon/person_01 × tryon/garment_upper_01')?.split).toBe(
      'tune',
    )
    expect(set.pairs.find((p) => p.id === 'tryon/person_03 × tryon/garment_upper_03')?.split).toBe(
      'mixed',
    )
    expect(set.pairs.find((p) => p.id === 'tryon/person_04 × tryon/garment_upper_04')?.split).toBe(
      'holdout',
    )
  })
})
