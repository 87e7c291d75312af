/**
 * `pnpm bench:models`: inference latency of every converted model in onnxruntime-node (CPU EP)
 * and of the original graph in tfjs-wasm (SIMD, one thread), in the same run, on real inputs.
 * rvm runs on consecutive real video frames with its recurrent state fed back, at 1280x720/0.25,
 * 1920x1080/0.25 and 720x1280/0.375, as three graphs against the same tfjs-wasm run: `rvm` (the
 * planar float graph, fgr and pha out: the tfjs original's outputs, the issue's headline) and the
 * graphs the video engine runs, `rvm-rgb` (fp32) and `rvm-int8-rgb` (int8 decoder). The byte graphs
 * take the decoded frame's rgb24 bytes and hand out the composited rgb24 frame (background
 * #00ff00), so they also do the byte conversion and the composite that the tfjs original and the
 * planar graph leave to the caller: their ratio to tfjs-wasm is for more work, not less.
 * Each row also gives CPU ms per frame (process.cpuUsage over the timed runs: user + system of the
 * whole process, all threads; the robust figure on a shared machine).
 *
 * Options (CLI flags, or the env variable in brackets):
 *   --models a,b          models to run (default: all)               [BENCH_MODELS]
 *   --cases s             only cases whose name contains s, e.g. --cases 1280x720
 *   --graphs a,b          rvm graphs to run (default: rvm,rvm-rgb,rvm-int8-rgb) [BENCH_RVM_GRAPHS]
 *   --runs N              timed runs per case (default 20)           [BENCH_RUNS]
 *   --warmup N            untimed runs first (default 3)             [BENCH_WARMUP]
 *   --tfjs-runs-large N   tfjs timed runs at 1080p and 720x1280 (default 10: tfjs takes 1.5–2.5 s there)
 *   --no-tfjs             onnxruntime only (for tuning sweeps)       [BENCH_NO_TFJS=1]
 *   --ort k=v,k=v         one ORT option set; repeat for several     [BENCH_ORT="k=v,k=v;k=v"]
 *                         (default: intraOpNumThreads=<cores>,allowSpinning=false, as the service runs it)
 *                         keys: intraOpNumThreads, interOpNumThreads, graphOptimizationLevel
 *                         (disabled|basic|extended|all), enableCpuMemArena, enableMemPattern (true|false),
 *                         executionMode (sequential|parallel), allowSpinning (true|false:
 *                         session.intra_op.allow_spinning). Empty set = onnxruntime defaults.
 *   --sweep               run a preset list of option sets (see SWEEP)
 *   --profile N           after timing, N more runs per ORT option set with onnxruntime's profiler on,
 *                         printing kernel time per op type (where each frame goes)
 *   --out FILE            JSON results (default models/dist/bench-models.json)
 * Example: pnpm bench:models --models rvm --no-tfjs --ort intraOpNumThreads=1 --ort intraOpNumThreads=2,enableCpuMemArena=false
 * Only the rvm rows at 720p (the issue's headline and the engine's graphs, ~1 min on a quiet machine):
 *   pnpm bench:models --models rvm --cases 1280x720
 * Smoke run: add --runs 2 --warmup 1.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import * as ort from 'onnxruntime-node'
import { MODEL_INPUTS, type ReferenceModelName } from '../src/reference/model-inputs.ts'
import { nchwTensors, nhwcToNchw } from '../src/reference/layout.ts'
import {
  cpuSessionOptions,
  DIST_DIR,
  onnxPath,
  type OrtCpuOptions,
} from '../src/reference/ort-runner.ts'
import { describeOptions, parseOrtOptions, SWEEP } from './ort-options.ts'
import { loadTfjsModel, type TensorData, type TfjsModel } from '../src/reference/tfjs-runner.ts'
import { photoTensor, rgb24Frames, videoFrames } from '../test/support/media-frames.ts'

const require = createRequire(import.meta.url)
const ORT_VERSION = (require('onnxruntime-node/package.json') as { version: string }).version
const TFJS_VERSION = (require('@tensorflow/tfjs-core/package.json') as { version: string }).version

/** Distinct real frames per rvm case; the timed loop cycles through them with the state fed back. */
const RVM_DISTINCT_FRAMES = 10
const RVM_CASES = [
  {
    id: 'rvm 1280x720/0.25',
    video: 'video_02.mp4',
    width: 1280,
    height: 720,
    ratio: 0.25,
    large: false,
  },
  {
    id: 'rvm 1920x1080/0.25',
    video: 'video_02.mp4',
    width: 1920,
    height: 1080,
    ratio: 0.25,
    large: true,
  },
  {
    id: 'rvm 720x1280/0.375',
    video: 'video_01.mp4',
    width: 720,
    height: 1280,
    ratio: 0.375,
    large: true,
  },
] as const
/**
 * The rvm graphs timed per case: the planar float graph (the tfjs original's outputs) and the byte
 * graphs the video engine runs (matting-engine.ts: rvm-rgb, or rvm-int8-rgb by config).
 */
