/**
 * The graphs that hand out bytes (rvm-rgb, rvm-rgba and their ratio-1 twins) against what they
 * replace: the float graph (`rvm` / `rvm-ratio1`, fgr + pha) followed by post.ts's JavaScript
 * composite, on consecutive real frames with the recurrent state carried on each side.
 *
 * Both sides see the same input: the float graph gets the frame as the byte graphs dequantise it
 * (x·float32(1/255), rounded to float32), since the guided-filter refiner amplifies a one-ulp
 * difference of its input up to ~1e-2 of alpha in flat regions (models/README.md). So what is
 * compared is the composite alone: every byte within ±1 of the JavaScript composite (float32 vs
 * double rounding at .5), except where alpha sits on one of post.ts's snap thresholds (ALPHA_SNAP,
 * 1 − ALPHA_SNAP) to within SNAP_EPS, where float32 and double may snap differently.
 */
import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODELS_DIR, requireModels, VIDEO_01, VIDEO_02 } from '../../media/video.test-support.ts'
import { loadModelSpec } from '../manifest.ts'
import { ModelSession, type TensorArray, type TensorData } from '../session.ts'
import { ALPHA_SNAP, compositeOnColor, compositeRgba, parseBackground } from './post.ts'

const FRAMES = 6
const SNAP_EPS = 1e-3
/** At most this share of the bytes may be off by one (float32 rounding at .5). */
const OFF_BY_ONE_MAX = 1e-3
const BG = parseBackground('#3c8be0')
const STATES = ['r1', 'r2', 'r3', 'r4'] as const
const OPEN_TIMEOUT_MS = 120_000
const RUN_TIMEOUT_MS = 300_000

interface Case {
  video: string
  width: number
  height: number
  /** undefined: the ratio-1 graphs */
  ratio?: number
  /** frames appended after the clip's: uniform colours, so alpha has no edge pixels */
  uniform?: number[]
  float: string
  rgb: string
  rgba: string
}

const CASES: Record<string, Case> = {
  'refined, video_02 1280x720 @0.3': {
    video: VIDEO_02,
    width: 1280,
    height: 720,
    ratio: 0.3,
    // rvm-rgb and rvm-rgba compute the foreground only at the edge pixels (rvm-rgba also at the
    // alpha-0 ring beside them; rvm-tail.ts edgeOnlyComposite): frames without any must come out
    // as post.ts's too.
    uniform: [0, 128, 255],
    float: 'rvm',
    rgb: 'rvm-rgb',
    rgba: 'rvm-rgba',
  },
  'ratio 1, video_01 192x364': {
    video: VIDEO_01,
    width: 192,
    height: 364,
    float: 'rvm-ratio1',
    rgb: 'rvm-ratio1-rgb',
    rgba: 'rvm-ratio1-rgba',
  },
}

/** rgb24 → planar 0..1 exactly as the byte graphs' Cast and Mul by float32(1/255) do. */
function dequantised(rgb: Uint8Array, dst: Float32Array): void {
  const scale = Math.fround(1 / 255)
  const n = rgb.length / 3
  for (let i = 0; i < n; i++) {
    for (let ch = 0; ch < 3; ch++) dst[ch * n + i] = rgb[i * 3 + ch]! * scale
  }
}

function decode(c: Case): Uint8Array[] {
  const frameBytes = c.width * c.height * 3
  const raw = execFileSync(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-i',
      c.video,
      '-an',
      '-vf',
      `scale=${c.width}:${c.height}:flags=bilinear`,
      '-frames:v',
      String(FRAMES),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { maxBuffer: frameBytes * (FRAMES + 1) },
  )
  expect(raw.length).toBe(frameBytes * FRAMES)
  return [
    ...Array.from({ length: FRAMES }, (_, i) =>
      Uint8Array.from(raw.subarray(i * frameBytes, (i + 1) * frameBytes)),
    ),
    ...(c.uniform ?? []).map((v) => new Uint8Array(frameBytes).fill(v)),
  ]
}

