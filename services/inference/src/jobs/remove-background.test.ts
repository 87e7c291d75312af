/**
 * The video pipeline end to end on real media: real ffmpeg, real onnxruntime, the real RVM model
 * from models/dist (run `pnpm models` first). Outputs are checked with ffprobe and by pixels.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError, OUTPUT_FORMAT_SPECS, type ErrorCode, type OutputFormat } from '@tailor/proto'
import { openMattingEngine } from '../engine/matting-engine.ts'
import { CONTAINER_AUDIO, outputSize, probeVideo } from '../media/video.ts'
import { parseBackground } from '../engine/rvm/post.ts'
import {
  removeBackground,
  type MattingEngine,
  type RemoveBackgroundResult,
} from './remove-background.ts'
import {
  childFfmpegs,
  classifyBlocks,
  decodeFrameRgba,
  ffmpeg,
  probe,
  rate,
  requireModels,
  topLevelAtoms,
  videoDurationS,
  VIDEO_01,
  VIDEO_02,
  MEDIA_DIR,
  MODELS_DIR,
} from '../media/video.test-support.ts'

const FORMAT_TIMEOUT_MS = 120_000
const FULL_CLIP_TIMEOUT_MS = 300_000
const SETUP_TIMEOUT_MS = 120_000
const ABORT_DEADLINE_MS = 1_000
const MAX_RSS_GROWTH_MIB = 200
const TRIM_S = 1
/** The frame whose pixels are checked (lets the recurrent state settle). */
const CHECK_FRAME = 12

let matting: MattingEngine
let root: string
const clips: Record<string, string> = {}

beforeAll(async () => {
  requireModels()
  root = await mkdtemp(join(tmpdir(), 'tailor-rb-'))
  matting = await openMattingEngine({ modelsDir: MODELS_DIR })
  for (const [name, src] of [
    ['video_01', VIDEO_01],
    ['video_02', VIDEO_02],
  ] as const) {
    clips[name] = join(root, `${name}-${TRIM_S}s.mp4`)
    await ffmpeg([
      '-i',
      src,
      '-t',
      String(TRIM_S),
      '-map',
      '0:v:0',
      '-map',
      '0:a:0',
      '-c',
      'copy',
      clips[name],
    ])
  }
}, SETUP_TIMEOUT_MS)

afterAll(async () => {
  await matting?.close()
  if (root) {
    await rm(root, { recursive: true, force: true })
  }
})

async function workDir(): Promise<string> {
  return mkdtemp(join(root, 'job-'))
}

const CODEC = {
  mp4_h264: 'h264',
  mkv_h264: 'h264',
  mp4_h265: 'hevc',
  mov_h265: 'hevc',
  mkv_h265: 'hevc',
  webm_vp9: 'vp9',
  mkv_vp9: 'vp9',
  mov_proresks: 'prores',
  gif: 'gif',
} as const satisfies Record<OutputFormat, string>

/** Reads the container's own idea of what it is: MP4 brand, QuickTime brand, EBML doctype, GIF. */
async function containerKind(path: string): Promise<string> {
  const head = (await readFile(path)).subarray(0, 64)
  if (head.toString('latin1', 0, 3) === 'GIF') {
    return 'gif'
  }
  if (head.toString('latin1', 4, 8) === 'ftyp') {
    return head.toString('latin1', 8, 12) === 'qt  ' ? 'mov' : 'mp4'
  }
  const s = head.toString('latin1')
  return s.includes('webm') ? 'webm' : s.includes('matroska') ? 'mkv' : 'unknown'
}

interface Tolerances {
  bgColour: number
  personColour: number
}
const tolerances = (f: OutputFormat): Tolerances =>
  f === 'gif' ? { bgColour: 10, personColour: 20 } : { bgColour: 4, personColour: 10 }