const RVM_GRAPHS = ['rvm', 'rvm-rgb', 'rvm-int8-rgb'] as const
/** The background colour the byte graphs composite onto (any colour costs the same). */
const RVM_BG = Float32Array.of(0, 255, 0)
const IMAGE_MODELS = ['blazepose-detector', 'blazepose-full', 'blazepose-heavy', 'selfie'] as const
const PHOTO = 'person_01.jpg'

const { values: args } = parseArgs({
  options: {
    models: { type: 'string' },
    cases: { type: 'string' },
    graphs: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    'tfjs-runs-large': { type: 'string' },
    'no-tfjs': { type: 'boolean' },
    ort: { type: 'string', multiple: true },
    sweep: { type: 'boolean' },
    profile: { type: 'string' },
    out: { type: 'string' },
  },
  allowPositionals: false,
})
const env = process.env
const RUNS = Number(args.runs ?? env.BENCH_RUNS ?? 20)
const WARMUP = Number(args.warmup ?? env.BENCH_WARMUP ?? 3)
const TFJS_RUNS_LARGE = Number(args['tfjs-runs-large'] ?? 10)
const NO_TFJS = args['no-tfjs'] === true || env.BENCH_NO_TFJS === '1'
const MODELS = (args.models ?? env.BENCH_MODELS ?? ['rvm', ...IMAGE_MODELS].join(','))
  .split(',')
  .map((s) => s.trim())
const OUT = args.out ?? path.join(DIST_DIR, 'bench-models.json')
const PROFILE_RUNS = Number(args.profile ?? 0)
const CASE_FILTER = args.cases ?? ''
const GRAPHS = (args.graphs ?? env.BENCH_RVM_GRAPHS ?? RVM_GRAPHS.join(','))
  .split(',')
  .map((s) => s.trim())
// Default: the session options the inference service uses (engine/session.ts: one intra-op thread
// per core, idle threads not spinning). onnxruntime's own default uses fewer threads than cores on this machine (measured:
// 78.8 ms against 64.4 ms per 720p rvm frame); `--ort ""` measures its defaults.
const optionSpecs =
  args.ort ??
  (env.BENCH_ORT !== undefined
    ? env.BENCH_ORT.split(';')
    : [`intraOpNumThreads=${os.availableParallelism()},allowSpinning=false`])
const OPTION_SETS: readonly OrtCpuOptions[] =
  args.sweep === true ? SWEEP : optionSpecs.map(parseOrtOptions)

// ---- timing -------------------------------------------------------------------------------------
interface Stats {
  runs: number
  minMs: number
  medianMs: number
  maxMs: number
  /** Process CPU time (user + system, all threads) per timed run, mean. */
  cpuMsPerRun: number
}
function stats(ms: number[], cpuMs: number): Stats {
  const s = [...ms].sort((a, b) => a - b)
  const mid = s.length >> 1
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
  return {
    runs: s.length,
    minMs: s[0]!,
    medianMs: median,
    maxMs: s[s.length - 1]!,
    cpuMsPerRun: cpuMs / s.length,
  }
}
const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r))

