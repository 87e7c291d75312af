/**
 * A small ONNX graph builder serialised with onnx-proto (the ONNX protobuf definitions on npm).
 * Tensor element types used here: float32, int32, int64, bool, uint8.
 */
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'

// onnx-proto is CommonJS: take the runtime namespace from its default export, the types by name.
const { onnx } = onnxProto
type INodeProto = OnnxTypes.INodeProto
type ITensorProto = OnnxTypes.ITensorProto
type IValueInfoProto = OnnxTypes.IValueInfoProto
type IAttributeProto = OnnxTypes.IAttributeProto

export type OnnxDtype = 'float32' | 'int32' | 'int64' | 'bool' | 'uint8'

const ELEM: Record<OnnxDtype, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
  uint8: onnx.TensorProto.DataType.UINT8,
}

export type AttrValue =
  number | string | number[] | { floats: number[] } | { float: number } | { ints: number[] }

export interface IoSpec {
  name: string
  dtype: OnnxDtype
  /** number = fixed, string = symbolic, null = unknown */
  dims: (number | string | null)[] | null
}

export const OPSET = 17

export class OnnxGraphBuilder {
  readonly nodes: INodeProto[] = []
  readonly initializers: ITensorProto[] = []
  readonly inputs: IValueInfoProto[] = []
  readonly outputs: IValueInfoProto[] = []
  #names = new Set<string>()
  #constCache = new Map<string, string>()

  /** A fresh, unique tensor name derived from `base`. */
  unique(base: string): string {
    let name = base
    for (let i = 1; this.#names.has(name); i++) name = `${base}__${i}`
    this.#names.add(name)
    return name
  }

  reserve(name: string): void {
    if (this.#names.has(name)) throw new Error(`tensor name ${name} is already taken`)
    this.#names.add(name)
  }

  addInput(spec: IoSpec): void {
    this.reserve(spec.name)
    this.inputs.push(valueInfo(spec))
  }

  addOutput(spec: IoSpec): void {
    this.outputs.push(valueInfo(spec))
  }

  /** Emits a node and returns its output names. */
  node(
    opType: string,
    inputs: string[],
    attrs: Record<string, AttrValue> = {},
    opts: { name?: string; outputs?: number | string[] } = {},
  ): string[] {
    const base = opts.name ?? opType
    const outNames = Array.isArray(opts.outputs)
      ? opts.outputs /* reserved by the caller */
      : Array.from({ length: opts.outputs ?? 1 }, (_, i) =>
          this.unique(i === 0 ? base : `${base}:${i}`),
        )
    this.nodes.push({
      opType,
      name: this.unique(`${base}/node`),
      input: inputs,
      output: outNames,
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    })
    return outNames
  }

  /** One-output node. */
  op(
    opType: string,
    inputs: string[],
    attrs: Record<string, AttrValue> = {},
    name?: string,
  ): string {
    return this.node(opType, inputs, attrs, { name })[0]!
  }

  initializer(
    name: string,
    dtype: OnnxDtype,
    dims: number[],
    data: ArrayLike<number> | ArrayLike<bigint>,
  ): string {
    const n = this.unique(name)
    this.initializers.push(tensorProto(n, dtype, dims, data))
    return n
  }

  /** A small constant, deduplicated by value. */
  constant(dtype: OnnxDtype, dims: number[], values: number[]): string {
    const key = `${dtype}|${dims.join(',')}|${values.join(',')}`
    const hit = this.#constCache.get(key)
    if (hit) return hit
    const data = dtype === 'int64' ? values.map((v) => BigInt(v)) : values
    const n = this.initializer(`const_${dtype}_${this.#constCache.size}`, dtype, dims, data)
    this.#constCache.set(key, n)
    return n
  }

  i64(values: number[]): string {
    return this.constant('int64', [values.length], values)
  }

  /**
   * Drops nodes none of whose outputs is read (by a node or as a graph output), repeatedly, then
   * the initializers no node reads. The converter emits the inputs of a node before it knows the
   * node will be fused (Keras hard-swish: its x/6, x+3 and Relu6 are converted, then replaced by
   * one HardSwish), and onnxruntime runs such dead nodes anyway. Returns how many were dropped.
   */
  pruneDead(): number {
    const before = this.nodes.length
    for (;;) {
      const read = new Set(this.outputs.map((o) => o.name!))
      for (const n of this.nodes) for (const i of n.input ?? []) read.add(i)
      const live = this.nodes.filter((n) => (n.output ?? []).some((o) => read.has(o)))
      if (live.length === this.nodes.length) break
      this.nodes.splice(0, this.nodes.length, ...live)
    }
    const read = new Set(this.nodes.flatMap((n) => n.input ?? []))
    const kept = this.initializers.filter((t) => read.has(t.name!))
    this.initializers.splice(0, this.initializers.length, ...kept)
    return before - this.nodes.length
  }

  serialize(
    graphName: string,
    producer: { name: string; version: string },
    docString: string,
  ): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: producer.name,
      producerVersion: producer.version,
      docString,
      opsetImport: [{ domain: '', version: OPSET }],
      graph: {
        name: graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    })
    return onnx.ModelProto.encode(model).finish()
  }
}

function valueInfo(spec: IoSpec): IValueInfoProto {
  return {
    name: spec.name,
    type: {
      tensorType: {
        elemType: ELEM[spec.dtype],
        shape:
          spec.dims === null
            ? undefined
            : {
                dim: spec.dims.map((d) =>
                  typeof d === 'number'
                    ? { dimValue: d }
                    : typeof d === 'string'
                      ? { dimParam: d }
                      : {},
                ),
              },
      },
    },
  }
}

function attribute(name: string, v: AttrValue): IAttributeProto {
  const T = onnx.AttributeProto.AttributeType
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new Error(`attribute ${name}: use { float } for non-integers`)
    return { name, type: T.INT, i: v }
  }
  if (typeof v === 'string') return { name, type: T.STRING, s: new TextEncoder().encode(v) }
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v }
  if ('floats' in v) return { name, type: T.FLOATS, floats: v.floats }
  if ('ints' in v) return { name, type: T.INTS, ints: v.ints }
  return { name, type: T.FLOAT, f: v.float }
}

function tensorProto(
  name: string,
  dtype: OnnxDtype,
  dims: number[],
  data: ArrayLike<number> | ArrayLike<bigint>,
): ITensorProto {
  const n = data.length
  let raw: Uint8Array
  switch (dtype) {
    case 'float32': {
      const a = new Float32Array(n)
      for (let i = 0; i < n; i++) a[i] = Number(data[i])
      raw = new Uint8Array(a.buffer)
      break
    }
    case 'int32': {
      const a = new Int32Array(n)
      for (let i = 0; i < n; i++) a[i] = Number(data[i])
      raw = new Uint8Array(a.buffer)
      break
    }
    case 'int64': {
      const a = new BigInt64Array(n)
      for (let i = 0; i < n; i++) a[i] = BigInt(data[i]!)
      raw = new Uint8Array(a.buffer)
      break
    }
    case 'bool': {
      raw = new Uint8Array(n)
      for (let i = 0; i < n; i++) raw[i] = Number(data[i]) ? 1 : 0
      break
    }
    case 'uint8': {
      raw = new Uint8Array(n)
      for (let i = 0; i < n; i++) raw[i] = Number(data[i])
      break
    }
  }
  return { name, dims, dataType: ELEM[dtype], rawData: raw }
}
