/**
 * RVM's full-resolution tail, written as graph code instead of converted node by node
 * (models/README.md, "RVM's full-resolution tail").
 *
 * The original ends with the fast guided filter: `x = [src, mean(src)]` (4 channels, full
 * resolution), `A`, `b` from box filters at low resolution, `q = up(A)·x + up(b)`, split into the
 * foreground residual (3) and alpha (1), `fgr = clip(residual + src)`, `pha = clip(alpha)`. Converted
 * as it is, the full-resolution Concat, Mul, Add and Split made ~65 % of the kernel time of a 720p
 * frame. Here A and b are split at low resolution and the `+ src` is folded into A (`A_rgb + 1`), so
 * the full resolution only sees `fgr = clip(up(A_rgb + 1)·src + up(b_rgb))` and
 * `pha = clip(up(A_a)·mean(src) + up(b_a))`: no full-resolution Concat, Split or Slice.
 *
 * Output kinds:
 * - `planar`: `fgr` [N,3,H,W] and `pha` [N,1,H,W] float 0..1 (the original's outputs);
 * - `rgb`: takes the decoded frame as bytes (`rgb24` uint8 [1,H,W,3]) and the background colour
 *   (`bg` float [3], 0..255) and hands out the composited frame `rgb` uint8 [1,H,W,3];
 * - `rgba`: takes `rgb24` and hands out straight RGBA `rgba` uint8 [1,H,W,4]. Where the snapped
 *   alpha is 0 the colour is the network's foreground if a pixel within one (8-neighbourhood) is
 *   visible, which is what a player filtering straight RGBA bilinearly mixes into the edge, and
 *   the source colour elsewhere (post.ts compositeRgba; the edge-only graph need not compute the
 *   foreground there).
 * The composite is the one of services/inference/src/engine/rvm/post.ts, whose constants are
 * repeated here (ALPHA_SNAP, EDGE_LOW; a test checks both agree byte for byte within ±1).
 */
import type { OnnxGraphBuilder } from './onnx-builder.ts'
import type { ConvertOptions, TailContext } from './convert.ts'

export type RvmTailKind = 'planar' | 'rgb' | 'rgba'

/** services/inference/src/engine/rvm/post.ts ALPHA_SNAP: alpha ≤ this is 0, ≥ 1 − this is 1. */
export const ALPHA_SNAP = 0.01
/** post.ts EDGE_LOW: below this alpha the colour is the network's foreground, above it fades to the source. */
export const EDGE_LOW = 0.9

const P = 'StatefulPartitionedCall/matting_network_wrapper/StatefulPartitionedCall'
const GF = `${P}/cond_1/else/_663/cond_1/fast_guided_filter_refiner/fast_guided_filter`
/** The guided filter's A and b at low resolution, [N,h,w,4] (rgb + alpha). */
const REF_A = `${GF}/truediv`
const REF_B = `${GF}/sub_2`
/** The network's foreground residual and alpha at the input's resolution (ratio-1 branch). */
const REF_FGR_RESIDUAL = `${P}/cond_1/output/_673`
const REF_PHA = `${P}/cond_1/output/_674`

/** The outputs the tail makes (the catalog's other outputs are converted as usual). */
export function tailOutputs(kind: RvmTailKind): string[] {
  return kind === 'planar' ? ['fgr', 'pha'] : [kind]
}

/** The graph input of the byte variants. */
export const RGB24_INPUT = 'rgb24'
export const BG_INPUT = 'bg'
/** The prelude's planar copy of the frame's bytes, [1,3,H,W] uint8. */
const PLANAR_BYTES = 'rgb24/planar'

/**
 * Converter options for an RVM graph whose tail is this module's: `refined` (the downsample +
 * guided-filter graph) or not (the ratio-1 branch), handing out `kind`.
 */
