import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import * as ort from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { convertGraph, transposeConst } from './convert.ts'
import {
  halfToFloat,
  loadTfjsGraphModel,
  type TfjsGraphModel,
  type TfNode,
  type ConstTensor,
} from './tfjs-model.ts'

const b64 = (s: string) => Buffer.from(s).toString('base64')

function graph(nodes: TfNode[], weights: Record<string, ConstTensor>): TfjsGraphModel {
  return {
    nodes: new Map(nodes.map((n) => [n.name, n])),
    order: nodes,
    weights: new Map(Object.entries(weights)),
    signature: { inputs: {}, outputs: {} },
  }
}

async function runOnnx(
  bytes: Uint8Array,
  feeds: Record<string, ort.Tensor>,
): Promise<Record<string, ort.Tensor>> {
  const s = await ort.InferenceSession.create(bytes)
  try {
    return await s.run(feeds)
  } finally {
    await s.release()
  }
}

describe('halfToFloat', () => {
  it('decodes binary16 exactly', () => {
    expect(halfToFloat(0x3c00)).toBe(1)
    expect(halfToFloat(0xc000)).toBe(-2)
    expect(halfToFloat(0x7bff)).toBe(65504)
    expect(halfToFloat(0x0001)).toBe(2 ** -24)
    expect(halfToFloat(0x3555)).toBe(Math.fround(0.333251953125))
    expect(halfToFloat(0x7c00)).toBe(Infinity)
    expect(Number.isNaN(halfToFloat(0x7e00))).toBe(true)
  })
})

