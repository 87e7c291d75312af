import { execFile } from 'node:child_process'
import { createReadStream } from 'node:fs'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const SHARED_MEDIA_DIR = resolve(import.meta.dirname, '../../../shared/media')
const FFMPEG_TIMEOUT_MS = 120_000

/** Runs ffmpeg (argument array, no shell). */
export async function ffmpeg(args: string[]): Promise<void> {
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], {
    timeout: FFMPEG_TIMEOUT_MS,
  })
}

export interface ProbeStream {
  codec_type: string
  codec_name: string
  width?: number
  height?: number
  pix_fmt?: string
  r_frame_rate?: string
  nb_read_frames?: string
  tags?: Record<string, string>
}
export interface Probe {
  format: { format_name: string; duration?: string }
  streams: ProbeStream[]
}

/** ffprobe with frames counted by decoding (exact, whatever the container says). */
export async function probe(path: string): Promise<Probe> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-count_frames', '-show_format', '-show_streams', '-of', 'json', path],
    {
      timeout: FFMPEG_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    },
  )
  return JSON.parse(stdout) as Probe
}

export interface MediaFixtures {
  dir: string
  /** Base URL of a loopback HTTP server serving `dir` (and /shared/<file> from ../shared/media). */
  baseUrl: string
  stop(): Promise<void>
}

/**
 * Real media for the tests: short cuts of ../shared/media clips (the full clips are the pipeline's
 * own tests) plus the bad inputs of the bad-input table, served from a loopback HTTP server.
 */
export async function createMediaFixtures(): Promise<MediaFixtures> {
  const dir = await mkdtemp(join(tmpdir(), 'tailor-media-'))
  const src1 = join(SHARED_MEDIA_DIR, 'video_01.mp4')
  const src2 = join(SHARED_MEDIA_DIR, 'video_02.mp4')
  // 1 s of each clip (with audio), scaled down so the nine-format matrix runs in seconds on CPU.
  await ffmpeg([
    '-i',
    src1,
    '-t',
    '1',
    '-vf',
    'scale=-2:256',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-c:a',
    'aac',
    join(dir, 'short_01.mp4'),
  ])
  await ffmpeg([
    '-i',
    src2,
    '-t',
    '1',
    '-map',
    '0:v:0',
    '-map',
    '0:a:0',
    '-vf',
    'scale=-2:180',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-c:a',
    'aac',
    join(dir, 'short_02.mp4'),
  ])
  // A longer job for kill / restart / cancel tests.
  await ffmpeg([
    '-i',
    src1,
    '-t',
    '6',
    '-vf',
    'scale=-2:320',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-c:a',
    'aac',
    join(dir, 'medium_01.mp4'),
  ])
  // Bad inputs.
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=128x128:rate=2',
    '-t',
    '65',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    join(dir, 'long.mp4'),
  ])
  await writeFile(join(dir, 'not-a-video.mp4'), 'this is not a video, just some text\n'.repeat(100))
  await writeFile(join(dir, 'empty.mp4'), Buffer.alloc(0))
  const full = await readFile(src1) // moov at the end: a cut leaves no index
  await writeFile(join(dir, 'truncated.mp4'), full.subarray(0, Math.floor(full.length / 3)))

  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1))
    const path = name.startsWith('shared/')
      ? join(SHARED_MEDIA_DIR, name.slice('shared/'.length))
      : join(dir, name)
    if (name.includes('..') || name.length === 0) {
      res.writeHead(404).end()
      return
    }
    stat(path).then(
      (s) => {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': s.size })
        createReadStream(path).pipe(res)
      },
      () => res.writeHead(404).end(),
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    dir,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
      await rm(dir, { recursive: true, force: true })
    },
  }
}
