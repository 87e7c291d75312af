/**
 * The only module that touches node:child_process, ffmpeg and ffprobe (STYLE.md §3.2, §3.7).
 *
 * - `probeVideo` checks the limits and returns a typed `VideoInfo` before anything is decoded.
 * - `openDecoder` runs `ffmpeg → rawvideo rgb24 → pipe:1` and yields exactly w·h·3 bytes per frame.
 * - `openEncoder` runs a second ffmpeg that reads raw frames on stdin (honouring `drain`) and maps
 *   the audio straight from the input file.
 *
 * ffmpeg only ever reads local files through our demuxers (`-protocol_whitelist file`,
 * `-format_whitelist`; the raw frames go through pipes); processes are spawned with
 * argument arrays (no shell), an AbortSignal and SIGKILL, and their stderr is kept only as a 4 KB
 * tail for the error message.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { stat } from 'node:fs/promises'
import { setPriority } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { z } from 'zod'
import {
  AppError,
  OUTPUT_FORMAT_SPECS,
  redactPaths,
  transparencyIssue,
  type Container,
  type EncoderKey,
  type OutputFormat,
} from '@tailor/proto'

export const FFMPEG_BIN = 'ffmpeg'
export const FFPROBE_BIN = 'ffprobe'
const STDERR_TAIL_BYTES = 4096
const PROBE_TIMEOUT_MS = 30_000
/**
 * Niceness of the decoder and encoder processes. On a CPU machine the network is the critical
 * path: with ffmpeg slightly lower, the network's threads are never preempted mid-operator and
 * ffmpeg fills the cycles they leave idle (between operators and frames).
 */
export const FFMPEG_NICENESS: number = 10

/** Input limits (ARCHITECTURE.md §2); every field is configurable through the job's deps. */
export interface VideoLimits {
  maxBytes: number
  maxDurationS: number
  maxSidePx: number
  minSidePx: number
  /** Frame rate cap: a faster input is decoded at this rate (frames dropped) and written at it. */
  maxFps: number
  /** Frames (at the capped rate) one job may process: past it, video_too_many_frames and decoding stops. */
  maxFrames: number
}
export const DEFAULT_VIDEO_LIMITS: Readonly<VideoLimits> = Object.freeze({
  maxBytes: 100 * 1024 * 1024,
  maxDurationS: 60,
  maxSidePx: 4096,
  minSidePx: 64,
  maxFps: 60,
  maxFrames: 3600,
})

export const tooManyFrames = (what: string, maxFrames: number): AppError =>
  new AppError(
    'video_too_many_frames',
    `the video ${what}; at most ${maxFrames} frames are processed`,
  )

/** Containers and codecs we accept (ARCHITECTURE.md §2); anything else is `malformed_video`. */
const ACCEPTED_FORMATS = ['mov', 'mp4', 'matroska', 'webm', 'gif'] as const
/**
 * Every ffmpeg/ffprobe that opens the input gets both whitelists: only the `file` protocol, and
 * only our demuxers, so a playlist-like input (HLS, concat, …) cannot make ffmpeg open other files.
 */
const INPUT_GUARD = ['-protocol_whitelist', 'file', '-format_whitelist', ACCEPTED_FORMATS.join(',')]
const ACCEPTED_VIDEO_CODECS = ['h264', 'hevc', 'vp8', 'vp9', 'av1', 'prores', 'gif'] as const

export interface Rational {
  num: number
  den: number
}

export interface VideoInfo {
  path: string
  sizeBytes: number
  /** ffprobe's format_name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  formatName: string
  videoStreamIndex: number
  videoCodec: string
  /** Display size: coded size with the rotation already applied (ffmpeg autorotates on decode). */
  width: number
  height: number
  codedWidth: number
  codedHeight: number
  /**
   * Degrees from the display matrix as ffprobe reports them (or the legacy `rotate` tag),
   * normalised to 0, 90, 180, 270; ffmpeg applies it on decode (autorotate).
   */
  rotation: number
  /** The frame rate the output is written at (r_frame_rate when it agrees with avg_frame_rate), at most the limit's maxFps. */
  fps: Rational
  /** The input's own rate was above maxFps: the decoder drops frames down to `fps`. */
  fpsCapped: boolean
  /** Decoding stops past this many frames (video_too_many_frames). */
  maxFrames: number
  durationS: number
  /** Best estimate of the number of frames (nb_frames, else duration × fps); used for progress. */
  frameCountEstimate: number
  audio: { streamIndex: number; codec: string } | null
}

