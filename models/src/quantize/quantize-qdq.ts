/**
 * Static int8 quantization of a converted ONNX graph in the QDQ format (QuantizeLinear /
 * DequantizeLinear pairs around float operators), which onnxruntime's CPU EP turns into integer
 * kernels (QLinearConv, u8 activations × s8 weights, VNNI where the CPU has it).
 *
 * What is quantized: the convolutions a predicate selects. For each of them
 *   - the weight becomes an int8 initializer, symmetric per output channel, behind a DequantizeLinear;
 *   - the bias becomes int32 with scale = input scale × weight scale (what QLinearConv expects);
 *   - the activation going in, and the one coming out (after a directly following Relu or Clip,
 *     which onnxruntime then folds into the quantization), get one uint8 QuantizeLinear →
 *     DequantizeLinear pair, asymmetric per tensor, from ranges measured on calibration data.
 * Everything else stays float32 and sees the dequantized values.
 */
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'

const { onnx } = onnxProto
type IModelProto = OnnxTypes.IModelProto
type INodeProto = OnnxTypes.INodeProto
type ITensorProto = OnnxTypes.ITensorProto
const DT = onnx.TensorProto.DataType

export type Range = readonly [number, number]

export interface QdqPlan {
  /** Convolutions to quantize (node names). */
  convs: string[]
  /** Activation tensors that get a Q → DQ pair. */
  activations: string[]
}

/** Which tensors a QDQ quantization of the selected convolutions needs calibration ranges for. */
export function planQdq(modelBytes: Uint8Array, select: (conv: INodeProto) => boolean): QdqPlan {
  const model = onnx.ModelProto.decode(modelBytes)
  const g = model.graph!
  const inits = new Set((g.initializer ?? []).map((t) => t.name!))
  const consumers = consumersOf(g.node ?? [])
  const outputs = new Set((g.output ?? []).map((o) => o.name!))
  const convs: string[] = []
  const acts = new Set<string>()
  for (const n of g.node ?? []) {
    if (
      n.opType !== 'Conv' ||
      !inits.has(n.input![1]!) ||
      (n.input![2] !== undefined && n.input![2] !== '' && !inits.has(n.input![2]!))
    ) {
      continue
    }
    if (!select(n)) continue
    convs.push(n.name!)
    acts.add(n.input![0]!)
    acts.add(activationOut(n, consumers, outputs))
  }
  return { convs, activations: [...acts].filter((a) => !inits.has(a)) }
}

/** The tensor after the conv's directly following Relu/Clip (folded by onnxruntime), else its output. */
function activationOut(
  conv: INodeProto,
  consumers: Map<string, INodeProto[]>,
  outputs: Set<string>,
): string {
  const y = conv.output![0]!
  const next = consumers.get(y) ?? []
  if (
    next.length === 1 &&
    !outputs.has(y) &&
    (next[0]!.opType === 'Relu' || next[0]!.opType === 'Clip')
  ) {
    return next[0]!.output![0]!
  }
  return y
}

function consumersOf(nodes: INodeProto[]): Map<string, INodeProto[]> {
  const m = new Map<string, INodeProto[]>()
  for (const n of nodes) {
    for (const i of n.input ?? []) if (i !== '') m.set(i, [...(m.get(i) ?? []), n])
  }
  return m
}

/** The model with `tensors` added as graph outputs (types left to onnxruntime), for calibration. */
export function withOutputs(modelBytes: Uint8Array, tensors: readonly string[]): Uint8Array {
  const model = onnx.ModelProto.decode(modelBytes)
  const have = new Set((model.graph!.output ?? []).map((o) => o.name!))
  for (const t of tensors) {
    if (!have.has(t)) model.graph!.output!.push(onnx.ValueInfoProto.create({ name: t }))
  }
  return onnx.ModelProto.encode(model).finish()
}

/** uint8 affine parameters covering `range` (and 0, so that zero padding is exact). */
export function uint8Params([lo, hi]: Range): { scale: number; zeroPoint: number } {
  const rmin = Math.min(0, lo)
  const rmax = Math.max(0, hi)
  const scale = Math.fround(rmax > rmin ? (rmax - rmin) / 255 : 1)
  const zeroPoint = Math.min(255, Math.max(0, Math.round(-rmin / scale)))
  return { scale, zeroPoint }
}

/**
 * Writes the QDQ model: `plan.convs` quantized with the activation `ranges` measured for
 * `plan.activations` (every one must have a range).
 */
