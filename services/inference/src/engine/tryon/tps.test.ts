import { describe, expect, it } from 'vitest'
import { evalTps, fitTps } from './tps.ts'

describe('fitTps', () => {
  it('reproduces an affine map exactly (zero bending weights)', () => {
    const targets = [
      { x: 0, y: 0 },
      { x: 1, y: 0 },
      { x: 0, y: 1 },
      { x: 1, y: 1 },
      { x: 0.3, y: 0.6 },
    ]
    const f = (p: { x: number; y: number }) => ({
      x: 2 * p.x - 0.5 * p.y + 0.1,
      y: 0.25 * p.x + 1.5 * p.y - 0.2,
    })
    const c = fitTps(targets, targets.map(f))
    for (let i = 0; i < targets.length; i++) {
      expect(Math.abs(c[i * 2]!)).toBeLessThan(1e-9)
      expect(Math.abs(c[i * 2 + 1]!)).toBeLessThan(1e-9)
    }
    const q = evalTps(c, targets, { x: 0.7, y: 0.2 })
    expect(q.x).toBeCloseTo(f({ x: 0.7, y: 0.2 }).x, 9)
    expect(q.y).toBeCloseTo(f({ x: 0.7, y: 0.2 }).y, 9)
  })

  it('interpolates its control points', () => {
    const targets = [
      { x: 0, y: 0 },
      { x: 1, y: 0 },
      { x: 0, y: 1 },
      { x: 1, y: 1 },
      { x: 0.5, y: 0.5 },
    ]
    const sources = [
      { x: 0, y: 0 },
      { x: 1, y: 0.1 },
      { x: -0.1, y: 1 },
      { x: 1, y: 1 },
      { x: 0.6, y: 0.4 },
    ]
    const c = fitTps(targets, sources)
    targets.forEach((t, i) => {
      const q = evalTps(c, targets, t)
      expect(q.x).toBeCloseTo(sources[i]!.x, 9)
      expect(q.y).toBeCloseTo(sources[i]!.y, 9)
    })
  })

  it('refuses too few or degenerate points', () => {
    expect(() =>
      fitTps(
        [
          { x: 0, y: 0 },
          { x: 1, y: 1 },
        ],
        [
          { x: 0, y: 0 },
          { x: 1, y: 1 },
        ],
      ),
    ).toThrow(/≥ 3/)
    const line = [
      { x: 0, y: 0 },
      { x: 1, y: 1 },
      { x: 2, y: 2 },
    ]
    expect(() => fitTps(line, line)).toThrow(/degenerate/)
  })
})
