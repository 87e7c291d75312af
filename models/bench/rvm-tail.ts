/**
 * `tsx bench/rvm-tail.ts`: RVM's full-resolution tail, before/after, in one interleaved run
 * (models/README.md, "RVM's full-resolution tail"). Real frames of ../shared/media/video_02.mp4,
 * recurrent state carried on every side, onnxruntime with one intra-op thread per core.
 *
 * Per frame, in turn:
 *   before   the converted refiner (built in memory from the catalog's `rvm` without its tail) +
 *            the service's JavaScript rgb24 → planar and composite (post.ts)
 *   tail     models/dist/rvm.onnx (the tail as graph code) + the same JavaScript
 *   rgb      models/dist/rvm-rgb.onnx: rgb24 bytes in, composited rgb24 bytes out
 *   rgba     models/dist/rvm-rgba.onnx against the JavaScript compositeRgba of `before`
 * and prints CPU ms per frame (process.cpuUsage: robust on a shared machine), wall medians, the
 * ratios to `before`, and how far the bytes are from the JavaScript composite of `before`.
 *
 * Usage: tsx bench/rvm-tail.ts [--frames 20] [--width 1280 --height 720 --ratio 0.25] [--bg #00ff00]
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import * as ort from 'onnxruntime-node'
import { sourcePackageDir } from '../src/build.ts'
import { MODELS } from '../src/catalog.ts'
import { convertGraph } from '../src/convert/convert.ts'
import { loadTfjsGraphModel } from '../src/convert/tfjs-model.ts'
import { DIST_DIR } from '../src/reference/ort-runner.ts'
import { rgb24ToPlanar } from '../src/reference/video-stream.ts'
import { rgb24Frames } from '../test/support/media-frames.ts'
import {
  compositeOnColor,
  compositeRgba,
  parseBackground,
} from '../../services/inference/src/engine/rvm/post.ts'
import os from 'node:os'

const { values: args } = parseArgs({
  options: {
    frames: { type: 'string', default: '20' },
    width: { type: 'string', default: '1280' },
    height: { type: 'string', default: '720' },
    ratio: { type: 'string', default: '0.25' },
    bg: { type: 'string', default: '#00ff00' },
    video: { type: 'string', default: 'video_02.mp4' },
  },
})
const W = Number(args.width)
const H = Number(args.height)
const N = Number(args.frames)
const bgSpec = parseBackground(args.bg)
if (bgSpec.kind !== 'color') throw new Error('--bg must be a colour')
const BG = bgSpec.rgb

async function beforeGraph(): Promise<Uint8Array> {
  const entry = MODELS.find((m) => m.name === 'rvm')!
  const model = await loadTfjsGraphModel(path.join(sourcePackageDir(), entry.file))
  return convertGraph(model, {
    graphName: 'rvm-before',
    producerVersion: 'bench',
    docString: 'rvm with the converted refiner',
    branches: entry.branches,
    inputs: Object.fromEntries(
      entry.inputs.map((i) => [
        i.name,
        { dims: i.dims, layout: i.layout === 'NCHW' ? ('nchw' as const) : ('nhwc' as const) },
      ]),
    ),
    outputs: Object.fromEntries(entry.outputs.map((o) => [o.name, o.from])),
    nchwOutputs: entry.outputs.filter((o) => o.layout === 'NCHW').map((o) => o.name),
  }).bytes
}

const threads = Math.max(1, os.availableParallelism())
const open = async (file: string | Uint8Array): Promise<ort.InferenceSession> =>
  ort.InferenceSession.create(
    typeof file === 'string' ? await readFile(path.join(DIST_DIR, file)) : file,
    {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    } as ort.InferenceSession.SessionOptions,
  )

const zero = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1])
const STATES = ['r1', 'r2', 'r3', 'r4'] as const

interface Side {
  label: string
  cpuMs: number[]
  wallMs: number[]
  state: ort.Tensor[]
}
const side = (label: string): Side => ({ label, cpuMs: [], wallMs: [], state: STATES.map(zero) })

async function timed<T>(s: Side, f: () => Promise<T>): Promise<T> {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const r = await f()
  s.wallMs.push(performance.now() - t0)
  const c = process.cpuUsage(c0)
  s.cpuMs.push((c.user + c.system) / 1000)
  return r
}

function carry(s: Side, out: ort.InferenceSession.OnnxValueMapType): void {
  s.state = STATES.map((r) => out[`${r}o`]!)
}
const stateFeeds = (s: Side): Record<string, ort.Tensor> =>
  Object.fromEntries(STATES.map((r, i) => [`${r}i`, s.state[i]!]))

const frames = await rgb24Frames(args.video, { count: N, width: W, height: H })
const [before, tail, rgb, rgba] = await Promise.all([
  open(await beforeGraph()),
  open('rvm.onnx'),
  open('rvm-rgb.onnx'),
  open('rvm-rgba.onnx'),
])
const ratio = new ort.Tensor('float32', Float32Array.of(Number(args.ratio)), [1])
const bgT = new ort.Tensor('float32', Float32Array.from(BG), [3])
const sides = {
  before: side('converted refiner + JS pre/composite'),
  tail: side('tail as graph code + JS pre/composite'),
  rgb: side('rvm-rgb: bytes in, composited bytes out'),
  rgba: side('rvm-rgba: bytes in, RGBA bytes out'),
}
const planar = new Float32Array(W * H * 3)
const jsRgb = new Uint8Array(W * H * 3)
const jsRgba = new Uint8Array(W * H * 4)
const tailRgb = new Uint8Array(W * H * 3)
const hist = { rgb: [0, 0, 0], rgba: [0, 0, 0], tailVsBefore: [0, 0, 0] }
let maxPha = 0
let maxFgr = 0
let sumFgr = 0
const count = (h: number[], a: Uint8Array, b: Uint8Array): void => {
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!)
    h[Math.min(2, d)]!++
  }
}

for (let f = 0; f < N; f++) {
  const frame = frames[f]!
  const jsSide = async (s: Side, session: ort.InferenceSession, out: Uint8Array) =>
    timed(s, async () => {
      rgb24ToPlanar(frame, planar)
      const r = await session.run({
        src: new ort.Tensor('float32', planar, [1, 3, H, W]),
        downsample_ratio: ratio,
        ...stateFeeds(s),
      })
      carry(s, r)
      const fgr = r.fgr!.data as Float32Array
      const pha = r.pha!.data as Float32Array
      compositeOnColor(frame, fgr, pha, BG, out)
      return { fgr, pha }
    })
  const ref = await jsSide(sides.before, before, jsRgb)
  compositeRgba(frame, ref.fgr, ref.pha, W, jsRgba)
  const mine = await jsSide(sides.tail, tail, tailRgb)
  for (let i = 0; i < mine.pha.length; i++) {
    maxPha = Math.max(maxPha, Math.abs(mine.pha[i]! - ref.pha[i]!))
  }
  for (let i = 0; i < mine.fgr.length; i++) {
    const d = Math.abs(mine.fgr[i]! - ref.fgr[i]!)
    maxFgr = Math.max(maxFgr, d)
    sumFgr += d
  }
  count(hist.tailVsBefore, tailRgb, jsRgb)
  const bytes = new ort.Tensor('uint8', frame, [1, H, W, 3])
  const outRgb = await timed(sides.rgb, async () => {
    const r = await rgb.run({
      rgb24: bytes,
      bg: bgT,
      downsample_ratio: ratio,
      ...stateFeeds(sides.rgb),
    })
    carry(sides.rgb, r)
    return r.rgb!.data as Uint8Array
  })
  count(hist.rgb, outRgb, jsRgb)
  const outRgba = await timed(sides.rgba, async () => {
    const r = await rgba.run({ rgb24: bytes, downsample_ratio: ratio, ...stateFeeds(sides.rgba) })
    carry(sides.rgba, r)
    return r.rgba!.data as Uint8Array
  })
  count(hist.rgba, outRgba, jsRgba)
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
// The first frames warm the arena: skip 2.
const cpu = (s: Side): number => mean(s.cpuMs.slice(2))
const base = cpu(sides.before)
console.log(
  `rvm ${W}x${H}/${args.ratio}, ${N} frames of ${args.video} (first 2 not counted), ${threads} intra-op threads, load ${os.loadavg()[0]!.toFixed(1)}`,
)
console.log('| pipeline per frame | CPU ms (mean) | ratio to before | wall ms (median) |')
console.log('|---|---|---|---|')
for (const s of Object.values(sides)) {
  console.log(
    `| ${s.label} | ${cpu(s).toFixed(1)} | ${(cpu(s) / base).toFixed(2)} | ${median(s.wallMs.slice(2)).toFixed(1)} |`,
  )
}
const share = (h: number[]): string => {
  const n = h[0]! + h[1]! + h[2]!
  return `${((100 * h[0]!) / n).toFixed(3)} % equal, ${((100 * h[1]!) / n).toFixed(3)} % ±1, ${((100 * h[2]!) / n).toFixed(4)} % more`
}
console.log(
  `tail vs before: max |Δpha| ${maxPha.toExponential(2)}, max |Δfgr| ${maxFgr.toExponential(2)} (mean ${(sumFgr / (N * W * H * 3)).toExponential(2)})`,
)
console.log(`bytes vs the JS composite of before: tail+JS ${share(hist.tailVsBefore)}`)
console.log(`  rvm-rgb ${share(hist.rgb)}`)
console.log(`  rvm-rgba ${share(hist.rgba)}`)
