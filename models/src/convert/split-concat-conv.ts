/**
 * A channel Concat feeding a float convolution, rewritten as one convolution per concatenated part
 * whose outputs are added: Conv(Concat(a, b, c), W, bias) = Conv(a, W_a, bias) + Conv(b, W_b) +
 * Conv(c, W_c), W_x the columns of W that read x (models/README.md, "RVM on two CPU cores").
 *
 * Why: onnxruntime's CPU provider runs a convolution in its blocked NCHWc layout (direct kernels,
 * no im2col) only when its input channel count is a multiple of the block (16 with AVX-512, 8 with
 * AVX2) or below it. RVM's decoder concatenates the upsampled features, an encoder skip and the
 * downsampled frame (171, 107, 59, 35 channels), so those four 3×3 convolutions — the largest
 * items of the decoder's time — ran as NCHW im2col + GEMM with layout reorders around the Concat.
 * Split, every part is NCHWc-eligible: a part with ≥ 16 channels that is not a multiple of 16 is
 * sliced into its aligned head and a tail below 16. The sum is the same arithmetic reassociated
 * (float32 rounding only).
 *
 * `mergeConcatConvs` is the exact inverse (same tensor names, same weights and node order), which
 * the int8 transform applies first so its committed calibration ranges keep naming the Concat
 * outputs it quantizes.
 */
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'

const { onnx } = onnxProto
type INodeProto = OnnxTypes.INodeProto
type ITensorProto = OnnxTypes.ITensorProto
type IGraphProto = OnnxTypes.IGraphProto
const DT = onnx.TensorProto.DataType

/** The alignment a part is cut to: AVX-512's NCHWc block (a multiple of AVX2's 8). */
export const NCHWC_BLOCK = 16

/** What the first part's node records of the convolution it replaced (its doc_string, JSON). */
interface SplitRecord {
  splitOf: string
  conv: string
  concat: string
  concatInputs: string[]
  weight: string
  /** the weight's index among the initializers before the split */
  weightIndex: number
  parts: number
}

const RECORD_KEY = 'splitOf'

/**
 * Rank-4 dims of every tensor the graph determines statically (null: unknown), enough to know the
 * channel count of each Concat input.
 */
function staticDims(g: IGraphProto): Map<string, (number | null)[]> {
  const dims = new Map<string, (number | null)[]>()
  for (const t of g.initializer ?? []) dims.set(t.name!, (t.dims ?? []).map(Number))
  for (const i of g.input ?? []) {
    const d = i.type?.tensorType?.shape?.dim
    if (d) {
      dims.set(
        i.name!,
        d.map((x) => (x.dimValue != null ? Number(x.dimValue) : null)),
      )
    }
  }
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const attr = (n: INodeProto, name: string) => (n.attribute ?? []).find((a) => a.name === name)
  const elementwise = new Set([
    'Cast',
    'Mul',
    'Add',
    'Sub',
    'Div',
    'Relu',
    'Clip',
    'Sigmoid',
    'Tanh',
    'HardSwish',
    'HardSigmoid',
    'Resize',
    'AveragePool',
    'MaxPool',
  ])
  for (const n of g.node ?? []) {
    const ins = (n.input ?? []).map((i) => dims.get(i))
    let out: (number | null)[] | undefined
    if (n.opType === 'Conv') {
      const w = ins[1]
      if (w && w.length === 4) out = [null, w[0]!, null, null]
    } else if (n.opType === 'Transpose') {
      const perm = (attr(n, 'perm')?.ints ?? []).map(Number)
      const d = ins[0]
      if (d && d.length === perm.length) out = perm.map((p) => d[p]!)
    } else if (n.opType === 'Concat') {
      const axis = Number(attr(n, 'axis')?.i ?? 0)
      if (axis === 1 && ins.every((d) => d && d.length === 4 && d[1] !== null)) {
        out = [null, ins.reduce((s, d) => s + d![1]!, 0), null, null]
      }
    } else if (n.opType === 'Split') {
      const axis = Number(attr(n, 'axis')?.i ?? 0)
      const sizes = n.input?.[1] ? inits.get(n.input[1]) : undefined
      const s = sizes ? int64s(sizes) : []
      if (axis === 1 && s.length === (n.output ?? []).length) {
        n.output!.forEach((o, k) => dims.set(o, [null, s[k]!, null, null]))
      }
      continue
    } else if (elementwise.has(n.opType!)) {
      // Rank-4 inputs broadcast; a scale/size operand of Resize has rank 1 and is skipped.
      const r4 = ins.filter((d): d is (number | null)[] => d !== undefined && d.length === 4)
      if (r4.length > 0) {
        out = [0, 1, 2, 3].map((ax) => {
          const known = r4.map((d) => d[ax]).filter((v): v is number => v !== null && v !== 1)
          if (known.length > 0) return known[0]!
          return r4.every((d) => d[ax] === 1) ? 1 : null
        })
      }
    }
    if (out && n.output?.[0]) dims.set(n.output[0], out)
  }
  return dims
}

