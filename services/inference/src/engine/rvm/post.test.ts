import { describe, expect, it } from 'vitest'
import { compositeOnColor, compositeRgba, parseBackground } from './post.ts'

describe('parseBackground', () => {
  it('parses #rgb, #rrggbb and transparent', () => {
    expect(parseBackground('#0f8')).toEqual({ kind: 'color', rgb: [0, 255, 136] })
    expect(parseBackground('#1A2b3C')).toEqual({ kind: 'color', rgb: [26, 43, 60] })
    expect(parseBackground('transparent')).toEqual({ kind: 'transparent' })
  })
  it('refuses anything else', () => {
    for (const s of ['', '#12', '#1234', 'red', '000000', '#ggg', 'Transparent']) {
      expect(() => parseBackground(s), s).toThrow(RangeError)
    }
  })
})

// Three pixels: background (alpha 0), soft edge (alpha 0.5), person (alpha 1).
const src = Uint8Array.of(200, 200, 200, 100, 100, 100, 10, 20, 30)
// fgr is planar: R of the three pixels, then G, then B — pixel colours (0,0,0), (0.2,0.4,0.6), (0.5,0.5,0.5).
const fgr = Float32Array.of(0, 0.2, 0.5, 0, 0.4, 0.5, 0, 0.6, 0.5)
const pha = Float32Array.of(0, 0.5, 1)

describe('compositeOnColor', () => {
  it('uses the colour on background, the network foreground at soft edges, the source inside', () => {
    const out = new Uint8Array(9)
    compositeOnColor(src, fgr, pha, [0, 0, 255], out)
    // edge: 0.5·fgr·255 + 0.5·bg = (25.5, 51, 76.5 + 127.5)
    expect(Array.from(out)).toEqual([0, 0, 255, 26, 51, 204, 10, 20, 30])
  })
  it('works in place and fades from fgr to the source above alpha 0.9', () => {
    const s = Uint8Array.of(100, 100, 100)
    compositeOnColor(s, Float32Array.of(0, 0, 0), Float32Array.of(0.96), [0, 0, 0], s)
    // t = 0.6 → colour 60, times alpha 0.96 → 57.6
    expect(Array.from(s)).toEqual([58, 58, 58])
  })
  it('snaps alpha within 0.01 of 0 or 1', () => {
    const out = new Uint8Array(6)
    compositeOnColor(
      Uint8Array.of(9, 9, 9, 9, 9, 9),
      new Float32Array(6),
      Float32Array.of(0.005, 0.995),
      [7, 7, 7],
      out,
    )
    expect(Array.from(out)).toEqual([7, 7, 7, 9, 9, 9])
  })
  it('refuses a size mismatch', () => {
    expect(() => compositeOnColor(src, fgr, pha, [0, 0, 0], new Uint8Array(3))).toThrow(RangeError)
  })
})

describe('compositeRgba', () => {
  it('keeps straight alpha with the same colour rule', () => {
    const out = new Uint8Array(12)
    compositeRgba(src, fgr, pha, 3, out)
    // pixel 0 (alpha 0) is beside the visible edge pixel: the foreground's colour, as at the edge
    expect(Array.from(out)).toEqual([0, 0, 0, 0, 51, 102, 153, 128, 10, 20, 30, 255])
  })
  it('gives a transparent pixel with no visible pixel within one the source colour', () => {
    // 4×2; alpha: row 0 [0, 0, 0, 0.5], row 1 [0, 0, 0.005, 0]. Visible: only pixel 3.
    const n = 8
    const s = Uint8Array.from({ length: n * 3 }, (_, i) => 100 + i)
    const f = new Float32Array(n * 3).fill(0.2) // 51
    const a = Float32Array.of(0, 0, 0, 0.5, 0, 0, 0.005, 0)
    const out = new Uint8Array(n * 4)
    compositeRgba(s, f, a, 4, out)
    const px = (i: number): number[] => Array.from(out.subarray(i * 4, i * 4 + 4))
    const source = (i: number): number[] => [...s.subarray(i * 3, i * 3 + 3), 0]
    // beside pixel 3 (also diagonally): the foreground; further: the source, alpha 0 everywhere
    for (const i of [2, 6, 7]) expect(px(i), `pixel ${i}`).toEqual([51, 51, 51, 0])
    for (const i of [0, 1, 4, 5]) expect(px(i), `pixel ${i}`).toEqual(source(i))
    expect(px(3)).toEqual([51, 51, 51, 128])
  })
  it('refuses a width that does not divide the frame', () => {
    expect(() => compositeRgba(src, fgr, pha, 2, new Uint8Array(12))).toThrow(RangeError)
  })
})
