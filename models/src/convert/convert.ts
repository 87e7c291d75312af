/**
 * TensorFlow.js graph model → ONNX (opset 17).
 *
 * Layout: TensorFlow graphs are NHWC. Every rank-4 activation is kept physically in NCHW inside the
 * ONNX graph (`Val.nchw`), while the converter keeps reasoning in the graph's logical NHWC axes;
 * transposes appear only at the graph's inputs and outputs and where an op needs the logical
 * memory order (Reshape, rank-reducing ops). Constants are permuted at conversion time. So the
 * graph has no Transpose pairs around convolutions at all, before onnxruntime's optimiser runs.
 *
 * Control flow (tf v1 Switch/Merge) is resolved at conversion time: `branches` names each
 * predicate node and the value it takes; the dead branch is dropped.
 *
 * Unsupported operators and attribute combinations throw, naming the op and node.
 */
import {
  attrBool,
  attrFloat,
  attrInt,
  attrInts,
  attrString,
  attrStrings,
  attrType,
  type ConstTensor,
  type TfjsGraphModel,
  type TfNode,
} from './tfjs-model.ts'
import { OnnxGraphBuilder, type OnnxDtype, type IoSpec } from './onnx-builder.ts'

export interface ConvertOptions {
  /** predicate node name → value it is fixed to */
  branches?: Record<string, boolean>
  /**
   * ONNX input specs by placeholder node name (dims override the signature's). A rank-4 input
   * with `layout: 'nchw'` is given channels-first (dims in NCHW order) instead of the graph's NHWC.
   */
  inputs: Record<string, { dims: (number | string)[]; layout?: 'nhwc' | 'nchw' }>
  /** ONNX output name → tfjs tensor ref (node[:index]) */
  outputs: Record<string, string>
  /** Rank-4 outputs handed out channels-first (NCHW) instead of the graph's NHWC. */
  nchwOutputs?: string[]
  graphName: string
  producerVersion: string
  docString: string
  /**
   * Placeholders computed by graph code instead of being graph inputs: the function declares the
   * inputs it needs and returns a channels-first (NCHW) float tensor standing for the placeholder.
   */
  prelude?: Record<string, (b: OnnxGraphBuilder) => string>
  /**
   * Graph code that replaces part of the graph's end: run after `outputs` are converted, it reads
   * converted tfjs tensors (`ref`, channels-first for rank 4) and declares further outputs itself.
   * Nodes only the replaced part used are never converted (conversion is lazy from the outputs).
   */
  tail?: (t: TailContext) => void
}

/** What a `tail` sees of the conversion. */
export interface TailContext {
  b: OnnxGraphBuilder
  /** A converted tfjs tensor (node[:index]); rank 4 comes channels-first (NCHW). */
  ref(ref: string): string
  /** The tensor standing for a graph input or a prelude placeholder (NCHW for rank 4). */
  input(name: string): string
}

interface Val {
  name: string
  dtype: OnnxDtype
  rank: number | null
  /** rank-4 tensor stored as NCHW whose logical axes are NHWC */
  nchw: boolean
  konst?: ConstTensor
  /** static length of a rank-1 tensor (shape arithmetic), when known */
  len?: number
  /**
   * Derived from a rank-4 graph input at its own resolution without a convolution in between
   * (e.g. RVM's guided-filter refiner at full resolution). Such tensors stay NHWC, as the input
   * is given, so that no full-resolution Transpose is needed; everything else goes NCHW.
   */
  hires?: boolean
}

const DEAD = Symbol('dead')
type Out = Val | typeof DEAD

const NHWC_TO_NCHW = [0, 3, 1, 2]
const NCHW_TO_NHWC = [0, 2, 3, 1]
/** logical NHWC axis → physical NCHW axis */
const AXIS_NCHW = [0, 2, 3, 1]

export class ConversionError extends Error {}

export function convertGraph(
  model: TfjsGraphModel,
  opts: ConvertOptions,
): { bytes: Uint8Array; opCounts: Record<string, number> } {
  const c = new Converter(model, opts)
  return c.run()
}

class Converter {
  readonly b = new OnnxGraphBuilder()
  readonly memo = new Map<string, Out[]>()
  readonly transposed = new Map<string, string>()
  readonly consumers = new Map<string, { node: TfNode; slot: number }[]>()
  readonly inProgress = new Set<string>()

  constructor(
    readonly m: TfjsGraphModel,
    readonly o: ConvertOptions,
  ) {
    for (const n of m.order) {
      this.dataInputs(n).forEach((r, slot) => {
        const src = splitRef(r)[0]
        const list = this.consumers.get(src) ?? []
        list.push({ node: n, slot })
        this.consumers.set(src, list)
      })
    }
  }

  run(): { bytes: Uint8Array; opCounts: Record<string, number> } {
    for (const outName of Object.keys(this.o.outputs)) this.b.reserve(outName)
    for (const [outName, ref] of Object.entries(this.o.outputs)) {
      const v = this.ref(ref)
      if (v === DEAD) throw new ConversionError(`output ${outName} (${ref}) is on a dead branch`)
      const plain =
        this.o.nchwOutputs?.includes(outName) === true
          ? this.toNchw(this.mat(v))
          : this.toNhwc(this.mat(v))
      this.b.node('Identity', [plain.name], {}, { outputs: [outName] })
      this.b.addOutput({
        name: outName,
        dtype: plain.dtype,
        dims: plain.rank === null ? null : Array.from({ length: plain.rank }, () => null),
      })
    }
    this.o.tail?.({
      b: this.b,
      ref: (r) => this.tailTensor(this.ref(r), r),
      input: (name) => this.tailTensor(this.ref(name), name),
    })
    this.b.pruneDead()
    const counts: Record<string, number> = {}
    for (const n of this.b.nodes) counts[n.opType!] = (counts[n.opType!] ?? 0) + 1
    return {
      bytes: this.b.serialize(
        this.o.graphName,
        { name: 'tailor-tfjs2onnx', version: this.o.producerVersion },
        this.o.docString,
      ),
      opCounts: counts,
    }
  }

  tailTensor(v: Out, what: string): string {
    if (v === DEAD) throw new ConversionError(`tail: ${what} is on a dead branch`)
    return v.rank === 4 ? this.toNchw(this.mat(v)).name : this.mat(v).name
  }

  // ---- graph walking -------------------------------------------------------------------------

  ref(ref: string): Out {
    if (ref.startsWith('^')) throw new ConversionError(`control input ${ref} used as data`)
    const [name, idxStr] = splitRef(ref)
    const idx = Number(idxStr ?? 0)
    const sw = this.m.nodes.get(name)
    if (sw?.op === 'Switch') {
      // Lazy: the data of a dead output is never converted (it may use inputs the graph drops).
      const [dataRef, predRef] = this.dataInputs(sw)
      return (this.predicate(predRef!) ? 1 : 0) === idx ? this.ref(dataRef!) : DEAD
    }
    const outs = this.convertNode(name)
    const v = outs[idx]
    if (v === undefined) throw new ConversionError(`node ${name} has no output ${idx}`)
    return v
  }