describe('transposeConst', () => {
  it('permutes axes', () => {
    // [2,3] → [3,2]
    const t = transposeConst(
      { dtype: 'float32', dims: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
      [1, 0],
    )
    expect(t.dims).toEqual([3, 2])
    expect(Array.from(t.data)).toEqual([1, 4, 2, 5, 3, 6])
  })
})

describe('loadTfjsGraphModel weight decoding', () => {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tailor-tfjs-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('dequantises uint8, uint16 and float16 weights exactly as tfjs does', async () => {
    const specs: tf.io.WeightsManifestEntry[] = [
      {
        name: 'q8',
        shape: [5],
        dtype: 'float32',
        quantization: { dtype: 'uint8', min: -0.731, scale: 0.0123 },
      },
      {
        name: 'q16',
        shape: [2, 2],
        dtype: 'float32',
        quantization: { dtype: 'uint16', min: 1.5, scale: 1e-4 },
      },
      { name: 'h', shape: [3], dtype: 'float32', quantization: { dtype: 'float16' } },
      { name: 'i', shape: [2], dtype: 'int32' },
      { name: 'f', shape: [], dtype: 'float32' },
    ]
    const buf = Buffer.concat([
      Buffer.from([0, 1, 77, 200, 255]),
      Buffer.from(new Uint16Array([0, 1, 4000, 65535]).buffer),
      Buffer.from(new Uint16Array([0x3c00, 0x3555, 0xc000]).buffer),
      Buffer.from(new Int32Array([-7, 123456]).buffer),
      Buffer.from(new Float32Array([Math.PI]).buffer),
    ])
    await writeFile(path.join(dir, 'w.bin'), buf)
    await writeFile(
      path.join(dir, 'model.json'),
      JSON.stringify({
        format: 'graph-model',
        modelTopology: { node: [] },
        weightsManifest: [{ paths: ['w.bin'], weights: specs }],
        signature: { inputs: {}, outputs: {} },
      }),
    )
    const ours = await loadTfjsGraphModel(path.join(dir, 'model.json'))
    const ref = tf.io.decodeWeights(new Uint8Array(buf).buffer, specs)
    for (const s of specs) {
      const mine = ours.weights.get(s.name)!
      expect(mine.dims).toEqual(s.shape)
      expect(Array.from(mine.data)).toEqual(Array.from(ref[s.name]!.dataSync()))
    }
  })

  it('refuses shards whose size does not match the manifest', async () => {
    await writeFile(path.join(dir, 'short.bin'), Buffer.alloc(3))
    await writeFile(
      path.join(dir, 'bad.json'),
      JSON.stringify({
        format: 'graph-model',
        modelTopology: { node: [] },
        weightsManifest: [
          { paths: ['short.bin'], weights: [{ name: 'x', shape: [1], dtype: 'float32' }] },
        ],
        signature: { inputs: {}, outputs: {} },
      }),
    )
    await expect(loadTfjsGraphModel(path.join(dir, 'bad.json'))).rejects.toThrow()
  })
})

describe('convertGraph', () => {
  const placeholder = (name: string): TfNode => ({
    name,
    op: 'Placeholder',
    attr: { dtype: { type: 'DT_FLOAT' } },
  })
  const konst = (name: string): TfNode => ({ name, op: 'Const' })

  it('fails loudly on an unsupported operator, naming it and its node', () => {
    const g = graph([placeholder('x'), { name: 'my/erf', op: 'Erf', input: ['x'] }], {})
    expect(() =>
      convertGraph(g, {
        inputs: { x: { dims: [1, 4] } },
        outputs: { y: 'my/erf' },
        graphName: 't',
        producerVersion: 't',
        docString: '',
      }),
    ).toThrow(/unsupported operator Erf \(node my\/erf\)/)
  })

  it('converts an NHWC convolution block to NCHW ONNX that matches tfjs', async () => {
    const rnd = (n: number, seed: number) =>
      Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed) * 0.5)
    const filter = { dtype: 'float32' as const, dims: [3, 3, 3, 4], data: rnd(108, 1) }
    const dw = { dtype: 'float32' as const, dims: [3, 3, 4, 1], data: rnd(36, 2) }
    const bias = { dtype: 'float32' as const, dims: [4], data: rnd(4, 3) }
    const pads = {
      dtype: 'int32' as const,
      dims: [4, 2],
      data: Int32Array.from([0, 0, 1, 1, 1, 1, 0, 0]),
    }
    const axis = { dtype: 'int32' as const, dims: [], data: Int32Array.from([3]) }
    const nodes: TfNode[] = [
      placeholder('x'),
      konst('filter'),
      konst('dw'),
      konst('bias'),
      konst('pads'),
      konst('axis'),
      { name: 'pad', op: 'Pad', input: ['x', 'pads'] },
      {
        name: 'conv',
        op: '_FusedConv2D',
        input: ['pad', 'filter', 'bias'],
        attr: {
          padding: { s: b64('VALID') },
          strides: { list: { i: ['1', '2', '2', '1'] } },
          data_format: { s: b64('NHWC') },
          fused_ops: { list: { s: [b64('BiasAdd'), b64('Relu6')] } },
        },
      },
      {
        name: 'dwconv',
        op: 'DepthwiseConv2dNative',
        input: ['conv', 'dw'],
        attr: { padding: { s: b64('SAME') }, strides: { list: { i: ['1', '1', '1', '1'] } } },
      },
      { name: 'mean', op: 'Mean', input: ['dwconv', 'axis'], attr: { keep_dims: { b: true } } },
      { name: 'sum', op: 'AddV2', input: ['dwconv', 'mean'] },
      { name: 'cat', op: 'ConcatV2', input: ['sum', 'conv', 'axis'] },
    ]
    const g = graph(nodes, { filter, dw, bias, pads, axis })
    const { bytes } = convertGraph(g, {
      inputs: { x: { dims: [1, 'h', 'w', 3] } },
      outputs: { y: 'cat' },
      graphName: 't',
      producerVersion: 't',
      docString: '',
    })
    const x = rnd(1 * 9 * 11 * 3, 4)
    const out = await runOnnx(bytes, { x: new ort.Tensor('float32', x, [1, 9, 11, 3]) })
    const ref = tf.tidy(() => {
      const xt = tf.tensor4d(x, [1, 9, 11, 3])
      const c = tf.clipByValue(
        tf.add(
          tf.conv2d(
            tf.pad(xt, [
              [0, 0],
              [1, 1],
              [1, 1],
              [0, 0],
            ]),
            tf.tensor4d(filter.data, [3, 3, 3, 4]),
            2,
            'valid',
          ),
          tf.tensor1d(bias.data),
        ),
        0,
        6,
      ) as tf.Tensor4D
      const d = tf.depthwiseConv2d(c, tf.tensor4d(dw.data, [3, 3, 4, 1]), 1, 'same')
      return tf.concat([tf.add(d, tf.mean(d, 3, true)), c], 3)
    })
    expect(out.y!.dims).toEqual(ref.shape)
    const o = out.y!.data as Float32Array
    const r = ref.dataSync()
    let max = 0
    for (let i = 0; i < r.length; i++) max = Math.max(max, Math.abs(o[i]! - r[i]!))
    expect(max).toBeLessThan(1e-5)
    ref.dispose()
  })

  it('fuses Keras hard-swish into one HardSwish and leaves none of its parts behind', async () => {
    const scalar = (v: number): ConstTensor => ({
      dtype: 'float32',
      dims: [],
      data: Float32Array.of(v),
    })
    const nodes: TfNode[] = [
      placeholder('x'),
      konst('sixth'),
      konst('three'),
      { name: 'hs/truediv', op: 'Mul', input: ['x', 'sixth'] },
      { name: 'hs/add', op: 'AddV2', input: ['x', 'three'] },
      { name: 'hs/Relu6', op: 'Relu6', input: ['hs/add'] },
      { name: 'hs/mul', op: 'Mul', input: ['hs/truediv', 'hs/Relu6'] },
    ]
    const g = graph(nodes, { sixth: scalar(1 / 6), three: scalar(3) })
    const { bytes, opCounts } = convertGraph(g, {
      inputs: { x: { dims: [5] } },
      outputs: { y: 'hs/mul' },
      graphName: 't',
      producerVersion: 't',
      docString: '',
    })
    // Before the pruning, x/6, x+3 and the Relu6 (Clip) were emitted too, read by nobody.
    expect(opCounts).toEqual({ HardSwish: 1, Identity: 1 })
    const x = Float32Array.of(-4, -1, 0, 1.5, 4)
    const out = await runOnnx(bytes, { x: new ort.Tensor('float32', x, [5]) })
    const want = Array.from(x, (v) => (v * Math.min(6, Math.max(0, v + 3))) / 6)
    const got = Array.from(out.y!.data as Float32Array)
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 6))
  })

  it('resolves Switch/Merge control flow from the fixed predicate and drops the dead branch', async () => {
    const nodes: TfNode[] = [
      placeholder('x'),
      konst('two'),
      placeholder('flag'),
      { name: 'sw', op: 'Switch', input: ['x', 'flag'] },
      { name: 'then', op: 'Mul', input: ['sw:1', 'two'] },
      { name: 'else', op: 'Erf', input: ['sw'] }, // unsupported, but on the dead branch
      { name: 'merge', op: 'Merge', input: ['else', 'then'] },
    ]
    const g = graph(nodes, { two: { dtype: 'float32', dims: [], data: Float32Array.from([2]) } })
    const { bytes } = convertGraph(g, {
      branches: { flag: true },
      inputs: { x: { dims: [3] } },
      outputs: { y: 'merge' },
      graphName: 't',
      producerVersion: 't',
      docString: '',
    })
    const out = await runOnnx(bytes, {
      x: new ort.Tensor('float32', Float32Array.from([1, 2, 3]), [3]),
    })
    expect(Array.from(out.y!.data as Float32Array)).toEqual([2, 4, 6])
    expect(() =>
      convertGraph(g, {
        inputs: { x: { dims: [3] } },
        outputs: { y: 'merge' },
        graphName: 't',
        producerVersion: 't',
        docString: '',
      }),
    ).toThrow(/predicate flag .* is not fixed/)
  })
})
