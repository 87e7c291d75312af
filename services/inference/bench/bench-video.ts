/**
 * `pnpm bench:video`: end-to-end frames/s of the remove-background pipeline on a 720p ~10 s clip
 * (video_02) to every output format, against the two stages alone, measured in the same run:
 *
 * - network alone: RVM on frames already in memory (same frame size, same session options), as
 *   the job runs it: rvm-rgb (composite onto a colour) for opaque formats, rvm-rgba (straight
 *   RGBA) for transparent ones, each format's bound from its own;
 * - ffmpeg alone: the same decoder and encoder (same arguments, same pipes) with frames passed
 *   straight through; for alpha formats an elliptical soft alpha matte is attached, so the
 *   encoder sees alpha like the real job's.
 *
 * On a CPU-only machine both stages share the cores, so the bound is 1/(1/model + 1/ffmpeg) and
 * the figure of merit is end-to-end / bound (target ≥ 90 %).
 *
 * Wall-clock frames/s are only meaningful on an otherwise idle machine. The bench therefore also
 * reports CPU seconds per frame (this process plus its ffmpeg children, from /proc/self/stat),
 * which other tenants barely disturb: `cpu bound / cpu e2e` = (model + ffmpeg CPU per frame alone)
 * / (end-to-end CPU per frame), i.e. how much work the pipeline adds (copies, composite, pipes).
 *
 * `--threads worker,main` runs the end-to-end pipeline once per engine thread (matting-engine.ts:
 * the sessions on a worker thread with two frames in flight, the service's default, or on this
 * thread), each against the same ffmpeg-alone and network-alone figures of the run; the network
 * alone is measured on the first engine listed.
 *
 * `--providers cuda,cpu` asks onnxruntime for those execution providers in that order (the
 * service's ORT_EP; default cpu); the table says which one loaded. On a GPU the bound is the same
 * formula (the network and ffmpeg overlap), with the network's figure measured on the GPU.
 *
 * Usage: pnpm bench:video [--formats mp4_h264,gif] [--input path] [--model-frames 90]
 *        [--threads worker,main] [--providers cuda,cpu]
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { OUTPUT_FORMAT_SPECS, OUTPUT_FORMATS, type OutputFormat } from '@tailor/proto'
import { openMattingEngine } from '../src/engine/matting-engine.ts'
import { chooseDownsampleRatio } from '../src/engine/rvm/pre.ts'
import type { ExecutionProvider } from '../src/engine/session.ts'
import { removeBackground } from '../src/jobs/remove-background.ts'
import {
  openDecoder,
  openEncoder,
  outputSize,
  probeVideo,
  type VideoInfo,
} from '../src/media/video.ts'

const REPO = new URL('../../../', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    input: { type: 'string', default: join(REPO, '../shared/media/video_02.mp4') },
    models: { type: 'string', default: join(REPO, 'models/dist') },
    formats: { type: 'string', default: OUTPUT_FORMATS.join(',') },
    'model-frames': { type: 'string', default: '90' },
    threads: { type: 'string', default: 'worker' },
    providers: { type: 'string', default: 'cpu' },
  },
})
const formats = values.formats.split(',') as OutputFormat[]
const threads = values.threads.split(',') as ('worker' | 'main')[]
if (threads.length === 0 || threads.some((t) => t !== 'worker' && t !== 'main')) {
  throw new Error(`--threads: worker and/or main, got ${values.threads}`)
}
const providers = values.providers.split(',') as ExecutionProvider[]
if (providers.length === 0 || providers.some((p) => p !== 'cuda' && p !== 'cpu')) {
  throw new Error(`--providers: cuda and/or cpu, got ${values.providers}`)
}
const background = (f: OutputFormat): string =>
  OUTPUT_FORMAT_SPECS[f].alpha ? 'transparent' : '#00ff00'
const fmt = (n: number, d = 1): string => n.toFixed(d)
const CLOCK_TICKS_PER_S = 100

/** CPU seconds used so far by this process and its reaped children (ffmpeg). */
function cpuSeconds(): number {
  const u = process.cpuUsage()
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
  // After the command name: state is field 3, so cutime/cstime (fields 16, 17) are at 13, 14.
  const children = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S
  return (u.user + u.system) / 1e6 + children
}

interface Measured {
  fps: number
  cpuPerFrame: number
}

async function modelAlone(
  info: VideoInfo,
  engine: Awaited<ReturnType<typeof openMattingEngine>>,
  n: number,
  transparent: boolean,
): Promise<Measured> {
  const size = outputSize(info, 'mp4_h264')
  const frames: Buffer[] = []
  const ac = new AbortController()
  const d = openDecoder(info, size, ac.signal)
  for await (const f of d.frames()) {
    frames.push(f)
    if (frames.length === Math.min(n, 60)) {
      break
    }
  }
  ac.abort()
  await d.close()
  const s = engine.openStream(
    size,
    transparent ? { kind: 'transparent' } : { kind: 'color', rgb: [0, 255, 0] },
  )
  await s.next(frames[0]!)
  const t0 = performance.now()
  const c0 = cpuSeconds()
  for (let i = 0; i < n; i++) {
    await s.next(frames[i % frames.length]!)
  }
  const seconds = (performance.now() - t0) / 1000
  const cpu = cpuSeconds() - c0
  s.dispose()
  return { fps: n / seconds, cpuPerFrame: cpu / n }
}

