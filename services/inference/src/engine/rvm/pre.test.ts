import { describe, expect, it } from 'vitest'
import { chooseDownsampleRatio, rgb24ToPlanar } from './pre.ts'

describe('chooseDownsampleRatio', () => {
  it('aims the long side at 384 px', () => {
    expect(chooseDownsampleRatio(1280, 720)).toBe(0.3)
    expect(chooseDownsampleRatio(480, 908)).toBe(0.423) // 384 / 908 = 0.4229…
    expect(chooseDownsampleRatio(3840, 2160)).toBe(0.1)
  })
  it('never upsamples small frames', () => {
    expect(chooseDownsampleRatio(320, 180)).toBe(1)
    expect(chooseDownsampleRatio(64, 64)).toBe(1)
  })
  it('honours another target', () => {
    expect(chooseDownsampleRatio(1024, 512, 512)).toBe(0.5)
  })
})

describe('rgb24ToPlanar', () => {
  it('scales bytes to 0..1 and splits them into R, G and B planes', () => {
    const dst = new Float32Array(6)
    // two pixels: (0, 255, 51) and (102, 204, 1)
    rgb24ToPlanar(Uint8Array.of(0, 255, 51, 102, 204, 1), dst)
    expect(Array.from(dst)).toEqual([0, 0.4, 1, 0.8, 0.2, 1 / 255].map((v) => Math.fround(v)))
  })
  it('refuses a size mismatch', () => {
    expect(() => rgb24ToPlanar(new Uint8Array(3), new Float32Array(6))).toThrow(RangeError)
  })
})