const ProbeStream = z.object({
  index: z.number(),
  codec_type: z.string().optional(),
  codec_name: z.string().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  r_frame_rate: z.string().optional(),
  avg_frame_rate: z.string().optional(),
  nb_frames: z.string().optional(),
  duration: z.string().optional(),
  disposition: z.record(z.string(), z.number()).optional(),
  tags: z.record(z.string(), z.string()).optional(),
  side_data_list: z.array(z.record(z.string(), z.unknown())).optional(),
})
const ProbeOutput = z.object({
  streams: z.array(ProbeStream).default([]),
  format: z
    .object({ format_name: z.string().optional(), duration: z.string().optional() })
    .optional(),
})

function malformed(message: string, cause?: unknown): AppError {
  return new AppError('malformed_video', message, { cause })
}

export function parseRational(s: string | undefined): Rational | null {
  if (s === undefined) {
    return null
  }
  const m = /^(\d+)\/(\d+)$/.exec(s)
  if (m === null) {
    return null
  }
  const num = Number(m[1])
  const den = Number(m[2])
  return num > 0 && den > 0 ? { num, den } : null
}

const toNumber = (s: string | undefined): number | null => {
  if (s === undefined) {
    return null
  }
  const n = Number(s)
  return Number.isFinite(n) && n > 0 ? n : null
}

function rotationOf(s: z.infer<typeof ProbeStream>): number {
  let deg = 0
  const fromSide = s.side_data_list?.find((d) => typeof d['rotation'] === 'number')?.['rotation']
  if (typeof fromSide === 'number') {
    deg = fromSide
  } else if (s.tags?.['rotate'] !== undefined) {
    deg = Number(s.tags['rotate']) || 0
  }
  return (((Math.round(deg / 90) * 90) % 360) + 360) % 360
}

/** Chooses the output frame rate: the exact r_frame_rate when it agrees with the average. */
export function chooseFps(r: Rational | null, avg: Rational | null): Rational | null {
  if (r !== null && avg !== null) {
    const rv = r.num / r.den
    const av = avg.num / avg.den
    return Math.abs(rv - av) / av < 0.01 ? r : avg
  }
  const one = avg ?? r
  return one !== null && one.num / one.den <= 1000 ? one : null
}

/**
 * Probes `path` and applies `limits`. Throws AppError `file_size_too_large` (checked before ffprobe
 * runs), `malformed_video`, `video_too_long`, `resolution_too_high` or `resolution_too_low`.
 */
