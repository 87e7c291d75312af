/** fit.ts helpers on points checked by hand. */
import { describe, expect, it } from 'vitest'
import { segmentsCross } from './fit.ts'

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