  node(name: string): TfNode {
    const n = this.m.nodes.get(name)
    if (!n) throw new ConversionError(`unknown node ${name}`)
    return n
  }

  dataInputs(n: TfNode): string[] {
    return (n.input ?? []).filter((i) => !i.startsWith('^'))
  }

  convertNode(name: string): Out[] {
    const hit = this.memo.get(name)
    if (hit) return hit
    const n = this.node(name)
    if (this.inProgress.has(name)) throw new ConversionError(`cycle through node ${name}`)
    this.inProgress.add(name)
    let outs: Out[]
    if (n.op === 'Merge') {
      const live = this.dataInputs(n)
        .map((r) => this.ref(r))
        .filter((v): v is Val => v !== DEAD)
      if (live.length !== 1) {
        throw new ConversionError(`Merge ${name}: ${live.length} live inputs (expected exactly 1)`)
      }
      outs = [live[0]!]
    } else if (CONV_OPS.has(n.op)) {
      // Resolves its own inputs, so that a Pad it absorbs is never emitted.
      outs = [this.conv(n)]
    } else if (n.op === 'BatchToSpaceND') {
      // Converted as a whole with its SpaceToBatchND and convolution; its crops are not needed.
      outs = [this.dilatedConv(n)]
    } else {
      const ins = this.dataInputs(n).map((r) => this.ref(r))
      if (ins.some((v) => v === DEAD)) outs = [DEAD, DEAD, DEAD, DEAD]
      else {
        try {
          outs = this.convertOp(n, ins as Val[])
        } catch (e) {
          if (e instanceof ConversionError) throw e
          throw new ConversionError(`${n.op} node ${n.name}: ${(e as Error).message}`, { cause: e })
        }
      }
    }
    this.inProgress.delete(name)
    this.memo.set(name, outs)
    return outs
  }

  predicate(ref: string): boolean {
    let [name] = splitRef(ref)
    for (;;) {
      const fixed = this.o.branches?.[name]
      if (fixed !== undefined) return fixed
      const n = this.node(name)
      if (n.op === 'Identity' || n.op === 'Switch') {
        name = splitRef(this.dataInputs(n)[0]!)[0]
        continue
      }
      throw new ConversionError(
        `Switch predicate ${name} (${n.op}) is not fixed: add it to the model's 'branches'`,
      )
    }
  }

  // ---- value helpers -----------------------------------------------------------------------

  /** Give a constant a tensor in the graph (as it is, logical layout). */
  mat(v: Val): Val {
    if (v.name !== '' || !v.konst) return v
    const k = v.konst
    return { ...v, name: this.b.initializer('const', k.dtype, k.dims, k.data) }
  }

  konstVal(k: ConstTensor): Val {
    return { name: '', dtype: k.dtype, rank: k.dims.length, nchw: false, konst: k }
  }

  toNchw(v: Val): Val {
    if (v.nchw) return v
    if (v.rank !== 4) throw new ConversionError(`expected a rank-4 tensor, got rank ${v.rank}`)
    if (v.konst) {
      const t = transposeConst(v.konst, NHWC_TO_NCHW)
      return { ...this.mat({ ...v, konst: t }), nchw: true, konst: undefined }
    }
    const cached = this.transposed.get(`nchw:${v.name}`)
    const name =
      cached ?? this.b.op('Transpose', [v.name], { perm: NHWC_TO_NCHW }, `${v.name}/to_nchw`)
    this.transposed.set(`nchw:${v.name}`, name)
    return { name, dtype: v.dtype, rank: 4, nchw: true }
  }

  toNhwc(v: Val): Val {
    if (!v.nchw) return this.mat(v)
    const cached = this.transposed.get(`nhwc:${v.name}`)
    const name =
      cached ?? this.b.op('Transpose', [v.name], { perm: NCHW_TO_NHWC }, `${v.name}/to_nhwc`)
    this.transposed.set(`nhwc:${v.name}`, name)
    return { name, dtype: v.dtype, rank: 4, nchw: false }
  }

  constOf(v: Val, what: string): ConstTensor {
    if (!v.konst) throw new ConversionError(`${what} must be a constant`)
    return v.konst
  }

  ints(v: Val, what: string): number[] {
    return Array.from(this.constOf(v, what).data, Number)
  }

  /** Cast an int32 (or int64) tensor to int64 for ONNX shape-like inputs. */
  i64(v: Val): string {
    if (v.konst) return this.b.i64(Array.from(v.konst.data, Number))
    if (v.dtype === 'int64') return v.name
    return this.b.op('Cast', [v.name], { to: 7 })
  }

  val(name: string, dtype: OnnxDtype, rank: number | null, nchw = false): Val {
    return { name, dtype, rank, nchw }
  }

  /** Bring two operands of an elementwise op into one layout. */
  align(a: Val, b: Val): { a: string; b: string; nchw: boolean; rank: number | null } {
    const rank = a.rank === null || b.rank === null ? null : Math.max(a.rank, b.rank)
    if (!a.nchw && !b.nchw) return { a: this.mat(a).name, b: this.mat(b).name, nchw: false, rank }
    if (isHiresPlain(a) || isHiresPlain(b)) {
      return {
        a: this.toNhwc(this.mat(a)).name,
        b: this.toNhwc(this.mat(b)).name,
        nchw: false,
        rank: 4,
      }
    }
    return { a: this.operandNchw(a), b: this.operandNchw(b), nchw: true, rank: 4 }
  }

  operandNchw(v: Val): string {
    if (v.nchw) return v.name
    if (v.konst) {
      const k = v.konst
      if (k.data.length === 1) return this.b.initializer('scalar', k.dtype, [], k.data)
      if (k.dims.length > 4) {
        throw new ConversionError(`cannot broadcast a rank-${k.dims.length} constant against NHWC`)
      }
      const dims = [...Array(4 - k.dims.length).fill(1), ...k.dims] as number[]
      const t = transposeConst({ ...k, dims }, NHWC_TO_NCHW)
      return this.b.initializer('const_nchw', t.dtype, t.dims, t.data)
    }
    if (v.rank === 4) return this.toNchw(v).name
    if (v.rank === 0) return v.name
    if (v.rank === 1) return this.b.op('Reshape', [v.name, this.b.i64([-1, 1, 1])])
    throw new ConversionError(`cannot broadcast a rank-${v.rank} tensor against NHWC`)
  }

  // ---- ops -----------------------------------------------------------------------------------

