/**
 * Video work bounded by frames (issue 11 §3), on clips crafted with ffmpeg, real ffmpeg and the
 * real RVM model: a 1000 fps clip is processed and written at the frame-rate cap (60) instead of
 * one network run per source frame; a clip over the frame cap is refused at probe; a decoder that
 * gets more frames than the container claimed stops past the cap; an output past its byte cap
 * stops the job. Nothing is left in the work directory.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { openMattingEngine } from '../engine/matting-engine.ts'
import { openDecoder, probeVideo } from '../media/video.ts'
import { ffmpeg, MODELS_DIR, probe, rate, requireModels } from '../media/video.test-support.ts'
import { removeBackground, type MattingEngine } from './remove-background.ts'

let matting: MattingEngine
let root: string
/** 1 s at 1000 fps, 96x96: 1000 frames in a few KB. */
let fast: string
/** 2 s at 25 fps: 50 frames. */
let fifty: string

beforeAll(async () => {
  requireModels()
  root = await mkdtemp(join(tmpdir(), 'tailor-frames-'))
  matting = await openMattingEngine({ modelsDir: MODELS_DIR })
  fast = join(root, 'fast.mp4')
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=96x96:rate=1000',
    '-t',
    '1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    fast,
  ])
  fifty = join(root, 'fifty.mp4')
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=96x96:rate=25',
    '-t',
    '2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    fifty,
  ])
}, 120_000)

afterAll(async () => {
  await matting?.close()
  if (root) await rm(root, { recursive: true, force: true })
})

const job = async (
  input: string,
  o: { limits?: Record<string, number>; maxOutputBytes?: number } = {},
) => {
  const workDir = await mkdtemp(join(root, 'work-'))
  const frames: number[] = []
  const run = removeBackground(
    { inputPath: input, workDir, backgroundColor: '#00ff00', outputFormat: 'mp4_h264' },
    {
      matting,
      signal: new AbortController().signal,
      onProgress: (done) => frames.push(done),
      ...o,
    },
  )
  return { run, workDir }
}

describe('video work is bounded by frames', () => {
  it('a 1000 fps clip is processed and written at 60 fps (about 60 network runs, not 1000)', async () => {
    const probed = await probe(fast)
    expect(rate(probed.streams[0]?.r_frame_rate)).toBe(1000)
    expect(Number(probed.streams[0]?.nb_read_packets)).toBe(1000)
    const { run, workDir } = await job(fast)
    const r = await run
    expect(r.frames).toBeGreaterThanOrEqual(59)
    expect(r.frames).toBeLessThanOrEqual(61)
    const out = await probe(r.outputPath)
    expect(rate(out.streams.find((s) => s.codec_type === 'video')?.r_frame_rate)).toBe(60)
    expect(Number(out.streams.find((s) => s.codec_type === 'video')?.nb_read_packets)).toBe(
      r.frames,
    )
    await rm(workDir, { recursive: true, force: true })
  }, 120_000)

  it('VIDEO_MAX_FRAMES: the capped clip counted at its output rate; over the cap → video_too_many_frames at probe, nothing left', async () => {
    expect((await probeVideo(fast, { limits: { maxFrames: 100 } })).frameCountEstimate).toBe(60)
    const { run, workDir } = await job(fifty, { limits: { maxFrames: 40 } })
    await expect(run).rejects.toMatchObject({ code: 'video_too_many_frames' })
    expect(await readdir(workDir)).toEqual([])
  })

  it('a container that claims fewer frames than it has: decoding stops past the cap with video_too_many_frames', async () => {
    const info = await probeVideo(fifty)
    expect(info.frameCountEstimate).toBe(50)
    // As if the container had claimed 30 frames: the decoder alone must hold the line.
    const lying = { ...info, frameCountEstimate: 30, maxFrames: 30 }
    const decoder = openDecoder(
      lying,
      { width: info.width, height: info.height },
      new AbortController().signal,
    )
    let got = 0
    const err = await (async () => {
      for await (const _ of decoder.frames()) got++
    })().catch((e: unknown) => e)
    await decoder.close()
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('video_too_many_frames')
    expect(got).toBe(30)
  })

  it('RESULT_MAX_BYTES: the growing output is checked and the job stopped past it (result_too_large), nothing left', async () => {
    const { run, workDir } = await job(fifty, { maxOutputBytes: 2_000 })
    await expect(run).rejects.toMatchObject({ code: 'result_too_large' })
    expect(await readdir(workDir)).toEqual([])
  }, 120_000)
})
