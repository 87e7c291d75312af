/**
 * The warp stage: runs the garment-warping graph (models/src/warp/build-warp-model.ts) for each
 * part.
 *
 * Contract — in: the garment photo (RGB + mask, garment pixels), the parts with their control
 * points (fit.ts), the output size. Out: per part, a premultiplied RGBA plane set (R, G, B, A
 * planes, 0..1) over the part's box of the person photo. The garment's colours along its outline
 * (where the photo mixes in its background) are first replaced by those just inside it
 * (`decontaminate`), so no part carries a rim of the photo's background.
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
  const clean = decontaminate(garment, parts)
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
    const src: Point[] = part.sources.map((q) => ({
      x: (2 * q.x + 1) / gw - 1,
      y: (2 * q.y + 1) / gh - 1,
    }))
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
      tex[i] = (clean[i * 3]! / 255) * a
      tex[gN + i] = (clean[i * 3 + 1]! / 255) * a
      tex[2 * gN + i] = (clean[i * 3 + 2]! / 255) * a
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

/** Width (px of the garment photo) of the outline band whose colours are replaced. */
export const EDGE_BAND_PX = 3

/**
 * The garment photo's colours with the outline band (the EDGE_BAND_PX pixels inside the garment's
 * edge, where the photo mixes garment and background, and where the soft mask lets the background
 * through) replaced by the colours just inside it, grown outwards pass by pass (each band pixel the
 * mean of its already-known 8-neighbours). Without it every part's edge carries a rim of the
 * photo's background — a light line along the armholes, where a sleeve is drawn over the torso.
 */
export function decontaminate(garment: Rgb, parts: readonly WarpPart[]): Uint8Array {
  const { width: w, height: h, data } = garment
  const n = w * h
  const alpha = new Float32Array(n)
  for (const p of parts) for (let i = 0; i < n; i++) alpha[i] = Math.max(alpha[i]!, p.mask.data[i]!)
  // Known: solid garment pixels at least EDGE_BAND_PX from any pixel that is not solid.
  let known = new Uint8Array(n)
  for (let i = 0; i < n; i++) known[i] = alpha[i]! >= 0.99 ? 1 : 0
  for (let r = 0; r < EDGE_BAND_PX; r++) {
    const next = known.slice()
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = y * w + x
        if (known[i] === 0) continue
        // (The photo's own frame is no outline: a garment cut by it has no background mixed in.)
        if (
          (x > 0 && known[i - 1] === 0) ||
          (x < w - 1 && known[i + 1] === 0) ||
          (y > 0 && known[i - w] === 0) ||
          (y < h - 1 && known[i + w] === 0)
        ) {
          next[i] = 0
        }
      }
    }
    known = next
  }
  const out = Uint8Array.from(data)
  for (let pass = 0; pass < EDGE_BAND_PX + 2; pass++) {
    const add: number[] = []
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const i = y * w + x
        if (known[i] === 1 || alpha[i]! <= 0) continue
        let r = 0
        let g = 0
        let b = 0
        let c = 0
        for (let dy = -1; dy <= 1; dy++) {
          const yy = y + dy
          if (yy < 0 || yy >= h) continue
          for (let dx = -1; dx <= 1; dx++) {
            const xx = x + dx
            if (xx < 0 || xx >= w) continue
            const j = yy * w + xx
            if (known[j] === 0) continue
            r += out[j * 3]!
            g += out[j * 3 + 1]!
            b += out[j * 3 + 2]!
            c++
          }
        }
        if (c === 0) continue
        out[i * 3] = Math.round(r / c)
        out[i * 3 + 1] = Math.round(g / c)
        out[i * 3 + 2] = Math.round(b / c)
        add.push(i)
      }
    }
    for (const i of add) known[i] = 1
  }
  return out
}
