/**
 * Streams the frames of a video as rgb24 byte arrays (ffmpeg, bilinear scaling), one at a time, so
 * that whole clips can be run without holding them in memory. For calibration and quality runs.
 */
import { spawn } from 'node:child_process'

const FFMPEG = '/usr/bin/ffmpeg'
const STDERR_KEEP_BYTES = 4096

export interface StreamOptions {
  width: number
  height: number
  /** Keep every n-th frame (default 1: all). */
  every?: number
  /** Stop after this many frames (kept frames; default: the whole clip). */
  max?: number
}

export async function* rgbFrames(file: string, o: StreamOptions): AsyncGenerator<Uint8Array> {
  const frameBytes = o.width * o.height * 3
  const every = o.every ?? 1
  const filters = [
    ...(every > 1 ? [`select=not(mod(n\\,${every}))`] : []),
    `scale=${o.width}:${o.height}:flags=bilinear`,
  ]
  const child = spawn(
    FFMPEG,
    [
      '-v',
      'error',
      '-nostdin',
      '-i',
      file,
      '-an',
      '-vf',
      filters.join(','),
      '-fps_mode',
      'passthrough',
      ...(o.max !== undefined ? ['-frames:v', String(o.max)] : []),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let err = ''
  child.stderr.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-STDERR_KEEP_BYTES)
  })
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  let pending: Buffer = Buffer.alloc(0)
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      while (pending.length >= frameBytes) {
        yield new Uint8Array(pending.subarray(0, frameBytes))
        pending = pending.subarray(frameBytes)
      }
    }
    const code = await exited
    if (code !== 0) throw new Error(`ffmpeg exited with ${code} on ${file}: ${err}`)
  } finally {
    child.kill('SIGKILL')
  }
}

/** rgb24 bytes → planar float32 RGB in 0..1 (NCHW with N = 1). */
export function rgb24ToPlanar(src: Uint8Array, dst = new Float32Array(src.length)): Float32Array {
  const n = src.length / 3
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    dst[i] = src[j]! / 255
    dst[n + i] = src[j + 1]! / 255
    dst[2 * n + i] = src[j + 2]! / 255
  }
  return dst
}
