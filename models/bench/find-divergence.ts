/**
 * Finds where a converted model starts to differ from its tfjs original: exposes every ONNX value
 * that carries a tfjs node's name as an extra graph output, runs both on the same real input, and
 * lists the intermediate tensors in ONNX (topological) order with their error. NCHW values are
 * transposed back to NHWC before comparing.
 *
 *   tsx bench/find-divergence.ts <model> [--backend cpu|wasm] [--threshold 1e-4] [--top 25]
 *        [--photo person_02.jpg] [--video video_02.mp4 --frame N --ratio 0.25 --width W --height H]
 *
 * rvm runs frames 0..N with the state fed back on each side and compares at frame N.
 * Writes models/dist/divergence-<model>.txt.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import onnxProto from 'onnx-proto'
import * as ort from 'onnxruntime-node'
import { MODEL_INPUTS, type ReferenceModelName } from '../src/reference/model-inputs.ts'
import { nchwTensors, nhwcToNchw } from '../src/reference/layout.ts'
import { DIST_DIR, onnxPath } from '../src/reference/ort-runner.ts'
import {
  loadTfjsModel,
  tfjsModelJsonPath,
  type TensorData,
  type TfjsBackend,
} from '../src/reference/tfjs-runner.ts'
import { diffStats, fmt } from '../test/support/compare.ts'
import { photoTensor, videoFrames } from '../test/support/media-frames.ts'

/** tfjs ops whose output is a float tensor worth comparing (shape arithmetic is left out). */
const FLOAT_OPS = new Set([
  '_FusedConv2D',
  'Conv2D',
  'FusedDepthwiseConv2dNative',
  'DepthwiseConv2dNative',
  'Conv2DBackpropInput',
  'AddV2',
  'Add',
  'AddN',
  'Sub',
  'Mul',
  'RealDiv',
  'Square',
  'Minimum',
  'Maximum',
  'Relu',
  'Relu6',
  'Sigmoid',
  'Tanh',
  'Mean',
  'AvgPool',
  'MaxPool',
  'ResizeBilinear',
  'ConcatV2',
  'Split',
  'SplitV',
  'Slice',
  'Pad',
  'SpaceToBatchND',
  'BatchToSpaceND',
  'DepthToSpace',
  'Reshape',
  'BroadcastTo',
])

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    backend: { type: 'string', default: 'cpu' },
    threshold: { type: 'string', default: '1e-4' },
    top: { type: 'string', default: '25' },
    photo: { type: 'string', default: 'person_02.jpg' },
    video: { type: 'string', default: 'video_02.mp4' },
    frame: { type: 'string', default: '0' },
    ratio: { type: 'string', default: '0.25' },
    width: { type: 'string' },
    height: { type: 'string' },
  },
})
const name = positionals[0] as ReferenceModelName | undefined
if (name === undefined || !(name in MODEL_INPUTS)) {
  throw new Error(`usage: find-divergence <${Object.keys(MODEL_INPUTS).join('|')}> [options]`)
}
const backend = args.backend as TfjsBackend
const threshold = Number(args.threshold)
const STATES = ['r1', 'r2', 'r3', 'r4'] as const