  convertOp(n: TfNode, ins: Val[]): Out[] {
    const b = this.b
    const one = (v: Val): Out[] => [v]
    switch (n.op) {
      case 'Placeholder': {
        const pre = this.o.prelude?.[n.name]
        if (pre) return one(this.val(pre(b), 'float32', 4, true))
        const spec = this.o.inputs[n.name]
        if (!spec) throw new ConversionError(`Placeholder ${n.name} has no input spec`)
        const dtype = tfType(attrType(n, 'dtype') ?? 'DT_FLOAT')
        b.addInput({ name: n.name, dtype, dims: spec.dims } satisfies IoSpec)
        if (spec.layout === 'nchw') {
          if (spec.dims.length !== 4) {
            throw new ConversionError(`Placeholder ${n.name}: layout nchw needs a rank-4 input`)
          }
          // Channels-first already: the whole graph, full-resolution parts included, stays NCHW.
          return one(this.val(n.name, dtype, 4, true))
        }
        return one({
          ...this.val(n.name, dtype, spec.dims.length),
          hires: spec.dims.length === 4 && dtype === 'float32',
        })
      }
      case 'Const': {
        const k = this.m.weights.get(n.name)
        if (!k) throw new ConversionError(`Const ${n.name} has no weight`)
        return one(this.konstVal(k))
      }
      case 'Identity':
      case 'StopGradient':
        return one(ins[0]!)
      case 'IdentityN':
        return ins
      case 'NoOp':
        return []

      // elementwise binary
      case 'Mul': {
        const x = this.hardSwishInput(n)
        if (x !== undefined) {
          const src = this.mat(x)
          return one({ ...src, konst: undefined, name: b.op('HardSwish', [src.name], {}, n.name) })
        }
      }
      // falls through
      case 'Add':
      case 'AddV2':
      case 'Sub':
      case 'RealDiv':
      case 'Div':
      case 'Minimum':
      case 'Maximum':
      case 'Pow':
      case 'SquaredDifference': {
        const [x, y] = ins as [Val, Val]
        if (x.konst && y.konst) return one(this.konstVal(foldBinary(n.op, x.konst, y.konst)))
        if ((n.op === 'Minimum' || n.op === 'Maximum') && x.dtype === 'float32') {
          // min/max against a scalar is a Clip: onnxruntime's Min/Max broadcast ~20× slower
          const [v, k] =
            y.konst?.data.length === 1
              ? [x, y.konst]
              : x.konst?.data.length === 1
                ? [y, x.konst]
                : [undefined, undefined]
          if (v && k) {
            const bound = b.constant('float32', [], [Number(k.data[0])])
            const src = this.mat(v)
            return one({
              ...src,
              konst: undefined,
              name: b.op(
                'Clip',
                n.op === 'Minimum' ? [src.name, '', bound] : [src.name, bound],
                {},
                n.name,
              ),
            })
          }
        }
        const al = this.align(x, y)
        const onnxOp = {
          Add: 'Add',
          AddV2: 'Add',
          Sub: 'Sub',
          Mul: 'Mul',
          RealDiv: 'Div',
          Div: 'Div',
          Minimum: 'Min',
          Maximum: 'Max',
          Pow: 'Pow',
          SquaredDifference: 'Sub',
        }[n.op]!
        let out = b.op(onnxOp, [al.a, al.b], {}, n.name)
        if (n.op === 'SquaredDifference') out = b.op('Mul', [out, out])
        return one({ ...this.val(out, x.dtype, al.rank, al.nchw), hires: !!(x.hires || y.hires) })
      }
      case 'FloorMod': {
        const [x, y] = ins as [Val, Val]
        if (x.konst && y.konst) return one(this.konstVal(foldBinary(n.op, x.konst, y.konst)))
        const al = this.align(x, y)
        if (x.dtype !== 'int32') {
          // x - floor(x / y) * y
          const q = b.op('Floor', [b.op('Div', [al.a, al.b])])
          return one(
            this.val(
              b.op('Sub', [al.a, b.op('Mul', [q, al.b])], {}, n.name),
              x.dtype,
              al.rank,
              al.nchw,
            ),
          )
        }
        return one(
          this.val(b.op('Mod', [al.a, al.b], { fmod: 0 }, n.name), x.dtype, al.rank, al.nchw),
        )
      }
      case 'AddN': {
        if (ins.length === 1) return one(ins[0]!)
        const anyNchw = ins.some((v) => v.nchw)
        const names = ins.map((v) => (anyNchw ? this.operandNchw(v) : this.mat(v).name))
        return one(this.val(b.op('Sum', names, {}, n.name), ins[0]!.dtype, ins[0]!.rank, anyNchw))
      }
      case 'Equal':
      case 'Less':
      case 'Greater':
      case 'LessEqual':
      case 'GreaterEqual': {
        const [x, y] = ins as [Val, Val]
        const al = this.align(x, y)
        const onnxOp = {
          Equal: 'Equal',
          Less: 'Less',
          Greater: 'Greater',
          LessEqual: 'LessOrEqual',
          GreaterEqual: 'GreaterOrEqual',
        }[n.op]!
        return one(this.val(b.op(onnxOp, [al.a, al.b], {}, n.name), 'bool', al.rank, al.nchw))
      }

      // elementwise unary
      case 'Relu':
      case 'Sigmoid':
      case 'Tanh':
      case 'Exp':
      case 'Neg':
      case 'Sqrt':
      case 'Abs':
      case 'Floor':
      case 'Ceil':
      case 'Log': {
        const x = this.mat(ins[0]!)
        return one({
          ...x,
          name: b.op(n.op === 'Log' ? 'Log' : n.op, [x.name], {}, n.name),
          konst: undefined,
        })
      }
      case 'Rsqrt': {
        const x = this.mat(ins[0]!)
        return one({
          ...x,
          name: b.op('Reciprocal', [b.op('Sqrt', [x.name])], {}, n.name),
          konst: undefined,
        })
      }
      case 'Square': {
        const x = this.mat(ins[0]!)
        return one({ ...x, name: b.op('Mul', [x.name, x.name], {}, n.name), konst: undefined })
      }
      case 'Relu6': {
        const x = this.mat(ins[0]!)
        return one({
          ...x,
          name: b.op(
            'Clip',
            [x.name, b.constant('float32', [], [0]), b.constant('float32', [], [6])],
            {},
            n.name,
          ),
          konst: undefined,
        })
      }
      case 'LeakyRelu': {
        const x = this.mat(ins[0]!)
        return one({
          ...x,
          name: b.op(
            'LeakyRelu',
            [x.name],
            { alpha: { float: attrFloat(n, 'alpha') ?? 0.2 } },
            n.name,
          ),
          konst: undefined,
        })
      }
      case 'Elu': {
        const x = this.mat(ins[0]!)
        return one({ ...x, name: b.op('Elu', [x.name], {}, n.name), konst: undefined })
      }
      case 'Prelu': {
        const [x, alpha] = ins as [Val, Val]
        const al = this.align(x, alpha)
        return one(this.val(b.op('PRelu', [al.a, al.b], {}, n.name), 'float32', al.rank, al.nchw))
      }
      case 'Cast': {
        const x = ins[0]!
        const to = tfType(attrType(n, 'DstT') ?? 'DT_FLOAT')
        if (x.konst) return one(this.konstVal(castConst(x.konst, to)))
        if (x.dtype === to) return one(x)
        return one({
          ...x,
          dtype: to,
          name: b.op('Cast', [x.name], { to: onnxTypeCode(to) }, n.name),
        })
      }

      // convolutions
      case 'SpaceToBatchND':
        // Only as part of a dilated convolution: handled when its BatchToSpaceND is reached.
        throw new ConversionError(
          `SpaceToBatchND node ${n.name} is only supported as SpaceToBatchND → conv → BatchToSpaceND`,
        )
      case 'Conv2DBackpropInput':
        return one(this.convTranspose(n, ins))

      case 'AvgPool':
      case 'MaxPool': {
        if ((attrString(n, 'data_format') ?? 'NHWC') !== 'NHWC') {
          throw new ConversionError(`${n.op} ${n.name}: data_format must be NHWC`)
        }
        const x = this.toNchw(this.mat(ins[0]!))
        const k = attrInts(n, 'ksize')!
        const s = attrInts(n, 'strides')!
        const padding = attrString(n, 'padding')
        const attrs: Record<string, number | number[] | string> = {
          kernel_shape: [k[1]!, k[2]!],
          strides: [s[1]!, s[2]!],
        }
        if (padding === 'SAME') attrs.auto_pad = 'SAME_UPPER'
        else if (padding !== 'VALID') {
          throw new ConversionError(`${n.op} ${n.name}: padding ${padding}`)
        }
        if (n.op === 'AvgPool') attrs.count_include_pad = 0
        return one(
          this.val(
            b.op(n.op === 'AvgPool' ? 'AveragePool' : 'MaxPool', [x.name], attrs, n.name),
            'float32',
            4,
            true,
          ),
        )
      }

      case 'Mean':
      case 'Sum':
      case 'Max':
      case 'Min':
      case 'Prod': {
        const x = ins[0]!
        const keep = attrBool(n, 'keep_dims') ?? false
        const rank = x.rank
        if (rank === null) throw new ConversionError(`${n.op} ${n.name}: input rank unknown`)
        let axes = this.ints(ins[1]!, 'reduction axes').map((a) => (a < 0 ? a + rank : a))
        let src = this.mat(x)
        let nchw = false
        if (x.nchw) {
          const kept = [0, 1, 2, 3].filter((a) => !axes.includes(a))
          const keptPhys = kept.map((a) => AXIS_NCHW[a]!)
          const sameOrder = keptPhys.every((p, i) => i === 0 || p > keptPhys[i - 1]!)
          if (keep) {
            axes = axes.map((a) => AXIS_NCHW[a]!)
            nchw = true
          } else if (sameOrder) axes = axes.map((a) => AXIS_NCHW[a]!)
          else src = this.toNhwc(x)
        }
        const onnxOp = {
          Mean: 'ReduceMean',
          Sum: 'ReduceSum',
          Max: 'ReduceMax',
          Min: 'ReduceMin',
          Prod: 'ReduceProd',
        }[n.op]!
        const out =
          onnxOp === 'ReduceSum'
            ? b.op(onnxOp, [src.name, b.i64(axes)], { keepdims: keep ? 1 : 0 }, n.name)
            : b.op(onnxOp, [src.name], { axes, keepdims: keep ? 1 : 0 }, n.name)
        return one({
          ...this.val(out, x.dtype, keep ? rank : rank - axes.length, nchw),
          hires: keep && x.hires,
        })
      }

      case 'ConcatV2': {
        const axisV = ins[ins.length - 1]!
        const parts = ins.slice(0, -1)
        const rank = parts.find((p) => p.rank !== null)?.rank ?? null
        if (rank === null) throw new ConversionError(`ConcatV2 ${n.name}: rank unknown`)
        let axis = this.ints(axisV, 'concat axis')[0]!
        if (axis < 0) axis += rank
        if (parts.every((p) => p.konst)) {
          return one(
            this.konstVal(
              concatConst(
                parts.map((p) => p.konst!),
                axis,
              ),
            ),
          )
        }
        const hires = parts.some((p) => p.hires)
        if (rank === 4 && parts.some((p) => p.nchw) && parts.some(isHiresPlain)) {
          const names = parts.map((p) => this.toNhwc(this.mat(p)).name)
          return one({
            ...this.val(b.op('Concat', names, { axis }, n.name), parts[0]!.dtype, 4),
            hires,
          })
        }
        if (rank === 4 && parts.some((p) => p.nchw)) {
          const names = parts.map((p) => this.toNchw(this.mat(p)).name)
          return one(
            this.val(
              b.op('Concat', names, { axis: AXIS_NCHW[axis]! }, n.name),
              parts[0]!.dtype,
              4,
              true,
            ),
          )
        }
        return one({
          ...this.val(
            b.op(
              'Concat',
              parts.map((p) => this.mat(p).name),
              { axis },
              n.name,
            ),
            parts[0]!.dtype,
            rank,
          ),
          hires,
        })
      }
      case 'Pack': {
        const axis0 = attrInt(n, 'axis') ?? 0
        if (ins.every((p) => p.konst)) {
          return one(
            this.konstVal(
              packConst(
                ins.map((p) => p.konst!),
                axis0,
              ),
            ),
          )
        }
        const rank = ins[0]!.rank
        if (rank === null) throw new ConversionError(`Pack ${n.name}: rank unknown`)
        const axis = axis0 < 0 ? axis0 + rank + 1 : axis0
        const names = ins.map((p) =>
          b.op('Unsqueeze', [this.toNhwc(this.mat(p)).name, b.i64([axis])]),
        )
        const packed = this.val(b.op('Concat', names, { axis }, n.name), ins[0]!.dtype, rank + 1)
        return one(rank === 0 ? { ...packed, len: ins.length } : packed)
      }
      case 'Split':
      case 'SplitV': {
        const numSplit = attrInt(n, 'num_split') ?? 1
        const [x, sizes, axisV] =
          n.op === 'Split' ? [ins[1]!, undefined, ins[0]!] : [ins[0]!, ins[1]!, ins[2]!]
        const rank = x.rank
        if (rank === null) throw new ConversionError(`${n.op} ${n.name}: rank unknown`)
        let axis = this.ints(axisV, 'split axis')[0]!
        if (axis < 0) axis += rank
        const src = this.mat(x)
        const phys = src.nchw ? AXIS_NCHW[axis]! : axis
        const inputs = [src.name]
        if (sizes) {
          const sz = this.ints(sizes, 'split sizes')
          if (sz.includes(-1)) {
            throw new ConversionError(`SplitV ${n.name}: size -1 is not supported`)
          }
          inputs.push(b.i64(sz))
        }
        const outs = b.node('Split', inputs, { axis: phys }, { name: n.name, outputs: numSplit })
        return outs.map((o) => ({ ...this.val(o, x.dtype, rank, src.nchw), hires: x.hires }))
      }

      case 'Shape': {
        const x = ins[0]!
        const outType = tfType(attrType(n, 'out_type') ?? 'DT_INT32')
        if (x.konst) {
          return one(
            this.konstVal({
              dtype: 'int32',
              dims: [x.konst.dims.length],
              data: Int32Array.from(x.konst.dims),
            }),
          )
        }
        let s = b.op('Shape', [x.name], {}, n.name)
        if (x.nchw) s = b.op('Gather', [s, b.i64(NCHW_TO_NHWC)], { axis: 0 })
        if (outType !== 'int64') s = b.op('Cast', [s], { to: onnxTypeCode(outType) })
        return one({ ...this.val(s, outType, 1), len: x.rank ?? undefined })
      }
      case 'Reshape': {
        const x = this.toNhwc(this.mat(ins[0]!))
        const shape = ins[1]!
        const rank = shape.konst ? shape.konst.data.length : (shape.len ?? null)
        return one(this.val(b.op('Reshape', [x.name, this.i64(shape)], {}, n.name), x.dtype, rank))
      }
      case 'Squeeze': {
        const x = ins[0]!
        const rank = x.rank
        const dims = attrInts(n, 'squeeze_dims') ?? attrInts(n, 'axis') ?? []
        if (dims.length === 0) {
          return one(
            this.val(b.op('Squeeze', [this.toNhwc(this.mat(x)).name], {}, n.name), x.dtype, null),
          )
        }
        if (rank === null) throw new ConversionError(`Squeeze ${n.name}: rank unknown`)
        const src = this.toNhwc(this.mat(x))
        const axes = dims.map((a) => (a < 0 ? a + rank : a))
        return one(
          this.val(
            b.op('Squeeze', [src.name, b.i64(axes)], {}, n.name),
            x.dtype,
            rank - axes.length,
          ),
        )
      }
      case 'ExpandDims': {
        const x = this.toNhwc(this.mat(ins[0]!))
        if (x.rank === null) throw new ConversionError(`ExpandDims ${n.name}: rank unknown`)
        let axis = this.ints(ins[1]!, 'axis')[0]!
        if (axis < 0) axis += x.rank + 1
        return one(
          this.val(b.op('Unsqueeze', [x.name, b.i64([axis])], {}, n.name), x.dtype, x.rank + 1),
        )
      }
      case 'BroadcastTo': {
        const [x, shape] = ins as [Val, Val]
        const rank = shape.konst ? shape.konst.data.length : null
        if (rank === 4 || (rank === null && (x.nchw || x.rank === 4))) {
          // logical NHWC target shape → physical NCHW
          const xs = this.toNchw(this.mat(x))
          const s = b.op('Gather', [this.i64(shape), b.i64(NHWC_TO_NCHW)], { axis: 0 })
          return one(this.val(b.op('Expand', [xs.name, s], {}, n.name), x.dtype, 4, true))
        }
        return one(
          this.val(
            b.op('Expand', [this.toNhwc(this.mat(x)).name, this.i64(shape)], {}, n.name),
            x.dtype,
            rank,
          ),
        )
      }
      case 'Pad':
      case 'PadV2':
      case 'MirrorPad': {
        const x = this.mat(ins[0]!)
        const p = this.constOf(ins[1]!, 'paddings')
        const rank = p.dims[0]!
        const pads = Array.from(p.data, Number)
        const before = Array.from({ length: rank }, (_, i) => pads[2 * i]!)
        const after = Array.from({ length: rank }, (_, i) => pads[2 * i + 1]!)
        const nchw = x.nchw
        const order = nchw ? NHWC_TO_NCHW : before.map((_, i) => i)
        const onnxPads = [...order.map((i) => before[i]!), ...order.map((i) => after[i]!)]
        const inputs = [x.name, b.i64(onnxPads)]
        const attrs: Record<string, string> = {}
        if (n.op === 'PadV2') inputs.push(this.mat(ins[2]!).name)
        if (n.op === 'MirrorPad') {
          const mode = attrString(n, 'mode')
          if (mode !== 'REFLECT') throw new ConversionError(`MirrorPad ${n.name}: mode ${mode}`)
          attrs.mode = 'reflect'
        }
        return one(this.val(b.op('Pad', inputs, attrs, n.name), x.dtype, x.rank, nchw))
      }
      case 'StridedSlice':
        return one(this.stridedSlice(n, ins))
      case 'Slice': {
        const [x0, begin, size] = ins as [Val, Val, Val]
        const x = this.mat(x0)
        const rank = x.rank ?? (begin.konst ? begin.konst.data.length : null)
        if (rank === null) throw new ConversionError(`Slice ${n.name}: rank unknown`)
        const axes = Array.from({ length: rank }, (_, i) => (x.nchw ? AXIS_NCHW[i]! : i))
        const starts = this.i64(begin)
        let ends: string
        if (size.konst) {
          const sz = Array.from(size.konst.data, Number)
          if (begin.konst) {
            const bg = Array.from(begin.konst.data, Number)
            ends = b.i64(sz.map((s, i) => (s === -1 ? 2 ** 53 - 1 : bg[i]! + s)))
          } else {
            ends = b.op('Add', [starts, b.i64(sz)])
            if (sz.includes(-1)) {
              throw new ConversionError(`Slice ${n.name}: size -1 with a dynamic begin`)
            }
          }
        } else {
          const szI = this.i64(size)
          const sum = b.op('Add', [starts, szI])
          const isAll = b.op('Equal', [szI, b.constant('int64', [], [-1])])
          ends = b.op('Where', [isAll, b.constant('int64', [], [2 ** 53 - 1]), sum])
        }
        return one(
          this.val(
            b.op('Slice', [x.name, starts, ends, b.i64(axes)], {}, n.name),
            x.dtype,
            rank,
            x.nchw,
          ),
        )
      }
      case 'ResizeBilinear':
      case 'ResizeNearestNeighbor': {
        const size = ins[1]!
        const align = attrBool(n, 'align_corners') ?? false
        const half = attrBool(n, 'half_pixel_centers') ?? false
        // A full-resolution NHWC input is resized as it is (transposing the small result is cheaper);
        // a result that meets full-resolution NHWC tensors is produced in NHWC.
        const hires = this.feedsHiresPlain(n.name)
        const plain = hires || isHiresPlain(ins[0]!)
        const x = plain ? this.toNhwc(this.mat(ins[0]!)) : this.toNchw(this.mat(ins[0]!))
        const shape = b.op('Shape', [x.name])
        const sizes = plain
          ? b.op(
              'Concat',
              [
                b.op('Slice', [shape, b.i64([0]), b.i64([1])]),
                this.i64(size),
                b.op('Slice', [shape, b.i64([3]), b.i64([4])]),
              ],
              { axis: 0 },
            )
          : b.op('Concat', [b.op('Slice', [shape, b.i64([0]), b.i64([2])]), this.i64(size)], {
              axis: 0,
            })
        const nearest = n.op === 'ResizeNearestNeighbor'
        const attrs: Record<string, string> = {
          mode: nearest ? 'nearest' : 'linear',
          // NHWC: 'pytorch_half_pixel' (equal to 'half_pixel' unless an output side is 1 pixel) takes
          // onnxruntime's fast channels-last path; 'half_pixel' with `sizes` falls off it (6× slower).
          coordinate_transformation_mode: align
            ? 'align_corners'
            : half
              ? nearest
                ? 'tf_half_pixel_for_nn'
                : plain
                  ? 'pytorch_half_pixel'
                  : 'half_pixel'
              : 'asymmetric',
        }
        if (nearest) attrs.nearest_mode = align ? 'round_prefer_ceil' : 'floor'
        return one({
          ...this.val(b.op('Resize', [x.name, '', '', sizes], attrs, n.name), 'float32', 4, !plain),
          hires,
        })
      }
      case 'DepthToSpace':
      case 'SpaceToDepth': {
        if ((attrString(n, 'data_format') ?? 'NHWC') !== 'NHWC') {
          throw new ConversionError(`${n.op} ${n.name}: data_format must be NHWC`)
        }
        const x = this.toNchw(this.mat(ins[0]!))
        const attrs: Record<string, number | string> = { blocksize: attrInt(n, 'block_size')! }
        if (n.op === 'DepthToSpace') attrs.mode = 'DCR'
        return one(this.val(b.op(n.op, [x.name], attrs, n.name), 'float32', 4, true))
      }
      default:
        throw new ConversionError(`unsupported operator ${n.op} (node ${n.name})`)
    }
  }

