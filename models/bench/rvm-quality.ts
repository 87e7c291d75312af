/**
 * `pnpm --filter @tailor/models run quality`: alpha of rvm variants against the fp32 graph over
 * whole clips of ../shared/media (every frame, each side carrying its own recurrent state), with the
 * bound of issue 14 (mean |Δα| ≤ 0.004, ≥ 99.5 % of pixels within 0.03) and the temporal stability
 * figure (mean |α_t − α_{t−1}| of each side, and of their difference).
 *
 * Usage: tsx bench/rvm-quality.ts [--variants rvm-int8,…] [--ratios 0.25,0.3,0.375] [--max N] [--clips video_02,video_01]
 *   --variants   built models in models/dist compared at the clip's ratio against `rvm`
 *   --ratios     also compare `rvm` itself at these ratios against `rvm` at the first one (downsample choice)
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { compareAlpha, type AlphaQuality, type ClipSpec } from '../src/quantize/alpha-quality.ts'
import { DIST_DIR } from '../src/reference/ort-runner.ts'
import { MEDIA_DIR } from '../test/support/media-frames.ts'

const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'rvm-int8' },
    ratios: { type: 'string' },
    max: { type: 'string' },
    clips: { type: 'string', default: 'video_02,video_01' },
    ratio: { type: 'string' },
  },
})
const CLIPS: Record<string, ClipSpec> = {
  video_02: { file: path.join(MEDIA_DIR, 'video_02.mp4'), width: 1280, height: 720, ratio: 0.3 },
  video_01: { file: path.join(MEDIA_DIR, 'video_01.mp4'), width: 480, height: 908, ratio: 0.423 },
}
const pct = (x: number): string => `${(100 * x).toFixed(2)} %`
const row = (clip: string, label: string, q: AlphaQuality): string =>
  `| ${clip} | ${label} | ${q.frames} | ${q.meanAbs.toFixed(5)} | ${pct(q.withinShare)} | ${pct(q.worstFrameWithinShare)} | ${q.temporalRef.toFixed(5)} / ${q.temporalVariant.toFixed(5)} | ${q.temporalDiff.toFixed(5)} | ${q.pass ? 'pass' : 'FAIL'} |`

console.log(
  '| clip | variant | frames | mean abs Δα | within 0.03 | worst frame | temporal ref / variant | temporal Δ | bound |',
)
console.log('|---|---|---|---|---|---|---|---|---|')
for (const name of args.clips.split(',')) {
  const base = CLIPS[name]
  if (base === undefined) throw new Error(`unknown clip ${name}`)
  const clip: ClipSpec = {
    ...base,
    ...(args.ratio !== undefined ? { ratio: Number(args.ratio) } : {}),
    ...(args.max !== undefined ? { max: Number(args.max) } : {}),
  }
  const ref = path.join(DIST_DIR, 'rvm.onnx')
  if (args.ratios !== undefined) {
    const [first, ...rest] = args.ratios.split(',').map(Number)
    const res = await compareAlpha(
      { ...clip, ratio: first! },
      ref,
      rest.map((r) => ({ label: `rvm @${r} vs @${first}`, model: ref, ratio: r })),
    )
    for (const [label, q] of res) console.log(row(`${name} ${clip.width}x${clip.height}`, label, q))
  } else {
    const variants = args.variants
      .split(',')
      .filter((v) => v !== '')
      .map((v) => ({
        label: `${v} @${clip.ratio}`,
        model: v.endsWith('.onnx') ? v : path.join(DIST_DIR, `${v}.onnx`),
      }))
    const res = await compareAlpha(clip, ref, variants)
    for (const [label, q] of res) console.log(row(`${name} ${clip.width}x${clip.height}`, label, q))
  }
}
