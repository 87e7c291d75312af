/**
 * onnxruntime-node side of the golden tests and the benchmark: opens `models/dist/<name>.onnx` on
 * the CPU execution provider with explicit session options and runs it on plain float32 arrays,
 * with the same canonical names as the tfjs reference runner. Tensors always cross this API in NHWC,
 * as tfjs has them: those the manifest marks NCHW are transposed on the way in and out.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as ort from 'onnxruntime-node'
import { nchwTensors, nchwToNhwc, nhwcToNchw } from './layout.ts'
import type { TensorData } from './tfjs-runner.ts'

export const DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist')

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all'
export type ExecutionMode = 'sequential' | 'parallel'

/** The session options the benchmark varies; anything unset keeps onnxruntime's default. */
export interface OrtCpuOptions {
  intraOpNumThreads?: number
  interOpNumThreads?: number
  graphOptimizationLevel?: GraphOptimizationLevel
  enableCpuMemArena?: boolean
  enableMemPattern?: boolean
  executionMode?: ExecutionMode
  /**
   * `session.intra_op.allow_spinning`: idle pool threads spin for work (onnxruntime's default,
   * true) or sleep. The inference service turns it off (engine/session.ts).
   */
  allowSpinning?: boolean
}

/** onnxruntime session options for `o` on the CPU EP (allowSpinning becomes a config entry). */
export function cpuSessionOptions(o: OrtCpuOptions): ort.InferenceSession.SessionOptions {
  const { allowSpinning, ...plain } = o
  return {
    executionProviders: ['cpu'],
    ...plain,
    ...(allowSpinning === undefined
      ? {}
      : { extra: { session: { intra_op: { allow_spinning: allowSpinning ? '1' : '0' } } } }),
  }
}

export interface OrtModel {
  readonly name: string
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  run(
    feeds: Record<string, TensorData>,
    outputNames?: readonly string[],
  ): Promise<Record<string, TensorData>>
  release(): Promise<void>
}

export const onnxPath = (name: string): string => path.join(DIST_DIR, `${name}.onnx`)

export async function openOrtModel(
  name: string,
  options: OrtCpuOptions = {},
  file = onnxPath(name),
): Promise<OrtModel> {
  const sessionOptions = cpuSessionOptions(options)
  const session = await ort.InferenceSession.create(file, sessionOptions)
  const nchw = nchwTensors(DIST_DIR, name)
  return {
    name,
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds, outputNames = session.outputNames) {
      const tensors: Record<string, ort.Tensor> = {}
      let result: ort.InferenceSession.OnnxValueMapType | undefined
      try {
        for (const [k, t] of Object.entries(feeds)) {
          const x = nchw.inputs.has(k) ? nhwcToNchw(t) : t
          tensors[k] = new ort.Tensor('float32', x.data, x.dims)
        }
        result = await session.run(tensors, [...outputNames])
        const out: Record<string, TensorData> = {}
        for (const o of outputNames) {
          const t = result[o]
          if (t === undefined) {
            throw new Error(`${name}: onnxruntime returned no ${o}`)
          }
          if (t.type !== 'float32') {
            throw new Error(`${name}: output ${o} is ${t.type}, expected float32`)
          }
          // Copy: the tensor's buffer belongs to onnxruntime and is freed with it.
          const copy = { data: Float32Array.from(t.data as Float32Array), dims: [...t.dims] }
          out[o] = nchw.outputs.has(o) ? nchwToNhwc(copy) : copy
        }
        return out
      } finally {
        for (const t of Object.values(tensors)) {
          t.dispose()
        }
        for (const t of Object.values(result ?? {})) {
          t.dispose()
        }
      }
    },
    release: () => session.release(),
  }
}