export function rvmTailOptions(
  kind: RvmTailKind,
  refined: boolean,
): Pick<ConvertOptions, 'prelude' | 'tail'> {
  // The byte variants take the rgb24 bytes: interleaved → planar as bytes (a quarter of the
  // float traffic), then Cast and the scale to 0..1 (x·float32(1/255), what composite-graph.test
  // feeds the float graph). Not DequantizeLinear, though it is one pass: onnxruntime's QDQ passes
  // give each of its consumers its own copy and push the Transposes through them (7
  // full-resolution DequantizeLinear and 3 Transposes of the frame in rvm-rgb's optimised graph).
  const prelude: ConvertOptions['prelude'] =
    kind === 'planar'
      ? undefined
      : {
          src: (b) => {
            b.addInput({ name: RGB24_INPUT, dtype: 'uint8', dims: [1, 'height', 'width', 3] })
            const planar = b.op('Transpose', [RGB24_INPUT], { perm: [0, 3, 1, 2] }, PLANAR_BYTES)
            const float = b.op('Cast', [planar], { to: 1 }, 'rgb24/float')
            return b.op('Mul', [float, byteScale(b)], {}, 'rgb24/src')
          },
        }
  return {
    ...(prelude ? { prelude } : {}),
    tail: (t) => {
      const src = t.input('src')
      // The composite snaps and clamps alpha itself, so only the planar outputs clip it.
      const clipAlpha = kind === 'planar'
      if (refined && kind !== 'planar') {
        edgeOnlyComposite(t, src, kind)
        return
      }
      const { fgr, pha } = refined
        ? guidedFilterTail(t, src, clipAlpha)
        : ratio1Tail(t, src, clipAlpha)
      if (kind === 'planar') {
        t.b.node('Identity', [fgr], {}, { outputs: [reserved(t.b, 'fgr')] })
        t.b.node('Identity', [pha], {}, { outputs: [reserved(t.b, 'pha')] })
        t.b.addOutput({ name: 'fgr', dtype: 'float32', dims: ['batch', 3, 'height', 'width'] })
        t.b.addOutput({ name: 'pha', dtype: 'float32', dims: ['batch', 1, 'height', 'width'] })
        return
      }
      composite(t.b, kind, src, fgr, pha)
    },
  }
}

const byteScale = (b: OnnxGraphBuilder): string => b.constant('float32', [], [1 / 255])
const zeroPoint = (b: OnnxGraphBuilder): string => b.constant('uint8', [], [0])

function reserved(b: OnnxGraphBuilder, name: string): string {
  b.reserve(name)
  return name
}

/** Bilinear (half-pixel, as tf's resize) upsample of a low-resolution NCHW tensor to `hw`. */
function upsample(b: OnnxGraphBuilder, lowRes: string, channels: number, hw: string): string {
  const sizes = b.op('Concat', [b.i64([1, channels]), hw], { axis: 0 })
  return b.op('Resize', [lowRes, '', '', sizes], {
    mode: 'linear',
    coordinate_transformation_mode: 'half_pixel',
  })
}

/** The guided filter's low-resolution A and b, each split into its colour (3) and alpha (1) channels. */
function splitAB(t: TailContext): { aRgb: string; aA: string; bRgb: string; bA: string } {
  const b = t.b
  const [aRgb, aA] = b.node(
    'Split',
    [t.ref(REF_A), b.i64([3, 1])],
    { axis: 1 },
    { name: 'gf/A', outputs: 2 },
  )
  const [bRgb, bA] = b.node(
    'Split',
    [t.ref(REF_B), b.i64([3, 1])],
    { axis: 1 },
    { name: 'gf/b', outputs: 2 },
  )
  return { aRgb: aRgb!, aA: aA!, bRgb: bRgb!, bA: bA! }
}

/**
 * fgr = clip(up(A_rgb + 1)·src + up(b_rgb), 0, 1), pha = up(A_a)·mean(src) + up(b_a) (clipped to
 * 0..1 when `clipAlpha`): every full-resolution op is elementwise or a Resize.
 */