  /**
   * Keras' hard-swish: Mul(Mul(x, 1/6), Relu6(x + 3)) (either operand order) → ONNX HardSwish,
   * one kernel instead of four.
   */
  hardSwishInput(n: TfNode): Val | undefined {
    const node = (r: string | undefined) =>
      r === undefined ? undefined : this.m.nodes.get(splitRef(r)[0])
    const scalar = (r: string | undefined): number | undefined => {
      const k = node(r)
      if (k?.op !== 'Const') return undefined
      const w = this.m.weights.get(k.name)
      return w && w.data.length === 1 ? Number(w.data[0]) : undefined
    }
    const [i0, i1] = this.dataInputs(n)
    for (const [scaledRef, reluRef] of [
      [i0, i1],
      [i1, i0],
    ] as const) {
      const scaled = node(scaledRef)
      const relu = node(reluRef)
      if (scaled?.op !== 'Mul' || relu?.op !== 'Relu6') continue
      const add = node(this.dataInputs(relu)[0])
      if (add?.op !== 'AddV2' && add?.op !== 'Add') continue
      const [s0, s1] = this.dataInputs(scaled)
      const [a0, a1] = this.dataInputs(add)
      const xs = scalar(s0) !== undefined ? s1 : s0
      const sixth = scalar(s0) ?? scalar(s1)
      const xa = scalar(a0) !== undefined ? a1 : a0
      const three = scalar(a0) ?? scalar(a1)
      if (
        xs === undefined ||
        xs !== xa ||
        sixth === undefined ||
        Math.abs(sixth - 1 / 6) > 1e-6 ||
        three !== 3
      ) {
        continue
      }
      const v = this.ref(xs)
      return v === DEAD ? undefined : v
    }
    return undefined
  }

