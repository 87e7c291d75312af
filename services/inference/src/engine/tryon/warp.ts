/**
 * The warp stage: runs the garment-warping graph (models/src/warp/build-warp-model.ts) for each
 * part.
 *
 * Contract — in: the garment photo (RGB + mask, garment pixels), the parts with their control
 * points (fit.ts), the output size. Out: per part, a premultiplied RGBA plane set (R, G, B, A
 * planes, 0..1) over the part's box of the person photo.
 */
import type { ModelSession } from '../session.ts'
import type { WarpPart } from './fit.ts'
import type { Plane, Point, Rgb } from './raster.ts'
import { evalTps, fitTps } from './tps.ts'

/** Spline lattice step in output pixels (the graph upsamples the lattice bilinearly). */
export const LATTICE_STEP_PX = 8
/** Regularisation of the spline fit (in the normalised space): avoids folds from near-duplicate points. */
const TPS_SMOOTHING = 1e-4

export interface WarpedPart {
  part: WarpPart
  /** The output box this part was rendered into (person pixels, inclusive-exclusive). */
  x0: number
  y0: number
  width: number
  height: number
  /** Premultiplied RGBA planes of the box, 4·width·height. */
  rgba: Float32Array
}

const linspace = (a: number, b: number, n: number): Float32Array => {
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = n === 1 ? a : a + ((b - a) * i) / (n - 1)
  return out
}

/**
 * Runs the graph once per part, each on the part's own box of the output: the box is found by
 * evaluating the part's spline on a coarse lattice over the whole photo (cheap, in JS) and keeping
 * the cells that sample inside the part's mask on the garment. GridSample then only touches the
 * pixels the part can cover (a few hundred thousand rather than P × the photo).
 */
export async function warpParts(
  session: ModelSession,
  garment: Rgb,
  parts: readonly WarpPart[],
  size: { width: number; height: number },
): Promise<WarpedPart[]> {
  const { width: gw, height: gh } = garment
  const { width: W, height: H } = size
  const S = Math.max(W, H)
  const gN = gw * gh
  const out: WarpedPart[] = []
  for (const part of parts) {
    const m: Plane = part.mask
    // Garment-side bbox of the part, normalised.
    let gx0 = gw
    let gy0 = gh
    let gx1 = -1
    let gy1 = -1
    for (let y = 0; y < gh; y++) {
      for (let x = 0; x < gw; x++) {
        if (m.data[y * gw + x]! > 0.01) {
          if (x < gx0) gx0 = x
          if (x > gx1) gx1 = x
          if (y < gy0) gy0 = y
          if (y > gy1) gy1 = y
        }
      }
    }
    if (gx1 < 0) continue
    const tgt: Point[] = part.targets.map((q) => ({ x: q.x / S, y: q.y / S }))
    const src: Point[] = part.sources.map((q) => ({ x: (2 * q.x + 1) / gw - 1, y: (2 * q.y + 1) / gh - 1 }))
    const c = fitTps(tgt, src, TPS_SMOOTHING)
    const nx0 = (2 * gx0 + 1) / gw - 1 - 2 / gw
    const nx1 = (2 * gx1 + 1) / gw - 1 + 2 / gw
    const ny0 = (2 * gy0 + 1) / gh - 1 - 2 / gh
    const ny1 = (2 * gy1 + 1) / gh - 1 + 2 / gh
    let bx0 = W
    let by0 = H
    let bx1 = -1
    let by1 = -1
    for (let y = 0; y < H + LATTICE_STEP_PX; y += LATTICE_STEP_PX) {
      for (let x = 0; x < W + LATTICE_STEP_PX; x += LATTICE_STEP_PX) {
        const q = evalTps(c, tgt, { x: Math.min(x, W - 1) / S, y: Math.min(y, H - 1) / S })
        if (q.x >= nx0 && q.x <= nx1 && q.y >= ny0 && q.y <= ny1) {
          if (x < bx0) bx0 = x
          if (x > bx1) bx1 = x
          if (y < by0) by0 = y
          if (y > by1) by1 = y
        }
      }
    }
    if (bx1 < 0) continue
    bx0 = Math.max(0, bx0 - 2 * LATTICE_STEP_PX)
    by0 = Math.max(0, by0 - 2 * LATTICE_STEP_PX)
    bx1 = Math.min(W - 1, bx1 + 2 * LATTICE_STEP_PX)
    by1 = Math.min(H - 1, by1 + 2 * LATTICE_STEP_PX)
    const bw = bx1 - bx0 + 1
    const bh = by1 - by0 + 1

    const tex = new Float32Array(4 * gN)
    for (let i = 0; i < gN; i++) {
      const a = m.data[i]!
      if (a <= 0) continue
      tex[i] = (garment.data[i * 3]! / 255) * a
      tex[gN + i] = (garment.data[i * 3 + 1]! / 255) * a
      tex[2 * gN + i] = (garment.data[i * 3 + 2]! / 255) * a
      tex[3 * gN + i] = a
    }
    const k = tgt.length
    const points = new Float32Array(k * 2)
    tgt.forEach((q, i) => {
      points[i * 2] = q.x
      points[i * 2 + 1] = q.y
    })
    const wc = Math.max(2, Math.ceil((bw - 1) / LATTICE_STEP_PX) + 1)
    const hc = Math.max(2, Math.ceil((bh - 1) / LATTICE_STEP_PX) + 1)
    const r = await session.run(
      {
        garment: { data: tex, dims: [1, 4, gh, gw] },
        points: { data: points, dims: [1, k, 2] },
        coef: { data: Float32Array.from(c), dims: [1, k + 3, 2] },
        grid_x: { data: linspace(bx0 / S, bx1 / S, wc), dims: [wc] },
        grid_y: { data: linspace(by0 / S, by1 / S, hc), dims: [hc] },
        out_x: { data: new Float32Array(bw), dims: [bw] },
        out_y: { data: new Float32Array(bh), dims: [bh] },
      },
      ['warped'],
    )
    out.push({ part, x0: bx0, y0: by0, width: bw, height: bh, rgba: r.warped!.data })
  }
  return out
}