function int64s(t: ITensorProto): number[] {
  if (t.int64Data && t.int64Data.length > 0) return t.int64Data.map(Number)
  if (t.rawData && t.rawData.length > 0) {
    const c = new Uint8Array(t.rawData)
    return [...new BigInt64Array(c.buffer, c.byteOffset, c.byteLength / 8)].map(Number)
  }
  return []
}

function floatsOf(t: ITensorProto): Float32Array {
  if (t.dataType !== DT.FLOAT) throw new Error(`split-concat-conv: ${t.name} is not float32`)
  if (t.rawData && t.rawData.length > 0) {
    const c = new Uint8Array(t.rawData)
    return new Float32Array(c.buffer, c.byteOffset, c.byteLength / 4)
  }
  return Float32Array.from(t.floatData ?? [])
}

const floatTensor = (name: string, dims: number[], v: Float32Array): ITensorProto => ({
  name,
  dataType: DT.FLOAT,
  dims,
  rawData: new Uint8Array(v.buffer, v.byteOffset, v.byteLength),
})

/**
 * Splits every channel Concat (axis 1, read by nothing else) that feeds a Conv with a constant
 * float32 weight, ungrouped, where `select(conv)` holds and every part's channel count is known.
 * Returns the model unchanged when nothing qualifies.
 */
export function splitConcatConvs(
  modelBytes: Uint8Array,
  select: (conv: INodeProto) => boolean = () => true,
): { bytes: Uint8Array; split: string[] } {
  const model = onnx.ModelProto.decode(modelBytes)
  const g = model.graph!
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const dims = staticDims(g)
  const producer = new Map<string, INodeProto>()
  const readers = new Map<string, number>()
  for (const n of g.node ?? []) {
    for (const o of n.output ?? []) producer.set(o, n)
    for (const i of n.input ?? []) readers.set(i, (readers.get(i) ?? 0) + 1)
  }
  const graphOutputs = new Set((g.output ?? []).map((o) => o.name!))
  const nodes: INodeProto[] = []
  const dropped = new Set<INodeProto>()
  const split: string[] = []
  for (const n of g.node ?? []) {
    const cat = n.opType === 'Conv' ? producer.get(n.input![0]!) : undefined
    const w = inits.get(n.input?.[1] ?? '')
    const group = Number((n.attribute ?? []).find((a) => a.name === 'group')?.i ?? 1)
    const axis = Number((cat?.attribute ?? []).find((a) => a.name === 'axis')?.i ?? 0)
    const bias = n.input?.[2] ?? ''
    if (
      !cat ||
      cat.opType !== 'Concat' ||
      axis !== 1 ||
      !w ||
      w.dataType !== DT.FLOAT ||
      w.dims?.length !== 4 ||
      group !== 1 ||
      (bias !== '' && !inits.has(bias)) ||
      readers.get(cat.output![0]!) !== 1 ||
      graphOutputs.has(cat.output![0]!) ||
      !select(n)
    ) {
      nodes.push(n)
      continue
    }
    const chans = cat.input!.map((t) => dims.get(t)?.[1] ?? null)
    const [O, C, KH, KW] = w.dims.map(Number) as [number, number, number, number]
    const unknown = chans.filter((c) => c === null).length
    if (unknown === 1) {
      const known = chans.reduce<number>((s, c) => s + (c ?? 0), 0)
      chans[chans.indexOf(null)] = C - known
    }
    if (chans.some((c) => c === null || c <= 0) || chans.reduce((s, c) => s! + c!, 0) !== C) {
      nodes.push(n)
      continue
    }
    // Parts: [tensor, first channel in the tensor, channel count, first column of W].
    const parts: [string, number, number, number][] = []
    let col = 0
    cat.input!.forEach((t, k) => {
      const c = chans[k]!
      const head = c - (c % NCHWC_BLOCK)
      if (c > NCHWC_BLOCK && head !== c) {
        parts.push([t, 0, head, col], [t, head, c - head, col + head])
      } else parts.push([t, 0, c, col])
      col += c
    })
    const wf = floatsOf(w)
    const conv = n.name!
    const record: SplitRecord = {
      splitOf: conv,
      conv: JSON.stringify(n),
      concat: JSON.stringify(cat),
      concatInputs: cat.input!,
      weight: w.name!,
      weightIndex: g.initializer!.indexOf(w),
      parts: parts.length,
    }
    let sum: string | null = null
    parts.forEach(([t, first, c, c0], k) => {
      let input = t
      if (first !== 0 || c !== chans[cat.input!.indexOf(t)]) {
        const name = `${conv}/part${k}/slice`
        const consts = [
          [`${name}/starts`, first],
          [`${name}/ends`, first + c],
          [`${name}/axes`, 1],
        ] as const
        for (const [cn, v] of consts) {
          g.initializer!.push({ name: cn, dataType: DT.INT64, dims: [1], int64Data: [v] })
        }
        nodes.push({
          name,
          opType: 'Slice',
          input: [t, ...consts.map(([cn]) => cn)],
          output: [`${name}/out`],
        })
        input = `${name}/out`
      }
      const wp = new Float32Array(O * c * KH * KW)
      const hw = KH * KW
      for (let o = 0; o < O; o++) {
        wp.set(wf.subarray((o * C + c0) * hw, (o * C + c0 + c) * hw), o * c * hw)
      }
      g.initializer!.push(floatTensor(`${conv}/part${k}/weight`, [O, c, KH, KW], wp))
      const last = k === parts.length - 1
      const out = last && parts.length === 1 ? n.output![0]! : `${conv}/part${k}`
      const part: INodeProto = {
        ...n,
        name: `${conv}/part${k}`,
        input:
          k === 0 && bias !== ''
            ? [input, `${conv}/part${k}/weight`, bias]
            : [input, `${conv}/part${k}/weight`],
        output: [out],
        docString: k === 0 ? JSON.stringify(record) : '',
      }
      nodes.push(part)
      if (sum === null) sum = out
      else {
        const s = last ? n.output![0]! : `${conv}/sum${k}`
        nodes.push({ name: `${conv}/sum${k}`, opType: 'Add', input: [sum, out], output: [s] })
        sum = s
      }
    })
    dropped.add(cat)
    split.push(conv)
  }
  if (split.length === 0) return { bytes: modelBytes, split }
  g.node = nodes.filter((x) => !dropped.has(x))
  const stillRead = new Set(g.node.flatMap((x) => x.input ?? []))
  g.initializer = g.initializer!.filter((t) => stillRead.has(t.name!))
  return { bytes: onnx.ModelProto.encode(model).finish(), split }
}

