/**
 * Use case: remove the background of a local video file (ARCHITECTURE.md §3).
 *
 * probe (limits) → decode rgb24 frames (ffmpeg, pipe) → matting network per frame with job-scoped
 * recurrent state, which hands out the frame composited on the colour or as RGBA (the graph does
 * the composite, engine/matting-engine.ts) → encode (second ffmpeg, stdin).
 *
 * Overlap: the two ffmpeg processes run beside this loop, and the network runs on its own thread
 * (the engine's worker, matting-engine.ts) with FRAMES_IN_FLIGHT = 2 frames handed to it: while it
 * works on frame n, this thread writes the finished frame n−1 to the encoder, then decodes frame
 * n+1 and queues it, so the network never waits for this thread (and a
 * GPU is kept fed). The recurrent state stays in order: the stream runs its frames one after the
 * other. Every stage is pulled one frame at a time (pipe back-pressure, `drain`), so memory stays
 * flat whatever the clip length.
 *
 * Orchestration only: no onnxruntime, no child_process here (STYLE.md §3.2).
 */
import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { AppError, OUTPUT_FORMAT_SPECS, transparencyIssue, type OutputFormat } from '@tailor/proto'
import { parseBackground, type Background } from '../engine/rvm/post.ts'
import {
  openDecoder,
  openEncoder,
  outputSize,
  probeVideo,
  type Decoder,
  type Encoder,
  type VideoLimits,
} from '../media/video.ts'

export type { VideoLimits } from '../media/video.ts'

// ---- port: the matting network, implemented by engine/matting-engine.ts -----------------------

/** One job's pass over one video: owns the recurrent state and the background. */
export interface MattingStream {
  /**
   * `rgb` is one rgb24 frame of the stream's size (w·h·3 bytes), read before `next` returns (the
   * caller may reuse it at once). Resolves to the output frame, the caller's to keep: rgb24
   * (w·h·3) composited onto the stream's colour, or straight RGBA (w·h·4) for a transparent
   * background, composited as engine/rvm/post.ts describes (the graph does it). May be called
   * again before the previous call settles: the frames are matted in call order, each with the
   * state the previous one left.
   */
  next(rgb: Uint8Array): Promise<Uint8Array>
  dispose(): void
}

export interface MattingEngine {
  /** The execution provider actually in use (reported in health and logs). */
  readonly provider: 'cuda' | 'cpu'
  /** Providers that were asked for but could not be used, with the reason. */
  readonly providerFallbacks: readonly { provider: 'cuda' | 'cpu'; reason: string }[]
  openStream(size: { width: number; height: number }, background: Background): MattingStream
  close(): Promise<void>
}

// ---- use case -----------------------------------------------------------------------------------

export interface RemoveBackgroundRequest {
  inputPath: string
  workDir: string
  backgroundColor: string /* 'transparent'|'#rgb'|'#rrggbb' */
  outputFormat: OutputFormat
}

export interface RemoveBackgroundResult {
  outputPath: string
  contentType: string
  bytes: number
  frames: number
}

export interface RemoveBackgroundDeps {
  matting: MattingEngine
  signal: AbortSignal
  /** Called at most every `progressIntervalMs`, and once at the end with done === total. */
  onProgress: (framesDone: number, framesTotal: number) => void
  /** Default PROGRESS_INTERVAL_MS. */
  progressIntervalMs?: number
  limits?: Partial<VideoLimits>
  /** RESULT_MAX_BYTES: the encoder's output is checked as it grows and the job stopped past it (result_too_large). */
  maxOutputBytes?: number
}

/** How often (in frames) the growing output's size is checked against `maxOutputBytes`. */
export const OUTPUT_CHECK_EVERY_FRAMES = 8

const resultTooLarge = (maxBytes: number): AppError =>
  new AppError(
    'result_too_large',
    `The result is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MB limit; choose a smaller output format or a shorter or smaller input.`,
  )

export const PROGRESS_INTERVAL_MS = 250
/**
 * Frames handed to the matting stream before the oldest one's result is awaited: 2, so the
 * network already has frame n+1 queued while this thread encodes frame n−1
 * (docs/media.md "Pipeline").
 */
export const FRAMES_IN_FLIGHT = 2
export const RESULT_BASENAME = 'result'

const cancelled = (cause?: unknown): AppError =>
  new AppError('job_cancelled', 'the job was cancelled', { cause })

/**
 * Throws AppError `malformed_video | video_too_long | video_too_many_frames | file_size_too_large |
 * resolution_too_high | resolution_too_low | result_too_large | job_cancelled | invalid_parameter`; anything else is a bug or an
 * environment failure (`unexpected_error`). On failure nothing is left in `workDir`.
 */
