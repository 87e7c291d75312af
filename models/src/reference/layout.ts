/**
 * NHWC ⇄ NCHW for plain float32 tensors. The reference side (tfjs, the test media) speaks NHWC;
 * models whose manifest gives a tensor `layout: 'NCHW'` take or hand it out channels-first.
 */
import { readFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import type { TensorData } from './tfjs-runner.ts'

export function nhwcToNchw(t: TensorData): TensorData {
  const [n = 1, h = 1, w = 1, c = 1] = t.dims
  const out = new Float32Array(t.data.length)
  const hw = h * w
  for (let b = 0; b < n; b++) {
    const base = b * hw * c
    for (let i = 0; i < hw; i++) {
      for (let k = 0; k < c; k++) out[base + k * hw + i] = t.data[base + i * c + k]!
    }
  }
  return { data: out, dims: [n, c, h, w] }
}

export function nchwToNhwc(t: TensorData): TensorData {
  const [n = 1, c = 1, h = 1, w = 1] = t.dims
  const out = new Float32Array(t.data.length)
  const hw = h * w
  for (let b = 0; b < n; b++) {
    const base = b * hw * c
    for (let k = 0; k < c; k++) {
      for (let i = 0; i < hw; i++) out[base + i * c + k] = t.data[base + k * hw + i]!
    }
  }
  return { data: out, dims: [n, h, w, c] }
}

/** Names of the inputs and outputs the built manifest marks NCHW, for model `name`. */
export function nchwTensors(
  distDir: string,
  name: string,
): { inputs: Set<string>; outputs: Set<string> } {
  const file = path.join(distDir, 'manifest.json')
  const empty = { inputs: new Set<string>(), outputs: new Set<string>() }
  if (!existsSync(file)) return empty
  type T = { name: string; layout?: string }
  const m = (
    JSON.parse(readFileSync(file, 'utf8')) as {
      models: { name: string; inputs: T[]; outputs: T[] }[]
    }
  ).models.find((x) => x.name === name)
  if (m === undefined) return empty
  const pick = (ts: T[]): Set<string> =>
    new Set(ts.filter((t) => t.layout === 'NCHW').map((t) => t.name))
  return { inputs: pick(m.inputs), outputs: pick(m.outputs) }
}