/** A benchmark case: `step(i)` runs inference number i (frames and state are the case's business). */
interface Runner {
  step(i: number): Promise<void>
  close(): Promise<void>
}
interface ProfiledRunner extends Runner {
  session: ort.InferenceSession
}

async function timeRunner(r: Runner, warmup: number, runs: number): Promise<Stats> {
  const ms: number[] = []
  let cpuMs = 0
  try {
    for (let i = 0; i < warmup + runs; i++) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      await r.step(i)
      const dt = performance.now() - t0
      const c = process.cpuUsage(c0)
      if (i >= warmup) {
        ms.push(dt)
        cpuMs += (c.user + c.system) / 1000
      }
      await yieldToLoop()
    }
  } finally {
    await r.close()
  }
  return stats(ms, cpuMs)
}

const RVM_STATES = ['r1', 'r2', 'r3', 'r4'] as const

/** Extra session options for a profiled run (not part of the tuned set). */
interface ProfileOptions {
  enableProfiling?: boolean
  profileFilePrefix?: string
}
type SessionOptions = OrtCpuOptions & ProfileOptions

async function ortSession(name: string, options: SessionOptions): Promise<ort.InferenceSession> {
  const { enableProfiling, profileFilePrefix, ...cpu } = options
  return ort.InferenceSession.create(onnxPath(name), {
    ...cpuSessionOptions(cpu),
    ...(enableProfiling !== undefined ? { enableProfiling } : {}),
    ...(profileFilePrefix !== undefined ? { profileFilePrefix } : {}),
  })
}

interface OpShare {
  op: string
  msPerRun: number
  share: number
}
interface ProfileEvent {
  cat?: string
  name?: string
  dur?: number
  args?: { op_name?: string }
}

/** Runs `runner` with onnxruntime's profiler on and sums kernel time per op type. */
async function profileOps(
  makeRunner: (o: SessionOptions) => Promise<ProfiledRunner>,
  o: OrtCpuOptions,
  runs: number,
): Promise<OpShare[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'))
  try {
    const r = await makeRunner({
      ...o,
      enableProfiling: true,
      profileFilePrefix: path.join(dir, 'p'),
    })
    for (let i = 0; i < runs; i++) {
      await r.step(i)
    }
    r.session.endProfiling()
    await r.close()
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))
    if (file === undefined) {
      throw new Error(`onnxruntime wrote no profile in ${dir}`)
    }
    const events = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as ProfileEvent[]
    const byOp = new Map<string, number>()
    for (const e of events) {
      if (
        e.cat === 'Node' &&
        e.name?.endsWith('_kernel_time') === true &&
        e.args?.op_name !== undefined
      ) {
        byOp.set(e.args.op_name, (byOp.get(e.args.op_name) ?? 0) + (e.dur ?? 0))
      }
    }
    const total = [...byOp.values()].reduce((a, b) => a + b, 0)
    return [...byOp.entries()]
      .map(([op, us]) => ({ op, msPerRun: us / 1000 / runs, share: us / total }))
      .sort((a, b) => b.msPerRun - a.msPerRun)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The frames of an rvm case, as floats (the planar graph, tfjs) and as the decoded bytes. */
interface RvmFrames {
  float: TensorData[]
  bytes: Uint8Array[]
}

/**
 * rvm in onnxruntime: state tensors go straight back in, no copies. `graph` is the planar `rvm`
 * (float frames in the model's layout in, fgr and pha out) or a byte graph (rgb24 bytes and the
 * background colour in, the composited rgb24 frame out).
 */
