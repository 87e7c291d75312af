import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ffmpeg, VIDEO_01, VIDEO_02 } from './video.test-support.ts'
import { chooseFps, openDecoder, outputSize, parseRational, probeVideo } from './video.ts'

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tailor-video-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('probeVideo', () => {
  it('reads video_01 (portrait, 30 fps, AAC)', async () => {
    const v = await probeVideo(VIDEO_01)
    expect(v).toMatchObject({
      width: 480,
      height: 908,
      rotation: 0,
      fps: { num: 30, den: 1 },
      frameCountEstimate: 297,
      videoCodec: 'h264',
      audio: { streamIndex: 1, codec: 'aac' },
    })
    expect(v.durationS).toBeCloseTo(9.9, 2)
  })
  it('reads video_02 (720p, 29.97 fps, audio and a data track)', async () => {
    const v = await probeVideo(VIDEO_02)
    expect(v).toMatchObject({
      width: 1280,
      height: 720,
      fps: { num: 30000, den: 1001 },
      frameCountEstimate: 289,
    })
    expect(v.audio).toEqual({ streamIndex: 1, codec: 'aac' })
  })
})

describe('frame rate and sizes', () => {
  it('prefers the exact r_frame_rate when it agrees with the average', () => {
    expect(chooseFps(parseRational('30000/1001'), parseRational('30000/1001'))).toEqual({
      num: 30000,
      den: 1001,
    })
    expect(chooseFps(parseRational('90000/1'), parseRational('30/1'))).toEqual({ num: 30, den: 1 })
    expect(chooseFps(null, parseRational('25/1'))).toEqual({ num: 25, den: 1 })
    expect(chooseFps(parseRational('0/0'), null)).toBeNull()
  })
  it('crops an odd side by 1 px only for 4:2:0 formats', () => {
    expect(outputSize({ width: 241, height: 455 }, 'mp4_h264')).toEqual({ width: 240, height: 454 })
    expect(outputSize({ width: 241, height: 455 }, 'webm_vp9')).toEqual({ width: 240, height: 454 })
    expect(outputSize({ width: 241, height: 455 }, 'mov_proresks')).toEqual({
      width: 241,
      height: 455,
    })
    expect(outputSize({ width: 241, height: 455 }, 'gif')).toEqual({ width: 241, height: 455 })
  })
})

describe('openDecoder', () => {
  it('yields exactly w·h·3 bytes per decoded frame, every frame', async () => {
    const p = join(root, 'seven.mp4')
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=99x65:rate=7',
      '-frames:v',
      '7',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv444p',
      p,
    ])
    const info = await probeVideo(p, { limits: { minSidePx: 16 } })
    const d = openDecoder(info, { width: 98, height: 64 }, new AbortController().signal)
    const sizes: number[] = []
    for await (const f of d.frames()) {
      sizes.push(f.length)
    }
    await d.close()
    expect(sizes).toEqual(Array(7).fill(98 * 64 * 3))
  })
})

describe('accepted inputs', () => {
  // [file, encoder args]: every accepted container, several codecs, decoded frame by frame.
  const inputs: [string, string[]][] = [
    ['vp9.webm', ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8']],
    ['vp8.webm', ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8']],
    ['h264.mkv', ['-c:v', 'libx264', '-preset', 'ultrafast']],
    ['hevc.mp4', ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error']],
    ['prores.mov', ['-c:v', 'prores_ks', '-profile:v', '4444', '-pix_fmt', 'yuva444p10le']],
    ['anim.gif', ['-c:v', 'gif']],
  ]
  it.each(inputs)('%s', async (name, enc) => {
    const p = join(root, name)
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=96x64:rate=10', '-frames:v', '5', ...enc, p])
    const info = await probeVideo(p)
    expect([info.width, info.height, info.audio]).toEqual([96, 64, null])
    const d = openDecoder(info, { width: 96, height: 64 }, new AbortController().signal)
    let n = 0
    for await (const f of d.frames()) {
      expect(f.length).toBe(96 * 64 * 3)
      n++
    }
    await d.close()
    expect(n).toBe(5)
  })

  it('refuses a container that is not accepted (AVI) as malformed_video', async () => {
    const p = join(root, 'clip.avi')
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=96x64:rate=10',
      '-frames:v',
      '5',
      '-c:v',
      'libx264',
      p,
    ])
    await expect(probeVideo(p)).rejects.toMatchObject({ code: 'malformed_video' })
  })
})