export async function probeVideo(
  path: string,
  o: { signal?: AbortSignal; limits?: Partial<VideoLimits> } = {},
): Promise<VideoInfo> {
  const limits = { ...DEFAULT_VIDEO_LIMITS, ...o.limits }
  const st = await stat(path)
  if (st.size > limits.maxBytes) {
    throw new AppError(
      'file_size_too_large',
      `the video is ${st.size} bytes; at most ${limits.maxBytes} bytes are accepted`,
    )
  }
  if (st.size === 0) {
    throw malformed('the video file is empty')
  }
  // Not AbortSignal.any([AbortSignal.timeout(…), …]): on Node 20 a composite holds its sources
  // weakly, and a collected timeout signal never fires (a probe that blocked stayed blocked).
  const ac = new AbortController()
  const timer = setTimeout(() => ac.abort(), PROBE_TIMEOUT_MS)
  const onAbort = (): void => ac.abort()
  o.signal?.addEventListener('abort', onAbort, { once: true })
  if (o.signal?.aborted === true) ac.abort()
  let probed: Awaited<ReturnType<typeof runToEnd>>
  try {
    probed = await runToEnd(
      FFPROBE_BIN,
      ['-v', 'error', ...INPUT_GUARD, '-print_format', 'json'].concat([
        '-show_format',
        '-show_streams',
        '-i',
        path,
      ]),
      ac.signal,
    )
  } finally {
    clearTimeout(timer)
    o.signal?.removeEventListener('abort', onAbort)
  }
  const { code, stdout, stderrTail } = probed
  o.signal?.throwIfAborted()
  if (ac.signal.aborted) {
    throw malformed(`the video could not be probed within ${PROBE_TIMEOUT_MS / 1000} s`)
  }
  if (code !== 0) {
    throw malformed(`the file could not be read as a video: ${lastLine(stderrTail)}`)
  }
  let parsed: z.infer<typeof ProbeOutput>
  try {
    parsed = ProbeOutput.parse(JSON.parse(stdout))
  } catch (err) {
    throw malformed('the video could not be probed', err)
  }
  const formatName = parsed.format?.format_name ?? ''
  const containerOk = formatName
    .split(',')
    .some((f) => (ACCEPTED_FORMATS as readonly string[]).includes(f))
  const v = parsed.streams.find(
    (s) => s.codec_type === 'video' && (s.disposition?.['attached_pic'] ?? 0) === 0,
  )
  if (!containerOk || v === undefined) {
    throw malformed(
      `no video stream in an accepted container (${ACCEPTED_FORMATS.join(', ')}); found '${formatName || 'unknown'}'`,
    )
  }
  const codec = v.codec_name ?? 'unknown'
  if (!(ACCEPTED_VIDEO_CODECS as readonly string[]).includes(codec)) {
    throw malformed(
      `the video codec '${codec}' is not supported; accepted: ${ACCEPTED_VIDEO_CODECS.join(', ')}`,
    )
  }
  if (v.width === undefined || v.height === undefined || v.width <= 0 || v.height <= 0) {
    throw malformed('the video stream has no dimensions')
  }
  const sourceFps = chooseFps(parseRational(v.r_frame_rate), parseRational(v.avg_frame_rate))
  if (sourceFps === null) {
    throw malformed('the video stream has no usable frame rate')
  }
  const fpsCapped = sourceFps.num / sourceFps.den > limits.maxFps
  const fps: Rational = fpsCapped ? { num: limits.maxFps, den: 1 } : sourceFps
  const durationS = toNumber(v.duration) ?? toNumber(parsed.format?.duration)
  if (durationS === null) {
    throw malformed('the video has no duration')
  }
  const rotation = rotationOf(v)
  const swap = rotation === 90 || rotation === 270
  const width = swap ? v.height : v.width
  const height = swap ? v.width : v.height
  if (durationS > limits.maxDurationS) {
    throw new AppError(
      'video_too_long',
      `the video lasts ${durationS.toFixed(2)} s; at most ${limits.maxDurationS} s are accepted`,
    )
  }
  if (Math.max(width, height) > limits.maxSidePx) {
    throw new AppError(
      'resolution_too_high',
      `the video is ${width}x${height}; each side must be at most ${limits.maxSidePx} px`,
    )
  }
  if (Math.min(width, height) < limits.minSidePx) {
    throw new AppError(
      'resolution_too_low',
      `the video is ${width}x${height}; each side must be at least ${limits.minSidePx} px`,
    )
  }
  // Frames the job would process: the container's count (when the rate is not capped) or the
  // duration at the output rate. A count that lies is caught by the decoder, which stops past it.
  const nb = fpsCapped ? null : toNumber(v.nb_frames)
  const frameCountEstimate = nb ?? Math.max(1, Math.round((durationS * fps.num) / fps.den))
  if (frameCountEstimate > limits.maxFrames) {
    throw tooManyFrames(
      `has ${frameCountEstimate} frames${fpsCapped ? ` at ${limits.maxFps} fps` : ''}`,
      limits.maxFrames,
    )
  }
  const a = parsed.streams.find((s) => s.codec_type === 'audio' && s.codec_name !== undefined)
  return {
    path,
    sizeBytes: st.size,
    formatName,
    videoStreamIndex: v.index,
    videoCodec: codec,
    width,
    height,
    codedWidth: v.width,
    codedHeight: v.height,
    rotation,
    fps,
    fpsCapped,
    maxFrames: limits.maxFrames,
    durationS,
    frameCountEstimate,
    audio: a !== undefined ? { streamIndex: a.index, codec: a.codec_name ?? 'unknown' } : null,
  }
}

// ---------------------------------------------------------------------------------------------
// Output formats
// ---------------------------------------------------------------------------------------------

/** The audio each container carries (the source's, copied when it already is that codec). */
export const CONTAINER_AUDIO = {
  mp4: 'aac',
  mov: 'aac',
  webm: 'opus',
  matroska: 'opus',
  gif: 'none',
} as const satisfies Record<Container, 'aac' | 'opus' | 'none'>

/**
 * The frame size written for `format`: formats with 4:2:0 chroma need even sides, so an odd side
 * loses its last column/row (at most 1 px, cropped at decode time so the network never sees it).
 */
export function outputSize(info: Pick<VideoInfo, 'width' | 'height'>, format: OutputFormat) {
  const even = ENCODER_SETTINGS[OUTPUT_FORMAT_SPECS[format].encoder].evenSides
  return {
    width: even ? info.width & ~1 : info.width,
    height: even ? info.height & ~1 : info.height,
  }
}

