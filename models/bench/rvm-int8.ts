/**
 * The int8 experiment of issue 14, reproducible: builds a static QDQ int8 rvm from models/dist/rvm.onnx
 * (our own quantizer, src/quantize/, calibrated on frames of ../shared/media with the recurrent
 * state carried; the guided-filter refiner always stays float32), then measures it against the
 * fp32 graph in the same run: CPU ms per frame (1280x720/0.25, state carried, 2 threads) and the
 * alpha quality bound over a clip (mean |Δα| ≤ 0.004, ≥ 99.5 % within 0.03).
 *
 * Usage: tsx bench/rvm-int8.ts [--scope encoder|no-gru|all] [--calib-frames 20] [--frames 30] [--out /tmp/rvm-int8.onnx]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { mergeConcatConvs } from '../src/convert/split-concat-conv.ts'
import { compareAlpha } from '../src/quantize/alpha-quality.ts'
import { calibrateRvm } from '../src/quantize/calibrate.ts'
import { planQdq, quantizeQdq } from '../src/quantize/quantize-qdq.ts'
import { openRvmSequence } from '../src/quantize/rvm-runner.ts'
import { DIST_DIR } from '../src/reference/ort-runner.ts'
import { rgb24ToPlanar, rgbFrames } from '../src/reference/video-stream.ts'
import { MEDIA_DIR } from '../test/support/media-frames.ts'

const { values: args } = parseArgs({
  options: {
    scope: { type: 'string', default: 'encoder' },
    'calib-frames': { type: 'string', default: '20' },
    frames: { type: 'string', default: '30' },
    out: { type: 'string', default: path.join(os.tmpdir(), 'rvm-int8.onnx') },
  },
})
const scope = args.scope
const fp32Path = path.join(DIST_DIR, 'rvm.onnx')
const fp32 = mergeConcatConvs(readFileSync(fp32Path))
const plan = planQdq(fp32, (n) => {
  const name = n.name ?? ''
  if (name.includes('fast_guided_filter')) return false
  if (scope === 'encoder') return name.includes('mobile_net_v3_encoder') || name.includes('lraspp')
  if (scope === 'no-gru') return !name.includes('conv_gru')
  return true
})
const calibFrames = Number(args['calib-frames'])
const t0 = performance.now()
const { ranges, frames } = await calibrateRvm(fp32, plan.activations, [
  {
    file: path.join(MEDIA_DIR, 'video_01.mp4'),
    width: 480,
    height: 908,
    ratio: 0.375,
    every: 4,
    max: calibFrames,
  },
  {
    file: path.join(MEDIA_DIR, 'video_02.mp4'),
    width: 1280,
    height: 720,
    ratio: 0.25,
    every: 4,
    max: calibFrames,
  },
])
const int8 = quantizeQdq(
  fp32,
  plan,
  ranges,
  `rvm int8 QDQ (${scope}), calibrated on ${frames} frames`,
)
writeFileSync(args.out, int8)
console.log(
  `int8 (${scope}): ${plan.convs.length} convolutions, ${plan.activations.length} activations, calibrated on ${frames} frames in ${((performance.now() - t0) / 1000).toFixed(0)} s → ${args.out} (${(int8.length / 1e6).toFixed(1)} MB)`,
)

// Speed, interleaved in the same run.
const [W, H, N] = [1280, 720, Number(args.frames)]
const src: Float32Array[] = []
for await (const rgb of rgbFrames(path.join(MEDIA_DIR, 'video_02.mp4'), {
  width: W,
  height: H,
  max: 10,
})) {
  src.push(rgb24ToPlanar(rgb))
}
const runs = [
  {
    label: 'fp32',
    seq: await openRvmSequence(fp32Path, 0.25),
    ms: [] as number[],
    cpu: [] as number[],
  },
  {
    label: `int8 ${scope}`,
    seq: await openRvmSequence(args.out, 0.25),
    ms: [] as number[],
    cpu: [] as number[],
  },
]
for (let i = 0; i < N + 3; i++) {
  for (const r of runs) {
    const c0 = process.cpuUsage()
    const w0 = performance.now()
    await r.seq.step(src[i % src.length]!, W, H)
    const c = process.cpuUsage(c0)
    if (i >= 3) {
      r.ms.push(performance.now() - w0)
      r.cpu.push((c.user + c.system) / 1000)
    }
  }
}
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!
console.log(
  `speed 1280x720/0.25, ${N} frames each, interleaved, load ${os.loadavg()[0]!.toFixed(1)}:`,
)
for (const r of runs) {
  console.log(
    `  ${r.label.padEnd(16)} median ${median(r.ms).toFixed(1)} ms, ${median(r.cpu).toFixed(1)} CPU ms/frame`,
  )
  await r.seq.release()
}
const q = await compareAlpha(
  { file: path.join(MEDIA_DIR, 'video_02.mp4'), width: W, height: H, ratio: 0.3, max: N },
  fp32Path,
  [{ label: 'int8', model: args.out }],
)
const r = q.get('int8')!
console.log(
  `quality video_02 1280x720/0.3, ${r.frames} frames: mean |Δα| ${r.meanAbs.toFixed(5)}, within 0.03 ${(100 * r.withinShare).toFixed(2)} %, temporal ${r.temporalRef.toFixed(5)} / ${r.temporalVariant.toFixed(5)} (Δ ${r.temporalDiff.toFixed(5)}): ${r.pass ? 'pass' : 'FAIL'}`,
)
