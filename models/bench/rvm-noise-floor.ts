/**
 * How far apart two correct float32 implementations of rvm are: runs the same consecutive frames
 * (recurrent state fed back on each side) through tfjs-cpu, tfjs-wasm and onnxruntime-node, and
 * prints the per-frame max / mean |Δ| of every output for each pair. This is the evidence for the
 * rvm pha/fgr bounds: if onnxruntime differs from tfjs no more than tfjs's own backends differ
 * from each other, the converter is not the cause.
 *
 *   tsx bench/rvm-noise-floor.ts [--video video_02.mp4] [--frames 8] [--ratio 0.25] [--width W --height H]
 *
 * tfjs-cpu needs ~15 s per 1280x720 frame on this machine; keep --frames small.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DIST_DIR, openOrtModel } from '../src/reference/ort-runner.ts'
import { loadTfjsModel, type TensorData } from '../src/reference/tfjs-runner.ts'
import { diffStats, fmt } from '../test/support/compare.ts'
import { videoFrames } from '../test/support/media-frames.ts'

const { values: args } = parseArgs({
  options: {
    video: { type: 'string', default: 'video_02.mp4' },
    frames: { type: 'string', default: '8' },
    ratio: { type: 'string', default: '0.25' },
    width: { type: 'string' },
    height: { type: 'string' },
  },
})
const STATES = ['r1', 'r2', 'r3', 'r4'] as const
const OUTPUTS = ['pha', 'fgr', 'r1o', 'r2o', 'r3o', 'r4o'] as const
const ratio = Number(args.ratio)
const size =
  args.width !== undefined && args.height !== undefined
    ? { width: Number(args.width), height: Number(args.height) }
    : {}
const frames = await videoFrames(args.video, { count: Number(args.frames), ...size })
const dr: TensorData = { data: Float32Array.of(ratio), dims: [1] }
const zero: TensorData = { data: new Float32Array(1), dims: [1, 1, 1, 1] }

type Outs = Record<string, TensorData>[]
async function sequence(
  run: (feeds: Record<string, TensorData>) => Promise<Record<string, TensorData>>,
): Promise<Outs> {
  let state: Record<string, TensorData> = Object.fromEntries(STATES.map((s) => [`${s}i`, zero]))
  const outs: Outs = []
  for (const src of frames) {
    const o = await run({ src, ...state, downsample_ratio: dr })
    state = Object.fromEntries(STATES.map((s) => [`${s}i`, o[`${s}o`]!]))
    outs.push(Object.fromEntries(OUTPUTS.map((k) => [k, o[k]!])))
  }
  return outs
}

const runs: Record<string, Outs> = {}
for (const backend of ['wasm', 'cpu'] as const) {
  const m = await loadTfjsModel('rvm', backend)
  runs[`tfjs-${backend}`] = await sequence((f) => m.run(f, OUTPUTS))
  m.dispose()
}
const onnx = await openOrtModel('rvm')
runs.onnxruntime = await sequence((f) => onnx.run(f, OUTPUTS))
await onnx.release()

const pairs = [
  ['tfjs-cpu', 'tfjs-wasm'],
  ['tfjs-cpu', 'onnxruntime'],
  ['tfjs-wasm', 'onnxruntime'],
] as const
const table: Record<string, Record<string, { max: number; mean: number; over1e3: number }[]>> = {}
const [, h, w] = frames[0]!.dims
console.log(
  `rvm ${args.video} ${w}x${h} @${ratio}, ${frames.length} frames: max |Δ| (mean |Δ|, elements over 1e-3) per frame`,
)
for (const [a, b] of pairs) {
  const key = `${a} vs ${b}`
  table[key] = {}
  for (const o of OUTPUTS) {
    const per = runs[a]!.map((outs, i) =>
      diffStats(outs[o]!, runs[b]![i]![o]!, { abs: 1e-3, rel: 0 }),
    )
    table[key][o] = per.map((d) => ({ max: d.maxAbs, mean: d.meanAbs, over1e3: d.over }))
    console.log(
      `${key.padEnd(26)} ${o.padEnd(4)} ${per.map((d) => `${fmt(d.maxAbs)} (${fmt(d.meanAbs)}, ${d.over}>1e-3)`).join('  ')}`,
    )
  }
}
const out = path.join(DIST_DIR, 'rvm-noise-floor.json')
writeFileSync(
  out,
  `${JSON.stringify({ video: args.video, width: w, height: h, ratio, frames: frames.length, table }, null, 1)}\n`,
)
console.log(`written ${out}`)
