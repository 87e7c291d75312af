/**
 * Which of rvm's convolutions an int8 variant may quantize, in groups (the unit of the per-layer
 * sensitivity measurement, bench/rvm-int8-sensitivity.ts), the calibration clips and ranges, and
 * the int8 variant `pnpm models` builds from rvm-rgb / rvm-rgba (catalog DERIVED: rvm-int8-rgb,
 * rvm-int8-rgba; bench/rvm-int8-sensitivity.ts --candidate FILE writes the same transform of rvm.onnx
 * for bench/rvm-quality.ts).
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { mergeConcatConvs, splitConcatConvs } from '../convert/split-concat-conv.ts'
import type { CalibrationClip } from './calibrate.ts'
import { planQdq, quantizeQdq, type Range } from './quantize-qdq.ts'

/** The committed calibration ranges (regenerate: bench/rvm-int8-sensitivity.ts --recalibrate). */
export const RVM_INT8_RANGES_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'rvm-int8-ranges.json',
)

const SCOPE = 'StatefulPartitionedCall/matting_network_wrapper/StatefulPartitionedCall/'

/**
 * The group of an rvm convolution (by the tfjs scope its node name keeps), or null for one that is
 * never quantized: the guided-filter refiner's box filters (full-resolution arithmetic on A and b).
 */
export function rvmConvGroup(convName: string): string | null {
  if (convName.includes('fast_guided_filter')) return null
  const rel = convName.startsWith(SCOPE) ? convName.slice(SCOPE.length) : convName
  const parts = rel.split('/')
  if (parts[0] === 'mobile_net_v3_encoder') {
    return `encoder/${parts[1]!.replace(/^conv_bn_activation(_45)?$/, (_, last) => (last ? 'last' : 'stem'))}`
  }
  if (parts[0] === 'lraspp') return 'lraspp'
  if (parts[0] === 'recurrent_decoder') {
    const gru = parts[2]?.startsWith('conv_gru') === true
    return `decoder/${parts[1]}${gru ? '/gru' : ''}`
  }
  return `other/${parts[0]}`
}

/** Frames both clips give the calibration (every 4th frame, state carried). */
export const RVM_CALIBRATION_CLIPS = (
  mediaDir: string,
  framesPerClip: number,
): CalibrationClip[] => [
  {
    file: path.join(mediaDir, 'video_01.mp4'),
    width: 480,
    height: 908,
    ratio: 0.375,
    every: 4,
    max: framesPerClip,
  },
  {
    file: path.join(mediaDir, 'video_02.mp4'),
    width: 1280,
    height: 720,
    ratio: 0.25,
    every: 4,
    max: framesPerClip,
  },
]

/**
 * Groups kept in float32 in the int8 variant: the whole encoder and the last upsampling block's
 * convolution (it reads the half-resolution frame); int8 are the 15 other convolutions of the
 * decoder (its ConvGRUs, first two upsampling blocks, output block), LR-ASPP and the projection.
 * Why (bench/rvm-int8-sensitivity.ts, one group int8 at a time, 8 frames against fp32): on video_02
 * @0.3 the stem alone took the share of pixels within 0.03 to 98.78 %, the first blocks and the
 * last upsampling conv to 99.29–99.84 %; on video_01 @0.423 every encoder block cost 0.1–0.2 % on
 * its own and their sum missed the bound, while the decoder groups, LR-ASPP and the projection
 * stayed >= 99.96 %. The earlier candidate that also quantized encoder blocks 5, 7–14 and the last
 * conv passed video_02 but missed video_01 (99.26 %); this one passes both whole clips
 * (models/README.md).
 */
export const RVM_INT8_KEEP_FP32: readonly string[] = [
  'encoder/stem',
  ...Array.from({ length: 15 }, (_, i) => `encoder/inverted_residual${i === 0 ? '' : `_${i}`}`),
  'encoder/last',
  'decoder/upsampling_block_2',
]

/** Calibration ranges as committed: tensor name (scope prefix dropped) → [min, max]. */
export type RangesFile = Record<string, [number, number]>

export const shortTensorName = (t: string): string =>
  t.startsWith(SCOPE) ? `~/${t.slice(SCOPE.length)}` : t
const longTensorName = (t: string): string => (t.startsWith('~/') ? SCOPE + t.slice(2) : t)

/** The committed file's text: one tensor a line. */
export function rangesFileText(ranges: ReadonlyMap<string, Range>): string {
  const f = rangesToFile(ranges)
  const lines = Object.entries(f).map(([t, r]) => `  ${JSON.stringify(t)}: [${r[0]}, ${r[1]}]`)
  return `{\n${lines.join(',\n')}\n}\n`
}

export function rangesToFile(ranges: ReadonlyMap<string, Range>): RangesFile {
  return Object.fromEntries(
    [...ranges]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([t, r]) => [shortTensorName(t), [r[0], r[1]]]),
  )
}

export function rangesFromFile(f: RangesFile): Map<string, Range> {
  return new Map(Object.entries(f).map(([t, r]) => [longTensorName(t), r as Range]))
}

/** The convolutions the int8 variant quantizes (every group but RVM_INT8_KEEP_FP32 and the refiner). */
export const rvmInt8Selects = (convName: string): boolean => {
  const g = rvmConvGroup(convName)
  return g !== null && !RVM_INT8_KEEP_FP32.includes(g)
}

/** The int8 variant of a float32 rvm graph (planar or byte) from the committed calibration ranges. */
export function buildRvmInt8(fp32Split: Uint8Array, ranges: RangesFile): Uint8Array {
  // The ranges name the decoder's Concat outputs: quantize the graph as converted, then split the
  // Concat → Conv pairs that stay float32 (src/convert/split-concat-conv.ts).
  const fp32 = mergeConcatConvs(fp32Split)
  const plan = planQdq(fp32, (n) => rvmInt8Selects(n.name ?? ''))
  const r = rangesFromFile(ranges)
  const missing = plan.activations.filter((t) => !r.has(t))
  if (missing.length > 0) {
    throw new Error(
      `rvm-int8: ${missing.length} activations have no calibration range (${missing.slice(0, 3).map(shortTensorName).join(', ')}…): the rvm graph changed since ${path.basename(RVM_INT8_RANGES_FILE)} was measured; run bench/rvm-int8-sensitivity.ts --recalibrate`,
    )
  }
  return splitConcatConvs(
    quantizeQdq(
      fp32,
      plan,
      r,
      `rvm with ${plan.convs.length} convolutions int8 (static QDQ, src/quantize/rvm-int8.ts); float32: ${RVM_INT8_KEEP_FP32.join(', ')} and the refiner`,
    ),
  ).bytes
}