/** Every check of the result file: ffprobe facts, then pixels against the network's own alpha. */
async function checkResult(
  input: string,
  r: RemoveBackgroundResult & { checkFrame: number; recorded: Recorded },
  format: OutputFormat,
  backgroundColor: string,
): Promise<void> {
  const spec = OUTPUT_FORMAT_SPECS[format]
  const audio = CONTAINER_AUDIO[spec.container]
  const alpha = backgroundColor === 'transparent'
  const info = await probeVideo(input)
  const size = outputSize(info, format)
  const src = await probe(input)
  const out = await probe(r.outputPath)
  const sv = src.streams.find((s) => s.codec_type === 'video')!
  const ov = out.streams.find((s) => s.codec_type === 'video')!
  const oa = out.streams.filter((s) => s.codec_type === 'audio')

  expect(r.contentType).toBe(spec.contentType)
  expect(r.outputPath.endsWith(`.${spec.extension}`)).toBe(true)
  expect(await containerKind(r.outputPath)).toBe(spec.extension)
  expect(ov.codec_name).toBe(CODEC[format])
  expect([ov.width, ov.height]).toEqual([size.width, size.height])
  expect(ov.side_data_list ?? []).toEqual([]) // rotated frames written, no display matrix
  const srcFrames = Number(sv.nb_read_packets)
  const outFrames = Number(ov.nb_read_packets)
  expect(Math.abs(outFrames - srcFrames)).toBeLessThanOrEqual(1)
  expect(Math.abs(r.frames - srcFrames)).toBeLessThanOrEqual(1)
  const fps = rate(sv.r_frame_rate)
  if (format !== 'gif') {
    expect(rate(ov.r_frame_rate) / fps).toBeCloseTo(1, 3)
  }
  expect(Math.abs(videoDurationS(out) - videoDurationS(src))).toBeLessThanOrEqual(1 / fps + 0.011)

  switch (format) {
    case 'webm_vp9':
      expect(ov.pix_fmt).toBe('yuv420p')
      expect(ov.tags?.['alpha_mode'] ?? ov.tags?.['ALPHA_MODE']).toBe(alpha ? '1' : undefined)
      break
    case 'mov_proresks':
      // Written as 10-bit 4:4:4(:4); ffmpeg's ProRes 4444 decoder reports 12-bit.
      expect(ov.pix_fmt).toMatch(alpha ? /^yuva444p1[02]le$/ : /^yuv444p1[02]le$/)
      expect(ov.codec_tag_string).toBe('ap4h')
      expect(ov.profile).toBe('4444')
      break
    case 'gif':
      expect(ov.pix_fmt).toBe('bgra')
      break
    default:
      expect(ov.pix_fmt).toBe('yuv420p')
  }
  if (format === 'mp4_h265' || format === 'mov_h265') {
    expect(ov.codec_tag_string).toBe('hvc1')
  }
  if (spec.container === 'mp4' || spec.container === 'mov') {
    const atoms = await topLevelAtoms(r.outputPath)
    expect(atoms.indexOf('moov')).toBeLessThan(atoms.indexOf('mdat')) // faststart
  }
  const srcHasAudio = src.streams.some((s) => s.codec_type === 'audio')
  if (audio === 'none' || !srcHasAudio) {
    expect(oa).toEqual([])
  } else {
    expect(oa.map((s) => s.codec_name)).toEqual([audio])
  }

  // Pixels, against the network's own alpha for that frame in this very run.
  const k = r.checkFrame
  const srcRgb = r.recorded.rgb
  const netAlpha = r.recorded.pha
  const rgba = await decodeFrameRgba(r.outputPath, k, format === 'webm_vp9' && alpha)
  const n = size.width * size.height
  expect(rgba.length).toBe(n * 4)
  const { background, person } = classifyBlocks(netAlpha!, size.width, size.height)
  const bgCount = background.reduce((a, b) => a + b, 0)
  const personCount = person.reduce((a, b) => a + b, 0)
  expect(bgCount).toBeGreaterThan(Math.min(n / 10, 2000))
  expect(personCount).toBeGreaterThan(1000)

  if (alpha) {
    let bgA = 0
    let personA = 0
    let err = 0
    let binaryMismatch = 0
    for (let p = 0; p < n; p++) {
      const a = rgba[p * 4 + 3]!
      if (background[p]) {
        bgA += a
      }
      if (person[p]) {
        personA += a
      }
      const net = netAlpha![p]! * 255
      err += Math.abs(a - net)
      binaryMismatch += a >= 128 !== net >= 128 ? 1 : 0
    }
    expect(bgA / bgCount, 'alpha on the background').toBeLessThan(2)
    expect(personA / personCount, 'alpha on the person').toBeGreaterThan(250)
    if (format === 'gif') {
      expect(binaryMismatch / n, 'gif transparency vs network alpha').toBeLessThan(0.01)
    } else {
      expect(err / n, 'alpha vs network alpha (mean abs, 0..255)').toBeLessThan(3)
    }
  } else {
    const bg = parseBackground(backgroundColor)
    if (bg.kind !== 'color') {
      throw new Error('unreachable')
    }
    const t = tolerances(format)
    let bgErr = 0
    let personErr = 0
    for (let p = 0; p < n; p++) {
      for (let c = 0; c < 3; c++) {
        const v = rgba[p * 4 + c]!
        if (background[p]) {
          bgErr += Math.abs(v - bg.rgb[c]!)
        }
        if (person[p]) {
          personErr += Math.abs(v - srcRgb![p * 3 + c]!)
        }
      }
    }
    expect(bgErr / bgCount / 3, 'background vs the requested colour (mean abs)').toBeLessThan(
      t.bgColour,
    )
    expect(personErr / personCount / 3, 'person vs the source (mean abs)').toBeLessThan(
      t.personColour,
    )
  }
}