/** Soft elliptical matte in the middle of the frame: alpha like a person's, for alpha encoders. */
function ellipseAlpha(w: number, h: number): Uint8Array {
  const a = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dx = (x - w / 2) / (w / 5)
      const dy = (y - h / 2) / (h / 2.5)
      const r = Math.sqrt(dx * dx + dy * dy)
      a[y * w + x] = Math.round(255 * Math.min(1, Math.max(0, (1.1 - r) / 0.2)))
    }
  }
  return a
}

async function ffmpegAlone(info: VideoInfo, format: OutputFormat, dir: string): Promise<Measured> {
  const alpha = OUTPUT_FORMAT_SPECS[format].alpha
  const size = outputSize(info, format)
  const signal = new AbortController().signal
  const decoder = openDecoder(info, size, signal)
  const outputPath = join(dir, `ffmpeg-only.${OUTPUT_FORMAT_SPECS[format].extension}`)
  const encoder = openEncoder({ info, size, format, alpha, outputPath, cwd: dir, signal })
  const matte = alpha ? ellipseAlpha(size.width, size.height) : null
  const rgba = alpha ? Buffer.allocUnsafe(size.width * size.height * 4) : null
  const t0 = performance.now()
  const c0 = cpuSeconds()
  let n = 0
  try {
    for await (const f of decoder.frames()) {
      if (rgba !== null && matte !== null) {
        for (let i = 0, j = 0, k = 0; i < matte.length; i++, j += 3, k += 4) {
          rgba[k] = f[j]!
          rgba[k + 1] = f[j + 1]!
          rgba[k + 2] = f[j + 2]!
          rgba[k + 3] = matte[i]!
        }
        await encoder.write(rgba)
      } else {
        await encoder.write(f)
      }
      n++
    }
    await encoder.finish()
  } finally {
    await Promise.all([decoder.close(), encoder.close()])
  }
  return { fps: n / ((performance.now() - t0) / 1000), cpuPerFrame: (cpuSeconds() - c0) / n }
}

async function main(): Promise<void> {
  const info = await probeVideo(values.input)
  const engines = new Map<string, Awaited<ReturnType<typeof openMattingEngine>>>()
  for (const thread of threads) {
    engines.set(
      thread,
      await openMattingEngine({ modelsDir: values.models, thread, executionProviders: providers }),
    )
  }
  const engine = engines.get(threads[0]!)!
  const dir = await mkdtemp(join(tmpdir(), 'tailor-bench-'))
  console.log(
    `input ${values.input}: ${info.width}x${info.height}, ${fmt(info.fps.num / info.fps.den, 3)} fps, ` +
      `${info.frameCountEstimate} frames; downsample_ratio ${chooseDownsampleRatio(info.width, info.height)}`,
  )
  console.log(
    `provider ${engine.provider} (intra-op threads ${engine.intraOpThreads}; asked for ${providers.join(',')}` +
      `${engine.providerFallbacks.map((f) => `; ${f.provider} failed: ${f.reason.slice(0, 200)}`).join('')}), ` +
      `cores ${availableParallelism()}, ` +
      `load average at start ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
  )
  const modelFrames = Number(values['model-frames'])
  // The network as each format's job runs it: composited onto a colour, or straight RGBA.
  const models = new Map<boolean, Measured>()
  for (const transparent of new Set(formats.map((f) => background(f) === 'transparent'))) {
    const m = await modelAlone(info, engine, modelFrames, transparent)
    models.set(transparent, m)
    console.log(
      `network alone (${transparent ? 'rgba, transparent' : 'rgb, onto a colour'}): ${fmt(m.fps)} frames/s, ${fmt(m.cpuPerFrame * 1000, 0)} CPU ms/frame (${modelFrames} frames)`,
    )
  }
  console.log('')
  const rows: string[][] = [
    [
      'format',
      'thread',
      'background',
      'ffmpeg alone',
      'network alone',
      'bound',
      'end-to-end',
      'e2e / bound',
      'CPU ms/frame: ffmpeg + network → e2e',
      'cpu bound / cpu e2e',
    ],
  ]
  try {
    for (const format of formats) {
      const f = await ffmpegAlone(info, format, dir)
      const bg = background(format)
      const model = models.get(bg === 'transparent')!
      for (const [thread, e] of engines) {
        const t0 = performance.now()
        const c0 = cpuSeconds()
        const r = await removeBackground(
          { inputPath: values.input, workDir: dir, backgroundColor: bg, outputFormat: format },
          { matting: e, signal: new AbortController().signal, onProgress: () => undefined },
        )
        const e2e = r.frames / ((performance.now() - t0) / 1000)
        const e2eCpu = (cpuSeconds() - c0) / r.frames
        const bound = 1 / (1 / model.fps + 1 / f.fps)
        const cpuBound = f.cpuPerFrame + model.cpuPerFrame
        rows.push([
          format,
          thread,
          bg,
          fmt(f.fps),
          fmt(model.fps),
          fmt(bound),
          fmt(e2e),
          `${fmt((100 * e2e) / bound, 0)} %`,
          `${fmt(f.cpuPerFrame * 1000, 0)} + ${fmt(model.cpuPerFrame * 1000, 0)} → ${fmt(e2eCpu * 1000, 0)}`,
          `${fmt((100 * cpuBound) / e2eCpu, 0)} %`,
        ])
        console.log(rows.at(-1)!.join('  '))
      }
    }
  } finally {
    await Promise.all([...engines.values()].map((e) => e.close()))
    await rm(dir, { recursive: true, force: true })
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  console.log(
    `\nframes/s (load average at end ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')})`,
  )
  for (const r of rows) {
    console.log(`| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`)
  }
}

await main()