function guidedFilterTail(
  t: TailContext,
  src: string,
  clipAlpha: boolean,
): { fgr: string; pha: string } {
  const b = t.b
  const { aRgb, aA, bRgb, bA } = splitAB(t)
  const hw = b.op('Slice', [b.op('Shape', [src]), b.i64([2]), b.i64([4])])
  const k = (v: number): string => b.constant('float32', [], [v])
  // Low resolution: the residual's `+ src` folded into A.
  const aRgb1 = b.op('Add', [aRgb, k(1)], {}, 'gf/A_rgb_plus_1')
  // Full resolution.
  const fgrRaw = b.op(
    'Add',
    [b.op('Mul', [upsample(b, aRgb1, 3, hw), src]), upsample(b, bRgb, 3, hw)],
    {},
    'gf/fgr_raw',
  )
  const fgr = b.op('Clip', [fgrRaw, k(0), k(1)], {}, 'gf/fgr')
  const mean = b.op('ReduceMean', [src], { axes: [1], keepdims: 1 }, 'gf/mean')
  const phaRaw = b.op(
    'Add',
    [b.op('Mul', [upsample(b, aA, 1, hw), mean]), upsample(b, bA, 1, hw)],
    {},
    'gf/pha_raw',
  )
  return { fgr, pha: clipAlpha ? b.op('Clip', [phaRaw, k(0), k(1)], {}, 'gf/pha') : phaRaw }
}

/** The ratio-1 branch: fgr = clip(residual + src, 0, 1), pha = alpha (clipped when `clipAlpha`). */
function ratio1Tail(t: TailContext, src: string, clipAlpha: boolean): { fgr: string; pha: string } {
  const b = t.b
  const k = (v: number): string => b.constant('float32', [], [v])
  const residual = t.ref(REF_FGR_RESIDUAL)
  const fgr = b.op('Clip', [b.op('Add', [residual, src]), k(0), k(1)], {}, 'fgr')
  const raw = t.ref(REF_PHA)
  return { fgr, pha: clipAlpha ? b.op('Clip', [raw, k(0), k(1)], {}, 'pha') : raw }
}

/**
 * post.ts's composite on planar 0..1 tensors. a = snap(pha) (≤ ALPHA_SNAP → 0, ≥ 1 − ALPHA_SNAP
 * → 1, which also clamps it); t = clip((a − EDGE_LOW)/(1 − EDGE_LOW), 0, 1); colour = fgr +
 * t·(src − fgr). rgb: bg + a·(colour − bg), computed as (a − a·t)·fgr + a·t·src + (1 − a)·bg so that
 * the per-pixel weights are single-channel; rgba: [colour, a]. QuantizeLinear (×255, rounded half
 * to even as Uint8ClampedArray does, saturated) makes the bytes; the planar bytes are interleaved
 * last, a quarter of the float traffic.
 */
