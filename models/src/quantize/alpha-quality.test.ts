import { describe, expect, it } from 'vitest'
import { AlphaComparison } from './alpha-quality.ts'
import { uint8Params } from './quantize-qdq.ts'

describe('AlphaComparison', () => {
  it('computes mean |Δα|, the share within 0.03 and the temporal figures by hand', () => {
    const c = new AlphaComparison()
    c.add(Float32Array.of(0, 1, 0.5, 0.5), Float32Array.of(0, 1, 0.5, 0.6)) // one pixel off by 0.1
    c.add(Float32Array.of(0, 1, 0.7, 0.5), Float32Array.of(0.02, 1, 0.7, 0.5)) // one pixel off by 0.02
    const q = c.result()
    expect(q.frames).toBe(2)
    expect(q.meanAbs).toBeCloseTo((0.1 + 0.02) / 8, 6)
    expect(q.withinShare).toBeCloseTo(7 / 8, 6)
    expect(q.worstFrameWithinShare).toBeCloseTo(3 / 4, 6)
    // reference moves 0.2 on one pixel; the variant moves 0.02, 0.2 and -0.1 on three
    expect(q.temporalRef).toBeCloseTo(0.2 / 4, 6)
    expect(q.temporalVariant).toBeCloseTo((0.02 + 0.2 + 0.1) / 4, 6)
    expect(q.temporalDiff).toBeCloseTo((0.02 + 0 + 0.1) / 4, 6)
    expect(q.pass).toBe(false) // 87.5 % within 0.03
  })
  it('passes identical sequences', () => {
    const c = new AlphaComparison()
    const a = Float32Array.of(0.1, 0.9)
    c.add(a, a)
    expect(c.result()).toMatchObject({ meanAbs: 0, withinShare: 1, pass: true })
  })
})

describe('uint8Params', () => {
  it('covers the range and zero, and maps 0 exactly', () => {
    expect(uint8Params([0, 6])).toEqual({ scale: Math.fround(6 / 255), zeroPoint: 0 })
    const p = uint8Params([-1, 3])
    expect(p.scale).toBeCloseTo(4 / 255, 7)
    expect(p.zeroPoint).toBe(64) // round(1 / (4/255)) = round(63.75)
    expect(uint8Params([2, 5]).zeroPoint).toBe(0) // range widened to include 0
  })
})