export async function removeBackground(
  req: RemoveBackgroundRequest,
  deps: RemoveBackgroundDeps,
): Promise<RemoveBackgroundResult> {
  const { signal } = deps
  if (signal.aborted) {
    throw cancelled(signal.reason)
  }
  const background = backgroundFor(req)
  const alpha = background.kind === 'transparent'
  const spec = OUTPUT_FORMAT_SPECS[req.outputFormat]
  const outputPath = join(req.workDir, `${RESULT_BASENAME}.${spec.extension}`)

  let decoder: Decoder | undefined
  let encoder: Encoder | undefined
  let ok = false
  try {
    const info = await probeVideo(req.inputPath, {
      signal,
      ...(deps.limits ? { limits: deps.limits } : {}),
    })
    const size = outputSize(info, req.outputFormat)
    decoder = openDecoder(info, size, signal)
    encoder = openEncoder({
      info,
      size,
      format: req.outputFormat,
      alpha,
      outputPath,
      cwd: req.workDir,
      signal,
    })
    const stream = deps.matting.openStream(size, background)
    let frames = 0
    // Frames handed to the network, oldest first: at most FRAMES_IN_FLIGHT (see the header).
    const inFlight: { matted: Promise<Uint8Array> }[] = []
    // A frame's result is awaited against the abort: a cancel ends the job at once, not after the
    // run in progress (which the engine drops with the stream). One listener per wait, removed when
    // the frame arrives: a Promise.race against one job-long pending "aborted" promise would keep
    // every frame's result reachable from that promise's reactions until the job ends (a leak of
    // a frame's bytes per frame).
    const matted = (f: { matted: Promise<Uint8Array> }): Promise<Uint8Array> =>
      new Promise<Uint8Array>((resolve, reject) => {
        const onAbort = (): void => reject(cancelled(signal.reason))
        if (signal.aborted) {
          onAbort()
          return
        }
        signal.addEventListener('abort', onAbort, { once: true })
        f.matted.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
      })
    try {
      let lastProgress = performance.now()
      const emit = async (out: Uint8Array): Promise<void> => {
        await encoder!.write(out)
        frames++
        if (deps.maxOutputBytes !== undefined && frames % OUTPUT_CHECK_EVERY_FRAMES === 0) {
          const grown = (await stat(outputPath).catch(() => null))?.size ?? 0
          if (grown > deps.maxOutputBytes) {
            throw resultTooLarge(deps.maxOutputBytes)
          }
        }
        const now = performance.now()
        if (now - lastProgress >= (deps.progressIntervalMs ?? PROGRESS_INTERVAL_MS)) {
          lastProgress = now
          deps.onProgress(frames, Math.max(frames, info.frameCountEstimate))
        }
      }
      for await (const rgb of decoder.frames()) {
        signal.throwIfAborted()
        const next = stream.next(rgb)
        void next.catch(() => undefined) // handled when its turn comes; not unhandled meanwhile
        inFlight.push({ matted: next })
        if (inFlight.length < FRAMES_IN_FLIGHT) {
          continue
        }
        await emit(await matted(inFlight.shift()!))
      }
      while (inFlight.length > 0) {
        await emit(await matted(inFlight.shift()!))
      }
    } finally {
      stream.dispose() // frames still in flight (an abort, a failure) are dropped with it
    }
    signal.throwIfAborted()
    if (frames === 0) {
      throw new AppError('malformed_video', 'the video has no decodable frames')
    }
    await encoder.finish()
    const { size: bytes } = await stat(outputPath)
    if (deps.maxOutputBytes !== undefined && bytes > deps.maxOutputBytes) {
      throw resultTooLarge(deps.maxOutputBytes)
    }
    deps.onProgress(frames, frames)
    ok = true
    return { outputPath, contentType: spec.contentType, bytes, frames }
  } catch (err) {
    if (signal.aborted) {
      throw cancelled(err)
    }
    throw err
  } finally {
    await Promise.all([decoder?.close(), encoder?.close()])
    if (!ok) {
      await rm(outputPath, { force: true })
    }
  }
}

function backgroundFor(req: RemoveBackgroundRequest): Background {
  let bg: Background
  try {
    bg = parseBackground(req.backgroundColor)
  } catch (err) {
    throw new AppError(
      'invalid_parameter',
      `background_color must be 'transparent', #rgb or #rrggbb; got ${JSON.stringify(req.backgroundColor)}`,
      { cause: err },
    )
  }
  const transparency = transparencyIssue(bg.kind === 'transparent', req.outputFormat)
  if (transparency !== null) {
    throw new AppError('invalid_parameter', transparency)
  }
  return bg
}