/** One graph run frame after frame with its own recurrent state. */
class Carried {
  #state: TensorData[] = STATES.map(() => ({ data: new Float32Array(1), dims: [1, 1, 1, 1] }))
  constructor(
    readonly session: ModelSession,
    readonly ratio: number | undefined,
  ) {}
  async run(
    feeds: Record<string, TensorData<TensorArray>>,
    floats: string[],
    bytes: string[],
  ): Promise<{
    floats: Record<string, TensorData>
    bytes: Record<string, TensorData<Uint8Array>>
  }> {
    const all: Record<string, TensorData<TensorArray>> = { ...feeds }
    STATES.forEach((r, i) => (all[`${r}i`] = this.#state[i]!))
    if (this.ratio !== undefined) {
      all.downsample_ratio = { data: Float32Array.of(this.ratio), dims: [1] }
    }
    const out = await this.session.runMixed(all, [...floats, ...STATES.map((r) => `${r}o`)], bytes)
    this.#state = STATES.map((r) => out.floats[`${r}o`]!)
    return out
  }
}

interface Diff {
  bytes: number
  offByOne: number
  /** bytes off by more than one, and of those, how many at pixels not on a snap threshold */
  more: number
  moreOffThreshold: number
  max: number
  examples: string[]
}

function diff(
  got: Uint8Array,
  want: Uint8Array,
  pha: Float32Array,
  channels: number,
  d: Diff,
): void {
  expect(got.length).toBe(want.length)
  for (let i = 0; i < got.length; i++) {
    const e = Math.abs(got[i]! - want[i]!)
    d.max = Math.max(d.max, e)
    if (e === 1) d.offByOne++
    if (e > 1) {
      d.more++
      const a = pha[Math.floor(i / channels)]!
      if (Math.abs(a - ALPHA_SNAP) > SNAP_EPS && Math.abs(a - (1 - ALPHA_SNAP)) > SNAP_EPS) {
        d.moreOffThreshold++
        if (d.examples.length < 5) {
          d.examples.push(
            `px ${Math.floor(i / channels)} ch ${i % channels}: α ${a} got ${got[i]} want ${want[i]}`,
          )
        }
      }
    }
  }
  d.bytes += got.length
}

const sessions = new Map<string, ModelSession>()
beforeAll(async () => {
  requireModels()
  for (const c of Object.values(CASES)) {
    for (const name of [c.float, c.rgb, c.rgba]) {
      sessions.set(name, await ModelSession.open(await loadModelSpec(MODELS_DIR, name)))
    }
  }
}, OPEN_TIMEOUT_MS)
afterAll(async () => {
  await Promise.all([...sessions.values()].map((s) => s.release()))
})

describe.each(Object.keys(CASES))('byte graphs vs the JavaScript composite: %s', (name) => {
  const c = CASES[name]!
  it(
    `rgb and rgba within ±1 of post.ts over ${FRAMES} frames${c.uniform ? ` and ${c.uniform.length} uniform ones` : ''}, state carried`,
    async () => {
      if (BG.kind !== 'color') throw new Error('unreachable')
      const frames = decode(c)
      const ref = new Carried(sessions.get(c.float)!, c.ratio)
      const rgb = new Carried(sessions.get(c.rgb)!, c.ratio)
      const rgba = new Carried(sessions.get(c.rgba)!, c.ratio)
      const planar = new Float32Array(c.width * c.height * 3)
      const wantRgb = new Uint8Array(c.width * c.height * 3)
      const wantRgba = new Uint8Array(c.width * c.height * 4)
      const zero = (): Diff => ({
        bytes: 0,
        offByOne: 0,
        more: 0,
        moreOffThreshold: 0,
        max: 0,
        examples: [],
      })
      const dRgb = zero()
      const dRgba = zero()
      for (const frame of frames) {
        dequantised(frame, planar)
        const r = await ref.run(
          { src: { data: planar, dims: [1, 3, c.height, c.width] } },
          ['fgr', 'pha'],
          [],
        )
        const fgr = r.floats['fgr']!.data
        const pha = r.floats['pha']!.data
        compositeOnColor(frame, fgr, pha, BG.rgb, wantRgb)
        compositeRgba(frame, fgr, pha, c.width, wantRgba)
        const bytes = { data: frame, dims: [1, c.height, c.width, 3] }
        const gotRgb = await rgb.run(
          { rgb24: bytes, bg: { data: Float32Array.from(BG.rgb), dims: [3] } },
          [],
          ['rgb'],
        )
        const gotRgba = await rgba.run({ rgb24: bytes }, [], ['rgba'])
        expect(gotRgb.bytes['rgb']!.dims).toEqual([1, c.height, c.width, 3])
        expect(gotRgba.bytes['rgba']!.dims).toEqual([1, c.height, c.width, 4])
        diff(gotRgb.bytes['rgb']!.data, wantRgb, pha, 3, dRgb)
        diff(gotRgba.bytes['rgba']!.data, wantRgba, pha, 4, dRgba)
      }
      for (const [what, d] of [
        ['rgb', dRgb],
        ['rgba', dRgba],
      ] as const) {
        console.log(
          `${name} ${what}: ${d.bytes} bytes, ${d.offByOne} off by 1 (${((100 * d.offByOne) / d.bytes).toFixed(4)} %), ${d.more} off by more (max ${d.max}), ${d.moreOffThreshold} of them away from a snap threshold ${d.examples.join('; ')}`,
        )
        expect(
          d.moreOffThreshold,
          `${what}: bytes off by more than 1 away from a snap threshold`,
        ).toBe(0)
        expect(d.more / d.bytes, `${what}: share off by more than 1`).toBeLessThan(1e-5)
        expect(d.offByOne / d.bytes, `${what}: share off by 1`).toBeLessThan(OFF_BY_ONE_MAX)
      }
    },
    RUN_TIMEOUT_MS,
  )
})