  /** Does this node's output meet a full-resolution NHWC tensor in an elementwise op? */
  feedsHiresPlain(name: string): boolean {
    for (const { node, slot } of this.consumers.get(name) ?? []) {
      if (!ELEMENTWISE_BINARY.has(node.op)) continue
      const other = this.dataInputs(node)[1 - slot]
      if (other !== undefined && this.staticHires(splitRef(other)[0])) return true
    }
    return false
  }

  readonly #hiresMemo = new Map<string, boolean>()
  /** A static approximation of `Val.hires`, used only to choose layouts (never correctness). */
  staticHires(name: string): boolean {
    const hit = this.#hiresMemo.get(name)
    if (hit !== undefined) return hit
    this.#hiresMemo.set(name, false) // guards cycles
    const n = this.node(name)
    let r = false
    if (n.op === 'Placeholder') {
      r =
        (this.o.inputs[name]?.dims.length ?? 0) === 4 &&
        this.o.inputs[name]?.layout !== 'nchw' &&
        name === Object.keys(this.o.inputs)[0]
    } else if (n.op === 'ResizeBilinear' || n.op === 'ResizeNearestNeighbor') {
      r = this.feedsHiresPlain(name)
    } else if (HIRES_PASSTHROUGH.has(n.op)) {
      r = this.dataInputs(n).some((i) => this.staticHires(splitRef(i)[0]))
    }
    this.#hiresMemo.set(name, r)
    return r
  }

