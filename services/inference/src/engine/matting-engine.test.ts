import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage, resizeRgb } from '../media/image.ts'
import { MEDIA_DIR, MODELS_DIR, requireModels } from '../media/video.test-support.ts'
import { openMattingEngine, RVM_MODEL_NAMES, RVM_REFINED_BY_PRECISION } from './matting-engine.ts'
import type { Background } from './rvm/post.ts'

const GREEN: Background = { kind: 'color', rgb: [0, 255, 0] }
const TRANSPARENT: Background = { kind: 'transparent' }

/** The alpha channel of straight RGBA bytes, as 0..1. */
function alphaOf(rgba: Uint8Array): Float32Array<ArrayBuffer> {
  const a = new Float32Array(rgba.length / 4)
  for (let i = 0; i < a.length; i++) a[i] = rgba[i * 4 + 3]! / 255
  return a
}

let engine: Awaited<ReturnType<typeof openMattingEngine>>

beforeAll(async () => {
  requireModels()
  engine = await openMattingEngine({ modelsDir: MODELS_DIR, executionProviders: ['cpu'] })
}, 120_000)
afterAll(async () => {
  await engine?.close()
})

describe('RVM matting engine', () => {
  it('picks the refined graph when it downsamples and the ratio-1 graph when it does not', () => {
    const big = engine.openStream({ width: 1280, height: 720 }, GREEN) as unknown as {
      model: string
      downsampleRatio: number
      dispose(): void
    }
    const small = engine.openStream({ width: 320, height: 180 }, TRANSPARENT) as unknown as {
      model: string
      downsampleRatio: number
      dispose(): void
    }
    expect(big.model).toBe(RVM_MODEL_NAMES.refined.rgb)
    expect(big.downsampleRatio).toBeLessThan(1)
    expect(small.model).toBe(RVM_MODEL_NAMES.ratio1.rgba)
    expect(small.downsampleRatio).toBe(1)
    big.dispose()
    small.dispose()
  })

  it('mattes a real person at ratio 1: torso opaque, background clear', async () => {
    const photo = await decodeImage(`${MEDIA_DIR}person_01.jpg`, { what: 'person image' })
    const size = { width: 192, height: 256 } // ≤ the network's target size: ratio 1
    const rgb = await resizeRgb(photo.rgb, photo.width, photo.height, size)
    const stream = engine.openStream(size, TRANSPARENT)
    let pha = new Float32Array(0)
    for (let i = 0; i < 3; i++) pha = alphaOf(await stream.next(rgb)) // recurrent state settles
    stream.dispose()
    const at = (x: number, y: number) =>
      pha[Math.round(y * size.height) * size.width + Math.round(x * size.width)]!
    expect(at(0.5, 0.55)).toBeGreaterThan(0.9) // chest
    expect(at(0.04, 0.04)).toBeLessThan(0.1) // top-left studio background
    expect(at(0.96, 0.04)).toBeLessThan(0.1) // top-right
  })

  it('with precision int8 runs rvm-int8-rgba for downsampled clips, within the quality bound of fp32', async () => {
    const int8 = await openMattingEngine({
      modelsDir: MODELS_DIR,
      executionProviders: ['cpu'],
      precision: 'int8',
    })
    try {
      const photo = await decodeImage(`${MEDIA_DIR}person_01.jpg`, { what: 'person image' })
      const size = { width: 540, height: 720 } // downsampled: the refined graph
      const rgb = await resizeRgb(photo.rgb, photo.width, photo.height, size)
      const a = engine.openStream(size, TRANSPARENT)
      const b = int8.openStream(size, TRANSPARENT) as unknown as typeof a & { model: string }
      expect(b.model).toBe(RVM_REFINED_BY_PRECISION.int8.rgba)
      const small = int8.openStream({ width: 320, height: 180 }, GREEN) as unknown as {
        model: string
        dispose(): void
      }
      expect(small.model).toBe(RVM_MODEL_NAMES.ratio1.rgb) // ratio-1 clips stay float32
      small.dispose()
      let pa = new Float32Array(0)
      let pb = new Float32Array(0)
      for (let i = 0; i < 3; i++) {
        pa = alphaOf(await a.next(rgb))
        pb = alphaOf(await b.next(rgb))
      }
      a.dispose()
      b.dispose()
      let sum = 0
      let within = 0
      for (let i = 0; i < pa.length; i++) {
        const d = Math.abs(pa[i]! - pb[i]!)
        sum += d
        if (d <= 0.03) within++
      }
      // issue 14's bound for a speed-up: mean |Δα| ≤ 0.004, ≥ 99.5 % of pixels within 0.03
      expect(sum / pa.length).toBeLessThanOrEqual(0.004)
      expect(within / pa.length).toBeGreaterThanOrEqual(0.995)
      // and it is a matte, not a constant: the person is opaque, the studio background clear
      const at = (x: number, y: number) =>
        pb[Math.round(y * size.height) * size.width + Math.round(x * size.width)]!
      expect(at(0.5, 0.55)).toBeGreaterThan(0.9)
      expect(at(0.04, 0.04)).toBeLessThan(0.1)
    } finally {
      await int8.close()
    }
  }, 180_000)
})