function composite(
  b: OnnxGraphBuilder,
  kind: 'rgb' | 'rgba',
  src: string,
  fgr: string,
  pha: string,
): void {
  const k = (v: number): string => b.constant('float32', [], [v])
  const aLo = b.op('Where', [b.op('Greater', [pha, k(ALPHA_SNAP)]), pha, k(0)], {}, 'cmp/a_lo')
  const a = b.op(
    'Where',
    [b.op('GreaterOrEqual', [aLo, k(1 - ALPHA_SNAP)]), k(1), aLo],
    {},
    'cmp/alpha',
  )
  // a ≤ 1, so only the lower bound of t needs a clamp.
  const t = b.op(
    'Relu',
    [b.op('Mul', [b.op('Sub', [a, k(EDGE_LOW)]), k(1 / (1 - EDGE_LOW))])],
    {},
    'cmp/edge',
  )
  const toBytes = (v: string, what: string): string =>
    b.op('QuantizeLinear', [v, byteScale(b), zeroPoint(b)], {}, `${what}/u8`)
  let planar: string
  if (kind === 'rgb') {
    b.addInput({ name: BG_INPUT, dtype: 'float32', dims: [3] })
    const bg = b.op(
      'Mul',
      [b.op('Reshape', [BG_INPUT, b.i64([1, 3, 1, 1])]), k(1 / 255)],
      {},
      'bg/01',
    )
    const u = b.op('Mul', [a, t], {}, 'cmp/w_src')
    const w = b.op('Sub', [a, u], {}, 'cmp/w_fgr')
    const kbg = b.op('Mul', [b.op('Sub', [k(1), a]), bg], {}, 'cmp/bg_part')
    const out = b.op(
      'Add',
      [b.op('Add', [b.op('Mul', [w, fgr]), b.op('Mul', [u, src])]), kbg],
      {},
      'cmp/rgb',
    )
    planar = toBytes(out, 'cmp/rgb')
  } else {
    const mixed = b.op('Add', [fgr, b.op('Mul', [t, b.op('Sub', [src, fgr])])], {}, 'cmp/mixed')
    // The source colour where no pixel within one is visible (post.ts compositeRgba).
    const colour = b.op('Where', [nearVisible(b, pha), mixed, src], {}, 'cmp/colour')
    planar = b.op(
      'Concat',
      [toBytes(colour, 'cmp/colour'), toBytes(a, 'cmp/alpha')],
      { axis: 1 },
      'cmp/rgba',
    )
  }
  b.node('Transpose', [planar], { perm: [0, 2, 3, 1] }, { outputs: [reserved(b, kind)] })
  b.addOutput({ name: kind, dtype: 'uint8', dims: [1, 'height', 'width', kind === 'rgb' ? 3 : 4] })
}

/**
 * Whether a pixel within one (3×3, the pixel itself included) has alpha > ALPHA_SNAP: a MaxPool of
 * alpha [N,1,H,W] (its padding is never the maximum) against the snap threshold.
 */
function nearVisible(b: OnnxGraphBuilder, pha: string): string {
  const k = b.constant('float32', [], [ALPHA_SNAP])
  const max = b.op(
    'MaxPool',
    [pha],
    { kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [1, 1] },
    'cmp/alpha_max3',
  )
  return b.op('Greater', [max, k], {}, 'cmp/near_visible')
}

/**
 * The refined `rgb` and `rgba` graphs' tail: alpha at full resolution as `guidedFilterTail` computes it
 * (bit-identical), the foreground only at the edge pixels (ALPHA_SNAP < alpha < 1 − ALPHA_SNAP).
 *
 * post.ts's composite takes the source where the snapped alpha is 1 and the background colour
 * where it is 0; only the pixels between read the network's foreground. Computing `fgr` for every
 * pixel (two 3-channel full-resolution upsamples of A and b, then Mul, Add, Clip and the 3-channel
 * composite) was about two thirds of the full-resolution tail. Here the frame's bytes are
 * selected (Where on the interleaved uint8 bytes: source or `bg`), the edge pixels are listed
 * (NonZero), and at those K pixels only the bilinear upsample of A and b is evaluated by hand —
 * the same half-pixel coordinates, neighbours and weight products as onnxruntime's Resize (its
 * UpsampleBilinear: `dx2·dy2·X11 + dx1·dy2·X21 + dx2·dy1·X12 + dx1·dy1·X22`) — followed by the
 * same composite arithmetic as `composite` and written into the bytes by ScatterND. The bytes
 * equal the full composite's up to float rounding (composite-graph.test.ts).
 *
 * `rgba` the same way: alpha's bytes (snapped) and the source's colour for every pixel, one planar
 * Concat and Transpose to RGBA; the listed pixels are the ones below alpha 1 with a visible pixel
 * within one (MaxPool 3×3 of alpha > ALPHA_SNAP: the edge and a one-pixel ring of alpha 0, where
 * compositeRgba keeps the foreground), their colour `fgr + t·(src − fgr)` and alpha scattered in.
 */
