import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage, resizeRgb } from '../media/image.ts'
import { MEDIA_DIR, MODELS_DIR, requireModels } from '../media/video.test-support.ts'
import { openMattingEngine, RVM_MODEL_NAME, RVM_RATIO1_MODEL_NAME } from './matting-engine.ts'

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
    const big = engine.openStream({ width: 1280, height: 720 }) as unknown as {
      model: string
      downsampleRatio: number
      dispose(): void
    }
    const small = engine.openStream({ width: 320, height: 180 }) as unknown as {
      model: string
      downsampleRatio: number
      dispose(): void
    }
    expect(big.model).toBe(RVM_MODEL_NAME)
    expect(big.downsampleRatio).toBeLessThan(1)
    expect(small.model).toBe(RVM_RATIO1_MODEL_NAME)
    expect(small.downsampleRatio).toBe(1)
    big.dispose()
    small.dispose()
  })

  it('mattes a real person at ratio 1: torso opaque, background clear', async () => {
    const photo = await decodeImage(`${MEDIA_DIR}person_01.jpg`, { what: 'person image' })
    const size = { width: 192, height: 256 } // ≤ the network's target size: ratio 1
    const rgb = await resizeRgb(photo.rgb, photo.width, photo.height, size)
    const stream = engine.openStream(size)
    let pha: Float32Array<ArrayBufferLike> = new Float32Array(0)
    for (let i = 0; i < 3; i++) pha = (await stream.next(rgb)).pha // recurrent state settles
    stream.dispose()
    const at = (x: number, y: number) =>
      pha[Math.round(y * size.height) * size.width + Math.round(x * size.width)]!
    expect(at(0.5, 0.55)).toBeGreaterThan(0.9) // chest
    expect(at(0.04, 0.04)).toBeLessThan(0.1) // top-left studio background
    expect(at(0.96, 0.04)).toBeLessThan(0.1) // top-right
  })
})
