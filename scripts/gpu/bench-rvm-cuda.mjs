// Standalone rvm benchmark for a GPU machine (scripts/gpu/rvm-cuda-kit.sh builds its kit): onnxruntime-node 1.29 +
// the CUDA provider from the npm package com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9. Real frames of video_02
// (1280x720), recurrent state fed back, outputs copied back to the CPU on every run (as the service needs them).
//
// MODELS=rvm,rvm-rgb: `rvm` is the float graph (`src` float32 NCHW in, `fgr` + `pha` float32 out: what
// `pnpm bench:models` times); `rvm-rgb` is the graph the matting engine runs (the decoded rgb24 bytes in, the
// composited rgb24 bytes out, background colour `bg`; models/README.md). ORT_DIR and MODELS_DIR default to the kit's
// layout (./ort, .).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
const require = createRequire(import.meta.url)
const here = new URL('.', import.meta.url).pathname
const ort = require(resolve(process.env.ORT_DIR ?? resolve(here, 'ort'), 'dist/index.js'))
const modelsDir = process.env.MODELS_DIR ?? here
const W = 1280,
  H = 720
const providers = (process.env.PROVIDERS ?? 'cuda,cpu').split(',')
const ratios = (process.env.RATIOS ?? '0.25').split(',').map(Number)
const models = (process.env.MODELS ?? 'rvm').split(',')
const N = Number(process.env.FRAMES ?? 100)
const raw = readFileSync(process.env.FRAMES_FILE ?? resolve(here, 'frames.rgb'))
const nf = raw.length / (W * H * 3)
const planar = []
const packed = []
for (let f = 0; f < nf; f++) {
  const o = f * W * H * 3
  packed.push(new Uint8Array(raw.buffer, raw.byteOffset + o, W * H * 3))
  const d = new Float32Array(3 * W * H)
  for (let i = 0; i < W * H; i++)
    for (let c = 0; c < 3; c++) d[c * W * H + i] = raw[o + i * 3 + c] / 255
  planar.push(d)
}
const med = (a) => {
  const s = [...a].sort((x, y) => x - y)
  return s[Math.floor(s.length / 2)]
}
/** The frame feeds of model m for frame i. */
function frameFeeds(m, i) {
  if (m === 'rvm') return { src: new ort.Tensor('float32', planar[i % nf], [1, 3, H, W]) }
  return {
    rgb24: new ort.Tensor('uint8', packed[i % nf], [1, H, W, 3]),
    bg: new ort.Tensor('float32', Float32Array.of(0, 255, 0), [3]),
  }
}
/** Mean of the output's first channel (alpha for rvm; green of the composite for rvm-rgb), 0–1. */
function outMean(m, out) {
  if (m === 'rvm') {
    const p = out.pha.data
    let s = 0
    for (let j = 0; j < p.length; j++) s += p[j]
    return s / p.length
  }
  const p = out.rgb.data
  let s = 0
  for (let j = 1; j < p.length; j += 3) s += p[j]
  return s / (255 * (p.length / 3))
}
async function chain(session, m, ratio, n, times) {
  const dr = new ort.Tensor('float32', Float32Array.of(ratio), [1])
  let st = Object.fromEntries(
    ['r1i', 'r2i', 'r3i', 'r4i'].map((k) => [
      k,
      new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1]),
    ]),
  )
  let mean = 0
  for (let i = 0; i < n; i++) {
    const feeds = { ...frameFeeds(m, i), ...st, downsample_ratio: dr }
    const t0 = performance.now()
    const out = await session.run(feeds)
    times?.push(performance.now() - t0)
    st = { r1i: out.r1o, r2i: out.r2o, r3i: out.r3o, r4i: out.r4o }
    if (i === n - 1) mean = outMean(m, out)
  }
  return mean
}
const results = {}
for (const m of models) {
  for (const p of providers) {
    const opts =
      p === 'cuda'
        ? { executionProviders: [{ name: 'cuda', deviceId: 0 }], logSeverityLevel: 3 }
        : p.startsWith('cpu')
          ? {
              executionProviders: ['cpu'],
              logSeverityLevel: 3,
              ...(Number(p.slice(3)) > 0 ? { intraOpNumThreads: Number(p.slice(3)) } : {}),
            }
          : null
    let session
    const t0 = performance.now()
    try {
      session = await ort.InferenceSession.create(resolve(modelsDir, `${m}.onnx`), opts)
    } catch (e) {
      console.log(`${m} ${p}: session failed: ${String(e.message ?? e).split('\n')[0]}`)
      continue
    }
    console.log(`${m} ${p}: session created in ${(performance.now() - t0).toFixed(0)} ms`)
    for (const r of ratios) {
      await chain(session, m, r, 10)
      const times = []
      const a = await chain(session, m, r, N, times)
      const md = med(times)
      // Two and four independent clips in flight on the one session.
      const conc = {}
      for (const k of p === 'cuda' ? [2, 4] : []) {
        const t1 = performance.now()
        await Promise.all(Array.from({ length: k }, () => chain(session, m, r, N)))
        conc[k] = (k * N * 1000) / (performance.now() - t1)
      }
      console.log(
        `${m} ${p} ${W}x${H}/${r}: median ${md.toFixed(2)} ms (${(1000 / md).toFixed(1)} frames/s one clip)` +
          Object.entries(conc)
            .map(([k, f]) => `, ${k} clips in flight ${f.toFixed(1)} frames/s total`)
            .join('') +
          `, last output mean ${a.toFixed(3)}`,
      )
      results[`${m}/${p}/${r}`] = { medianMs: md, conc, outMean: a }
    }
    await session.release()
  }
}
console.log('JSON ' + JSON.stringify(results))