function edgeOnlyComposite(t: TailContext, src: string, kind: 'rgb' | 'rgba'): void {
  const b = t.b
  const k = (v: number): string => b.constant('float32', [], [v])
  const { aRgb, aA, bRgb, bA } = splitAB(t)
  const hw = b.op('Slice', [b.op('Shape', [src]), b.i64([2]), b.i64([4])], {}, 'gf/hw')
  // Alpha at full resolution, exactly as guidedFilterTail (unclipped: the snap below clamps it).
  const mean = b.op('ReduceMean', [src], { axes: [1], keepdims: 1 }, 'gf/mean')
  const phaRaw = b.op(
    'Add',
    [b.op('Mul', [upsample(b, aA, 1, hw), mean]), upsample(b, bA, 1, hw)],
    {},
    'gf/pha_raw',
  )
  const pha = b.op('Reshape', [phaRaw, b.i64([-1])], {}, 'edge/pha_flat')
  // Snapped alpha: 1 where pha ≥ 1 − ALPHA_SNAP, 0 where pha ≤ ALPHA_SNAP, pha between (the edge).
  const isOne = b.op('GreaterOrEqual', [pha, k(1 - ALPHA_SNAP)], {}, 'edge/is_one')
  const visible = b.op('Greater', [pha, k(ALPHA_SNAP)], {}, 'edge/visible')
  // The pixels whose colour reads the foreground: rgb the edge (0 < a < 1); rgba also the alpha-0
  // pixels beside a visible one (compositeRgba's colour at alpha 0).
  const edge = b.op(
    'And',
    [
      kind === 'rgb'
        ? visible
        : b.op('Reshape', [nearVisible(b, phaRaw), b.i64([-1])], {}, 'edge/near_flat'),
      b.op('Not', [isOne]),
    ],
    {},
    'edge/mask',
  )
  let base: string
  let bg01 = ''
  if (kind === 'rgb') {
    // Every pixel's bytes as if alpha were 0 or 1: the source where opaque, else the background.
    b.addInput({ name: BG_INPUT, dtype: 'float32', dims: [3] })
    bg01 = b.op('Mul', [BG_INPUT, k(1 / 255)], {}, 'bg/01')
    const bgBytes = b.op('QuantizeLinear', [bg01, byteScale(b), zeroPoint(b)], {}, 'bg/u8')
    // Planar, so that onnxruntime's broadcasting Where runs over whole planes (on the interleaved
    // bytes, [H·W, 1] against [H·W, 3], it went element by element: 38 ms of a 215 ms frame).
    const planarBase = b.op(
      'Where',
      [
        b.op('Reshape', [isOne, b.op('Shape', [mean])]),
        PLANAR_BYTES,
        b.op('Reshape', [bgBytes, b.i64([1, 3, 1, 1])]),
      ],
      {},
      'edge/base_planar',
    )
    base = b.op(
      'Reshape',
      [b.op('Transpose', [planarBase], { perm: [0, 2, 3, 1] }), b.i64([-1, 3])],
      {},
      'edge/base',
    )
  } else {
    // Every pixel's colour is the source's but at the listed pixels; alpha is the snapped one.
    const aLo = b.op('Where', [visible, pha, k(0)], {}, 'edge/a_lo')
    const aBytes = b.op(
      'QuantizeLinear',
      [b.op('Where', [isOne, k(1), aLo], {}, 'edge/alpha'), byteScale(b), zeroPoint(b)],
      {},
      'edge/alpha_u8',
    )
    const planarBase = b.op(
      'Concat',
      [PLANAR_BYTES, b.op('Reshape', [aBytes, b.op('Shape', [mean])])],
      { axis: 1 },
      'edge/base_planar',
    )
    base = b.op(
      'Reshape',
      [b.op('Transpose', [planarBase], { perm: [0, 2, 3, 1] }), b.i64([-1, 4])],
      {},
      'edge/base',
    )
  }
  const pixels = b.op('Reshape', [RGB24_INPUT, b.i64([-1, 3])], {}, 'edge/pixels')
  // The edge pixels: flat indices [K], their row and column.
  const idx = b.op(
    'Squeeze',
    [b.op('NonZero', [edge], {}, 'edge/nonzero'), b.i64([0])],
    {},
    'edge/idx',
  )
  const [outH, outW] = b.node('Split', [hw, b.i64([1, 1])], { axis: 0 }, { outputs: 2 })
  const lowHw = b.op('Slice', [b.op('Shape', [aRgb]), b.i64([2]), b.i64([4])])
  const [inH, inW] = b.node('Split', [lowHw, b.i64([1, 1])], { axis: 0 }, { outputs: 2 })
  const row = b.op('Div', [idx, outW!], {}, 'edge/row')
  const col = b.op('Sub', [idx, b.op('Mul', [row, outW!])], {}, 'edge/col')
  const ys = bilinearAxis(b, outH!, inH!, row, 'edge/y')
  const xs = bilinearAxis(b, outW!, inW!, col, 'edge/x')
  // Flat low-resolution indices of the four neighbours, and their weights [K, 1].
  const r1 = b.op('Mul', [ys.i1, inW!])
  const r2 = b.op('Mul', [ys.i2, inW!])
  const at = (r: string, c: string): string => b.op('Add', [r, c])
  const corners = [at(r1, xs.i1), at(r1, xs.i2), at(r2, xs.i1), at(r2, xs.i2)]
  const col1 = (v: string): string => b.op('Unsqueeze', [v, b.i64([1])])
  const weights = [
    col1(b.op('Mul', [xs.d2, ys.d2])),
    col1(b.op('Mul', [xs.d1, ys.d2])),
    col1(b.op('Mul', [xs.d2, ys.d1])),
    col1(b.op('Mul', [xs.d1, ys.d1])),
  ]
  // A low-resolution [1,3,h,w] tensor as rows of pixels [h·w, 3], evaluated at the edge pixels.
  const atEdges = (low: string, what: string): string => {
    const rows = b.op(
      'Reshape',
      [b.op('Transpose', [low], { perm: [0, 2, 3, 1] }), b.i64([-1, 3])],
      {},
      `${what}/rows`,
    )
    const term = (i: number): string =>
      b.op('Mul', [weights[i]!, b.op('Gather', [rows, corners[i]!], { axis: 0 })])
    return b.op(
      'Add',
      [b.op('Add', [b.op('Add', [term(0), term(1)]), term(2)]), term(3)],
      {},
      `${what}/up`,
    )
  }
  const a1 = b.op('Add', [aRgb, k(1)], {}, 'gf/A_rgb_plus_1')
  const srcK = b.op(
    'Mul',
    [
      b.op('Cast', [b.op('Gather', [pixels, idx], { axis: 0 }, 'edge/src_u8')], { to: 1 }),
      byteScale(b),
    ],
    {},
    'edge/src',
  )
  const fgr = b.op(
    'Clip',
    [
      b.op('Add', [b.op('Mul', [atEdges(a1, 'edge/A'), srcK]), atEdges(bRgb, 'edge/b')]),
      k(0),
      k(1),
    ],
    {},
    'edge/fgr',
  )
  // composite()'s arithmetic at the listed pixels (a < 1; for rgb a > 0 too, for rgba snapped).
  const aRaw = col1(b.op('Gather', [pha, idx], { axis: 0 }, 'edge/alpha_raw'))
  const a =
    kind === 'rgb'
      ? aRaw
      : b.op('Where', [b.op('Greater', [aRaw, k(ALPHA_SNAP)]), aRaw, k(0)], {}, 'edge/alpha_k')
  const tEdge = b.op(
    'Relu',
    [b.op('Mul', [b.op('Sub', [a, k(EDGE_LOW)]), k(1 / (1 - EDGE_LOW))])],
    {},
    'edge/t',
  )
  if (kind === 'rgba') {
    const colour = b.op(
      'Add',
      [fgr, b.op('Mul', [tEdge, b.op('Sub', [srcK, fgr])])],
      {},
      'edge/colour',
    )
    const q = (v: string, what: string): string =>
      b.op('QuantizeLinear', [v, byteScale(b), zeroPoint(b)], {}, `${what}/u8`)
    const updates = b.op(
      'Concat',
      [q(colour, 'edge/colour'), q(a, 'edge/alpha_k')],
      { axis: 1 },
      'edge/rgba',
    )
    const scattered = b.op(
      'ScatterND',
      [base, b.op('Unsqueeze', [idx, b.i64([1])]), updates],
      {},
      'edge/scatter',
    )
    b.node(
      'Reshape',
      [scattered, b.op('Concat', [b.i64([1]), hw, b.i64([4])], { axis: 0 })],
      {},
      { outputs: [reserved(b, 'rgba')] },
    )
    b.addOutput({ name: 'rgba', dtype: 'uint8', dims: [1, 'height', 'width', 4] })
    return
  }
  const u = b.op('Mul', [a, tEdge], {}, 'edge/w_src')
  const w = b.op('Sub', [a, u], {}, 'edge/w_fgr')
  const kbg = b.op('Mul', [b.op('Sub', [k(1), a]), bg01], {}, 'edge/bg_part')
  const out = b.op(
    'Add',
    [b.op('Add', [b.op('Mul', [w, fgr]), b.op('Mul', [u, srcK])]), kbg],
    {},
    'edge/rgb',
  )
  const bytes = b.op('QuantizeLinear', [out, byteScale(b), zeroPoint(b)], {}, 'edge/u8')
  const scattered = b.op(
    'ScatterND',
    [base, b.op('Unsqueeze', [idx, b.i64([1])]), bytes],
    {},
    'edge/scatter',
  )
  b.node(
    'Reshape',
    [scattered, b.op('Shape', [RGB24_INPUT])],
    {},
    { outputs: [reserved(b, 'rgb')] },
  )
  b.addOutput({ name: 'rgb', dtype: 'uint8', dims: [1, 'height', 'width', 3] })
}

