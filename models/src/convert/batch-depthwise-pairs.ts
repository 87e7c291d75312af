/**
 * Separable depthwise filters applied to several narrow tensors with the same weights, batched
 * into one: Concat the inputs on channels, run the vertical and horizontal depthwise convolution
 * once over all channels (weights repeated per input), Split back to the original outputs
 * (models/README.md, "The converter").
 *
 * Why: RVM's fast guided filter box-filters four 4-channel tensors at low resolution (x, y, x·y,
 * x·x), each a 3×1 then a 1×3 depthwise convolution. onnxruntime runs a depthwise convolution in
 * its NCHWc layout with the channels padded to the block (16 with AVX-512, 8 with AVX2), so each of
 * the eight did the work of 16 channels (AVX-512) behind its own reorder in and out. Batched, two
 * convolutions do the 16 real channels with one reorder each way. Each output channel is computed
 * by the same taps in the same order, so the outputs are bit-identical (measured: 0 difference in
 * alpha and foreground).
 */
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'

const { onnx } = onnxProto
type INodeProto = OnnxTypes.INodeProto
type ITensorProto = OnnxTypes.ITensorProto
type IAttributeProto = OnnxTypes.IAttributeProto
const DT = onnx.TensorProto.DataType

interface Pair {
  first: INodeProto
  second: INodeProto
  channels: number
}

const attrOf = (n: INodeProto, name: string): IAttributeProto | undefined =>
  (n.attribute ?? []).find((a) => a.name === name)

const rawOf = (t: ITensorProto): Uint8Array => {
  if (t.dataType !== DT.FLOAT || !t.rawData || t.rawData.length === 0) {
    throw new Error(`batch-depthwise-pairs: ${t.name} is not raw float32`)
  }
  return new Uint8Array(t.rawData)
}

/** The key two depthwise convolutions must share to be batched: weights and attributes. */
function convKey(n: INodeProto, w: ITensorProto): string {
  const attrs = (n.attribute ?? [])
    .filter((a) => a.name !== 'group')
    .map((a) => JSON.stringify(onnx.AttributeProto.toObject(onnx.AttributeProto.fromObject(a))))
    .sort()
  return `${attrs.join('|')}|${Buffer.from(rawOf(w)).toString('base64')}`
}

/** Weights [C,1,kh,kw] repeated `times` along the output channels. */
function repeated(w: ITensorProto, name: string, times: number): ITensorProto {
  const raw = rawOf(w)
  const out = new Uint8Array(raw.length * times)
  for (let i = 0; i < times; i++) out.set(raw, i * raw.length)
  const [c, ...rest] = (w.dims ?? []).map(Number) as [number, ...number[]]
  return { name, dataType: DT.FLOAT, dims: [c * times, ...rest], rawData: out }
}

/**
 * Batches every set of ≥ 2 depthwise Conv → depthwise Conv pairs (no bias, the first read only by
 * the second) that have the same weights and attributes, where `select(first)` holds. Returns the
 * model unchanged when nothing qualifies.
 */
export function batchDepthwisePairs(
  modelBytes: Uint8Array,
  select: (conv: INodeProto) => boolean = () => true,
): { bytes: Uint8Array; batched: string[] } {
  const model = onnx.ModelProto.decode(modelBytes)
  const g = model.graph!
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const readers = new Map<string, INodeProto[]>()
  for (const n of g.node ?? []) {
    for (const i of n.input ?? []) readers.set(i, [...(readers.get(i) ?? []), n])
  }
  const graphOutputs = new Set((g.output ?? []).map((o) => o.name!))
  const depthwise = (n: INodeProto): number | null => {
    const w = inits.get(n.input?.[1] ?? '')
    if (n.opType !== 'Conv' || !w || (n.input?.[2] ?? '') !== '' || w.dims?.length !== 4) {
      return null
    }
    const c = Number(w.dims[0])
    const group = Number(attrOf(n, 'group')?.i ?? 1)
    return Number(w.dims[1]) === 1 && group === c ? c : null
  }
  const groups = new Map<string, Pair[]>()
  for (const first of g.node ?? []) {
    const c = depthwise(first)
    const next = readers.get(first.output![0]!) ?? []
    if (c === null || next.length !== 1 || graphOutputs.has(first.output![0]!) || !select(first)) {
      continue
    }
    const second = next[0]!
    if (depthwise(second) !== c || second.input![0] !== first.output![0]) continue
    const key = `${c}|${convKey(first, inits.get(first.input![1]!)!)}|${convKey(second, inits.get(second.input![1]!)!)}`
    groups.set(key, [...(groups.get(key) ?? []), { first, second, channels: c }])
  }
  const dropped = new Set<INodeProto>()
  const added: INodeProto[] = []
  const batched: string[] = []
  for (const pairs of groups.values()) {
    if (pairs.length < 2) continue
    const { first, second, channels } = pairs[0]!
    const total = channels * pairs.length
    const name = `${first.name}/batched`
    const withGroup = (n: INodeProto): IAttributeProto[] =>
      (n.attribute ?? []).map((a) =>
        a.name === 'group'
          ? onnx.AttributeProto.create({ name: 'group', type: a.type, i: total })
          : a,
      )
    g.initializer!.push(
      repeated(inits.get(first.input![1]!)!, `${name}/w1`, pairs.length),
      repeated(inits.get(second.input![1]!)!, `${name}/w2`, pairs.length),
      {
        name: `${name}/split`,
        dataType: DT.INT64,
        dims: [pairs.length],
        int64Data: pairs.map(() => channels),
      },
    )
    added.push(
      {
        name: `${name}/concat`,
        opType: 'Concat',
        input: pairs.map((p) => p.first.input![0]!),
        output: [`${name}/x`],
        attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
      },
      {
        ...first,
        name: `${name}/first`,
        input: [`${name}/x`, `${name}/w1`],
        output: [`${name}/first`],
        attribute: withGroup(first),
      },
      {
        ...second,
        name: `${name}/second`,
        input: [`${name}/first`, `${name}/w2`],
        output: [`${name}/second`],
        attribute: withGroup(second),
      },
      {
        name: `${name}/split`,
        opType: 'Split',
        input: [`${name}/second`, `${name}/split`],
        output: pairs.map((p) => p.second.output![0]!),
        attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
      },
    )
    for (const p of pairs) dropped.add(p.first).add(p.second)
    batched.push(...pairs.map((p) => p.first.name!))
  }
  if (batched.length === 0) return { bytes: modelBytes, batched }
  g.node = topologicalOrder(
    [...(g.node ?? []).filter((n) => !dropped.has(n)), ...added],
    new Set([...(g.input ?? []).map((i) => i.name!), ...g.initializer!.map((t) => t.name!), '']),
  )
  const stillRead = new Set(g.node.flatMap((n) => n.input ?? []))
  g.initializer = g.initializer!.filter((t) => stillRead.has(t.name!))
  return { bytes: onnx.ModelProto.encode(model).finish(), batched }
}

/** The nodes in an order where each comes after its inputs' producers, otherwise as given. */
function topologicalOrder(nodes: INodeProto[], available: Set<string>): INodeProto[] {
  const out: INodeProto[] = []
  let pending = nodes
  while (pending.length > 0) {
    const next: INodeProto[] = []
    for (const n of pending) {
      if ((n.input ?? []).every((i) => available.has(i))) {
        out.push(n)
        for (const o of n.output ?? []) available.add(o)
      } else next.push(n)
    }
    if (next.length === pending.length) throw new Error('batch-depthwise-pairs: a cycle')
    pending = next
  }
  return out
}