export function quantizeQdq(
  modelBytes: Uint8Array,
  plan: QdqPlan,
  ranges: ReadonlyMap<string, Range>,
  docString: string,
): Uint8Array {
  const model: IModelProto = onnx.ModelProto.decode(modelBytes)
  const g = model.graph!
  const nodes = g.node ?? []
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const convSet = new Set(plan.convs)
  const newInits: ITensorProto[] = []
  const head: INodeProto[] = []
  const qparams = new Map<string, { scale: number; zeroPoint: number; dq: string }>()

  // Activation Q → DQ pairs.
  const graphOutputs = new Set((g.output ?? []).map((o) => o.name!))
  for (const t of plan.activations) {
    const r = ranges.get(t)
    if (r === undefined) throw new Error(`quantize: no calibration range for ${t}`)
    const p = uint8Params(r)
    const s = `${t}/qdq/scale`
    const z = `${t}/qdq/zero_point`
    newInits.push(tensor(s, DT.FLOAT, [], new Uint8Array(Float32Array.of(p.scale).buffer)))
    newInits.push(tensor(z, DT.UINT8, [], Uint8Array.of(p.zeroPoint)))
    qparams.set(t, { ...p, dq: `${t}/qdq/dq` })
    head.push({
      opType: 'QuantizeLinear',
      name: `${t}/qdq/q/node`,
      input: [t, s, z],
      output: [`${t}/qdq/q`],
    })
    head.push({
      opType: 'DequantizeLinear',
      name: `${t}/qdq/dq/node`,
      input: [`${t}/qdq/q`, s, z],
      output: [`${t}/qdq/dq`],
    })
  }
  // Every consumer reads the dequantized value (graph outputs keep the float tensor).
  for (const n of nodes) {
    n.input = (n.input ?? []).map((i) => qparams.get(i)?.dq ?? i)
  }
  void graphOutputs

  // Weights and biases.
  for (const n of nodes) {
    if (n.opType !== 'Conv' || !convSet.has(n.name!)) continue
    const x = n.input![0]!.replace(/\/qdq\/dq$/, '')
    const xq = qparams.get(x)
    if (xq === undefined) throw new Error(`quantize: conv ${n.name} input ${x} has no quantization`)
    const w = inits.get(n.input![1]!)
    if (w === undefined) throw new Error(`quantize: conv ${n.name} weight is not an initializer`)
    const wf = floatsOf(w)
    const outC = Number(w.dims![0])
    const per = wf.length / outC
    const wq = new Int8Array(wf.length)
    const ws = new Float32Array(outC)
    for (let o = 0; o < outC; o++) {
      let m = 0
      for (let i = 0; i < per; i++) m = Math.max(m, Math.abs(wf[o * per + i]!))
      const s = Math.fround(m > 0 ? m / 127 : 1)
      ws[o] = s
      for (let i = 0; i < per; i++) {
        wq[o * per + i] = Math.max(-127, Math.min(127, Math.round(wf[o * per + i]! / s)))
      }
    }
    const wName = `${n.name}/w_int8`
    newInits.push(tensor(wName, DT.INT8, w.dims!.map(Number), new Uint8Array(wq.buffer)))
    newInits.push(tensor(`${wName}/scale`, DT.FLOAT, [outC], new Uint8Array(ws.buffer)))
    newInits.push(tensor(`${wName}/zero_point`, DT.INT8, [outC], new Uint8Array(outC)))
    head.push({
      opType: 'DequantizeLinear',
      name: `${wName}/dq/node`,
      input: [wName, `${wName}/scale`, `${wName}/zero_point`],
      output: [`${wName}/dq`],
      attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
    })
    n.input![1] = `${wName}/dq`
    const biasName = n.input![2]
    if (biasName !== undefined && biasName !== '') {
      const b = inits.get(biasName)
      if (b === undefined) throw new Error(`quantize: conv ${n.name} bias is not an initializer`)
      const bf = floatsOf(b)
      const bs = new Float32Array(outC)
      const bq = new Int32Array(outC)
      for (let o = 0; o < outC; o++) {
        bs[o] = Math.fround(xq.scale * ws[o]!)
        bq[o] = Math.round(bf[o]! / bs[o]!)
      }
      const bName = `${n.name}/b_int32`
      newInits.push(tensor(bName, DT.INT32, [outC], new Uint8Array(bq.buffer)))
      newInits.push(tensor(`${bName}/scale`, DT.FLOAT, [outC], new Uint8Array(bs.buffer)))
      newInits.push(tensor(`${bName}/zero_point`, DT.INT32, [outC], new Uint8Array(outC * 4)))
      head.push({
        opType: 'DequantizeLinear',
        name: `${bName}/dq/node`,
        input: [bName, `${bName}/scale`, `${bName}/zero_point`],
        output: [`${bName}/dq`],
        attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
      })
      n.input![2] = `${bName}/dq`
    }
  }
  // Q/DQ nodes go right after their producer so the node list stays topologically sorted.
  const byInput = new Map<string, INodeProto[]>()
  const early: INodeProto[] = []
  for (const q of head) {
    const src = q.input![0]!
    if (
      inits.has(src) ||
      newInits.some((t) => t.name === src) ||
      (g.input ?? []).some((i) => i.name === src)
    ) {
      early.push(q)
    } else byInput.set(src, [...(byInput.get(src) ?? []), q])
  }
  const ordered: INodeProto[] = [...early]
  const emit = (n: INodeProto): void => {
    ordered.push(n)
    for (const o of n.output ?? []) for (const q of byInput.get(o) ?? []) emit(q)
  }
  for (const q of early) {
    for (const o of q.output ?? []) for (const d of byInput.get(o) ?? []) emit(d)
  }
  for (const n of nodes) emit(n)
  g.node = ordered
  // Drop float weights no longer used.
  const used = new Set(ordered.flatMap((n) => n.input ?? []))
  g.initializer = [...(g.initializer ?? []).filter((t) => used.has(t.name!)), ...newInits]
  model.docString = docString
  // QuantizeLinear/DequantizeLinear with per-axis int32 bias need opset ≥ 13; the graph is 17.
  return onnx.ModelProto.encode(model).finish()
}

function tensor(name: string, dataType: number, dims: number[], raw: Uint8Array): ITensorProto {
  return { name, dataType, dims, rawData: raw }
}

function floatsOf(t: ITensorProto): Float32Array {
  if (t.dataType !== DT.FLOAT) throw new Error(`quantize: ${t.name} is not float32`)
  if (t.rawData && t.rawData.length > 0) {
    const copy = new Uint8Array(t.rawData)
    return new Float32Array(copy.buffer, 0, copy.length / 4)
  }
  return Float32Array.from(t.floatData ?? [])
}
