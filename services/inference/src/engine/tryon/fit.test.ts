/** fit.ts helpers on points checked by hand. */
import { describe, expect, it } from 'vitest'
import { CROP_ASPECT, HEM_OVERLAP, HEM_STRETCH, hemStretch, segmentsCross } from './fit.ts'
import type { TopLandmarks } from './garment-shape.ts'

describe('segmentsCross (thighs that cross are untangled in fitBottom)', () => {
  it('an X crosses, parallel or apart segments do not', () => {
    expect(segmentsCross({ x: 0, y: 0 }, { x: 10, y: 10 }, { x: 10, y: 0 }, { x: 0, y: 10 })).toBe(
      true,
    )
    // Two thighs hanging down side by side.
    expect(segmentsCross({ x: 0, y: 0 }, { x: 0, y: 10 }, { x: 5, y: 0 }, { x: 6, y: 10 })).toBe(
      false,
    )
    // A kicked leg going out to the side does not cross the standing one.
    expect(segmentsCross({ x: 5, y: 0 }, { x: 15, y: 4 }, { x: 0, y: 0 }, { x: -1, y: 10 })).toBe(
      false,
    )
    // Touching at an end point is not a crossing.
    expect(segmentsCross({ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 10 })).toBe(
      false,
    )
  })
})

/** A top on its photo: shoulder seams at y 0, armpits 50 px apart at y 20, hem at `hemY`. */
function top(hemY: number): TopLandmarks {
  return {
    kind: 'top',
    neck: { x: 50, y: -5 },
    shoulderL: { x: 30, y: 0 },
    shoulderR: { x: 70, y: 0 },
    armpitL: { x: 25, y: 20 },
    armpitR: { x: 75, y: 20 },
    waistL: { x: 27, y: (20 + hemY) / 2 },
    waistR: { x: 73, y: (20 + hemY) / 2 },
    hemL: { x: 25, y: hemY },
    hemR: { x: 75, y: hemY },
    sideL: () => 25,
    sideR: () => 75,
    sleeveL: null,
    sleeveR: null,
  }
}

describe('hemStretch (a top worn at its natural length)', () => {
  // Person: shoulder joints at y 110, hip joints at y 300, body axis straight down; the fit's
  // shoulder-seam centre at y 100, garment px drawn 2 × down the body, joint distance 100 px.
  const frame = {
    mp: { x: 100, y: 100 },
    d: { x: 0, y: 1 },
    sv: 2,
    sw: 100,
    psL: { x: 60, y: 110 },
    psR: { x: 140, y: 110 },
    phL: { x: 70, y: 300 },
    phR: { x: 130, y: 300 },
  }
  const stretch = (g: TopLandmarks, wornHemY: number | null) => {
    const f = frame
    return hemStretch(g, f.mp, f.d, f.sv, f.sw, f.psL, f.psR, f.phL, f.phR, wornHemY)
  }
  /** Where the hem lands below the seams' centre (px down the body). */
  const hemDepth = (g: TopLandmarks, r: { fromY: number; k: number } | null) =>
    r === null ? g.hemL.y * 2 : r.fromY * 2 + (g.hemL.y - r.fromY) * 2 * r.k

  it('a tee that ends above the hip joints is lengthened below its armpits to reach them', () => {
    // Hem at 80 on the photo: 160 px down, the hips lie 200 px down.
    const g = top(80)
    const r = stretch(g, null)
    expect(r).not.toBeNull()
    expect(r!.fromY).toBe(20)
    expect(hemDepth(g, r)).toBeCloseTo(200 + HEM_OVERLAP * 100, 6)
    // A tucked old top ended at the waistband, above the hip joints: the hem goes to it.
    expect(hemDepth(g, stretch(g, 280))).toBeCloseTo(180 + HEM_OVERLAP * 100, 6)
    // Never shortened: an old top that ended higher than this one does.
    expect(stretch(g, 250)).toBeNull()
  })

  it('follows a longer old top, at most HEM_STRETCH × its own length', () => {
    const g = top(80)
    // Old top to y 310 on the photo: 213 px wanted, 1.33 × 160; capped at 208.
    expect(hemDepth(g, stretch(g, 310))).toBeCloseTo(HEM_STRETCH * 160, 6)
    expect(hemDepth(g, stretch(g, 304))).toBeCloseTo(204 + 3, 6)
  })

  it('leaves a top that already reaches the target, and a crop top, as they are', () => {
    expect(stretch(top(120), 300)).toBeNull()
    // 40 px from the seams to the hem over a 50 px chest: a crop top.
    expect(40 / 50).toBeLessThan(CROP_ASPECT)
    expect(stretch(top(40), 300)).toBeNull()
    // A regular top's proportion.
    expect(70 / 50).toBeGreaterThan(CROP_ASPECT)
    expect(stretch(top(70), null)).not.toBeNull()
  })
})