async function ortRvm(
  graph: string,
  frames: RvmFrames,
  ratio: number,
  options: SessionOptions,
): Promise<ProfiledRunner> {
  const session = await ortSession(graph, options)
  // Frames in the model's own layout, prepared before timing (the service writes it straight from the decoded bytes).
  let src: ort.Tensor[]
  let extra: Record<string, ort.Tensor> = {}
  if (session.inputNames.includes('rgb24')) {
    const dims = frames.float[0]!.dims
    src = frames.bytes.map((b) => new ort.Tensor('uint8', b, dims))
    extra = { bg: new ort.Tensor('float32', RVM_BG, [3]) }
  } else {
    const nchw = nchwTensors(DIST_DIR, graph).inputs.has('src')
    src = frames.float
      .map((f) => (nchw ? nhwcToNchw(f) : f))
      .map((f) => new ort.Tensor('float32', f.data, f.dims))
  }
  const srcName = session.inputNames.includes('rgb24') ? 'rgb24' : 'src'
  const dr = new ort.Tensor('float32', Float32Array.of(ratio), [1])
  const zero = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1])
  let state: Record<string, ort.Tensor> = Object.fromEntries(
    RVM_STATES.map((s) => [`${s}i`, zero()]),
  )
  return {
    async step(i) {
      const out = await session.run({
        [srcName]: src[i % src.length]!,
        ...extra,
        ...state,
        downsample_ratio: dr,
      })
      const next = Object.fromEntries(RVM_STATES.map((s) => [`${s}i`, out[`${s}o`]!]))
      for (const t of Object.values(state)) {
        t.dispose()
      }
      for (const [k, t] of Object.entries(out)) {
        if (!/^r\do$/.test(k)) {
          t.dispose()
        }
      }
      state = next
    },
    session,
    close: () => session.release(),
  }
}

async function tfjsRvm(model: TfjsModel, frames: TensorData[], ratio: number): Promise<Runner> {
  const dr: TensorData = { data: Float32Array.of(ratio), dims: [1] }
  const zero: TensorData = { data: new Float32Array(1), dims: [1, 1, 1, 1] }
  let state: Record<string, TensorData> = Object.fromEntries(RVM_STATES.map((s) => [`${s}i`, zero]))
  return {
    async step(i) {
      const out = await model.run({
        src: frames[i % frames.length]!,
        ...state,
        downsample_ratio: dr,
      })
      state = Object.fromEntries(RVM_STATES.map((s) => [`${s}i`, out[`${s}o`]!]))
    },
    close: async () => undefined,
  }
}

async function ortImage(
  name: string,
  input: string,
  x: TensorData,
  options: SessionOptions,
): Promise<ProfiledRunner> {
  const session = await ortSession(name, options)
  const t = new ort.Tensor('float32', x.data, x.dims)
  return {
    async step() {
      const out = await session.run({ [input]: t })
      for (const o of Object.values(out)) {
        o.dispose()
      }
    },
    session,
    close: () => session.release(),
  }
}

function tfjsImage(model: TfjsModel, input: string, x: TensorData): Runner {
  return {
    async step() {
      await model.run({ [input]: x })
    },
    close: async () => undefined,
  }
}

// ---- main ---------------------------------------------------------------------------------------
interface OrtResult extends Stats {
  /** The graph file (models/dist/<graph>.onnx). */
  graph: string
  options: string
  speedup: number | null
  fps: number
  profile?: OpShare[]
}
interface CaseResult {
  case: string
  model: string
  tfjs: (Stats & { backend: string }) | null
  ort: OrtResult[]
}

/** One onnxruntime graph of a case. */
interface OrtGraph {
  graph: string
  runner: (o: SessionOptions) => Promise<ProfiledRunner>
}

async function benchCase(
  id: string,
  model: string,
  tfjsRunner: (() => Promise<Runner>) | null,
  tfjsRuns: number,
  ortGraphs: readonly OrtGraph[],
): Promise<CaseResult> {
  const result: CaseResult = { case: id, model, tfjs: null, ort: [] }
  if (tfjsRunner !== null) {
    result.tfjs = {
      backend: 'wasm-simd-1thread',
      ...(await timeRunner(await tfjsRunner(), WARMUP, tfjsRuns)),
    }
  }
  for (const { graph, runner } of ortGraphs) {
    for (const o of OPTION_SETS) {
      const s = await timeRunner(await runner(o), WARMUP, RUNS)
      const speedup = result.tfjs === null ? null : result.tfjs.medianMs / s.medianMs
      const entry: OrtResult = {
        graph,
        options: describeOptions(o),
        ...s,
        speedup,
        fps: 1000 / s.medianMs,
      }
      if (PROFILE_RUNS > 0) {
        entry.profile = await profileOps(runner, o, PROFILE_RUNS)
      }
      result.ort.push(entry)
    }
  }
  printCase(result)
  return result
}