const BT709 = ['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709']
const toYuv = (pixFmt: string): string =>
  `scale=out_color_matrix=bt709:out_range=tv:flags=bicubic,format=${pixFmt}`

interface EncoderSettings {
  /** Chroma subsampled (4:2:0) encoders need even sides. */
  evenSides: boolean
  /** The ffmpeg video arguments; `alpha` selects the encoder's alpha pixel format. */
  args(alpha: boolean, size: { width: number; height: number }, container: Container): string[]
}

/**
 * Video encoder settings per encoder key (the output-format table's `encoder` column, in
 * @tailor/proto), chosen for this 2-core CPU reference machine where the encoder shares the cores
 * with the network (see the table in docs/media.md for measured speeds).
 */
export const ENCODER_SETTINGS = {
  h264: {
    evenSides: true,
    args: () =>
      ['-vf', toYuv('yuv420p'), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20'].concat(
        ['-profile:v', 'high'],
        BT709,
        ['-color_range', 'tv'],
      ),
  },
  h265: {
    evenSides: true,
    args: (_alpha, _size, container) =>
      ['-vf', toYuv('yuv420p'), '-c:v', 'libx265', '-preset', 'veryfast', '-crf', '24']
        .concat(['-x265-params', 'log-level=error'], BT709, ['-color_range', 'tv'])
        .concat(container === 'matroska' ? [] : ['-tag:v', 'hvc1']),
  },
  vp9: {
    evenSides: true,
    args: (alpha) =>
      ['-vf', toYuv(alpha ? 'yuva420p' : 'yuv420p'), '-c:v', 'libvpx-vp9']
        .concat(['-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1'])
        .concat(['-crf', '30', '-b:v', '0', '-lag-in-frames', '0'], BT709, ['-color_range', 'tv']),
  },
  prores_4444: {
    evenSides: false,
    args: (alpha) =>
      [
        '-vf',
        `scale=out_color_matrix=bt709:out_range=tv,format=${alpha ? 'yuva444p10le' : 'yuv444p10le'}`,
      ]
        .concat(['-c:v', 'prores_ks', '-profile:v', '4444', '-vendor', 'apl0'])
        .concat(alpha ? ['-alpha_bits', '16'] : [], BT709, ['-color_range', 'tv']),
  },
  gif: {
    evenSides: false,
    args: (alpha, size) => {
      // One palette per frame (stats_mode=single + new=1) keeps memory flat; a whole-clip palette
      // would buffer every frame. The statistics come from a copy scaled down to about 320x240,
      // which is most of the speed, at no visible cost for 256 colours.
      const k = gifPaletteScale(size)
      const stats = k > 1 ? `scale=iw/${k}:ih/${k}:flags=bilinear,` : ''
      return [
        '-filter_complex',
        `[0:v]split[a][b];[a]${stats}palettegen=max_colors=256:reserve_transparent=${alpha ? 1 : 0}:stats_mode=single[p];` +
          `[b][p]paletteuse=new=1:dither=bayer:bayer_scale=3${alpha ? ':alpha_threshold=128' : ''}[v]`,
        '-map',
        '[v]',
        '-c:v',
        'gif',
      ]
    },
  },
} as const satisfies Record<EncoderKey, EncoderSettings>

/** Video encoder arguments for `format` (its encoder's settings in its container). */
export function videoEncoderArgs(
  format: OutputFormat,
  alpha: boolean,
  size: { width: number; height: number },
): string[] {
  const spec = OUTPUT_FORMAT_SPECS[format]
  const settings: EncoderSettings = ENCODER_SETTINGS[spec.encoder]
  return settings.args(alpha, size, spec.container)
}

/** Integer downscale of the frame whose colours the per-frame GIF palette is built from. */
export function gifPaletteScale(size: { width: number; height: number }): number {
  return Math.max(1, Math.floor(Math.sqrt((size.width * size.height) / (320 * 240))))
}

function audioArgs(format: OutputFormat, info: VideoInfo): { input: string[]; output: string[] } {
  const kind = CONTAINER_AUDIO[OUTPUT_FORMAT_SPECS[format].container]
  if (info.audio === null || kind === 'none') {
    return { input: [], output: ['-an'] }
  }
  const input = [...INPUT_GUARD, '-i', info.path]
  const map = ['-map', `1:${info.audio.streamIndex}`]
  if (kind === 'aac') {
    return {
      input,
      output: map.concat(
        info.audio.codec === 'aac' ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '160k'],
      ),
    }
  }
  return {
    input,
    output: map.concat(
      info.audio.codec === 'opus' ? ['-c:a', 'copy'] : ['-c:a', 'libopus', '-b:a', '128k'],
    ),
  }
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