// ---- candidates: tfjs float nodes that survive by name in the ONNX graph ----------------------
interface TfjsNode {
  name: string
  op: string
  attr?: { fused_ops?: { list?: { s?: string[] } } }
}
const tfjsJson = JSON.parse(readFileSync(tfjsModelJsonPath(name), 'utf8')) as {
  modelTopology: { node: TfjsNode[] }
}
const tfjsOps = new Map(tfjsJson.modelTopology.node.map((n) => [n.name, n.op]))
/** tfjs nodes whose fused ops end in an activation: ONNX emits that activation as a separate node. */
const fusedActivation = new Set(
  tfjsJson.modelTopology.node
    .filter((n) =>
      (n.attr?.fused_ops?.list?.s ?? [])
        .map((b) => Buffer.from(b, 'base64').toString())
        .some((op) => !['BiasAdd', 'FusedBatchNorm'].includes(op)),
    )
    .map((n) => n.name),
)
const ACTIVATIONS = new Set([
  'Relu',
  'Clip',
  'Sigmoid',
  'LeakyRelu',
  'PRelu',
  'Elu',
  'Tanh',
  'HardSigmoid',
  'HardSwish',
])
const model = onnxProto.onnx.ModelProto.decode(readFileSync(onnxPath(name)))
const graph = model.graph!
const consumers = new Map<string, { opType: string; output: string }[]>()
for (const node of graph.node ?? []) {
  for (const input of node.input ?? []) {
    consumers.set(input, [
      ...(consumers.get(input) ?? []),
      { opType: node.opType ?? '', output: node.output?.[0] ?? '' },
    ])
  }
}
/** ONNX value to fetch for each tfjs node name compared, in ONNX (topological) order. */
const onnxValue = new Map<string, string>()
const onnxOrder: string[] = []
for (const node of graph.node ?? []) {
  for (const out of node.output ?? []) {
    if (onnxValue.has(out) || !FLOAT_OPS.has(tfjsOps.get(out) ?? '')) {
      continue
    }
    let value = out
    if (fusedActivation.has(out)) {
      const act = (consumers.get(out) ?? []).find((c) => ACTIVATIONS.has(c.opType))
      if (act === undefined) {
        continue // activation folded somewhere we cannot see: skip rather than compare unlike things
      }
      value = act.output
    }
    onnxValue.set(out, value)
    onnxOrder.push(out)
  }
}
const existing = new Set((graph.output ?? []).map((o) => o.name))
for (const v of new Set(onnxValue.values())) {
  if (!existing.has(v)) {
    graph.output!.push(onnxProto.onnx.ValueInfoProto.create({ name: v })) // no type: onnxruntime infers it
  }
}
const bytes = onnxProto.onnx.ModelProto.encode(model).finish()
const session = await ort.InferenceSession.create(bytes, { executionProviders: ['cpu'] })
const tfjs = await loadTfjsModel(name, backend)

// ---- inputs ------------------------------------------------------------------------------------
const nchwInputs = nchwTensors(DIST_DIR, name).inputs
const toOrt = (feeds: Record<string, TensorData>): Record<string, ort.Tensor> =>
  Object.fromEntries(
    Object.entries(feeds).map(([k, t]) => {
      const x = nchwInputs.has(k) ? nhwcToNchw(t) : t
      return [k, new ort.Tensor('float32', x.data, x.dims)]
    }),
  )
const fromOrt = (t: ort.Tensor): TensorData => ({
  data: Float32Array.from(t.data as Float32Array),
  dims: [...t.dims],
})

let feeds: Record<string, TensorData>
let ortFeeds: Record<string, TensorData>
let label: string
if (name === 'rvm') {
  const n = Number(args.frame)
  const size =
    args.width !== undefined && args.height !== undefined
      ? { width: Number(args.width), height: Number(args.height) }
      : {}
  const frames = await videoFrames(args.video, { count: n + 1, ...size })
  const dr: TensorData = { data: Float32Array.of(Number(args.ratio)), dims: [1] }
  const zero: TensorData = { data: new Float32Array(1), dims: [1, 1, 1, 1] }
  let refState: Record<string, TensorData> = Object.fromEntries(STATES.map((s) => [`${s}i`, zero]))
  let gotState = refState
  const outs = STATES.map((s) => `${s}o`)
  for (let i = 0; i < n; i++) {
    const r = await tfjs.run({ src: frames[i]!, ...refState, downsample_ratio: dr }, outs)
    const g = await session.run(toOrt({ src: frames[i]!, ...gotState, downsample_ratio: dr }), outs)
    refState = Object.fromEntries(STATES.map((s) => [`${s}i`, r[`${s}o`]!]))
    gotState = Object.fromEntries(STATES.map((s) => [`${s}i`, fromOrt(g[`${s}o`]!)]))
  }
  feeds = { src: frames[n]!, ...refState, downsample_ratio: dr }
  ortFeeds = { src: frames[n]!, ...gotState, downsample_ratio: dr }
  label = `${args.video} frame ${n} @${args.ratio}`
} else {
  const input = MODEL_INPUTS[name].inputs[0]!
  const x = await photoTensor(
    args.photo,
    { width: input.dims[2]!, height: input.dims[1]! },
    input.range ?? [0, 1],
  )
  feeds = { [input.name]: x }
  ortFeeds = feeds
  label = args.photo
}