const f1 = (x: number): string => x.toFixed(1).padStart(8)
let headerPrinted = false
function printCase(r: CaseResult): void {
  if (!headerPrinted) {
    console.log(
      `${'case'.padEnd(27)} ${'runtime'.padEnd(62)} ${'runs'.padStart(4)} ${'min ms'.padStart(8)} ${'median'.padStart(8)} ${'max ms'.padStart(8)} ${'fps'.padStart(6)} ${'CPU ms'.padStart(8)} ${'tfjs/ort'.padStart(8)}`,
    )
    headerPrinted = true
  }
  if (r.tfjs !== null) {
    const t = r.tfjs
    console.log(
      `${r.case.padEnd(27)} ${'tfjs wasm (SIMD, 1 thread)'.padEnd(62)} ${String(t.runs).padStart(4)} ${f1(t.minMs)} ${f1(t.medianMs)} ${f1(t.maxMs)} ${(1000 / t.medianMs).toFixed(1).padStart(6)} ${f1(t.cpuMsPerRun)}`,
    )
  }
  for (const o of r.ort) {
    console.log(
      `${r.case.padEnd(27)} ${`ort cpu ${o.graph} [${o.options}]`.padEnd(62)} ${String(o.runs).padStart(4)} ${f1(o.minMs)} ${f1(o.medianMs)} ${f1(o.maxMs)} ${o.fps.toFixed(1).padStart(6)} ${f1(o.cpuMsPerRun)} ${o.speedup === null ? '       -' : `${o.speedup.toFixed(1)}x`.padStart(8)}`,
    )
    if (o.profile !== undefined) {
      const top = o.profile
        .slice(0, 10)
        .map((p) => `${p.op} ${p.msPerRun.toFixed(1)} ms (${(p.share * 100).toFixed(0)}%)`)
      console.log(`${''.padEnd(27)}   kernel time per run: ${top.join(', ')}`)
    }
  }
}

