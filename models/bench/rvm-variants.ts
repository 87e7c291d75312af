/**
 * rvm variants against each other in the same run, interleaved frame by frame: each variant is a
 * graph file and an onnxruntime session option set, run on the same real frames of video_02
 * (recurrent state carried per variant). Prints wall and CPU ms per frame (process.cpuUsage, the
 * robust figure on a shared machine) and each variant's ratio to the first one. `--parts` adds
 * onnxruntime's per-node profile summed by part: every node whose output is at the frame's
 * resolution (by its profiled shape) is `full-res bytes<->float` (Cast, Transpose, QuantizeLinear,
 * the 1/255 scale) or `full-res refiner+composite` (the guided filter's upsamples and arithmetic,
 * the composite); the low-resolution rest by scope: encoder, lraspp, decoder, refiner (box
 * filters, A and b), tail low-res, other (onnxruntime's renamed nodes, NCHWc reorders).
 *
 * Usage: tsx bench/rvm-variants.ts [--variant label=file.onnx@k=v,k=v]… [--frames 30] [--size 1280x720]
 *          [--ratio 0.25] [--parts [--match REGEX]]
 *   file: a path, or a name in models/dist (default rvm); options as bench-models --ort
 *   (allowSpinning=false is the service's setting), plus optimizedModelFilePath=… to dump ORT's graph.
 *   --match: nodes whose profiled name matches REGEX are summed as their own part 'matched'.
 *   file may be a byte graph (rvm-rgb, rvm-rgba: rgb24 bytes in, bg #00ff00).
 *   RVM_PARTS_NODES=<part> also lists that part's 30 costliest nodes.
 * Default: rvm.onnx with the service's options (2 intra-op threads).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import * as ort from 'onnxruntime-node'
import { cpuSessionOptions, DIST_DIR } from '../src/reference/ort-runner.ts'
import { rgb24ToPlanar, rgbFrames } from '../src/reference/video-stream.ts'
import { MEDIA_DIR } from '../test/support/media-frames.ts'
import { parseOrtOptions } from './ort-options.ts'

const { values: args } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    frames: { type: 'string', default: '30' },
    size: { type: 'string', default: '1280x720' },
    ratio: { type: 'string', default: '0.25' },
    parts: { type: 'boolean', default: false },
    video: { type: 'string', default: 'video_02.mp4' },
    match: { type: 'string' },
  },
})
const [W, H] = args.size.split('x').map(Number) as [number, number]
const N = Number(args.frames)
const WARMUP = 3
const STATES = ['r1', 'r2', 'r3', 'r4'] as const

interface Variant {
  label: string
  file: string
  /** the option spec as written */
  spec: string
  options: ort.InferenceSession.SessionOptions
}

function parseVariant(spec: string): Variant {
  const eq = spec.indexOf('=')
  const at = spec.indexOf('@')
  const labelled = eq > 0 && (at < 0 || eq < at)
  const label = labelled ? spec.slice(0, eq) : spec
  const [fileSpec = 'rvm', optSpec = ''] = (labelled ? spec.slice(eq + 1) : spec).split('@')
  const file =
    fileSpec.endsWith('.onnx') || fileSpec.includes('/')
      ? fileSpec
      : path.join(DIST_DIR, `${fileSpec}.onnx`)
  let optimized: string | undefined
  const plain = optSpec
    .split(',')
    .filter((kv) => {
      const [k = '', v = ''] = kv.split('=')
      if (k !== 'optimizedModelFilePath') return true
      optimized = v
      return false
    })
    .join(',')
  return {
    label,
    file,
    spec: optSpec,
    options: {
      ...cpuSessionOptions({
        intraOpNumThreads: os.availableParallelism(),
        ...parseOrtOptions(plain),
      }),
      logSeverityLevel: 3,
      ...(optimized !== undefined ? { optimizedModelFilePath: optimized } : {}),
    },
  }
}

const variants = (args.variant ?? ['fp32=rvm']).map(parseVariant)
const frames: Float32Array[] = []
const bytes: Uint8Array[] = []
for await (const rgb of rgbFrames(path.join(MEDIA_DIR, args.video), {
  width: W,
  height: H,
  max: 10,
})) {
  bytes.push(rgb.slice())
  frames.push(rgb24ToPlanar(rgb))
}
const bg = new ort.Tensor('float32', Float32Array.of(0, 255, 0), [3])
const ratio = new ort.Tensor('float32', Float32Array.of(Number(args.ratio)), [1])
const zero = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1])

interface Open {
  v: Variant
  session: ort.InferenceSession
  state: Record<string, ort.Tensor>
  ms: number[]
  cpu: number[]
}

async function open(v: Variant, extra: ort.InferenceSession.SessionOptions = {}): Promise<Open> {
  const session = await ort.InferenceSession.create(v.file, { ...v.options, ...extra })
  return {
    v,
    session,
    state: Object.fromEntries(STATES.map((s) => [`${s}i`, zero()])),
    ms: [],
    cpu: [],
  }
}

async function step(o: Open, i: number): Promise<void> {
  // The byte graphs (rvm-rgb / rvm-rgba) take the decoded frame's bytes, rvm-rgb a colour.
  const feeds: Record<string, ort.Tensor> = o.session.inputNames.includes('rgb24')
    ? { rgb24: new ort.Tensor('uint8', bytes[i % bytes.length]!, [1, H, W, 3]), ...o.state }
    : { src: new ort.Tensor('float32', frames[i % frames.length]!, [1, 3, H, W]), ...o.state }
  if (o.session.inputNames.includes('bg')) feeds.bg = bg
  if (o.session.inputNames.includes('downsample_ratio')) feeds.downsample_ratio = ratio
  const out = await o.session.run(feeds)
  o.state = Object.fromEntries(STATES.map((s) => [`${s}i`, out[`${s}o`]!]))
  for (const [k, t] of Object.entries(out)) if (!/^r\do$/.test(k)) t.dispose()
}

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!
const mean = (a: number[]): number => a.reduce((x, y) => x + y, 0) / a.length