interface Recorded {
  rgb: Uint8Array
  pha: Float32Array
}

/**
 * The real engine, with the source frame and the network's alpha of frame `k` copied aside as
 * they pass. The alpha is the RGBA graph's: the job's own output for a transparent background,
 * otherwise a second stream over the same frames (up to `k`) with a transparent background.
 */
function recordingEngine(k: number): { engine: MattingEngine; recorded: () => Recorded } {
  let rec: Recorded | undefined
  const alphaOf = (rgba: Uint8Array): Float32Array => {
    const a = new Float32Array(rgba.length / 4)
    for (let i = 0; i < a.length; i++) a[i] = rgba[i * 4 + 3]! / 255
    return a
  }
  const engine: MattingEngine = {
    provider: matting.provider,
    providerFallbacks: matting.providerFallbacks,
    close: async () => undefined,
    openStream: (size, background) => {
      const inner = matting.openStream(size, background)
      const side =
        background.kind === 'transparent' ? null : matting.openStream(size, { kind: 'transparent' })
      let i = 0
      return {
        dispose: () => {
          inner.dispose()
          side?.dispose()
        },
        next: async (rgb) => {
          const src = Uint8Array.from(rgb)
          const out = await inner.next(rgb)
          const rgba = side !== null && i <= k ? await side.next(src) : out
          if (i++ === k) {
            rec = { rgb: src, pha: alphaOf(rgba) }
          }
          return out
        },
      }
    },
  }
  return {
    engine,
    recorded: () => {
      if (rec === undefined) {
        throw new Error(`frame ${k} never reached the network`)
      }
      return rec
    },
  }
}

async function runJob(
  input: string,
  format: OutputFormat,
  backgroundColor: string,
  onProgress: (done: number, total: number) => void = () => undefined,
) {
  const progress: [number, number][] = []
  const info = await probeVideo(input)
  const checkFrame = Math.min(CHECK_FRAME, info.frameCountEstimate - 2)
  const spy = recordingEngine(checkFrame)
  const r = await removeBackground(
    { inputPath: input, workDir: await workDir(), backgroundColor, outputFormat: format },
    {
      matting: spy.engine,
      signal: new AbortController().signal,
      onProgress: (d, t) => {
        progress.push([d, t])
        onProgress(d, t)
      },
    },
  )
  expect(progress.at(-1)).toEqual([r.frames, r.frames])
  return { ...r, checkFrame, recorded: spy.recorded() }
}

/** Each format on each clip: transparent where the format can carry it, a colour otherwise. */
const CASES: Record<'video_01' | 'video_02', [OutputFormat, string][]> = {
  video_01: [
    ['mp4_h264', '#00ff00'],
    ['mp4_h265', '#1e90ff'],
    ['webm_vp9', 'transparent'],
    ['mov_h265', '#f0f'],
    ['mov_proresks', 'transparent'],
    ['mkv_h264', '#ffffff'],
    ['mkv_h265', '#000'],
    ['mkv_vp9', '#ff8800'],
    ['gif', 'transparent'],
  ],
  video_02: [
    ['mp4_h264', '#000000'],
    ['mp4_h265', '#00ff00'],
    ['webm_vp9', 'transparent'],
    ['mov_h265', '#0000ff'],
    ['mov_proresks', '#808080'],
    ['mkv_h264', '#f00'],
    ['mkv_h265', '#123456'],
    ['mkv_vp9', '#ffffff'],
    ['gif', '#00ff00'],
  ],
}

describe.each(['video_01', 'video_02'] as const)(
  `all formats on the first ${TRIM_S} s of %s`,
  (clip) => {
    it.each(CASES[clip])(
      '%s on %s',
      async (format, color) => {
        const r = await runJob(clips[clip]!, format, color)
        await checkResult(clips[clip]!, r, format, color)
      },
      FORMAT_TIMEOUT_MS,
    )
  },
)