  // ---- convolutions --------------------------------------------------------------------------

  conv(n: TfNode, dilation?: number[]): Out {
    const b = this.b
    const refs = this.dataInputs(n)
    const ins = refs.map((r, i) => (i === 0 ? undefined : this.ref(r)))
    if (ins.some((v) => v === DEAD)) return DEAD
    if ((attrString(n, 'data_format') ?? 'NHWC') !== 'NHWC') {
      throw new ConversionError(`${n.op} ${n.name}: data_format must be NHWC`)
    }
    const depthwise = n.op.includes('Depthwise')
    const filter = this.constOf(ins[1] as Val, `${n.op} filter`)
    const [kh, kw, cin, mult] = filter.dims as [number, number, number, number]
    const strides = attrInts(n, 'strides') ?? [1, 1, 1, 1]
    const dil = dilation ?? (attrInts(n, 'dilations') ?? [1, 1, 1, 1]).slice(1, 3)
    const padding = attrString(n, 'padding')
    const attrs: Record<string, number | number[] | string> = {
      kernel_shape: [kh, kw],
      strides: [strides[1]!, strides[2]!],
      dilations: dil,
    }
    // Fold a preceding zero Pad on H/W into the convolution.
    let xRef = refs[0]!
    let pads = [0, 0, 0, 0]
    const srcNode = this.m.nodes.get(splitRef(xRef)[0])
    if (padding === 'VALID' && srcNode?.op === 'Pad') {
      const pv = this.ref(this.dataInputs(srcNode)[1]!)
      if (pv !== DEAD && pv.konst) {
        const p = Array.from(pv.konst.data, Number)
        if (p.length === 8 && p[0] === 0 && p[1] === 0 && p[6] === 0 && p[7] === 0) {
          xRef = this.dataInputs(srcNode)[0]!
          pads = [p[2]!, p[4]!, p[3]!, p[5]!]
        }
      }
    }
    const xVal = this.ref(xRef)
    if (xVal === DEAD) return DEAD
    if (padding === 'SAME') attrs.auto_pad = 'SAME_UPPER'
    else if (padding === 'VALID') attrs.pads = pads
    else if (padding === 'EXPLICIT') {
      const e = attrInts(n, 'explicit_paddings')!
      attrs.pads = [e[2]! + pads[0]!, e[4]! + pads[1]!, e[3]! + pads[2]!, e[5]! + pads[3]!]
    } else throw new ConversionError(`${n.op} ${n.name}: padding ${padding}`)

    let w: ConstTensor
    if (depthwise) {
      // [kh, kw, C, M] → [C*M, 1, kh, kw], group C
      w = transposeConst(filter, [2, 3, 0, 1])
      w = { ...w, dims: [cin * mult, 1, kh, kw] }
      attrs.group = cin
    } else {
      // HWIO → OIHW
      w = transposeConst(filter, [3, 2, 0, 1])
    }
    const x = this.toNchw(this.mat(xVal))
    const inputs = [x.name, b.initializer(`${n.name}/weights`, 'float32', w.dims, w.data)]
    const fused =
      n.op.startsWith('_Fused') || n.op.startsWith('Fused')
        ? (attrStrings(n, 'fused_ops') ?? [])
        : []
    let rest = fused
    if (fused[0] === 'BiasAdd') {
      const bias = this.constOf(ins[2] as Val, 'bias')
      inputs.push(b.initializer(`${n.name}/bias`, 'float32', [bias.data.length], bias.data))
      rest = fused.slice(1)
    } else if (fused.length > 0) {
      throw new ConversionError(`${n.op} ${n.name}: fused ops ${fused.join(',')} are not supported`)
    }
    let y = b.op('Conv', inputs, attrs, n.name)
    for (const act of rest) {
      switch (act) {
        case 'Relu':
          y = b.op('Relu', [y])
          break
        case 'Relu6':
          y = b.op('Clip', [y, b.constant('float32', [], [0]), b.constant('float32', [], [6])])
          break
        case 'Elu':
          y = b.op('Elu', [y])
          break
        case 'Sigmoid':
          y = b.op('Sigmoid', [y])
          break
        case 'Tanh':
          y = b.op('Tanh', [y])
          break
        case 'LeakyRelu':
          y = b.op('LeakyRelu', [y], { alpha: { float: attrFloat(n, 'leakyrelu_alpha') ?? 0.2 } })
          break
        case 'Prelu': {
          const alpha = this.constOf(ins[3] as Val, 'prelu alpha')
          y = b.op('PRelu', [y, this.operandNchw(this.konstVal(alpha))])
          break
        }
        default:
          throw new ConversionError(`${n.op} ${n.name}: fused activation ${act} is not supported`)
      }
    }
    return this.val(y, 'float32', 4, true)
  }

