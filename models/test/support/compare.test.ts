import { describe, expect, it } from 'vitest'
import { diffStats } from './compare.ts'

const t = (...xs: number[]) => ({ data: Float32Array.from(xs), dims: [xs.length] })

describe('diffStats', () => {
  it('finds the largest and mean absolute error', () => {
    const d = diffStats(t(1, 2, 3, 4), t(1, 2.5, 3, 3))
    expect(d.maxAbs).toBeCloseTo(1)
    expect(d.meanAbs).toBeCloseTo(0.375)
    expect(d.at).toBe(3)
    expect(d.maxRef).toBe(4)
  })
  it('applies abs + rel·|ref| element-wise and counts elements over it', () => {
    const d = diffStats(t(1000, 0.1), t(1000.5, 0.1005), { abs: 1e-3, rel: 1e-3 })
    expect(d.maxExcess).toBeCloseTo(0.0005 - 0.0001, 6) // worst |Δ| − rel·|ref|: under abs, so within
    expect(d.over).toBe(0)
    const e = diffStats(t(1000, 0.1), t(1000.5, 0.103), { abs: 1e-3, rel: 1e-3 })
    expect(e.over).toBe(1)
    expect(e.excessAt).toBe(1)
    expect(e.maxExcess).toBeCloseTo(0.003 - 0.0001, 6)
  })
  it('treats one-sided NaN and shape mismatch as infinite error', () => {
    expect(diffStats(t(1, NaN), t(1, 2)).maxAbs).toBe(Infinity)
    expect(diffStats(t(NaN), t(NaN)).maxAbs).toBe(0)
    expect(diffStats(t(1, 2), t(1, 2, 3)).maxAbs).toBe(Infinity)
  })
})
