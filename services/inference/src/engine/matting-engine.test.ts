import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage, resizeRgb } from '../media/image.ts'
import { MEDIA_DIR, MODELS_DIR, requireModels } from '../media/video.test-support.ts'
import { openMattingEngine, RVM_MODEL_NAMES } from './matting-engine.ts'
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
})
