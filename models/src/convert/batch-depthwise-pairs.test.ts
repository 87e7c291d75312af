/**
 * The guided filter's box filters as built by `pnpm models` (models/dist): batched into one
 * 16-channel depthwise pair (onnxruntime ran each of the four 4-channel pairs padded to its
 * 16-channel NCHWc block), with outputs bit-identical to the four pairs as converted.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'
import { describe, expect, it } from 'vitest'
import { MEDIA_DIR } from '../../test/support/media-frames.ts'
import { openRvmSequence } from '../quantize/rvm-runner.ts'
import { DIST_DIR } from '../reference/ort-runner.ts'
import { rgb24ToPlanar, rgbFrames } from '../reference/video-stream.ts'
import { ortCpuNodes } from './graph-report.ts'
import { batchDepthwisePairs } from './batch-depthwise-pairs.ts'

const { onnx } = onnxProto
type INodeProto = OnnxTypes.INodeProto
const dist = (name: string): string => path.join(DIST_DIR, `${name}.onnx`)
const FRAMES = 3
const TIMEOUT_MS = 300_000

/**
 * The graph with the batched pair unbatched again: four 4-channel pairs reading the Concat's
 * inputs and writing the Split's outputs (what the converter wrote).
 */
function unbatched(model: Uint8Array): Uint8Array {
  const m = onnx.ModelProto.decode(model)
  const g = m.graph!
  const nodes = g.node ?? []
  const cat = nodes.find((n) => n.opType === 'Concat' && n.name!.endsWith('/batched/concat'))!
  const prefix = cat.name!.slice(0, -'/concat'.length)
  const first = nodes.find((n) => n.name === `${prefix}/first`)!
  const second = nodes.find((n) => n.name === `${prefix}/second`)!
  const split = nodes.find((n) => n.name === `${prefix}/split`)!
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const k = cat.input!.length
  const slice = (name: string, w: string): void => {
    const t = inits.get(w)!
    const raw = new Uint8Array(t.rawData!)
    const dims = t.dims!.map(Number)
    g.initializer!.push({
      name,
      dataType: t.dataType,
      dims: [dims[0]! / k, ...dims.slice(1)],
      rawData: raw.slice(0, raw.length / k),
    })
  }
  slice('unbatched/w1', first.input![1]!)
  slice('unbatched/w2', second.input![1]!)
  const group = (n: INodeProto) =>
    (n.attribute ?? []).map((a) => (a.name === 'group' ? { ...a, i: 4 } : a))
  const pairs: INodeProto[] = cat.input!.flatMap((x, i) => [
    {
      ...first,
      name: `u${i}/a`,
      input: [x, 'unbatched/w1'],
      output: [`u${i}/a`],
      attribute: group(first),
    },
    {
      ...second,
      name: `u${i}/b`,
      input: [`u${i}/a`, 'unbatched/w2'],
      output: [split.output![i]!],
      attribute: group(second),
    },
  ])
  const at = nodes.indexOf(cat)
  g.node = [
    ...nodes.slice(0, at).filter((n) => ![first, second, split].includes(n)),
    ...pairs,
    ...nodes.slice(at + 1).filter((n) => ![first, second, split].includes(n)),
  ]
  return onnx.ModelProto.encode(m).finish()
}

describe.runIf(existsSync(dist('rvm')))('batched box filters (models/dist)', () => {
  it.each(['rvm', 'rvm-rgb', 'rvm-rgba', 'rvm-int8-rgb', 'rvm-int8-rgba'])(
    '%s: one 16-channel depthwise pair in the guided filter, none of 4 channels left',
    (name) => {
      const g = onnx.ModelProto.decode(readFileSync(dist(name))).graph!
      const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
      const depthwise = (g.node ?? []).filter(
        (n) => n.opType === 'Conv' && n.name!.includes('fast_guided_filter'),
      )
      expect(depthwise.map((n) => Number(inits.get(n.input![1]!)!.dims![0]))).toEqual([16, 16])
      // nothing left for the transform to do
      expect(batchDepthwisePairs(readFileSync(dist(name))).batched).toEqual([])
    },
  )

  it('onnxruntime runs one 16-channel pair instead of four padded to its 16-channel block, with fewer reorders', async () => {
    const built = readFileSync(dist('rvm-rgb'))
    const boxConvs = (nodes: { name: string; op: string }[]) =>
      nodes.filter((n) => /Conv/.test(n.op) && /fast_guided_filter|^u\d\//.test(n.name))
    const reorders = (nodes: { name: string; op: string }[]) =>
      nodes.filter((n) => n.op.startsWith('Reorder')).length
    const now = await ortCpuNodes(built)
    const before = await ortCpuNodes(unbatched(built))
    expect(boxConvs(now).length).toBe(2)
    expect(boxConvs(before).length).toBe(8)
    // measured 73 -> 66: one reorder in and out of the batch instead of one per 4-channel pair
    expect(reorders(before) - reorders(now)).toBeGreaterThanOrEqual(6)
  })

  it(
    `rvm: alpha and foreground bit-identical to the four pairs as converted (${FRAMES} frames of video_02 at 1280x720/0.25, state carried)`,
    async () => {
      const built = readFileSync(dist('rvm'))
      const batched = await openRvmSequence(built, 0.25)
      const converted = await openRvmSequence(unbatched(built), 0.25)
      let differing = 0
      let n = 0
      for await (const rgb of rgbFrames(path.join(MEDIA_DIR, 'video_02.mp4'), {
        width: 1280,
        height: 720,
        max: FRAMES,
      })) {
        const src = rgb24ToPlanar(rgb)
        const a = await batched.step(src, 1280, 720, ['pha', 'fgr'])
        const b = await converted.step(src, 1280, 720, ['pha', 'fgr'])
        for (const o of ['pha', 'fgr']) {
          for (let i = 0; i < a[o]!.length; i++) if (a[o]![i] !== b[o]![i]) differing++
        }
        n++
      }
      await batched.release()
      await converted.release()
      expect(n).toBe(FRAMES)
      expect(differing).toBe(0)
    },
    TIMEOUT_MS,
  )
})