async function main(): Promise<void> {
  const unknown = MODELS.filter(
    (m) => m !== 'rvm' && !(IMAGE_MODELS as readonly string[]).includes(m),
  )
  if (unknown.length > 0) {
    throw new Error(`unknown models: ${unknown.join(', ')}`)
  }
  const unknownGraphs = GRAPHS.filter((g) => !(RVM_GRAPHS as readonly string[]).includes(g))
  if (unknownGraphs.length > 0) {
    throw new Error(
      `unknown rvm graphs: ${unknownGraphs.join(', ')} (known: ${RVM_GRAPHS.join(', ')})`,
    )
  }
  const t0 = performance.now()
  console.log(
    `bench-models: onnxruntime-node ${ORT_VERSION} (CPU EP) vs tfjs ${TFJS_VERSION} wasm (SIMD, 1 thread); ` +
      `${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg()[0]!.toFixed(1)}; ` +
      `warm-up ${WARMUP}, ${RUNS} runs (tfjs ${TFJS_RUNS_LARGE} at 1080p and 720x1280)${NO_TFJS ? ', tfjs skipped' : ''}`,
  )
  console.log(
    `ORT option sets: ${OPTION_SETS.map((o, i) => `#${i} ${describeOptions(o)}`).join(' | ')}`,
  )
  const results: CaseResult[] = []

  if (MODELS.includes('rvm')) {
    const tfjs = NO_TFJS ? null : await loadTfjsModel('rvm', 'wasm')
    for (const c of RVM_CASES.filter((x) => x.id.includes(CASE_FILTER))) {
      const opts = { count: RVM_DISTINCT_FRAMES, width: c.width, height: c.height }
      const frames: RvmFrames = {
        float: await videoFrames(c.video, opts),
        bytes: await rgb24Frames(c.video, opts),
      }
      results.push(
        await benchCase(
          c.id,
          'rvm',
          tfjs === null ? null : () => tfjsRvm(tfjs, frames.float, c.ratio),
          c.large ? TFJS_RUNS_LARGE : RUNS,
          GRAPHS.map((graph) => ({
            graph,
            runner: (o: SessionOptions) => ortRvm(graph, frames, c.ratio, o),
          })),
        ),
      )
    }
    tfjs?.dispose()
  }
  for (const name of IMAGE_MODELS) {
    const input = MODEL_INPUTS[name as ReferenceModelName].inputs[0]!
    const id = `${name} ${input.dims[2]}x${input.dims[1]}`
    if (!MODELS.includes(name) || !id.includes(CASE_FILTER)) {
      continue
    }
    const x = await photoTensor(
      PHOTO,
      { width: input.dims[2]!, height: input.dims[1]! },
      input.range ?? [0, 1],
    )
    const tfjs = NO_TFJS ? null : await loadTfjsModel(name, 'wasm')
    results.push(
      await benchCase(
        id,
        name,
        tfjs === null ? null : async () => tfjsImage(tfjs, input.name, x),
        RUNS,
        [{ graph: name, runner: (o: SessionOptions) => ortImage(name, input.name, x, o) }],
      ),
    )
    tfjs?.dispose()
  }

  const rvm720 = results.find((r) => r.case === RVM_CASES[0].id)
  if (rvm720 !== undefined) {
    // One headline per graph: its best option set.
    for (const graph of GRAPHS) {
      const best = rvm720.ort
        .filter((o) => o.graph === graph)
        .sort((a, b) => a.medianMs - b.medianMs)[0]
      if (best === undefined) {
        continue
      }
      console.log(
        `rvm 1280x720/0.25 ${graph}: ${best.fps.toFixed(1)} frames/s, ${best.cpuMsPerRun.toFixed(1)} CPU ms/frame with onnxruntime [${best.options}]` +
          (rvm720.tfjs !== null
            ? `; tfjs-wasm ${(1000 / rvm720.tfjs.medianMs).toFixed(1)} frames/s (${best.speedup?.toFixed(1)}x)`
            : '') +
          (graph === 'rvm' ? '' : ' (also composite + bytes)'),
      )
    }
  }
  const seconds = (performance.now() - t0) / 1000
  console.log(`bench-models: ${seconds.toFixed(0)} s; results in ${OUT}`)
  writeFileSync(
    OUT,
    `${JSON.stringify(
      {
        generatedAt: new Date().toISOString(),
        host: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, loadavg: os.loadavg() },
        versions: { onnxruntimeNode: ORT_VERSION, tfjs: TFJS_VERSION, node: process.version },
        warmup: WARMUP,
        runs: RUNS,
        tfjsRunsLarge: TFJS_RUNS_LARGE,
        optionSets: OPTION_SETS.map(describeOptions),
        notes: [
          'rvm: 10 distinct real frames per case, cycled, recurrent state fed back; 1920x1080 is video_02 scaled up, 720x1280 is video_01 (480x908) scaled',
          'rvm graphs: rvm = planar float fgr/pha out (as the tfjs original); rvm-rgb / rvm-int8-rgb = the engine graphs, rgb24 bytes in, composited rgb24 out (bg #00ff00): they also do the byte conversion and composite the others leave to the caller',
          'cpuMsPerRun: process.cpuUsage (user + system, all threads) over the timed runs, per run',
          'tfjs timing includes creating input tensors and reading every output back to JS; onnxruntime timing includes session.run with tensors in and out',
        ],
        seconds,
        results,
      },
      null,
      1,
    )}\n`,
  )
}

await main()