/**
 * onnxruntime's bilinear Resize parameters (half_pixel, scale = out/in as float) along one axis,
 * for the output positions `pos` (int64 [K]): the two source indices and their distances.
 */
function bilinearAxis(
  b: OnnxGraphBuilder,
  outSize: string,
  inSize: string,
  pos: string,
  what: string,
): { i1: string; i2: string; d1: string; d2: string } {
  const f = (v: string): string => b.op('Cast', [v], { to: 1 })
  const k = (v: number): string => b.constant('float32', [], [v])
  const one = b.constant('int64', [], [1])
  const scale = b.op('Div', [f(outSize), f(inSize)], {}, `${what}/scale`)
  const last = b.op('Sub', [inSize, one])
  const coord = b.op(
    'Sub',
    [b.op('Div', [b.op('Add', [f(pos), k(0.5)]), scale]), k(0.5)],
    {},
    `${what}/coord`,
  )
  const clamped = b.op('Min', [b.op('Max', [coord, k(0)]), f(last)], {}, `${what}/clamped`)
  const i1 = b.op('Min', [b.op('Cast', [clamped], { to: 7 }), last], {}, `${what}/i1`)
  const i2 = b.op('Min', [b.op('Add', [i1, one]), last], {}, `${what}/i2`)
  const same = b.op('Equal', [i1, i2])
  const dist = (i: string): string =>
    b.op('Where', [same, k(0.5), b.op('Abs', [b.op('Sub', [clamped, f(i)])])])
  return { i1, i2, d1: dist(i1), d2: dist(i2) }
}
