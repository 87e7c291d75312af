/**
 * Reads a TensorFlow.js graph model (model.json + weight shards) from disk and decodes its weights
 * exactly as tfjs does (io_utils.decodeWeights): uint8/uint16 affine quantisation computed in
 * double precision and stored as float32, float16 expanded bit-exactly.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'

export type TfDtype = 'float32' | 'int32' | 'bool'

export interface TfAttrValue {
  type?: string
  i?: string | number
  f?: number
  b?: boolean
  s?: string
  shape?: unknown
  tensor?: unknown
  list?: { i?: (string | number)[]; f?: number[]; s?: string[]; type?: string[]; b?: boolean[] }
}

export interface TfNode {
  name: string
  op: string
  input?: string[]
  attr?: Record<string, TfAttrValue>
}

export interface TfTensorSpec {
  name: string
  dtype: string
  tensorShape?: { dim?: { size?: string }[]; unknownRank?: boolean }
}

export interface ConstTensor {
  dtype: TfDtype
  dims: number[]
  data: Float32Array | Int32Array | Uint8Array
}

export interface TfjsGraphModel {
  nodes: Map<string, TfNode>
  order: TfNode[]
  weights: Map<string, ConstTensor>
  signature: { inputs: Record<string, TfTensorSpec>; outputs: Record<string, TfTensorSpec> }
}

interface WeightEntry {
  name: string
  shape: number[]
  dtype: string
  quantization?: { dtype: 'uint8' | 'uint16' | 'float16'; min?: number; scale?: number }
}

interface ModelJson {
  format?: string
  modelTopology: { node: TfNode[]; library?: { function?: unknown[] } }
  weightsManifest: { paths: string[]; weights: WeightEntry[] }[]
  signature?: { inputs: Record<string, TfTensorSpec>; outputs: Record<string, TfTensorSpec> }
}

export async function loadTfjsGraphModel(modelJsonPath: string): Promise<TfjsGraphModel> {
  const json = JSON.parse(await readFile(modelJsonPath, 'utf8')) as ModelJson
  if (json.format !== undefined && json.format !== 'graph-model') {
    throw new Error(`${modelJsonPath}: format '${json.format}' is not a tfjs graph model`)
  }
  if ((json.modelTopology.library?.function?.length ?? 0) > 0) {
    throw new Error(`${modelJsonPath}: graph functions (library.function) are not supported`)
  }
  const dir = path.dirname(modelJsonPath)
  const weights = new Map<string, ConstTensor>()
  for (const group of json.weightsManifest) {
    const shards = await Promise.all(group.paths.map((p) => readFile(path.join(dir, p))))
    const buf = Buffer.concat(shards)
    let offset = 0
    for (const w of group.weights) {
      const { tensor, bytes } = decodeWeight(w, buf, offset)
      weights.set(w.name, tensor)
      offset += bytes
    }
    if (offset !== buf.length) {
      throw new Error(
        `${modelJsonPath}: weight shards hold ${buf.length} bytes but the manifest describes ${offset}`,
      )
    }
  }
  const nodes = new Map<string, TfNode>()
  for (const n of json.modelTopology.node) nodes.set(n.name, n)
  if (!json.signature) throw new Error(`${modelJsonPath}: no signature`)
  return { nodes, order: json.modelTopology.node, weights, signature: json.signature }
}

function decodeWeight(
  w: WeightEntry,
  buf: Buffer,
  offset: number,
): { tensor: ConstTensor; bytes: number } {
  const size = w.shape.reduce((a, b) => a * b, 1)
  const dims = [...w.shape]
  const q = w.quantization
  if (q) {
    if (w.dtype !== 'float32') {
      throw new Error(`weight ${w.name}: quantised ${w.dtype} weights are not supported`)
    }
    if (q.dtype === 'float16') {
      const out = new Float32Array(size)
      for (let i = 0; i < size; i++) out[i] = halfToFloat(buf.readUInt16LE(offset + 2 * i))
      return { tensor: { dtype: 'float32', dims, data: out }, bytes: 2 * size }
    }
    const min = q.min ?? 0
    const scale = q.scale ?? 1
    const width = q.dtype === 'uint8' ? 1 : 2
    const out = new Float32Array(size)
    for (let i = 0; i < size; i++) {
      const v = width === 1 ? buf[offset + i]! : buf.readUInt16LE(offset + 2 * i)
      out[i] = v * scale + min
    }
    return { tensor: { dtype: 'float32', dims, data: out }, bytes: width * size }
  }
  switch (w.dtype) {
    case 'float32': {
      const out = new Float32Array(size)
      for (let i = 0; i < size; i++) out[i] = buf.readFloatLE(offset + 4 * i)
      return { tensor: { dtype: 'float32', dims, data: out }, bytes: 4 * size }
    }
    case 'int32': {
      const out = new Int32Array(size)
      for (let i = 0; i < size; i++) out[i] = buf.readInt32LE(offset + 4 * i)
      return { tensor: { dtype: 'int32', dims, data: out }, bytes: 4 * size }
    }
    case 'bool': {
      const out = new Uint8Array(size)
      for (let i = 0; i < size; i++) out[i] = buf[offset + i]! ? 1 : 0
      return { tensor: { dtype: 'bool', dims, data: out }, bytes: size }
    }
    default:
      throw new Error(`weight ${w.name}: dtype ${w.dtype} is not supported`)
  }
}

/** IEEE 754 binary16 → float32, bit-exact (subnormals, infinities and NaN included). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >> 10) & 0x1f
  const frac = h & 0x3ff
  if (exp === 0) return sign * frac * 2 ** -24
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN
  return sign * (1 + frac / 1024) * 2 ** (exp - 15)
}

export function attrString(node: TfNode, key: string): string | undefined {
  const s = node.attr?.[key]?.s
  return s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8')
}

export function attrInt(node: TfNode, key: string): number | undefined {
  const i = node.attr?.[key]?.i
  return i === undefined ? undefined : Number(i)
}

export function attrBool(node: TfNode, key: string): boolean | undefined {
  return node.attr?.[key]?.b
}

export function attrFloat(node: TfNode, key: string): number | undefined {
  return node.attr?.[key]?.f
}

export function attrInts(node: TfNode, key: string): number[] | undefined {
  const l = node.attr?.[key]?.list
  if (l === undefined) return undefined
  return (l.i ?? []).map(Number)
}

export function attrStrings(node: TfNode, key: string): string[] | undefined {
  const l = node.attr?.[key]?.list
  if (l === undefined) return undefined
  return (l.s ?? []).map((s) => Buffer.from(s, 'base64').toString('utf8'))
}

export function attrType(node: TfNode, key: string): string | undefined {
  return node.attr?.[key]?.type
}