describe('geometry', () => {
  it(
    'writes rotated frames for rotation metadata and crops odd sides by 1 px for 4:2:0',
    async () => {
      // 241x455 coded, rotated 90° for display → 455x241; H.264 keeps 454x240, ProRes 455x241.
      const coded = join(root, 'odd-coded.mp4')
      const rotated = join(root, 'odd-rotated.mp4')
      await ffmpeg([
        '-i',
        VIDEO_01,
        '-t',
        '1',
        '-vf',
        'scale=241:455',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv444p',
        '-c:a',
        'copy',
        coded,
      ])
      await ffmpeg([
        '-i',
        coded,
        '-map',
        '0',
        '-c',
        'copy',
        '-metadata:s:v:0',
        'rotate=90',
        rotated,
      ])
      const info = await probeVideo(rotated)
      expect([info.codedWidth, info.codedHeight, info.width, info.height, info.rotation]).toEqual([
        241, 455, 455, 241, 90,
      ])
      const h264 = await runJob(rotated, 'mp4_h264', '#00ff00')
      await checkResult(rotated, h264, 'mp4_h264', '#00ff00')
      const prores = await runJob(rotated, 'mov_proresks', 'transparent')
      await checkResult(rotated, prores, 'mov_proresks', 'transparent')
    },
    FORMAT_TIMEOUT_MS,
  )
})

describe('audio', () => {
  it(
    'a clip without audio gives an output without audio',
    async () => {
      const silent = join(root, 'silent.mp4')
      await ffmpeg(['-i', clips['video_01']!, '-map', '0:v', '-c', 'copy', silent])
      const r = await runJob(silent, 'mkv_vp9', '#ffffff')
      await checkResult(silent, r, 'mkv_vp9', '#ffffff')
    },
    FORMAT_TIMEOUT_MS,
  )
})

describe('a full clip', () => {
  it(
    'video_02 (720p, 29.97 fps, audio + data track) to mp4_h264',
    async () => {
      // Memory stays flat: a per-frame leak (a 720p fgr output is 11 MB) would add gigabytes here.
      const rss: [number, number][] = []
      const r = await runJob(VIDEO_02, 'mp4_h264', '#00ff00', (done) =>
        rss.push([done, process.memoryUsage().rss]),
      )
      expect(r.frames).toBe(289)
      const early = Math.max(...rss.filter(([d]) => d <= 80).map(([, m]) => m))
      const late = Math.max(...rss.filter(([d]) => d > 80).map(([, m]) => m))
      expect((late - early) / 2 ** 20, 'RSS growth after frame 80 (MiB)').toBeLessThan(
        MAX_RSS_GROWTH_MIB,
      )
      await checkResult(VIDEO_02, r, 'mp4_h264', '#00ff00')
    },
    FULL_CLIP_TIMEOUT_MS,
  )
})

describe('bad inputs', () => {
  const cases: [string, () => Promise<string>, ErrorCode, object?][] = [
    ['not a video', async () => writeIn('hello.mp4', 'this is not a video\n'), 'malformed_video'],
    ['an image', async () => `${MEDIA_DIR}person_01.jpg`, 'malformed_video'],
    ['zero bytes', async () => writeIn('empty.mp4', ''), 'malformed_video'],
    [
      'a playlist pointing at a local file',
      async () =>
        writeIn(
          'list.mp4',
          `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${VIDEO_01}\n#EXT-X-ENDLIST\n`,
        ),
      'malformed_video',
    ],
    [
      'truncated, index at the end (video_01)',
      async () => truncate(VIDEO_01, 600_000),
      'malformed_video',
    ],
    [
      'truncated, index first (video_02)',
      async () => truncate(VIDEO_02, 250_000),
      'malformed_video',
    ],
    [
      '61 s long',
      async () => lavfi('long.mp4', 'testsrc=size=128x128:rate=5', 61),
      'video_too_long',
    ],
    [
      '4112 px wide',
      async () => lavfi('wide.mp4', 'testsrc=size=4112x80:rate=5', 0.2),
      'resolution_too_high',
    ],
    [
      '48x48',
      async () => lavfi('tiny.mp4', 'testsrc=size=48x48:rate=5', 0.2),
      'resolution_too_low',
    ],
    [
      'over the byte limit',
      async () => clips['video_01']!,
      'file_size_too_large',
      { maxBytes: 1000 },
    ],
    [
      'over a configured duration',
      async () => clips['video_01']!,
      'video_too_long',
      { maxDurationS: 1 },
    ],
  ]
  async function writeIn(name: string, body: string): Promise<string> {
    const p = join(root, name)
    await writeFile(p, body)
    return p
  }
  async function truncate(src: string, bytes: number): Promise<string> {
    const p = join(root, `trunc-${bytes}.mp4`)
    await writeFile(p, (await readFile(src)).subarray(0, bytes))
    return p
  }
  async function lavfi(name: string, graph: string, seconds: number): Promise<string> {
    const p = join(root, name)
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      graph,
      '-t',
      String(seconds),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      p,
    ])
    return p
  }

  it.each(cases)(
    '$0 → $2',
    async (_name, make, code, limits) => {
      const input = await make()
      const dir = await workDir()
      const err = await removeBackground(
        { inputPath: input, workDir: dir, backgroundColor: '#000000', outputFormat: 'mp4_h264' },
        {
          matting,
          signal: new AbortController().signal,
          onProgress: () => undefined,
          ...(limits ? { limits } : {}),
        },
      ).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code, (err as Error).message).toBe(code)
      expect(await readdir(dir)).toEqual([])
      expect(await childFfmpegs()).toEqual([])
    },
    FORMAT_TIMEOUT_MS,
  )

  it('transparent with mp4_h264 → invalid_parameter', async () => {
    const dir = await workDir()
    const err = await removeBackground(
      {
        inputPath: clips['video_01']!,
        workDir: dir,
        backgroundColor: 'transparent',
        outputFormat: 'mp4_h264',
      },
      { matting, signal: new AbortController().signal, onProgress: () => undefined },
    ).catch((e: unknown) => e)
    expect((err as AppError).code).toBe('invalid_parameter')
    expect(await readdir(dir)).toEqual([])
  })
})

