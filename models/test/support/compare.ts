/** Element-wise comparison of a reference tensor with a candidate, for the golden tests. */
import type { TensorData } from '../../src/reference/tfjs-runner.ts'

export interface DiffStats {
  maxAbs: number
  meanAbs: number
  /** Largest |reference| value, to read maxAbs against. */
  maxRef: number
  /** Flat index of the largest error, with both values there. */
  at: number
  ref: number
  got: number
  /** Elements where only one side is NaN, or the sizes differ (counted as infinite error). */
  bad: number
  /** max over elements of |Δ| − rel·|ref| (equals maxAbs when rel is 0): compare with the absolute bound. */
  maxExcess: number
  /** Flat index where maxExcess is reached. */
  excessAt: number
  /** Elements with |Δ| > abs + rel·|ref|. */
  over: number
}

/** Bound |Δ| ≤ abs + rel·|ref| element-wise (numpy allclose); see maxExcess and over. */
export function diffStats(
  reference: TensorData,
  candidate: TensorData,
  bound: { abs: number; rel: number } = { abs: 0, rel: 0 },
): DiffStats {
  const { abs, rel } = bound
  const a = reference.data
  const b = candidate.data
  const shapeOk = reference.dims.join('x') === candidate.dims.join('x') && a.length === b.length
  if (!shapeOk) {
    return {
      maxAbs: Infinity,
      meanAbs: Infinity,
      maxRef: NaN,
      at: -1,
      ref: NaN,
      got: NaN,
      bad: Math.max(a.length, b.length),
      maxExcess: Infinity,
      excessAt: -1,
      over: Math.max(a.length, b.length),
    }
  }
  let maxAbs = 0
  let sum = 0
  let maxRef = 0
  let at = 0
  let bad = 0
  let maxExcess = -Infinity
  let excessAt = 0
  let over = 0
  for (let i = 0; i < a.length; i++) {
    const r = a[i]!
    const g = b[i]!
    if (Number.isNaN(r) || Number.isNaN(g)) {
      if (Number.isNaN(r) !== Number.isNaN(g)) {
        bad++
      }
      continue
    }
    const d = Math.abs(r - g)
    sum += d
    if (d > maxAbs) {
      maxAbs = d
      at = i
    }
    const m = Math.abs(r)
    if (m > maxRef) {
      maxRef = m
    }
    const excess = d - rel * m
    if (excess > abs) {
      over++
    }
    if (excess > maxExcess) {
      maxExcess = excess
      excessAt = i
    }
  }
  return {
    maxAbs: bad > 0 ? Infinity : maxAbs,
    meanAbs: sum / a.length,
    maxRef,
    at,
    ref: a[at] ?? NaN,
    got: b[at] ?? NaN,
    bad,
    maxExcess: bad > 0 ? Infinity : Math.max(maxExcess, 0),
    excessAt,
    over: over + bad,
  }
}

export const fmt = (x: number): string => (Number.isFinite(x) ? x.toExponential(2) : String(x))
