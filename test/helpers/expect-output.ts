import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { expect } from 'vitest'
import type { OutputFormat } from '@tailor/proto'
import { probe, type Probe } from './media.ts'

const run = promisify(execFile)

interface Expected {
  formatName: string
  codec: string
  contentType: string
  audio: string | null
  /** pix_fmt when opaque / when transparent. */
  pixFmt: string | RegExp
  alphaPixFmt?: string | RegExp
}

export const EXPECTED: Record<OutputFormat, Expected> = {
  mp4_h264: {
    formatName: 'mp4',
    codec: 'h264',
    contentType: 'video/mp4',
    audio: 'aac',
    pixFmt: 'yuv420p',
  },
  mp4_h265: {
    formatName: 'mp4',
    codec: 'hevc',
    contentType: 'video/mp4',
    audio: 'aac',
    pixFmt: 'yuv420p',
  },
  webm_vp9: {
    formatName: 'webm',
    codec: 'vp9',
    contentType: 'video/webm',
    audio: 'opus',
    pixFmt: 'yuv420p',
    alphaPixFmt: 'yuv420p',
  },
  mov_h265: {
    formatName: 'mov',
    codec: 'hevc',
    contentType: 'video/quicktime',
    audio: 'aac',
    pixFmt: 'yuv420p',
  },
  // ProRes 4444 is written from yuva444p10le; ffprobe reports the decoder's 12-bit output format.
  mov_proresks: {
    formatName: 'mov',
    codec: 'prores',
    contentType: 'video/quicktime',
    audio: 'aac',
    pixFmt: /^yuva?444p1[02]le$/,
    alphaPixFmt: /^yuva444p1[02]le$/,
  },
  mkv_h264: {
    formatName: 'matroska',
    codec: 'h264',
    contentType: 'video/x-matroska',
    audio: 'opus',
    pixFmt: 'yuv420p',
  },
  mkv_h265: {
    formatName: 'matroska',
    codec: 'hevc',
    contentType: 'video/x-matroska',
    audio: 'opus',
    pixFmt: 'yuv420p',
  },
  mkv_vp9: {
    formatName: 'matroska',
    codec: 'vp9',
    contentType: 'video/x-matroska',
    audio: 'opus',
    pixFmt: 'yuv420p',
  },
  gif: { formatName: 'gif', codec: 'gif', contentType: 'image/gif', audio: null, pixFmt: 'bgra' },
}

/** Checks container, codec, pixel format, size, frame count (±1) and audio of a result file. */
export async function expectVideoResult(
  path: string,
  format: OutputFormat,
  source: Probe,
  transparent: boolean,
): Promise<Probe> {
  const p = await probe(path)
  const e = EXPECTED[format]
  const v = p.streams.find((s) => s.codec_type === 'video')
  const sv = source.streams.find((s) => s.codec_type === 'video')!
  expect(p.format.format_name).toContain(e.formatName)
  expect(v?.codec_name).toBe(e.codec)
  if (format !== 'gif') {
    const want = transparent ? (e.alphaPixFmt ?? e.pixFmt) : e.pixFmt
    expect(v?.pix_fmt).toMatch(typeof want === 'string' ? new RegExp(`^${want}$`) : want)
  }
  if (format === 'webm_vp9' && transparent) {
    expect(v?.tags?.alpha_mode ?? v?.tags?.ALPHA_MODE).toBe('1')
  }
  expect(Math.abs((v?.width ?? 0) - (sv.width ?? 0))).toBeLessThanOrEqual(1)
  expect(Math.abs((v?.height ?? 0) - (sv.height ?? 0))).toBeLessThanOrEqual(1)
  const frames = Number(v?.nb_read_frames)
  expect(Math.abs(frames - Number(sv.nb_read_frames))).toBeLessThanOrEqual(1)
  const audio = p.streams.find((s) => s.codec_type === 'audio')
  if (e.audio === null) expect(audio).toBeUndefined()
  else expect(audio?.codec_name).toBe(e.audio)
  return p
}

/** Mean RGBA of the top-left 8×8 block of the middle frame (alpha decoded where the codec has it). */
export async function cornerRgba(
  path: string,
  format: OutputFormat,
  frames: number,
): Promise<[number, number, number, number]> {
  const decoder = format === 'webm_vp9' ? ['-c:v', 'libvpx-vp9'] : []
  const { stdout } = await run(
    'ffmpeg',
    [
      '-v',
      'error',
      ...decoder,
      '-i',
      path,
      '-vf',
      `select=eq(n\\,${Math.floor(frames / 2)}),crop=8:8:0:0`,
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgba',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 20 },
  )
  const px = stdout as Buffer
  const sum = [0, 0, 0, 0]
  for (let i = 0; i < px.length; i += 4) for (let c = 0; c < 4; c++) sum[c]! += px[i + c]!
  const n = px.length / 4
  return sum.map((s) => s / n) as [number, number, number, number]
}