  /** SpaceToBatchND → conv (VALID, stride 1) → BatchToSpaceND ≡ a dilated VALID convolution. */
  dilatedConv(n: TfNode): Out {
    const [convRef, blockRef] = this.dataInputs(n)
    const convNode = this.node(splitRef(convRef!)[0])
    if (!/Conv2D|Depthwise/.test(convNode.op)) {
      throw new ConversionError(
        `BatchToSpaceND ${n.name}: input is ${convNode.op}, not a convolution`,
      )
    }
    const s2bNode = this.node(splitRef(this.dataInputs(convNode)[0]!)[0])
    if (s2bNode.op !== 'SpaceToBatchND') {
      throw new ConversionError(
        `BatchToSpaceND ${n.name}: convolution input is ${s2bNode.op}, not SpaceToBatchND`,
      )
    }
    const block = this.ref(blockRef!)
    const block2 = this.ref(this.dataInputs(s2bNode)[1]!)
    if (block === DEAD || block2 === DEAD) {
      throw new ConversionError(`BatchToSpaceND ${n.name}: dead block shape`)
    }
    const bs = this.ints(block, 'block_shape')
    if (bs.join() !== this.ints(block2, 'block_shape').join()) {
      throw new ConversionError(`BatchToSpaceND ${n.name}: block shapes differ`)
    }
    if (
      attrString(convNode, 'padding') !== 'VALID' ||
      (attrInts(convNode, 'strides') ?? [1, 1, 1, 1]).some((s) => s !== 1)
    ) {
      throw new ConversionError(
        `BatchToSpaceND ${n.name}: the inner convolution must be VALID with stride 1`,
      )
    }
    // The convolution now reads SpaceToBatchND's input directly (its base paddings are zero: any
    // real padding is a Pad before it, which conv() folds).
    const fake: TfNode = {
      ...convNode,
      input: [this.dataInputs(s2bNode)[0]!, ...this.dataInputs(convNode).slice(1)],
    }
    return this.conv(fake, bs)
  }

  convTranspose(n: TfNode, ins: Val[]): Val {
    const b = this.b
    const [outShapeV, filterV, xV] = ins as [Val, Val, Val]
    const outShape = this.ints(outShapeV, 'output_shape')
    const filter = this.constOf(filterV, 'filter')
    const [kh, kw] = filter.dims as [number, number, number, number]
    const strides = attrInts(n, 'strides') ?? [1, 1, 1, 1]
    const padding = attrString(n, 'padding')
    // TF filter [kh, kw, out, in] → ONNX ConvTranspose weight [in, out, kh, kw]
    const w = transposeConst(filter, [3, 2, 0, 1])
    const x = this.toNchw(this.mat(xV))
    const attrs: Record<string, number | number[] | string> = {
      kernel_shape: [kh, kw],
      strides: [strides[1]!, strides[2]!],
      output_shape: [outShape[1]!, outShape[2]!],
    }
    if (padding !== 'SAME' && padding !== 'VALID') {
      throw new ConversionError(`Conv2DBackpropInput ${n.name}: padding ${padding}`)
    }
    const y = b.op(
      'ConvTranspose',
      [x.name, b.initializer(`${n.name}/weights`, 'float32', w.dims, w.data)],
      attrs,
      n.name,
    )
    return this.val(y, 'float32', 4, true)
  }

  stridedSlice(n: TfNode, ins: Val[]): Val {
    const b = this.b
    const [x0, beginV, endV, stridesV] = ins as [Val, Val, Val, Val]
    const beginMask = attrInt(n, 'begin_mask') ?? 0
    const endMask = attrInt(n, 'end_mask') ?? 0
    const shrink = attrInt(n, 'shrink_axis_mask') ?? 0
    if ((attrInt(n, 'ellipsis_mask') ?? 0) !== 0 || (attrInt(n, 'new_axis_mask') ?? 0) !== 0) {
      throw new ConversionError(
        `StridedSlice ${n.name}: ellipsis_mask and new_axis_mask are not supported`,
      )
    }
    const begin = this.ints(beginV, 'begin')
    const end = this.ints(endV, 'end')
    const strides = this.ints(stridesV, 'strides')
    const BIG = 2 ** 53 - 1
    const starts = begin.map((v, i) => (beginMask & (1 << i) ? (strides[i]! > 0 ? 0 : BIG) : v))
    const ends = end.map((v, i) => {
      if (shrink & (1 << i)) return begin[i]! === -1 ? BIG : begin[i]! + 1
      return endMask & (1 << i) ? (strides[i]! > 0 ? BIG : -BIG) : v
    })
    if (x0.konst && x0.konst.dims.length === 1) {
      // constant folding of shape arithmetic
      const data = Array.from(x0.konst.data, Number)
      const len = data.length
      const norm = (v: number) => (v < 0 ? v + len : v)
      const out: number[] = []
      const s = strides[0]!
      const st = Math.min(Math.max(norm(starts[0]!), 0), len)
      const en = Math.min(Math.max(norm(ends[0]!), s > 0 ? 0 : -1), len)
      for (let i = st; s > 0 ? i < en : i > en; i += s) out.push(data[i]!)
      const dims = shrink & 1 ? [] : [out.length]
      return this.konstVal({
        dtype: x0.konst.dtype,
        dims,
        data: x0.konst.dtype === 'float32' ? Float32Array.from(out) : Int32Array.from(out),
      })
    }
    let x = this.mat(x0)
    if (x.nchw && shrink !== 0) x = this.toNhwc(x)
    const rank = x.rank ?? begin.length
    const axes = begin.map((_, i) => (x.nchw ? AXIS_NCHW[i]! : i))
    let y = b.op(
      'Slice',
      [x.name, b.i64(starts), b.i64(ends), b.i64(axes), b.i64(strides)],
      {},
      n.name,
    )
    const shrinkAxes = begin.map((_, i) => i).filter((i) => shrink & (1 << i))
    if (shrinkAxes.length > 0) y = b.op('Squeeze', [y, b.i64(shrinkAxes)])
    return this.val(y, x.dtype, rank - shrinkAxes.length, x.nchw)
  }
}