/** The inverse of `splitConcatConvs`: the Concat and the convolution as they were. */
export function mergeConcatConvs(modelBytes: Uint8Array): Uint8Array {
  const model = onnx.ModelProto.decode(modelBytes)
  const g = model.graph!
  const records = (g.node ?? [])
    .map((n) => parseRecord(n.docString ?? ''))
    .filter((r): r is SplitRecord => r !== null)
  if (records.length === 0) return modelBytes
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]))
  const byConv = new Map(records.map((r) => [r.splitOf, r]))
  const nodes: INodeProto[] = []
  const merged: [number, ITensorProto][] = []
  for (const n of g.node ?? []) {
    const r = parseRecord(n.docString ?? '')
    const owner = [...byConv.keys()].find((c) => n.name!.startsWith(`${c}/`))
    if (owner === undefined) {
      nodes.push(n)
      continue
    }
    if (r === null) continue // the other parts, their slices and sums
    const conv = onnx.NodeProto.fromObject(JSON.parse(r.conv) as object)
    const cat = onnx.NodeProto.fromObject(JSON.parse(r.concat) as object)
    const ws = Array.from({ length: r.parts }, (_, k) => inits.get(`${r.splitOf}/part${k}/weight`)!)
    const [O, , KH, KW] = ws[0]!.dims!.map(Number) as [number, number, number, number]
    const cs = ws.map((w) => Number(w.dims![1]))
    const C = cs.reduce((s, c) => s + c, 0)
    const hw = KH * KW
    const wf = new Float32Array(O * C * hw)
    let c0 = 0
    ws.forEach((w, k) => {
      const p = floatsOf(w)
      const c = cs[k]!
      for (let o = 0; o < O; o++) {
        wf.set(p.subarray(o * c * hw, (o + 1) * c * hw), (o * C + c0) * hw)
      }
      c0 += c
    })
    merged.push([r.weightIndex, floatTensor(r.weight, [O, C, KH, KW], wf)])
    nodes.push(cat, conv)
  }
  g.node = nodes
  const owners = [...byConv.keys()]
  const inits2 = (g.initializer ?? []).filter(
    (t) => !owners.some((c) => t.name!.startsWith(`${c}/part`)),
  )
  for (const [i, t] of merged.sort((a, b) => a[0] - b[0])) inits2.splice(i, 0, t)
  g.initializer = inits2
  return onnx.ModelProto.encode(model).finish()
}

function parseRecord(doc: string): SplitRecord | null {
  if (!doc.startsWith(`{"${RECORD_KEY}"`)) return null
  return JSON.parse(doc) as SplitRecord
}
