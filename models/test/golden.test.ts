/**
 * Golden tests: every converted model in models/dist against the original tfjs graph, on the same
 * real inputs (person photos; consecutive frames of both videos for rvm with the recurrent state
 * fed back on each side). Bounds, per output, from models/dist/manifest.json: `tolerance` (max
 * absolute error, default 1e-3), optional `relTolerance` (element-wise |Δ| ≤ tolerance +
 * relTolerance·|ref|, for outputs with large magnitudes such as detector logits) and optional
 * `meanTolerance` (mean absolute error, to keep a relaxed max bound honest).
 *
 * Reference backend: tfjs `cpu` for the image models; tfjs `wasm` (SIMD, 1 thread) for rvm,
 * because the cpu backend takes ~15 s per 720p frame. Override with GOLDEN_TFJS_BACKEND=cpu|wasm.
 * GOLDEN_RVM_FRAMES sets the sequence length (default 30). Writes models/dist/golden-report.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { MODEL_INPUTS, type ReferenceModelName } from '../src/reference/model-inputs.ts'
import { DIST_DIR, openOrtModel } from '../src/reference/ort-runner.ts'
import { loadTfjsModel, type TensorData, type TfjsBackend } from '../src/reference/tfjs-runner.ts'
import { diffStats, fmt, type DiffStats } from './support/compare.ts'
import { photoTensor, videoFrames } from './support/media-frames.ts'

const DEFAULT_TOLERANCE = 1e-3
const PHOTOS = ['person_01.jpg', 'person_02.jpg', 'person_03.jpg', 'person_04.jpg'] as const
const IMAGE_MODELS = ['blazepose-detector', 'blazepose-full', 'blazepose-heavy', 'selfie'] as const
const RVM_FRAMES = Number(process.env.GOLDEN_RVM_FRAMES ?? 30)
const RVM_CASES = [
  { model: 'rvm', video: 'video_02.mp4', ratio: 0.25 }, // 1280x720 landscape
  { model: 'rvm', video: 'video_01.mp4', ratio: 0.25 }, // 480x908 portrait
  { model: 'rvm', video: 'video_01.mp4', ratio: 0.375 },
  // The original's ratio-1 branch (no resize, no refiner), on a small clip as the engine uses it.
  { model: 'rvm-ratio1', video: 'video_01.mp4', ratio: 1, width: 240, height: 454 },
] as const
const RVM_STATES = ['r1', 'r2', 'r3', 'r4'] as const
/** The per-frame alpha error may not grow: last-10 mean ≤ GROWTH_FACTOR × first-10 mean + GROWTH_SLACK. */
const GROWTH_WINDOW = 10
const GROWTH_FACTOR = 2
const GROWTH_SLACK = 1e-4
const IMAGE_MODEL_TIMEOUT_MS = 180_000
const RVM_CASE_TIMEOUT_MS = 420_000

const backendEnv = z
  .enum(['cpu', 'wasm'])
  .optional()
  .parse(process.env.GOLDEN_TFJS_BACKEND || undefined)
const IMAGE_BACKEND: TfjsBackend = backendEnv ?? 'cpu'
const RVM_BACKEND: TfjsBackend = backendEnv ?? 'wasm'

const ManifestOutput = z.object({
  name: z.string(),
  tolerance: z.number().positive().optional(),
  relTolerance: z.number().nonnegative().optional(),
  meanTolerance: z.number().positive().optional(),
})
const ManifestModel = z.object({
  name: z.string(),
  file: z.string(),
  inputs: z.array(
    z.object({ name: z.string(), range: z.tuple([z.number(), z.number()]).optional() }),
  ),
  outputs: z.array(ManifestOutput),
})
const Manifest = z.object({ models: z.array(ManifestModel) })
type ManifestModel = z.infer<typeof ManifestModel>

const manifestPath = path.join(DIST_DIR, 'manifest.json')
if (!existsSync(manifestPath)) {
  throw new Error(`${manifestPath} is missing: run \`pnpm models\` before the golden tests`)
}
const manifest = Manifest.parse(JSON.parse(readFileSync(manifestPath, 'utf8')))