// ---- constant helpers ----------------------------------------------------------------------

const CONV_OPS = new Set([
  'Conv2D',
  '_FusedConv2D',
  'DepthwiseConv2dNative',
  'FusedDepthwiseConv2dNative',
])
const ELEMENTWISE_BINARY = new Set([
  'Add',
  'AddV2',
  'Sub',
  'Mul',
  'RealDiv',
  'Div',
  'Minimum',
  'Maximum',
])
const HIRES_PASSTHROUGH = new Set([
  ...ELEMENTWISE_BINARY,
  'Identity',
  'Switch',
  'Merge',
  'ConcatV2',
  'Split',
  'SplitV',
  'Mean',
  'Relu',
  'Relu6',
  'Sigmoid',
  'Tanh',
  'Square',
  'Neg',
  'Exp',
  'Sqrt',
  'Rsqrt',
])

function isHiresPlain(v: Val): boolean {
  return !!v.hires && !v.nchw && v.rank === 4 && !v.konst
}

function splitRef(ref: string): [string, string | undefined] {
  const i = ref.lastIndexOf(':')
  if (i > 0 && /^\d+$/.test(ref.slice(i + 1))) return [ref.slice(0, i), ref.slice(i + 1)]
  return [ref, undefined]
}

function tfType(t: string): OnnxDtype {
  switch (t) {
    case 'DT_FLOAT':
      return 'float32'
    case 'DT_INT32':
      return 'int32'
    case 'DT_INT64':
      return 'int64'
    case 'DT_BOOL':
      return 'bool'
    default:
      throw new ConversionError(`dtype ${t} is not supported`)
  }
}

function onnxTypeCode(t: OnnxDtype): number {
  return { float32: 1, int32: 6, int64: 7, bool: 9, uint8: 2 }[t]
}

function newData(dtype: string, n: number): Float32Array | Int32Array | Uint8Array {
  return dtype === 'float32'
    ? new Float32Array(n)
    : dtype === 'bool'
      ? new Uint8Array(n)
      : new Int32Array(n)
}

export function transposeConst(k: ConstTensor, perm: number[]): ConstTensor {
  const dims = perm.map((p) => k.dims[p]!)
  const rank = k.dims.length
  const inStrides = new Array<number>(rank)
  let acc = 1
  for (let i = rank - 1; i >= 0; i--) {
    inStrides[i] = acc
    acc *= k.dims[i]!
  }
  const out = newData(k.dtype, k.data.length)
  const idx = new Array<number>(rank).fill(0)
  for (let o = 0; o < out.length; o++) {
    let src = 0
    for (let i = 0; i < rank; i++) src += idx[i]! * inStrides[perm[i]!]!
    out[o] = k.data[src]!
    for (let i = rank - 1; i >= 0; i--) {
      if (++idx[i]! < dims[i]!) break
      idx[i] = 0
    }
  }
  return { dtype: k.dtype, dims, data: out }
}

function foldBinary(op: string, a: ConstTensor, b: ConstTensor): ConstTensor {
  if (a.data.length !== b.data.length && a.data.length !== 1 && b.data.length !== 1) {
    throw new ConversionError(
      `constant ${op} with shapes [${a.dims}] and [${b.dims}] is not supported`,
    )
  }
  const n = Math.max(a.data.length, b.data.length)
  const dims = a.data.length >= b.data.length ? a.dims : b.dims
  const out = newData(a.dtype, n)
  const f: Record<string, (x: number, y: number) => number> = {
    Add: (x, y) => x + y,
    AddV2: (x, y) => x + y,
    Sub: (x, y) => x - y,
    Mul: (x, y) => x * y,
    RealDiv: (x, y) => x / y,
    Div: (x, y) => (a.dtype === 'int32' ? Math.trunc(x / y) : x / y),
    Minimum: Math.min,
    Maximum: Math.max,
    Pow: Math.pow,
    SquaredDifference: (x, y) => (x - y) * (x - y),
    FloorMod: (x, y) => x - Math.floor(x / y) * y,
  }
  const fn = f[op]
  if (!fn) throw new ConversionError(`constant folding of ${op} is not supported`)
  for (let i = 0; i < n; i++) {
    out[i] = fn(a.data[a.data.length === 1 ? 0 : i]!, b.data[b.data.length === 1 ? 0 : i]!)
  }
  return { dtype: a.dtype, dims, data: out }
}

function castConst(k: ConstTensor, to: OnnxDtype): ConstTensor {
  if (to === 'int64' || to === 'uint8') {
    throw new ConversionError(`constant cast to ${to} is not supported`)
  }
  const out = newData(to, k.data.length)
  for (let i = 0; i < out.length; i++) out[i] = to === 'int32' ? Math.trunc(k.data[i]!) : k.data[i]!
  return { dtype: to, dims: k.dims, data: out }
}

function concatConst(parts: ConstTensor[], axis: number): ConstTensor {
  if (parts.some((p) => p.dims.length !== 1) || axis !== 0) {
    throw new ConversionError('constant concat is supported for rank-1 tensors only')
  }
  const data: number[] = parts.flatMap((p) => Array.from(p.data, Number))
  const out = newData(parts[0]!.dtype, data.length)
  out.set(data)
  return { dtype: parts[0]!.dtype, dims: [data.length], data: out }
}

function packConst(parts: ConstTensor[], axis: number): ConstTensor {
  if (parts.some((p) => p.dims.length !== 0) || axis !== 0) {
    throw new ConversionError('constant pack is supported for scalars only')
  }
  const out = newData(parts[0]!.dtype, parts.length)
  out.set(parts.map((p) => Number(p.data[0])))
  return { dtype: parts[0]!.dtype, dims: [parts.length], data: out }
}
