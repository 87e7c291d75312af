/**
 * Contact sheets for `pnpm eval:tryon`: an RGB canvas with images fitted into cells, box and mask
 * outlines and a small bitmap font for captions (no font library: the sheet is plain pixels).
 */
import { resizeRgb } from '../../src/media/image.ts'
import type { PixelRect } from './metrics.ts'

export type Colour = readonly [number, number, number]

export class Canvas {
  readonly rgb: Uint8Array
  constructor(
    readonly width: number,
    readonly height: number,
    fill: Colour = [32, 32, 32],
  ) {
    this.rgb = new Uint8Array(width * height * 3)
    for (let i = 0; i < width * height; i++) this.rgb.set(fill, i * 3)
  }

  set(x: number, y: number, c: Colour): void {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return
    this.rgb.set(c, (y * this.width + x) * 3)
  }

  rect(x0: number, y0: number, x1: number, y1: number, c: Colour, thick = 2): void {
    for (let t = 0; t < thick; t++) {
      for (let x = x0; x <= x1; x++) {
        this.set(x, y0 + t, c)
        this.set(x, y1 - t, c)
      }
      for (let y = y0; y <= y1; y++) {
        this.set(x0 + t, y, c)
        this.set(x1 - t, y, c)
      }
    }
  }

  /** Text in a 3×5 font at `scale` px per font pixel; unknown characters are blank. */
  text(x: number, y: number, s: string, c: Colour, scale = 2): void {
    for (const [k, ch] of [...s.toUpperCase()].entries()) {
      const g = FONT[ch]
      if (g === undefined) continue
      for (let i = 0; i < 15; i++) {
        if (g[i] !== '1') continue
        const gx = x + (k * 4 + (i % 3)) * scale
        const gy = y + Math.floor(i / 3) * scale
        for (let dy = 0; dy < scale; dy++) {
          for (let dx = 0; dx < scale; dx++) this.set(gx + dx, gy + dy, c)
        }
      }
    }
  }
}

/** Where an image of w×h was placed in a cell: offset and scale. */
export interface Placement {
  ox: number
  oy: number
  k: number
}

/** Fits an RGB image into the cell at (cx, cy), centred; returns where it went. */
export async function putImage(
  cv: Canvas,
  rgb: Uint8Array,
  w: number,
  h: number,
  cx: number,
  cy: number,
  cw: number,
  ch: number,
): Promise<Placement> {
  const k = Math.min(cw / w, ch / h)
  const sw = Math.max(1, Math.round(w * k))
  const sh = Math.max(1, Math.round(h * k))
  const small = await resizeRgb(rgb, w, h, { width: sw, height: sh })
  const ox = cx + ((cw - sw) >> 1)
  const oy = cy + ((ch - sh) >> 1)
  for (let y = 0; y < sh; y++) {
    cv.rgb.set(small.subarray(y * sw * 3, (y + 1) * sw * 3), ((oy + y) * cv.width + ox) * 3)
  }
  return { ox, oy, k }
}

export function drawRect(cv: Canvas, at: Placement, r: PixelRect, c: Colour): void {
  cv.rect(
    Math.round(at.ox + r.x0 * at.k),
    Math.round(at.oy + r.y0 * at.k),
    Math.round(at.ox + r.x1 * at.k) - 1,
    Math.round(at.oy + r.y1 * at.k) - 1,
    c,
    2,
  )
}

/** Outline of a 0/1 mask of a w×h image, drawn at the placement's scale. */
export function drawOutline(
  cv: Canvas,
  at: Placement,
  mask: Uint8Array,
  w: number,
  h: number,
  c: Colour,
): void {
  const sw = Math.round(w * at.k)
  const sh = Math.round(h * at.k)
  const at2 = (x: number, y: number) => {
    const sx = Math.min(w - 1, Math.floor(x / at.k))
    const sy = Math.min(h - 1, Math.floor(y / at.k))
    return mask[sy * w + sx]!
  }
  for (let y = 0; y < sh; y++) {
    for (let x = 0; x < sw; x++) {
      const v = at2(x, y)
      if (!v) continue
      if (
        x === 0 ||
        y === 0 ||
        x === sw - 1 ||
        y === sh - 1 ||
        !at2(x - 1, y) ||
        !at2(x + 1, y) ||
        !at2(x, y - 1) ||
        !at2(x, y + 1)
      ) {
        cv.set(at.ox + x, at.oy + y, c)
      }
    }
  }
}

const FONT: Record<string, string> = {
  '0': '111101101101111',
  '1': '010110010010111',
  '2': '111001111100111',
  '3': '111001111001111',
  '4': '101101111001001',
  '5': '111100111001111',
  '6': '111100111101111',
  '7': '111001001001001',
  '8': '111101111101111',
  '9': '111101111001111',
  A: '010101111101101',
  B: '110101110101110',
  C: '011100100100011',
  D: '110101101101110',
  E: '111100110100111',
  F: '111100110100100',
  G: '011100101101011',
  H: '101101111101101',
  I: '111010010010111',
  J: '001001001101010',
  K: '101101110101101',
  L: '100100100100111',
  M: '101111111101101',
  N: '110101101101101',
  O: '010101101101010',
  P: '110101110100100',
  Q: '010101101110011',
  R: '110101110101101',
  S: '011100010001110',
  T: '111010010010010',
  U: '101101101101111',
  V: '101101101101010',
  W: '101101111111101',
  X: '101101010101101',
  Y: '101101010010010',
  Z: '111001010100111',
  '.': '000000000000010',
  ':': '000010000010000',
  '-': '000000111000000',
  _: '000000000000111',
  '/': '001001010100100',
  '%': '101001010100101',
  '=': '000111000111000',
  '×': '000101010101000',
  '(': '010100100100010',
  ')': '010001001001010',
  '>': '100010001010100',
  '<': '001010100010001',
}