function manifestEntry(name: string): ManifestModel {
  const m = manifest.models.find((x) => x.name === name)
  if (m === undefined) {
    throw new Error(`${name}: not in ${manifestPath}`)
  }
  return m
}

interface Bound {
  abs: number
  rel: number
  mean: number
}
function boundOf(m: ManifestModel, output: string): Bound {
  const o = m.outputs.find((x) => x.name === output)
  return {
    abs: o?.tolerance ?? DEFAULT_TOLERANCE,
    rel: o?.relTolerance ?? 0,
    mean: o?.meanTolerance ?? Infinity,
  }
}
const within = (b: Bound, d: DiffStats): boolean =>
  d.bad === 0 && d.maxExcess <= b.abs && d.meanAbs <= b.mean
const boundText = (b: Bound): string =>
  (b.rel > 0 ? `${fmt(b.abs)} + ${fmt(b.rel)}·|ref|` : fmt(b.abs)) +
  (Number.isFinite(b.mean) ? `, mean ≤ ${fmt(b.mean)}` : '')

// ---- report ---------------------------------------------------------------------------------
interface OutputRecord {
  case: string
  output: string
  maxAbs: number
  meanAbs: number
  maxRef: number
  /** Elements over the bound, of `elements`. */
  over: number
  elements: number
  bound: string
  pass: boolean
}
interface RvmFrameRecord {
  frame: number
  phaMax: number
  phaMean: number
  /** Alpha pixels over the bound. */
  phaOver: number
  fgrMax: number
  fgrMean: number
  stateMax: Record<string, number>
}
interface RvmCaseRecord {
  model: string
  video: string
  ratio: number
  width: number
  height: number
  frames: RvmFrameRecord[]
  growth: { phaMeanFirst: number; phaMeanLast: number; phaMaxFirst: number; phaMaxLast: number }
  failures: string[]
}
const report = {
  generatedAt: new Date().toISOString(),
  reference: { imageModels: `tfjs-${IMAGE_BACKEND}`, rvm: `tfjs-${RVM_BACKEND}` },
  candidate: 'onnxruntime-node CPU EP',
  defaultTolerance: DEFAULT_TOLERANCE,
  models: {} as Record<string, OutputRecord[]>,
  rvm: [] as RvmCaseRecord[],
}

afterAll(() => {
  writeFileSync(path.join(DIST_DIR, 'golden-report.json'), `${JSON.stringify(report, null, 1)}\n`)
  const lines = ['golden summary (max |Δ| over all cases, reference → onnxruntime):']
  for (const [model, recs] of Object.entries(report.models)) {
    const byOut = new Map<string, OutputRecord[]>()
    for (const r of recs) {
      byOut.set(r.output, [...(byOut.get(r.output) ?? []), r])
    }
    for (const [out, rs] of byOut) {
      const worst = Math.max(...rs.map((r) => r.maxAbs))
      const mean = Math.max(...rs.map((r) => r.meanAbs))
      const ok = rs.every((r) => r.pass)
      lines.push(
        `  ${model.padEnd(19)} ${out.padEnd(24)} max ${fmt(worst)}  mean ${fmt(mean)}  bound ${rs[0]!.bound}  ${ok ? 'ok' : 'FAIL'}`,
      )
    }
  }
  for (const c of report.rvm) {
    const phaMax = Math.max(...c.frames.map((f) => f.phaMax))
    const fgrMax = Math.max(...c.frames.map((f) => f.fgrMax))
    const stMax = Math.max(...c.frames.flatMap((f) => Object.values(f.stateMax)))
    const over = Math.max(...c.frames.map((f) => f.phaOver))
    lines.push(
      `  ${c.model} ${c.video} ${c.width}x${c.height}@${c.ratio}: ${c.frames.length} frames, pha max ${fmt(phaMax)} (≤ ${over} px/frame over bound), ` +
        `pha mean first/last-${GROWTH_WINDOW} ${fmt(c.growth.phaMeanFirst)}/${fmt(c.growth.phaMeanLast)}, ` +
        `fgr max ${fmt(fgrMax)}, state max ${fmt(stMax)}  ${c.failures.length === 0 ? 'ok' : `FAIL (${c.failures.length})`}`,
    )
  }
  console.log(lines.join('\n'))
})