type Proc = ChildProcessByStdio<Writable | null, Readable | null, Readable>

interface Tracked {
  proc: Proc
  /** Resolves once the process has exited (never rejects). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderrTail: () => string
}

function track(proc: Proc): Tracked {
  if (FFMPEG_NICENESS !== 0 && proc.pid !== undefined) {
    try {
      setPriority(proc.pid, FFMPEG_NICENESS)
    } catch {
      // the process already ended, or the platform refuses: scheduling is an optimisation only
    }
  }
  let tail = Buffer.alloc(0)
  proc.stderr.on('data', (d: Buffer) => {
    tail = Buffer.concat([tail, d])
    if (tail.length > STDERR_TAIL_BYTES) {
      tail = tail.subarray(tail.length - STDERR_TAIL_BYTES)
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // An abort also emits 'error' (AbortError) while the killed process is still running, so only
    // a failed spawn (no pid) resolves here; otherwise wait for 'close', i.e. the real exit.
    proc.once('error', () => {
      if (proc.pid === undefined) {
        resolve({ code: -1, signal: null })
      }
    })
    proc.once('close', (code, signal) => resolve({ code, signal }))
  })
  return { proc, exited, stderrTail: () => tail.toString('utf8') }
}

/** ffmpeg's last stderr line, for a client-visible message: file paths reduced to their names (the work dir is the operator's business). */
const lastLine = (s: string): string =>
  redactPaths(
    s
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .at(-1)
      ?.slice(0, 300) ?? 'no error output',
  )

async function runToEnd(bin: string, args: string[], signal: AbortSignal) {
  const proc = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
    killSignal: 'SIGKILL',
  })
  const t = track(proc)
  const chunks: Buffer[] = []
  proc.stdout.on('data', (d: Buffer) => chunks.push(d))
  const { code } = await t.exited
  return { code, stdout: Buffer.concat(chunks).toString('utf8'), stderrTail: t.stderrTail() }
}

export interface Decoder {
  readonly width: number
  readonly height: number
  readonly frameBytes: number
  /** Yields one rgb24 frame of exactly `frameBytes` bytes at a time; each buffer is fresh. */
  frames(): AsyncGenerator<Buffer, void, void>
  /** Kills the process (if still running) and waits for it to exit. */
  close(): Promise<void>
}

/**
 * Decodes the first video stream to rgb24 frames of `size` (the display size, cropped by at most
 * 1 px). ffmpeg autorotates, and `-fps_mode passthrough` keeps every decoded frame, no dup/drop,
 * unless the input is faster than the cap (`info.fpsCapped`): then the fps filter drops frames
 * down to `info.fps`. ffmpeg stops after `info.maxFrames` + 1 frames (`-frames:v`), and a frame
 * past `info.maxFrames` ends the job with video_too_many_frames, whatever the container claimed.
 */
export function openDecoder(
  info: VideoInfo,
  size: { width: number; height: number },
  signal: AbortSignal,
): Decoder {
  const { width, height } = size
  const filters = [
    ...(width !== info.width || height !== info.height ? [`crop=${width}:${height}:0:0`] : []),
    ...(info.fpsCapped ? [`fps=${info.fps.num}/${info.fps.den}`] : []),
  ]
  const crop = filters.length > 0 ? ['-vf', filters.join(',')] : []
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-xerror']
    .concat(INPUT_GUARD, ['-i', info.path])
    .concat(['-map', `0:${info.videoStreamIndex}`, '-an', '-sn', '-dn'], crop)
    .concat([
      '-fps_mode',
      'passthrough',
      '-frames:v',
      String(info.maxFrames + 1),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ])
  const proc = spawn(FFMPEG_BIN, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
    killSignal: 'SIGKILL',
  })
  const t = track(proc)
  const frameBytes = width * height * 3
  proc.stdout.on('error', () => undefined) // surfaced through the exit code
  async function* frames(): AsyncGenerator<Buffer, void, void> {
    let buf = Buffer.allocUnsafe(frameBytes)
    let filled = 0
    let count = 0
    for await (const chunk of proc.stdout as AsyncIterable<Buffer>) {
      let off = 0
      while (off < chunk.length) {
        const n = Math.min(frameBytes - filled, chunk.length - off)
        chunk.copy(buf, filled, off, off + n)
        filled += n
        off += n
        if (filled === frameBytes) {
          if (++count > info.maxFrames) {
            proc.kill('SIGKILL')
            throw tooManyFrames(`decodes to more than ${info.maxFrames} frames`, info.maxFrames)
          }
          yield buf
          buf = Buffer.allocUnsafe(frameBytes)
          filled = 0
        }
      }
    }
    const { code, signal: sig } = await t.exited
    signal.throwIfAborted()
    if (code !== 0 || sig !== null) {
      throw malformed(`the video could not be decoded: ${lastLine(t.stderrTail())}`)
    }
    if (filled !== 0) {
      throw malformed('the video decoded to a partial frame')
    }
  }
  return {
    width,
    height,
    frameBytes,
    frames,
    close: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL')
      }
      await t.exited
    },
  }
}

