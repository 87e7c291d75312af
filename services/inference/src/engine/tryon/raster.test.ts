import { describe, expect, it } from 'vitest'
import { upsample, upsampleBox, upsampleSparse } from './clothing.ts'
import { boxBlur, median, resizePlane, sample, type Plane } from './raster.ts'

/** Deterministic pseudo-random values in [0, 1). */
function values(n: number, seed: number): Float32Array {
  let s = seed >>> 0
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    out[i] = s / 2 ** 32
  }
  return out
}

/** The first index where two arrays differ (-1: none; lengths must match). */
function firstDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i
  return -1
}

/** The textbook box blur: every window summed afresh, edges clamped. */
function naiveBlur(p: Plane, r: number): Float32Array {
  const { width: w, height: h } = p
  const ri = Math.round(r)
  const tmp = new Float64Array(w * h)
  const out = new Float32Array(w * h)
  const at = (v: number, n: number) => Math.min(n - 1, Math.max(0, v))
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0
      for (let k = -ri; k <= ri; k++) s += p.data[y * w + at(x + k, w)]!
      tmp[y * w + x] = s / (2 * ri + 1)
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0
      for (let k = -ri; k <= ri; k++) s += tmp[at(y + k, h) * w + x]!
      out[y * w + x] = s / (2 * ri + 1)
    }
  }
  return out
}

describe('raster helpers', () => {
  it('boxBlur is the clamped-edge box average of every window, for radii past the plane', () => {
    for (const [w, h] of [
      [1, 1],
      [1, 9],
      [9, 1],
      [23, 17],
    ] as const) {
      const p = { width: w, height: h, data: values(w * h, w * 31 + h) }
      for (const r of [1, 2, 5, 30]) {
        const got = boxBlur(p, r).data
        const want = naiveBlur(p, r)
        for (let i = 0; i < got.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5)
      }
    }
  })

  it('resizePlane samples each output pixel centre bilinearly (as `sample` does)', () => {
    const p = { width: 13, height: 7, data: values(13 * 7, 5) }
    for (const [w, h] of [
      [5, 3],
      [40, 21],
      [13, 7],
    ] as const) {
      const got = resizePlane(p, w, h)
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const want = sample(p, ((x + 0.5) * 13) / w - 0.5, ((y + 0.5) * 7) / h - 0.5)
          expect(got.data[y * w + x]).toBe(Math.fround(want))
        }
      }
    }
  })

  it('median is the middle value of a numeric sort (the upper one of an even count)', () => {
    for (let t = 0; t < 200; t++) {
      const n = 1 + (t % 37) * 5
      const v = Array.from(values(n, t + 1), (x, i) => (i % 3 === 0 ? Math.floor(x * 4) : x * 50))
      const sorted = [...v].sort((p, q) => p - q)
      expect(median(v)).toBe(sorted[n >> 1])
    }
    expect(median([3, 1, 2, 2])).toBe(2)
    expect(median([5])).toBe(5)
    expect(Number.isNaN(median([]))).toBe(true)
    // Only the first n values count, and the input stays as it was.
    const v = [9, 1, 5, 100, -100]
    expect(median(v, 3)).toBe(5)
    expect(v).toEqual([9, 1, 5, 100, -100])
  })

  it('upsampleBox gives exactly the values upsample gives inside the box', () => {
    const src = { width: 11, height: 8, data: values(11 * 8, 9).map((x) => 2 * x - 0.5) }
    for (const max of [1, Infinity]) {
      const full = upsample(src, 50, 37, max)
      const box = { x0: 7, y0: 3, width: 30, height: 20 }
      const part = upsampleBox(src, 50, 37, box, max)
      expect(part.width).toBe(30)
      expect(part.height).toBe(20)
      for (let y = 0; y < box.height; y++) {
        for (let x = 0; x < box.width; x++) {
          expect(part.data[y * box.width + x]).toBe(full.data[(box.y0 + y) * 50 + box.x0 + x])
        }
      }
    }
  })

  it('upsampleSparse gives exactly what upsample gives for a plane that is zero but for a patch', () => {
    for (const [sw, sh, W, H] of [
      [40, 30, 160, 120],
      [37, 29, 103, 211],
      [12, 9, 12, 9],
    ] as const) {
      for (const [u0, v0, u1, v1] of [
        [10, 8, 14, 12],
        [0, 0, 3, 2],
        [sw - 3, sh - 2, sw - 1, sh - 1],
        [5, 5, 5, 5],
      ] as const) {
        const src = { width: sw, height: sh, data: new Float32Array(sw * sh) }
        const noise = values(sw * sh, u0 + 7 * v1)
        for (let v = v0; v <= v1; v++) {
          for (let u = u0; u <= u1; u++) src.data[v * sw + u] = noise[v * sw + u]! * 1.5 - 0.2
        }
        expect(firstDiff(upsampleSparse(src, W, H).data, upsample(src, W, H).data)).toBe(-1)
        const inf = upsample(src, W, H, Infinity).data
        expect(firstDiff(upsampleSparse(src, W, H, Infinity).data, inf)).toBe(-1)
      }
    }
    const empty = { width: 4, height: 4, data: new Float32Array(16) }
    expect(upsampleSparse(empty, 9, 9).data).toEqual(new Float32Array(81))
  })
})
