/**
 * Per-layer sensitivity of rvm to int8 (issue 14): calibrates every convolution of the low-resolution
 * network once (frames of both clips, state carried) or reads the ranges from --ranges (default: the
 * committed src/quantize/rvm-int8-ranges.json that `pnpm models` builds rvm-int8 from; --recalibrate
 * measures them again and rewrites that file), then quantizes one
 * group of convolutions at a time (an encoder block, LR-ASPP, a decoder block's convolution, its
 * ConvGRU, the output block, the projection) and measures alpha against fp32 over the first frames
 * of video_02 at its service ratio (0.3), all groups in one pass against one fp32 reference. The
 * groups that move alpha most are the ones to keep in float32.
 *
 * Usage: tsx bench/rvm-int8-sensitivity.ts [--frames 8] [--calib-frames 10] [--ranges FILE] [--recalibrate]
 *          [--clip video_02|video_01] [--groups a,b] (only these groups)
 *          [--keep a,b]… (instead: each --keep is one variant with every group quantized except a, b)
 *          [--write DIR] (also write each variant as DIR/int8-<n>.onnx, n = its place in the list)
 *          [--candidate FILE] (only write the int8 candidate, buildRvmInt8, to FILE: then
 *          bench/rvm-quality.ts --variants FILE checks it over whole clips)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { mergeConcatConvs } from '../src/convert/split-concat-conv.ts'
import { compareAlpha } from '../src/quantize/alpha-quality.ts'
import { calibrateRvm } from '../src/quantize/calibrate.ts'
import { planQdq, quantizeQdq, type Range } from '../src/quantize/quantize-qdq.ts'
import { DIST_DIR } from '../src/reference/ort-runner.ts'
import { MEDIA_DIR } from '../test/support/media-frames.ts'
import {
  buildRvmInt8,
  rangesFromFile,
  rangesFileText,
  RVM_CALIBRATION_CLIPS,
  RVM_INT8_KEEP_FP32,
  RVM_INT8_RANGES_FILE,
  rvmConvGroup,
  type RangesFile,
} from '../src/quantize/rvm-int8.ts'

const { values: args } = parseArgs({
  options: {
    frames: { type: 'string', default: '8' },
    'calib-frames': { type: 'string', default: '10' },
    ranges: { type: 'string', default: RVM_INT8_RANGES_FILE },
    recalibrate: { type: 'boolean' },
    clip: { type: 'string', default: 'video_02' },
    groups: { type: 'string' },
    keep: { type: 'string', multiple: true },
    write: { type: 'string' },
    candidate: { type: 'string' },
  },
})
const fp32Path = path.join(DIST_DIR, 'rvm.onnx')
const fp32 = mergeConcatConvs(readFileSync(fp32Path))
if (args.candidate !== undefined) {
  const ranges = JSON.parse(readFileSync(args.ranges, 'utf8')) as RangesFile
  writeFileSync(args.candidate, buildRvmInt8(fp32, ranges))
  console.log(`int8 candidate (float32: ${RVM_INT8_KEEP_FP32.join(', ')}) → ${args.candidate}`)
  process.exit(0)
}
const all = planQdq(fp32, (n) => rvmConvGroup(n.name ?? '') !== null)

let ranges: Map<string, Range>
if (existsSync(args.ranges) && args.recalibrate !== true) {
  ranges = rangesFromFile(JSON.parse(readFileSync(args.ranges, 'utf8')) as RangesFile)
  console.log(`ranges from ${args.ranges} (${ranges.size} tensors)`)
} else {
  const t0 = performance.now()
  const c = await calibrateRvm(
    fp32,
    all.activations,
    RVM_CALIBRATION_CLIPS(MEDIA_DIR, Number(args['calib-frames'])),
  )
  ranges = c.ranges
  writeFileSync(args.ranges, rangesFileText(ranges))
  console.log(
    `calibrated ${all.activations.length} tensors on ${c.frames} frames in ${((performance.now() - t0) / 1000).toFixed(0)} s → ${args.ranges}`,
  )
}

const groups = new Map<string, string[]>()
for (const conv of all.convs) {
  const g = rvmConvGroup(conv)!
  groups.set(g, [...(groups.get(g) ?? []), conv])
}
const only = args.groups?.split(',')
const variant = (label: string, convs: string[]) => {
  const plan = planQdq(fp32, (n) => convs.includes(n.name ?? ''))
  return { label, model: quantizeQdq(fp32, plan, ranges, `sensitivity ${label}`), convs }
}
const variants =
  args.keep !== undefined
    ? args.keep.map((k) => {
        const keep = k.split(',')
        const unknown = keep.filter((g) => !groups.has(g))
        if (unknown.length > 0) throw new Error(`unknown groups ${unknown.join(', ')}`)
        const convs = [...groups.entries()].filter(([g]) => !keep.includes(g)).flatMap(([, c]) => c)
        return variant(`all but ${k}`, convs)
      })
    : [...groups.entries()]
        .filter(([g]) => only === undefined || only.includes(g))
        .map(([g, convs]) => variant(g, convs))
if (args.write !== undefined) {
  variants.forEach((v, i) => {
    const file = path.join(args.write!, `int8-${i}.onnx`)
    writeFileSync(file, v.model)
    console.log(`${v.label} → ${file}`)
  })
}
const clip =
  args.clip === 'video_01'
    ? { file: path.join(MEDIA_DIR, 'video_01.mp4'), width: 480, height: 908, ratio: 0.423 }
    : { file: path.join(MEDIA_DIR, 'video_02.mp4'), width: 1280, height: 720, ratio: 0.3 }
const res = await compareAlpha({ ...clip, max: Number(args.frames) }, fp32Path, variants)
console.log(
  `${args.clip} ${clip.width}x${clip.height}/${clip.ratio}, ${args.frames} frames, ${args.keep !== undefined ? 'groups kept in float32' : 'one group quantized at a time'}:`,
)
console.log('| group | convs | mean abs Δα | within 0.03 | worst frame |')
console.log('|---|---|---|---|---|')
for (const v of [...variants].sort(
  (a, b) => res.get(a.label)!.withinShare - res.get(b.label)!.withinShare,
)) {
  const q = res.get(v.label)!
  console.log(
    `| ${v.label} | ${v.convs.length} | ${q.meanAbs.toFixed(5)} | ${(100 * q.withinShare).toFixed(2)} % | ${(100 * q.worstFrameWithinShare).toFixed(2)} % |`,
  )
}
