/**
 * Thin-plate-spline fitting (the small linear solve the warp graph leaves to its caller, see
 * models/src/warp/build-warp-model.ts): finds f with f(c_k) ≈ s_k for target points c_k and source
 * points s_k, f(p) = a0 + ax·x + ay·y + Σ w_k U(|p − c_k|), U(r) = r² ln r².
 */
import type { Point } from './raster.ts'

const U = (r2: number): number => (r2 <= 0 ? 0 : r2 * Math.log(r2))

/**
 * Returns the coefficients as K + 3 rows of (x, y): w_0…w_{K−1}, a0, ax, ay. `smoothing` (λ ≥ 0)
 * relaxes exact interpolation (regularised TPS), which keeps near-coincident points from folding.
 */
export function fitTps(
  targets: readonly Point[],
  sources: readonly Point[],
  smoothing = 0,
): Float64Array {
  const k = targets.length
  if (k !== sources.length || k < 3) {
    throw new Error(`fitTps: need ≥ 3 matching points, got ${k}/${sources.length}`)
  }
  const n = k + 3
  // Augmented matrix [L | rhs_x rhs_y], row-major, n × (n + 2).
  const m = new Float64Array(n * (n + 2))
  const at = (r: number, c: number) => r * (n + 2) + c
  for (let i = 0; i < k; i++) {
    const ci = targets[i]!
    for (let j = 0; j < k; j++) {
      const cj = targets[j]!
      m[at(i, j)] = U((ci.x - cj.x) ** 2 + (ci.y - cj.y) ** 2) + (i === j ? smoothing : 0)
    }
    m[at(i, k)] = 1
    m[at(i, k + 1)] = ci.x
    m[at(i, k + 2)] = ci.y
    m[at(k, i)] = 1
    m[at(k + 1, i)] = ci.x
    m[at(k + 2, i)] = ci.y
    m[at(i, n)] = sources[i]!.x
    m[at(i, n + 1)] = sources[i]!.y
  }
  // Gaussian elimination with partial pivoting.
  for (let col = 0; col < n; col++) {
    let piv = col
    for (let r = col + 1; r < n; r++) {
      if (Math.abs(m[at(r, col)]!) > Math.abs(m[at(piv, col)]!)) piv = r
    }
    if (Math.abs(m[at(piv, col)]!) < 1e-12) {
      throw new Error('fitTps: degenerate control points (collinear or repeated)')
    }
    if (piv !== col) {
      for (let c = 0; c < n + 2; c++) {
        const t = m[at(col, c)]!
        m[at(col, c)] = m[at(piv, c)]!
        m[at(piv, c)] = t
      }
    }
    const d = m[at(col, col)]!
    for (let r = 0; r < n; r++) {
      if (r === col) continue
      const f = m[at(r, col)]! / d
      if (f === 0) continue
      for (let c = col; c < n + 2; c++) m[at(r, c)] = m[at(r, c)]! - f * m[at(col, c)]!
    }
  }
  const out = new Float64Array(n * 2)
  for (let r = 0; r < n; r++) {
    out[r * 2] = m[at(r, n)]! / m[at(r, r)]!
    out[r * 2 + 1] = m[at(r, n + 1)]! / m[at(r, r)]!
  }
  return out
}

/** Evaluates a fitted spline at p (the same formula the warp graph evaluates). */
export function evalTps(coef: Float64Array, targets: readonly Point[], p: Point): Point {
  const k = targets.length
  let x = coef[k * 2]! + coef[(k + 1) * 2]! * p.x + coef[(k + 2) * 2]! * p.y
  let y = coef[k * 2 + 1]! + coef[(k + 1) * 2 + 1]! * p.x + coef[(k + 2) * 2 + 1]! * p.y
  for (let i = 0; i < k; i++) {
    const u = U((p.x - targets[i]!.x) ** 2 + (p.y - targets[i]!.y) ** 2)
    x += coef[i * 2]! * u
    y += coef[i * 2 + 1]! * u
  }
  return { x, y }
}
