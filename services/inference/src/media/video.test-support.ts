/**
 * Test-only helpers for the video tests: real ffmpeg/ffprobe to make inputs and to read
 * results back (never mocked), the paths of the real media and models, and process accounting.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { open, readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const MAX_BUFFER = 512 * 1024 * 1024

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
export const MEDIA_DIR = fileURLToPath(new URL('../shared/media/', `file://${REPO_ROOT}`))
export const MODELS_DIR = fileURLToPath(new URL('models/dist/', `file://${REPO_ROOT}`))
export const VIDEO_01 = `${MEDIA_DIR}video_01.mp4` // 480x908 portrait, 30 fps, AAC
export const VIDEO_02 = `${MEDIA_DIR}video_02.mp4` // 1280x720, 29.97 fps, AAC + a data track

export function requireModels(): void {
  if (!existsSync(`${MODELS_DIR}manifest.json`)) {
    throw new Error(`${MODELS_DIR}manifest.json is missing: run \`pnpm models\` first`)
  }
}

export async function ffmpeg(args: string[]): Promise<void> {
  await run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args], {
    maxBuffer: MAX_BUFFER,
  })
}

export interface ProbedStream {
  index: number
  codec_type: string
  codec_name?: string
  codec_tag_string?: string
  profile?: string
  pix_fmt?: string
  width?: number
  height?: number
  r_frame_rate?: string
  avg_frame_rate?: string
  duration?: string
  nb_read_packets?: string
  tags?: Record<string, string>
  side_data_list?: Record<string, unknown>[]
}
export interface Probed {
  streams: ProbedStream[]
  format: { format_name: string; duration?: string }
}

/** ffprobe with packet counting (cheap: no decode). */
export async function probe(path: string): Promise<Probed> {
  const { stdout } = await run(
    'ffprobe',
    [
      '-v',
      'error',
      '-count_packets',
      '-print_format',
      'json',
      '-show_format',
      '-show_streams',
      path,
    ],
    { maxBuffer: MAX_BUFFER },
  )
  return JSON.parse(stdout) as Probed
}

export const rate = (s: string | undefined): number => {
  const [n, d] = (s ?? '0/1').split('/').map(Number)
  return d ? n! / d : 0
}

/** The video stream's duration: stream duration, else Matroska's DURATION tag, else the format's. */
export function videoDurationS(p: Probed): number {
  const v = p.streams.find((s) => s.codec_type === 'video')!
  if (v.duration !== undefined) {
    return Number(v.duration)
  }
  const tag = v.tags?.['DURATION']
  if (tag !== undefined) {
    const [h, m, s] = tag.split(':').map(Number)
    return h! * 3600 + m! * 60 + s!
  }
  return Number(p.format.duration)
}

/** Frame `index` decoded as rgba (w·h·4). `libvpxAlpha` forces libvpx so VP9 alpha is read. */
export async function decodeFrameRgba(
  path: string,
  index: number,
  libvpxAlpha = false,
): Promise<Buffer> {
  const { stdout } = await run(
    'ffmpeg',
    ['-nostdin', '-v', 'error', ...(libvpxAlpha ? ['-c:v', 'libvpx-vp9'] : []), '-i', path]
      .concat(['-map', '0:v:0', '-vf', `select=eq(n\\,${index})`, '-frames:v', '1'])
      .concat(['-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1']),
    { encoding: 'buffer', maxBuffer: MAX_BUFFER },
  )
  return stdout
}

/** Names of the top-level MP4/MOV atoms in file order. */
export async function topLevelAtoms(path: string): Promise<string[]> {
  const fh = await open(path, 'r')
  try {
    const { size } = await fh.stat()
    const names: string[] = []
    const head = Buffer.alloc(16)
    let pos = 0
    while (pos + 8 <= size) {
      await fh.read(head, 0, 16, pos)
      let len = head.readUInt32BE(0)
      names.push(head.toString('latin1', 4, 8))
      if (len === 1) {
        len = Number(head.readBigUInt64BE(8))
      } else if (len === 0) {
        break
      }
      pos += len
    }
    return names
  } finally {
    await fh.close()
  }
}

/** ffmpeg/ffprobe processes whose parent is this test process. */
export async function childFfmpegs(): Promise<number[]> {
  const pids: number[] = []
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) {
      continue
    }
    try {
      const stat = await readFile(`/proc/${d}/stat`, 'utf8')
      const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat)
      if (m !== null && Number(m[2]) === process.pid && /^ff(mpeg|probe)$/.test(m[1]!)) {
        pids.push(Number(d))
      }
    } catch {
      // the process ended while we looked
    }
  }
  return pids
}

/**
 * Square blocks of `block` px classified from an alpha map (0..1, w·h): `background` blocks have
 * no alpha above `lo` in themselves or their 8 neighbours (so they are at least `block` px from
 * the person), `person` blocks have no alpha below `hi` in themselves or their neighbours.
 */
export function classifyBlocks(
  alpha: Float32Array,
  width: number,
  height: number,
  block = 16,
  lo = 0.02,
  hi = 0.98,
): { background: Uint8Array; person: Uint8Array } {
  const bw = Math.floor(width / block)
  const bh = Math.floor(height / block)
  const bmax = new Float32Array(bw * bh)
  const bmin = new Float32Array(bw * bh).fill(1)
  for (let y = 0; y < bh * block; y++) {
    for (let x = 0; x < bw * block; x++) {
      const a = alpha[y * width + x]!
      const b = Math.floor(y / block) * bw + Math.floor(x / block)
      bmax[b] = Math.max(bmax[b]!, a)
      bmin[b] = Math.min(bmin[b]!, a)
    }
  }
  const background = new Uint8Array(width * height)
  const person = new Uint8Array(width * height)
  for (let by = 1; by < bh - 1; by++) {
    for (let bx = 1; bx < bw - 1; bx++) {
      let mx = 0
      let mn = 1
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          mx = Math.max(mx, bmax[(by + dy) * bw + bx + dx]!)
          mn = Math.min(mn, bmin[(by + dy) * bw + bx + dx]!)
        }
      }
      if (mx > lo && mn < hi) {
        continue
      }
      const target = mx <= lo ? background : person
      for (let y = by * block; y < (by + 1) * block; y++) {
        target.fill(1, y * width + bx * block, y * width + (bx + 1) * block)
      }
    }
  }
  return { background, person }
}
