// Standalone rvm benchmark for a GPU machine (scripts/gpu/rvm-cuda-kit.sh builds its kit): onnxruntime-node 1.29 +
// the CUDA provider from the npm package com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9. Real frames of video_02
// (1280x720), recurrent state fed back, outputs copied back to the CPU on every run (as the service needs them).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
const require = createRequire(import.meta.url)
const ort = require('./ort/dist/index.js')
const W = 1280,
  H = 720
const providers = (process.env.PROVIDERS ?? 'cuda,cpu').split(',')
const ratios = (process.env.RATIOS ?? '0.25').split(',').map(Number)
const N = Number(process.env.FRAMES ?? 100)
const raw = readFileSync(new URL('./frames.rgb', import.meta.url))
const nf = raw.length / (W * H * 3)
const frames = []
for (let f = 0; f < nf; f++) {
  const d = new Float32Array(3 * W * H)
  const o = f * W * H * 3
  for (let i = 0; i < W * H; i++)
    for (let c = 0; c < 3; c++) d[c * W * H + i] = raw[o + i * 3 + c] / 255
  frames.push(d)
}
const med = (a) => {
  const s = [...a].sort((x, y) => x - y)
  return s[Math.floor(s.length / 2)]
}
async function chain(session, ratio, n, times) {
  const dr = new ort.Tensor('float32', Float32Array.of(ratio), [1])
  let st = Object.fromEntries(
    ['r1i', 'r2i', 'r3i', 'r4i'].map((k) => [
      k,
      new ort.Tensor('float32', new Float32Array(1), [1, 1, 1, 1]),
    ]),
  )
  let alphaMean = 0
  for (let i = 0; i < n; i++) {
    const src = new ort.Tensor('float32', frames[i % nf], [1, 3, H, W])
    const t0 = performance.now()
    const out = await session.run({ src, ...st, downsample_ratio: dr })
    times?.push(performance.now() - t0)
    st = { r1i: out.r1o, r2i: out.r2o, r3i: out.r3o, r4i: out.r4o }
    if (i === n - 1) {
      const p = out.pha.data
      let s = 0
      for (let j = 0; j < p.length; j++) s += p[j]
      alphaMean = s / p.length
    }
  }
  return alphaMean
}
const results = {}
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
    session = await ort.InferenceSession.create(
      new URL('./rvm.onnx', import.meta.url).pathname,
      opts,
    )
  } catch (e) {
    console.log(`${p}: session failed: ${String(e.message ?? e).split('\n')[0]}`)
    continue
  }
  console.log(`${p}: session created in ${(performance.now() - t0).toFixed(0)} ms`)
  for (const r of ratios) {
    await chain(session, r, 10)
    const times = []
    const a = await chain(session, r, N, times)
    const m = med(times)
    // Two and four independent clips in flight on the one session (the worker-thread pipeline's aim).
    const conc = {}
    for (const k of p === 'cuda' ? [2, 4] : []) {
      const t1 = performance.now()
      await Promise.all(Array.from({ length: k }, () => chain(session, r, N)))
      conc[k] = (k * N * 1000) / (performance.now() - t1)
    }
    const line =
      `${p} rvm ${W}x${H}/${r}: median ${m.toFixed(2)} ms (${(1000 / m).toFixed(1)} frames/s one clip)` +
      Object.entries(conc)
        .map(([k, f]) => `, ${k} clips in flight ${f.toFixed(1)} frames/s total`)
        .join('') +
      `, last alpha mean ${a.toFixed(3)}`
    console.log(line)
    results[`${p}/${r}`] = { medianMs: m, conc, alphaMean: a }
  }
  await session.release()
}
console.log('JSON ' + JSON.stringify(results))