describe('cancellation', () => {
  it(
    'an abort mid-job rejects with job_cancelled within a second and leaves nothing behind',
    async () => {
      const dir = await workDir()
      const ac = new AbortController()
      let abortedAt = 0
      const job = removeBackground(
        {
          inputPath: VIDEO_02,
          workDir: dir,
          backgroundColor: 'transparent',
          outputFormat: 'webm_vp9',
        },
        {
          matting,
          signal: ac.signal,
          onProgress: (done) => {
            if (done >= 5 && abortedAt === 0) {
              abortedAt = performance.now()
              ac.abort()
            }
          },
        },
      )
      const err = await job.catch((e: unknown) => e)
      const tookMs = performance.now() - abortedAt
      expect(abortedAt).toBeGreaterThan(0)
      expect((err as AppError).code).toBe('job_cancelled')
      expect(tookMs).toBeLessThan(ABORT_DEADLINE_MS)
      expect(await childFfmpegs()).toEqual([])
      expect(await readdir(dir)).toEqual([])
    },
    FORMAT_TIMEOUT_MS,
  )

  it(
    'a matting failure with frames in flight rejects with its code and leaves nothing behind',
    async () => {
      const dir = await workDir()
      let handedIn = 0
      const failing: MattingEngine = {
        provider: matting.provider,
        providerFallbacks: matting.providerFallbacks,
        close: async () => undefined,
        openStream: (size, background) => {
          const inner = matting.openStream(size, background)
          return {
            dispose: () => inner.dispose(),
            next: (rgb) => {
              if (++handedIn === 4) {
                return Promise.reject(new AppError('service_unavailable', 'the session broke'))
              }
              return inner.next(rgb)
            },
          }
        },
      }
      const err = await removeBackground(
        {
          inputPath: clips.video_02!,
          workDir: dir,
          backgroundColor: '#000',
          outputFormat: 'mp4_h264',
        },
        { matting: failing, signal: new AbortController().signal, onProgress: () => undefined },
      ).catch((e: unknown) => e)
      expect((err as AppError).code).toBe('service_unavailable')
      expect(handedIn).toBe(4 + 1) // frame 5 was already handed in: two frames in flight
      expect(await childFfmpegs()).toEqual([])
      expect(await readdir(dir)).toEqual([])
    },
    FORMAT_TIMEOUT_MS,
  )

  it('an already aborted signal rejects at once', async () => {
    const dir = await workDir()
    const ac = new AbortController()
    ac.abort()
    const err = await removeBackground(
      { inputPath: VIDEO_02, workDir: dir, backgroundColor: '#000', outputFormat: 'mp4_h264' },
      { matting, signal: ac.signal, onProgress: () => undefined },
    ).catch((e: unknown) => e)
    expect((err as AppError).code).toBe('job_cancelled')
    expect(await readdir(dir)).toEqual([])
  })
})
