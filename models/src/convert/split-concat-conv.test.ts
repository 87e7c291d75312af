/**
 * RVM's decoder Concat → Conv pairs as built by `pnpm models` (models/dist): split into per-part
 * convolutions that onnxruntime runs in its NCHWc layout, the same network up to float32 rounding,
 * and exactly undone by mergeConcatConvs (what the int8 transform quantizes).
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import onnxProto from 'onnx-proto'
import { describe, expect, it } from 'vitest'
import { MEDIA_DIR } from '../../test/support/media-frames.ts'
import { openRvmSequence } from '../quantize/rvm-runner.ts'
import { DIST_DIR } from '../reference/ort-runner.ts'
import { rgb24ToPlanar, rgbFrames } from '../reference/video-stream.ts'
import { opCountsOf, ortCpuNodes } from './graph-report.ts'
import { mergeConcatConvs, NCHWC_BLOCK, splitConcatConvs } from './split-concat-conv.ts'

const { onnx } = onnxProto
const dist = (name: string): string => path.join(DIST_DIR, `${name}.onnx`)
const DECODER_CONVS = [
  'upsampling_block/sequential_16',
  'upsampling_block_1/sequential_17',
  'upsampling_block_2/sequential_18',
  'output_block/sequential_19',
]
const FRAMES = 4
const TIMEOUT_MS = 300_000

const graphBytes = (model: Uint8Array): Buffer => {
  const g = onnx.ModelProto.decode(model).graph!
  return Buffer.from(onnx.GraphProto.encode(g).finish())
}

describe.runIf(existsSync(dist('rvm-rgb')))('split Concat → Conv (models/dist)', () => {
  it.each(['rvm', 'rvm-rgb', 'rvm-rgba', 'rvm-ratio1-rgb', 'rvm-int8-rgb'])(
    '%s: merge restores the four decoder Concat → Conv pairs, and splitting the merge again gives the same graph',
    (name) => {
      const built = readFileSync(dist(name))
      const merged = mergeConcatConvs(built)
      const int8 = name.includes('int8')
      // int8: the three quantized ones stay as converted, the float32 last upsampling block is split
      const splitCount = int8 ? 1 : DECODER_CONVS.length
      expect((opCountsOf(merged).Concat ?? 0) - (opCountsOf(built).Concat ?? 0)).toBe(splitCount)
      const again = splitConcatConvs(merged)
      expect(again.split.map((c) => DECODER_CONVS.findIndex((d) => c.includes(d)))).toEqual(
        int8 ? [2] : [0, 1, 2, 3],
      )
      expect(graphBytes(again.bytes).equals(graphBytes(built))).toBe(true)
    },
  )

  it('every part of a split convolution reads a multiple of the NCHWc block or fewer channels', () => {
    const g = onnx.ModelProto.decode(readFileSync(dist('rvm-rgb'))).graph!
    const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
    const parts = (g.node ?? []).filter((n) => n.opType === 'Conv' && /\/part\d+$/.test(n.name!))
    // 128+32+8+3, 80+16+8+3, 32+8+16+3, 32+3 input channels
    expect(parts.length).toBe(14)
    for (const p of parts) {
      const c = Number(inits.get(p.input![1]!)!.dims![1])
      expect(c < NCHWC_BLOCK || c % NCHWC_BLOCK === 0).toBe(true)
    }
  })

  it('onnxruntime runs the decoder convolutions in NCHWc; the graph as converted runs four as im2col FusedConv', async () => {
    const built = readFileSync(dist('rvm-rgb'))
    const decoderIm2col = (nodes: { name: string; op: string }[]) =>
      nodes.filter((n) => n.op === 'FusedConv' && n.name.includes('recurrent_decoder')).length
    expect(decoderIm2col(await ortCpuNodes(built))).toBe(0)
    expect(decoderIm2col(await ortCpuNodes(mergeConcatConvs(built)))).toBe(DECODER_CONVS.length)
  })

  it(
    `rvm: alpha and foreground of the split graph equal the converted one's up to float32 rounding (${FRAMES} frames of video_02 at 1280x720/0.25, state carried)`,
    async () => {
      const split = await openRvmSequence(dist('rvm'), 0.25)
      const merged = await openRvmSequence(mergeConcatConvs(readFileSync(dist('rvm'))), 0.25)
      let maxPha = 0
      let maxFgr = 0
      let sumPha = 0
      let n = 0
      for await (const rgb of rgbFrames(path.join(MEDIA_DIR, 'video_02.mp4'), {
        width: 1280,
        height: 720,
        max: FRAMES,
      })) {
        const src = rgb24ToPlanar(rgb)
        const a = await split.step(src, 1280, 720, ['pha', 'fgr'])
        const b = await merged.step(src, 1280, 720, ['pha', 'fgr'])
        for (let i = 0; i < a.pha!.length; i++) {
          const d = Math.abs(a.pha![i]! - b.pha![i]!)
          maxPha = Math.max(maxPha, d)
          sumPha += d
        }
        for (let i = 0; i < a.fgr!.length; i++) {
          maxFgr = Math.max(maxFgr, Math.abs(a.fgr![i]! - b.fgr![i]!))
        }
        n++
      }
      await split.release()
      await merged.release()
      expect(n).toBe(FRAMES)
      const meanPha = sumPha / (FRAMES * 1280 * 720)
      // Measured: max 1.9e-4 (alpha), 6.0e-4 (foreground), mean 1e-7 or less: the guided filter
      // amplifies the decoder's reassociated float32 sums in flat regions; a wrong weight column
      // or a dropped part moves alpha by tenths.
      expect(maxPha).toBeLessThan(2e-3)
      expect(maxFgr).toBeLessThan(2e-3)
      expect(meanPha).toBeLessThan(1e-5)
    },
    TIMEOUT_MS,
  )
})
