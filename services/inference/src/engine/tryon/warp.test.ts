/**
 * The garment-warping graph (models/dist tryon-warp, real onnxruntime on CPU) on tiny synthetic
 * garments whose expected output can be computed by hand.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadModelSpec } from '../manifest.ts'
import { ModelSession } from '../session.ts'
import type { WarpPart } from './fit.ts'
import { plane } from './raster.ts'
import { decontaminate, warpParts } from './warp.ts'

const MODELS = resolve(fileURLToPath(new URL('../../../../../models/dist', import.meta.url)))
let session: ModelSession

beforeAll(async () => {
  session = await ModelSession.open(await loadModelSpec(MODELS, 'tryon-warp'))
})
afterAll(async () => {
  await session?.release()
})

/** A 32×24 garment: red = x·8, green = y·10, blue 50; mask on everywhere. */
const W = 32
const H = 24
const garment = () => {
  const data = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) data.set([x * 8, y * 10, 50], (y * W + x) * 3)
  }
  return { width: W, height: H, data }
}
const fullMask = () => plane(W, H, 1)
const corners = (dx: number, dy: number, k = 1) =>
  [
    { x: 0, y: 0 },
    { x: W - 1, y: 0 },
    { x: 0, y: H - 1 },
    { x: W - 1, y: H - 1 },
    { x: 10, y: 7 },
  ].map((p) => ({ x: p.x * k + dx, y: p.y * k + dy }))

describe('tryon-warp graph', () => {
  it('identity: output = garment (premultiplied), same size', async () => {
    const part: WarpPart = {
      name: 'torso',
      mask: fullMask(),
      targets: corners(0, 0),
      sources: corners(0, 0),
      layer: 'body',
    }
    const [w] = await warpParts(session, garment(), [part], { width: W, height: H })
    expect(w).toBeDefined()
    const n = w!.width * w!.height
    expect([w!.x0, w!.y0, w!.width, w!.height]).toEqual([0, 0, W, H])
    let maxErr = 0
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const j = y * W + x
        maxErr = Math.max(
          maxErr,
          Math.abs(w!.rgba[j]! * 255 - x * 8),
          Math.abs(w!.rgba[n + j]! * 255 - y * 10),
          Math.abs(w!.rgba[3 * n + j]! - 1),
        )
      }
    }
    expect(maxErr).toBeLessThan(0.6) // in 0..255 units (alpha error in 0..1 is far below)
  })

  it('translation by (+20, +10) into a larger canvas: pixels move, outside is transparent', async () => {
    const part: WarpPart = {
      name: 'torso',
      mask: fullMask(),
      targets: corners(20, 10),
      sources: corners(0, 0),
      layer: 'body',
    }
    const [w] = await warpParts(session, garment(), [part], { width: 80, height: 60 })
    const at = (x: number, y: number, c: number) =>
      w!.rgba[c * w!.width * w!.height + (y - w!.y0) * w!.width + (x - w!.x0)]!
    // Garment pixel (5, 4) lands on (25, 14).
    expect(at(25, 14, 0) * 255).toBeCloseTo(40, 0)
    expect(at(25, 14, 1) * 255).toBeCloseTo(40, 0)
    expect(at(25, 14, 3)).toBeCloseTo(1, 3)
    // Well outside the moved garment: alpha 0.
    expect(w!.x0 + w!.width - 1).toBeGreaterThanOrEqual(51)
    if (w!.x0 <= 10 && w!.y0 <= 5) expect(at(10, 5, 3)).toBe(0)
  })

  it('scale ×2: the box covers the scaled garment and samples it bilinearly', async () => {
    const part: WarpPart = {
      name: 'torso',
      mask: fullMask(),
      targets: corners(0, 0, 2),
      sources: corners(0, 0),
      layer: 'body',
    }
    const [w] = await warpParts(session, garment(), [part], { width: 70, height: 50 })
    const at = (x: number, y: number, c: number) =>
      w!.rgba[c * w!.width * w!.height + (y - w!.y0) * w!.width + (x - w!.x0)]!
    // Output (21, 9) samples garment (10.5, 4.5): red 84, green 45.
    expect(at(21, 9, 0) * 255).toBeCloseTo(84, 0)
    expect(at(21, 9, 1) * 255).toBeCloseTo(45, 0)
  })
})

describe('decontaminate: the outline band takes the colours just inside it', () => {
  it('a white rim (the photo background mixed in at a soft edge) becomes the garment colour; inside and outside stay', () => {
    const w = 20
    const h = 20
    const data = new Uint8Array(w * h * 3).fill(255)
    const mask = plane(w, h)
    for (let y = 4; y < 16; y++) {
      for (let x = 4; x < 16; x++) {
        const rim = x === 4 || y === 4 || x === 15 || y === 15
        mask.data[y * w + x] = rim ? 0.5 : 1
        // Navy inside; the rim is half background (white).
        data.set(rim ? [140, 140, 190] : [20, 30, 120], (y * w + x) * 3)
      }
    }
    const part: WarpPart = { name: 'torso', mask, targets: [], sources: [], layer: 'body' }
    const out = decontaminate({ width: w, height: h, data }, [part])
    for (const [x, y] of [
      [4, 4],
      [4, 10],
      [15, 10],
      [10, 15],
      [6, 6],
    ] as const) {
      expect(Array.from(out.subarray((y * w + x) * 3, (y * w + x) * 3 + 3))).toEqual([20, 30, 120])
    }
    // Deep inside unchanged, outside the garment unchanged.
    expect(Array.from(out.subarray((10 * w + 10) * 3, (10 * w + 10) * 3 + 3))).toEqual([
      20, 30, 120,
    ])
    expect(Array.from(out.subarray(0, 3))).toEqual([255, 255, 255])
  })
})
