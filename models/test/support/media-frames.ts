/**
 * Real inputs for the golden tests and the benchmark, from the shared media folder
 * (`<repo>/../shared/media`): video frames decoded by ffmpeg and person photos decoded by sharp,
 * both as float32 NHWC tensors.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const MEDIA_DIR = path.resolve(REPO_ROOT, '../shared/media')
const FFMPEG = '/usr/bin/ffmpeg'
const FFPROBE = '/usr/bin/ffprobe'
const STDERR_KEEP_BYTES = 4096

export interface FrameTensor {
  data: Float32Array
  dims: number[]
}

export const mediaPath = (file: string): string =>
  path.isAbsolute(file) ? file : path.join(MEDIA_DIR, file)

function runProcess(
  cmd: string,
  args: string[],
  onStdout?: (chunk: Buffer) => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (c: Buffer) => (onStdout ? onStdout(c) : out.push(c)))
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-STDERR_KEEP_BYTES)
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) {
        resolve(Buffer.concat(out))
      } else {
        reject(new Error(`${path.basename(cmd)} exited with ${code}: ${err}`))
      }
    })
  })
}

/** Width and height of the first video stream (display size as coded). */
export async function videoSize(file: string): Promise<{ width: number; height: number }> {
  const json = await runProcess(FFPROBE, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height',
    '-of',
    'json',
    mediaPath(file),
  ])
  const stream = (JSON.parse(json.toString()) as { streams: { width: number; height: number }[] })
    .streams[0]
  if (stream === undefined) {
    throw new Error(`${file}: no video stream`)
  }
  return { width: stream.width, height: stream.height }
}

export interface VideoFramesOptions {
  count: number
  /** Output size; defaults to the video's own size. Scaled with ffmpeg's bilinear filter. */
  width?: number
  height?: number
  /** First frame index (0-based). */
  start?: number
}

/** Decodes `count` consecutive frames as float32 NHWC [1,H,W,3] RGB in 0..1. */
export async function videoFrames(file: string, opts: VideoFramesOptions): Promise<FrameTensor[]> {
  const size =
    opts.width !== undefined && opts.height !== undefined
      ? { width: opts.width, height: opts.height }
      : await videoSize(file)
  const frames = await rgb24Frames(file, { ...opts, ...size })
  return frames.map((bytes) => {
    const data = new Float32Array(bytes.length)
    for (let i = 0; i < bytes.length; i++) {
      data[i] = bytes[i]! / 255
    }
    return { data, dims: [1, size.height, size.width, 3] }
  })
}

/** Decodes `count` consecutive frames as rgb24 bytes (w·h·3, interleaved), as the service gets them. */
export async function rgb24Frames(file: string, opts: VideoFramesOptions): Promise<Uint8Array[]> {
  const { width, height } =
    opts.width !== undefined && opts.height !== undefined
      ? { width: opts.width, height: opts.height }
      : await videoSize(file)
  const frameBytes = width * height * 3
  const filters = [`select=gte(n\\,${opts.start ?? 0})`, `scale=${width}:${height}:flags=bilinear`]
  const frames: Uint8Array[] = []
  let pending: Buffer = Buffer.alloc(0)
  await runProcess(
    FFMPEG,
    [
      '-v',
      'error',
      '-nostdin',
      '-i',
      mediaPath(file),
      '-an',
      '-vf',
      filters.join(','),
      '-vsync',
      '0',
      '-frames:v',
      String(opts.count),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      while (pending.length >= frameBytes) {
        frames.push(Uint8Array.from(pending.subarray(0, frameBytes)))
        pending = pending.subarray(frameBytes)
      }
    },
  )
  if (frames.length !== opts.count) {
    throw new Error(`${file}: wanted ${opts.count} frames, decoded ${frames.length}`)
  }
  return frames
}

/**
 * Decodes a photo, letterboxes it into `size` (centred, black bars, like human's pad-then-resize),
 * and maps 0..255 linearly onto `range`. Returns float32 NHWC [1,H,W,3] RGB.
 */
export async function photoTensor(
  file: string,
  size: number | { width: number; height: number },
  range: readonly [number, number] = [0, 1],
): Promise<FrameTensor> {
  const { width, height } = typeof size === 'number' ? { width: size, height: size } : size
  const { data, info } = await sharp(mediaPath(file), { failOn: 'error' })
    .rotate()
    .removeAlpha()
    .toColourspace('srgb')
    .resize(width, height, { fit: 'contain', background: { r: 0, g: 0, b: 0 }, kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true })
  if (info.channels !== 3 || info.width !== width || info.height !== height) {
    throw new Error(
      `${file}: decoded ${info.width}x${info.height}x${info.channels}, wanted ${width}x${height}x3`,
    )
  }
  const [lo, hi] = range
  const scale = (hi - lo) / 255
  const out = new Float32Array(data.length)
  for (let i = 0; i < data.length; i++) {
    out[i] = lo + data[i]! * scale
  }
  return { data: out, dims: [1, height, width, 3] }
}
