/**
 * The garment-warping network of the try-on engine, built directly as an ONNX graph (opset 17):
 * a batch of thin-plate-spline warps, one per garment part (torso, sleeves, legs…), evaluated on a
 * coarse lattice, upsampled to the output size and fed to GridSample.
 *
 * Inputs (all float32):
 * - `garment` [P, 4, Hg, Wg] — per part, the garment photo as premultiplied RGBA 0..1 whose alpha
 *   is that part's mask (a part is a piece of the garment that moves as one: torso, one sleeve…).
 * - `points` [P, K, 2] — TPS control points on the output, in the same coordinate system as
 *   `grid_x` / `grid_y` (the caller's choice; the try-on engine uses pixel / longer side, which
 *   keeps the radial basis isotropic). Unused slots: any point with zero weight in `coef`.
 * - `coef` [P, K + 3, 2] — TPS coefficients mapping an output position p to a garment position in
 *   GridSample's normalised coordinates (x, y ∈ [-1, 1], pixel centres, align_corners = 0):
 *   f(p) = a0 + ax·x + ay·y + Σ_k w_k U(|p − c_k|), U(r) = r² ln r²;
 *   rows 0…K−1 are w_k, rows K, K+1, K+2 are a0, ax, ay. (The K×K solve is done by the caller:
 *   ONNX has no standard linear solver, and the system is tiny.)
 * - `grid_x` [Wc], `grid_y` [Hc] — the coarse lattice on which the spline is evaluated: the
 *   coordinates of the first to the last output pixel centre (linspace), Wc, Hc ≥ 2.
 * - `out_x` [W], `out_y` [H] — the output pixel-centre coordinates; only their lengths are used
 *   (they give Resize its output size, since a float32-only feed cannot carry int64 sizes).
 *
 * Output `warped` [P, 4, H, W]: each part's garment sampled at f(p), bilinear, zero outside the
 * photo — premultiplied RGBA, so parts can be composited in JS in their occlusion order.
 *
 * The lattice is upsampled with Resize (linear, align_corners), exact for the affine part and
 * accurate to a fraction of a pixel for the smooth spline at a lattice step of 8 px.
 */
import { OnnxGraphBuilder } from '../convert/onnx-builder.ts'

export const WARP_MODEL_NAME = 'tryon-warp'

export interface WarpModelIo {
  name: string
  dtype: 'float32'
  dims: (number | string)[]
  meaning: string
}

export interface BuiltWarpModel {
  name: string
  bytes: Uint8Array
  inputs: WarpModelIo[]
  outputs: WarpModelIo[]
  description: string
}

const INPUTS: WarpModelIo[] = [
  {
    name: 'garment',
    dtype: 'float32',
    dims: ['parts', 4, 'garment_height', 'garment_width'],
    meaning: 'per part: premultiplied RGBA 0..1, alpha = the part mask',
  },
  {
    name: 'points',
    dtype: 'float32',
    dims: ['parts', 'k', 2],
    meaning: 'TPS control points on the output, in the coordinates of grid_x/grid_y',
  },
  {
    name: 'coef',
    dtype: 'float32',
    dims: ['parts', 'k_plus_3', 2],
    meaning:
      'TPS weights (k rows) then a0, ax, ay: output position → garment position in GridSample coordinates [-1, 1]',
  },
  {
    name: 'grid_x',
    dtype: 'float32',
    dims: ['lattice_width'],
    meaning: 'coarse lattice x: first to last output pixel centre',
  },
  {
    name: 'grid_y',
    dtype: 'float32',
    dims: ['lattice_height'],
    meaning: 'coarse lattice y: first to last output pixel centre',
  },
  {
    name: 'out_x',
    dtype: 'float32',
    dims: ['width'],
    meaning: 'output pixel-centre x (only the length is used)',
  },
  {
    name: 'out_y',
    dtype: 'float32',
    dims: ['height'],
    meaning: 'output pixel-centre y (only the length is used)',
  },
]
const OUTPUTS: WarpModelIo[] = [
  {
    name: 'warped',
    dtype: 'float32',
    dims: ['parts', 4, 'height', 'width'],
    meaning: 'per part: the warped garment, premultiplied RGBA 0..1',
  },
]

export const WARP_DESCRIPTION =
  'Try-on garment warp: batched thin-plate splines (one per garment part) evaluated on a coarse lattice, upsampled (Resize linear) and applied with GridSample (bilinear, zeros).'