export interface Encoder {
  readonly outputPath: string
  readonly pixFmt: 'rgb24' | 'rgba'
  /** Writes one frame; resolves once the pipe can take more (drain). */
  write(frame: Uint8Array): Promise<void>
  /** Closes stdin and waits for ffmpeg to finish the file. */
  finish(): Promise<void>
  /** Kills the process (if still running) and waits for it to exit. */
  close(): Promise<void>
}

/**
 * Encodes raw frames from stdin to `outputPath` in `format`; `alpha` selects rgba input and the
 * format's alpha pixel format. The source audio is mapped from `info.path` where the container
 * carries audio (AAC in MP4/MOV, copied when it already is AAC; Opus in WebM/MKV).
 */
export function openEncoder(o: {
  info: VideoInfo
  size: { width: number; height: number }
  format: OutputFormat
  alpha: boolean
  outputPath: string
  cwd: string
  signal: AbortSignal
}): Encoder {
  const spec = OUTPUT_FORMAT_SPECS[o.format]
  const transparency = transparencyIssue(o.alpha, o.format)
  if (transparency !== null) {
    throw new AppError('invalid_parameter', transparency)
  }
  const pixFmt = o.alpha ? 'rgba' : 'rgb24'
  const audio = audioArgs(o.format, o.info)
  const video = videoEncoderArgs(o.format, o.alpha, o.size)
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y']
    .concat([
      '-f',
      'rawvideo',
      '-pix_fmt',
      pixFmt,
      '-video_size',
      `${o.size.width}x${o.size.height}`,
    ])
    .concat(['-framerate', `${o.info.fps.num}/${o.info.fps.den}`, '-i', 'pipe:0'], audio.input)
    .concat(video.includes('-map') ? [] : ['-map', '0:v'], video, audio.output)
    .concat(['-map_metadata', '-1', '-map_chapters', '-1', '-sn', '-dn', '-threads', '0'])
    .concat(spec.container === 'mp4' || spec.container === 'mov' ? ['-movflags', '+faststart'] : [])
    .concat(['-f', spec.container, o.outputPath])
  const proc = spawn(FFMPEG_BIN, args, {
    cwd: o.cwd,
    stdio: ['pipe', 'ignore', 'pipe'],
    signal: o.signal,
    killSignal: 'SIGKILL',
  })
  const t = track(proc)
  const stdin = proc.stdin
  let stdinError: Error | null = null
  stdin.on('error', (err) => {
    stdinError = err
  })
  const failed = async (): Promise<AppError> => {
    const { code, signal } = await t.exited
    o.signal.throwIfAborted()
    return new AppError(
      'unexpected_error',
      `the ${o.format} encoder failed (exit ${code ?? signal}): ${lastLine(t.stderrTail())}`,
      { cause: stdinError ?? undefined },
    )
  }
  return {
    outputPath: o.outputPath,
    pixFmt,
    async write(frame) {
      if (stdinError !== null || stdin.destroyed || !stdin.writable) {
        throw await failed()
      }
      // Resolve once ffmpeg's pipe has taken the whole frame: the caller may then reuse `frame`,
      // and at most one frame is ever buffered here (back-pressure, same as waiting for drain).
      const err = await new Promise<Error | null | undefined>((resolve) =>
        stdin.write(frame, resolve),
      )
      if (err !== null && err !== undefined) {
        stdinError ??= err
        throw await failed()
      }
    },
    async finish() {
      stdin.end()
      const { code, signal } = await t.exited
      o.signal.throwIfAborted()
      if (code !== 0 || signal !== null) {
        throw await failed()
      }
    },
    close: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL')
      }
      await t.exited
    },
  }
}