const opened: Open[] = []
for (const v of variants) opened.push(await open(v))
for (let i = 0; i < WARMUP + N; i++) {
  for (const o of opened) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    await step(o, i)
    const c = process.cpuUsage(c0)
    if (i >= WARMUP) {
      o.ms.push(performance.now() - t0)
      o.cpu.push((c.user + c.system) / 1000)
    }
  }
}
console.log(
  `rvm ${W}x${H}/${args.ratio}, ${N} frames each after ${WARMUP} warm-up, interleaved; ${os.cpus()[0]?.model ?? '?'} x${os.cpus().length}, load ${os.loadavg()[0]!.toFixed(1)}`,
)
const base = opened[0]!
for (const o of opened) {
  console.log(
    `  ${o.v.label.padEnd(22)} wall median ${median(o.ms).toFixed(1)} ms (mean ${mean(o.ms).toFixed(1)}), CPU ${median(o.cpu).toFixed(1)} ms/frame (mean ${mean(o.cpu).toFixed(1)}); vs ${base.v.label}: wall ×${(median(o.ms) / median(base.ms)).toFixed(3)}, CPU ×${(mean(o.cpu) / mean(base.cpu)).toFixed(3)}  [${path.basename(o.v.file)}@${o.v.spec}]`,
  )
  await o.session.release()
}

/**
 * Which part of rvm a node belongs to: at the input's resolution (from the shape of its output,
 * as onnxruntime's profile records it: its optimiser renames the nodes it rewrites, e.g. the
 * refiner's full-resolution Resize/Mul), the byte↔float conversions or the rest (guided filter and
 * composite); below it, from the tfjs scope names the converter keeps.
 */
const MATCH = args.match !== undefined ? new RegExp(args.match) : undefined
const FULL_RES = new RegExp(`\\b1,(\\d+,)?${H},${W}\\b`)
function partOf(node: string, op = '', shape = ''): string {
  if (MATCH?.test(node) === true) return 'matched'
  if (FULL_RES.test(shape)) {
    return /^(Cast|Transpose|QuantizeLinear)$/.test(op) || node.startsWith('rgb24/')
      ? 'full-res bytes<->float'
      : 'full-res refiner+composite'
  }
  // The rest of the tail written by src/convert/rvm-tail.ts (its node names' prefixes).
  if (/^(gf|cmp|rgb24|bg)\//.test(node)) return 'tail low-res'
  if (node.includes('fast_guided_filter')) return 'refiner'
  if (node.includes('mobile_net_v3_encoder')) return 'encoder'
  if (node.includes('lraspp')) return 'lraspp'
  if (node.includes('recurrent_decoder') || node.includes('conv_gru')) return 'decoder'
  if (node.includes('project')) return 'decoder'
  return 'other'
}

if (args.parts) {
  for (const v of variants) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rvm-parts-'))
    try {
      const o = await open(v, { enableProfiling: true, profileFilePrefix: path.join(dir, 'p') })
      const runs = Math.min(N, 10)
      for (let i = 0; i < runs; i++) await step(o, i)
      o.session.endProfiling()
      await o.session.release()
      const file = readdirSync(dir).find((f) => f.endsWith('.json'))!
      type Ev = {
        cat?: string
        name?: string
        dur?: number
        args?: { op_name?: string; output_type_shape?: unknown }
      }
      const part = (e: Ev): string =>
        partOf(
          e.name!.slice(0, -'_kernel_time'.length),
          e.args?.op_name,
          JSON.stringify(e.args?.output_type_shape ?? ''),
        )
      const events = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Ev[]
      const byPart = new Map<string, number>()
      const byPartOp = new Map<string, number>()
      let total = 0
      for (const e of events) {
        if (e.cat !== 'Node' || e.name?.endsWith('_kernel_time') !== true) continue
        const p = part(e)
        const us = e.dur ?? 0
        total += us
        byPart.set(p, (byPart.get(p) ?? 0) + us)
        const k = `${p} ${e.args?.op_name ?? '?'}`
        byPartOp.set(k, (byPartOp.get(k) ?? 0) + us)
      }
      const fmt = (m: Map<string, number>, top: number): string =>
        [...m.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, top)
          .map(
            ([k, us]) =>
              `${k} ${(us / 1000 / runs).toFixed(1)} (${((100 * us) / total).toFixed(0)}%)`,
          )
          .join(', ')
      console.log(
        `  ${v.label}: kernel ms/run ${(total / 1000 / runs).toFixed(1)} by part: ${fmt(byPart, 9)}`,
      )
      console.log(`    top part×op: ${fmt(byPartOp, 14)}`)
      if (process.env.RVM_PARTS_NODES !== undefined) {
        const byNode = new Map<string, number>()
        for (const e of events) {
          if (e.cat !== 'Node' || e.name?.endsWith('_kernel_time') !== true) continue
          if (part(e) !== process.env.RVM_PARTS_NODES) continue
          byNode.set(e.name, (byNode.get(e.name) ?? 0) + (e.dur ?? 0))
        }
        console.log(`    top nodes: ${fmt(byNode, 30)}`)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