export function buildWarpModel(): BuiltWarpModel {
  const b = new OnnxGraphBuilder()
  for (const io of INPUTS) b.addInput({ name: io.name, dtype: 'float32', dims: io.dims })
  const f = (v: number) => b.constant('float32', [], [v])

  // Lattice coordinates as broadcastable tensors: gx [1,1,Wc,1], gy [1,Hc,1,1].
  const gx = b.op('Reshape', ['grid_x', b.i64([1, 1, -1, 1])], {}, 'gx')
  const gy = b.op('Reshape', ['grid_y', b.i64([1, -1, 1, 1])], {}, 'gy')

  // Control points as [P,1,1,K] per coordinate.
  const [px0, py0] = b.node(
    'Split',
    ['points', b.i64([1, 1])],
    { axis: 2 },
    { name: 'split_points', outputs: 2 },
  ) as [string, string]
  const px = b.op('Transpose', [px0], { perm: [0, 2, 1] }) // [P,1,K]
  const py = b.op('Transpose', [py0], { perm: [0, 2, 1] })
  const px4 = b.op('Unsqueeze', [px, b.i64([1])]) // [P,1,1,K]
  const py4 = b.op('Unsqueeze', [py, b.i64([1])])

  // r² = (x − cx)² + (y − cy)²  → [P,Hc,Wc,K];  U = r² ln(r² + ε) (0 at r = 0).
  const dx = b.op('Sub', [gx, px4])
  const dy = b.op('Sub', [gy, py4])
  const r2 = b.op('Add', [b.op('Mul', [dx, dx]), b.op('Mul', [dy, dy])], {}, 'r2')
  const u = b.op('Mul', [r2, b.op('Log', [b.op('Add', [r2, f(1e-12)])])], {}, 'tps_u')

  // Split coef into W [P,K,2] and the affine rows [P,1,2] each.
  const k = b.op('Gather', [b.op('Shape', ['points']), b.i64([1])]) // [1] = K
  const kEnd = b.op('Add', [k, b.i64([3])])
  const w = b.op('Slice', ['coef', b.i64([0]), k, b.i64([1])], {}, 'tps_w')
  const aff = b.op('Slice', ['coef', k, kEnd, b.i64([1])], {}, 'tps_affine') // [P,3,2]
  const [a0, ax, ay] = b.node(
    'Split',
    [aff, b.i64([1, 1, 1])],
    { axis: 1 },
    { name: 'split_affine', outputs: 3 },
  ) as [string, string, string]
  const a0u = b.op('Unsqueeze', [a0, b.i64([1])]) // [P,1,1,2]
  const axu = b.op('Unsqueeze', [ax, b.i64([1])])
  const ayu = b.op('Unsqueeze', [ay, b.i64([1])])

  // Non-affine part: U [P,Hc,Wc,K] @ W [P,1,K,2] → [P,Hc,Wc,2].
  const wu = b.op('Unsqueeze', [w, b.i64([1])])
  const bend = b.op('MatMul', [u, wu], {}, 'tps_bend')
  const affine = b.op(
    'Add',
    [a0u, b.op('Add', [b.op('Mul', [gx, axu]), b.op('Mul', [gy, ayu])])],
    {},
    'tps_affine_field',
  )
  const coarse = b.op('Add', [bend, affine], {}, 'coarse_grid') // [P,Hc,Wc,2]

  // Upsample the lattice to [P,H,W,2] (Resize works on the last two axes of [P,2,Hc,Wc]).
  const coarseNchw = b.op('Transpose', [coarse], { perm: [0, 3, 1, 2] })
  const sizes = b.op(
    'Concat',
    [
      b.op('Slice', [b.op('Shape', ['points']), b.i64([0]), b.i64([1]), b.i64([0])]),
      b.i64([2]),
      b.op('Shape', ['out_y']),
      b.op('Shape', ['out_x']),
    ],
    { axis: 0 },
    'grid_sizes',
  )
  const fine = b.op(
    'Resize',
    [coarseNchw, '', '', sizes],
    { mode: 'linear', coordinate_transformation_mode: 'align_corners' },
    'fine_grid',
  )
  const grid = b.op('Transpose', [fine], { perm: [0, 2, 3, 1] }, 'grid')

  b.reserve('warped')
  b.node(
    'GridSample',
    ['garment', grid],
    { align_corners: 0, mode: 'bilinear', padding_mode: 'zeros' },
    { name: 'grid_sample', outputs: ['warped'] },
  )
  for (const io of OUTPUTS) b.addOutput({ name: io.name, dtype: 'float32', dims: io.dims })

  const bytes = b.serialize('tryon_warp', { name: 'tailor-warp', version: '1' }, WARP_DESCRIPTION)
  return {
    name: WARP_MODEL_NAME,
    bytes,
    inputs: INPUTS,
    outputs: OUTPUTS,
    description: WARP_DESCRIPTION,
  }
}