function checkOutput(
  model: ManifestModel,
  caseName: string,
  output: string,
  ref: TensorData | undefined,
  got: TensorData | undefined,
  failures: string[],
): DiffStats | undefined {
  if (ref === undefined || got === undefined) {
    failures.push(
      `${model.name} ${caseName} ${output}: missing on ${ref === undefined ? 'tfjs' : 'onnxruntime'} side`,
    )
    return undefined
  }
  const b = boundOf(model, output)
  const d = diffStats(ref, got, b)
  const pass = within(b, d)
  ;(report.models[model.name] ??= []).push({
    case: caseName,
    output,
    maxAbs: d.maxAbs,
    meanAbs: d.meanAbs,
    maxRef: d.maxRef,
    over: d.over,
    elements: ref.data.length,
    bound: boundText(b),
    pass,
  })
  if (!pass) {
    failures.push(
      `${model.name} ${caseName} ${output}: max abs error ${fmt(d.maxAbs)}, mean ${fmt(d.meanAbs)}: over the bound ${boundText(b)} on ${d.over} of ${ref.data.length} elements ` +
        `(dims tfjs [${ref.dims.join(',')}] onnx [${got.dims.join(',')}], worst at flat index ${d.at}: tfjs ${d.ref}, onnx ${d.got}, max|ref| ${fmt(d.maxRef)})`,
    )
  }
  return d
}

function checkInputRanges(
  name: ReferenceModelName,
  m: ManifestModel,
  failures: string[],
  skip: readonly string[] = [],
): void {
  for (const spec of MODEL_INPUTS[name].inputs) {
    if (skip.includes(spec.name)) continue
    const declared = m.inputs.find((i) => i.name === spec.name)
    if (declared === undefined) {
      failures.push(`${name}: manifest has no input ${spec.name}`)
    } else if (spec.range !== null && declared.range?.join() !== spec.range.join()) {
      failures.push(
        `${name} ${spec.name}: manifest range [${declared.range?.join(', ')}], the source model expects [${spec.range.join(', ')}]`,
      )
    }
  }
}

describe.each(IMAGE_MODELS)('golden %s', (name) => {
  it(
    `matches tfjs-${IMAGE_BACKEND} on the person photos`,
    async () => {
      const m = manifestEntry(name)
      const spec = MODEL_INPUTS[name]
      const input = spec.inputs[0]
      const failures: string[] = []
      checkInputRanges(name, m, failures)
      const tfjs = await loadTfjsModel(name, IMAGE_BACKEND)
      const onnx = await openOrtModel(name, {}, path.join(DIST_DIR, m.file))
      try {
        expect([...onnx.inputNames].sort()).toEqual([...tfjs.inputNames].sort())
        expect([...onnx.outputNames].sort()).toEqual([...tfjs.outputNames].sort())
        for (const photo of PHOTOS) {
          const x = await photoTensor(
            photo,
            { width: input.dims[2], height: input.dims[1] },
            input.range ?? [0, 1],
          )
          const feeds = { [input.name]: x }
          const ref = await tfjs.run(feeds)
          const got = await onnx.run(feeds)
          for (const out of tfjs.outputNames) {
            checkOutput(m, photo, out, ref[out], got[out], failures)
          }
        }
      } finally {
        tfjs.dispose()
        await onnx.release()
      }
      expect(failures, failures.join('\n')).toEqual([])
    },
    IMAGE_MODEL_TIMEOUT_MS,
  )
})

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(xs.length, 1)
const zeroState = (): TensorData => ({ data: new Float32Array(1), dims: [1, 1, 1, 1] })