// ---- run and compare ---------------------------------------------------------------------------
const got = await session.run(toOrt(ortFeeds))
const CHUNK = 40
const ref: Record<string, TensorData> = {}
for (let i = 0; i < onnxOrder.length; i += CHUNK) {
  Object.assign(ref, await tfjs.run(feeds, onnxOrder.slice(i, i + CHUNK)))
}

/** ONNX NCHW [n,c,h,w] → NHWC when that is what makes it match the tfjs shape. */
function asNhwc(t: TensorData, want: number[]): TensorData | undefined {
  if (t.dims.join() === want.join()) {
    return t
  }
  const [n, c, h, w] = t.dims
  if (t.dims.length !== 4 || [n, h, w, c].join() !== want.join()) {
    return undefined
  }
  const out = new Float32Array(t.data.length)
  for (let b = 0; b < n!; b++) {
    for (let ch = 0; ch < c!; ch++) {
      for (let y = 0; y < h!; y++) {
        for (let x = 0; x < w!; x++) {
          out[((b * h! + y) * w! + x) * c! + ch] = t.data[((b * c! + ch) * h! + y) * w! + x]!
        }
      }
    }
  }
  return { data: out, dims: want }
}

const lines: string[] = [
  `${name}: tfjs-${backend} vs onnxruntime on ${label}; relative error = max|Δ| / max|ref|; threshold ${threshold}`,
]
let first: string | undefined
const rows: { v: string; rel: number; line: string }[] = []
const unlike: string[] = []
for (const v of onnxOrder) {
  const r = ref[v]
  const g = got[onnxValue.get(v) ?? v]
  if (r === undefined || g === undefined) {
    continue
  }
  const gn = asNhwc(fromOrt(g), r.dims)
  if (gn === undefined) {
    unlike.push(`${tfjsOps.get(v)} ${v}: shape tfjs [${r.dims}] onnx [${g.dims}]`)
    continue
  }
  const d = diffStats(r, gn)
  const rel = d.maxAbs / (d.maxRef || 1)
  const line = `${(tfjsOps.get(v) ?? '').padEnd(26)} max ${fmt(d.maxAbs)} rel ${fmt(rel)} mean ${fmt(d.meanAbs)} [${r.dims}] ${v}`
  rows.push({ v, rel, line })
  if (first === undefined && rel > threshold) {
    first = line
  }
}
lines.push(
  `compared ${rows.length} intermediate tensors; ${unlike.length} not comparable (the converter changed their shape, e.g. SpaceToBatchND + conv → dilated conv)`,
)
lines.push(...unlike.map((u) => `  ${u}`))
lines.push(
  first === undefined
    ? `no tensor over the threshold`
    : `first over the threshold (ONNX order):\n  ${first}`,
)
lines.push(`in ONNX order, the first ${args.top} over the threshold:`)
lines.push(
  ...rows
    .filter((r) => r.rel > threshold)
    .slice(0, Number(args.top))
    .map((r) => `  ${r.line}`),
)
lines.push(`largest relative errors:`)
lines.push(
  ...[...rows]
    .sort((a, b) => b.rel - a.rel)
    .slice(0, Number(args.top))
    .map((r) => `  ${r.line}`),
)
const text = lines.join('\n')
console.log(text)
const out = path.join(DIST_DIR, `divergence-${name}.txt`)
writeFileSync(out, `${text}\n`)
console.log(`written ${out}`)
tfjs.dispose()
await session.release()