describe('golden rvm', () => {
  it.each(RVM_CASES)(
    `$model: $video at downsample_ratio $ratio: ${RVM_FRAMES} frames with recurrent state, error does not grow`,
    async (c) => {
      const { model, video, ratio } = c
      const m = manifestEntry(model)
      const failures: string[] = []
      // rvm-ratio1 is the same source graph with the ratio fixed to 1: no downsample_ratio input.
      checkInputRanges('rvm', m, failures, model === 'rvm' ? [] : ['downsample_ratio'])
      const frames = await videoFrames(
        video,
        'width' in c
          ? { count: RVM_FRAMES, width: c.width, height: c.height }
          : { count: RVM_FRAMES },
      )
      const [, height = 0, width = 0] = frames[0]!.dims
      const tfjs = await loadTfjsModel('rvm', RVM_BACKEND)
      const onnx = await openOrtModel(model, {}, path.join(DIST_DIR, m.file))
      const takesRatio = onnx.inputNames.includes('downsample_ratio')
      const caseName = `${model} ${video}@${ratio}`
      const rec: RvmCaseRecord = {
        model,
        video,
        ratio,
        width,
        height,
        frames: [],
        growth: { phaMeanFirst: 0, phaMeanLast: 0, phaMaxFirst: 0, phaMaxLast: 0 },
        failures,
      }
      report.rvm.push(rec)
      const dr: TensorData = { data: Float32Array.of(ratio), dims: [1] }
      let refState: Record<string, TensorData> = Object.fromEntries(
        RVM_STATES.map((s) => [`${s}i`, zeroState()]),
      )
      let gotState = refState
      try {
        for (const [i, src] of frames.entries()) {
          const ref = await tfjs.run({ src, ...refState, downsample_ratio: dr })
          const got = await onnx.run(
            takesRatio ? { src, ...gotState, downsample_ratio: dr } : { src, ...gotState },
          )
          const frameFailures: string[] = []
          const stats = Object.fromEntries(
            tfjs.outputNames.map((o) => [
              o,
              checkOutput(m, `${caseName} frame ${i}`, o, ref[o], got[o], frameFailures),
            ]),
          )
          failures.push(...frameFailures)
          rec.frames.push({
            frame: i,
            phaMax: stats.pha?.maxAbs ?? Infinity,
            phaMean: stats.pha?.meanAbs ?? Infinity,
            phaOver: stats.pha?.over ?? Infinity,
            fgrMax: stats.fgr?.maxAbs ?? Infinity,
            fgrMean: stats.fgr?.meanAbs ?? Infinity,
            stateMax: Object.fromEntries(
              RVM_STATES.map((s) => [`${s}o`, stats[`${s}o`]?.maxAbs ?? Infinity]),
            ),
          })
          // Each side carries its own state forward, so drift would accumulate if it existed.
          refState = Object.fromEntries(
            RVM_STATES.map((s) => [`${s}i`, ref[`${s}o`] ?? zeroState()]),
          )
          gotState = Object.fromEntries(
            RVM_STATES.map((s) => [`${s}i`, got[`${s}o`] ?? zeroState()]),
          )
        }
      } finally {
        tfjs.dispose()
        await onnx.release()
      }
      const n = Math.min(GROWTH_WINDOW, Math.floor(rec.frames.length / 2))
      const first = rec.frames.slice(0, n)
      const last = rec.frames.slice(-n)
      rec.growth = {
        phaMeanFirst: mean(first.map((f) => f.phaMean)),
        phaMeanLast: mean(last.map((f) => f.phaMean)),
        phaMaxFirst: mean(first.map((f) => f.phaMax)),
        phaMaxLast: mean(last.map((f) => f.phaMax)),
      }
      const g = rec.growth
      if (!(g.phaMeanLast <= GROWTH_FACTOR * g.phaMeanFirst + GROWTH_SLACK)) {
        failures.push(
          `${caseName} pha: mean abs error grows: last-${n} ${fmt(g.phaMeanLast)} > ${GROWTH_FACTOR}×first-${n} ${fmt(g.phaMeanFirst)} + ${fmt(GROWTH_SLACK)}`,
        )
      }
      if (!(g.phaMaxLast <= GROWTH_FACTOR * g.phaMaxFirst + GROWTH_SLACK)) {
        failures.push(
          `${caseName} pha: max abs error grows: last-${n} ${fmt(g.phaMaxLast)} > ${GROWTH_FACTOR}×first-${n} ${fmt(g.phaMaxFirst)} + ${fmt(GROWTH_SLACK)}`,
        )
      }
      expect(failures, failures.join('\n')).toEqual([])
    },
    RVM_CASE_TIMEOUT_MS,
  )
})
