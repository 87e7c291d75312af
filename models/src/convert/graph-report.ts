/**
 * What onnxruntime's own graph optimiser makes of a converted model: node counts by op type and
 * the Transpose patterns that would mean wasted layout work (back-to-back Transposes, and
 * Transpose → Conv → Transpose sandwiches).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import onnxProto from 'onnx-proto'

type OnnxNode = onnxProto.onnx.INodeProto

export interface OptimizedGraphReport {
  level: 'extended'
  nodeCount: number
  opCounts: Record<string, number>
  transposePairs: number
  transposeSandwichedConvs: number
  transposes: number
}

/** Node count by op type of a serialised ONNX model, as written. */
export function opCountsOf(onnxBytes: Uint8Array): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const n of onnxProto.onnx.ModelProto.decode(onnxBytes).graph?.node ?? []) {
    counts[n.opType ?? ''] = (counts[n.opType ?? ''] ?? 0) + 1
  }
  return counts
}

/** The nodes of a model as onnxruntime's graph optimiser leaves it at `level`. */
async function optimizedNodes(
  onnxBytes: Uint8Array,
  level: 'extended' | 'all',
): Promise<OnnxNode[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tailor-ortopt-'))
  try {
    const out = path.join(dir, 'optimized.onnx')
    const s = await ort.InferenceSession.create(onnxBytes, {
      graphOptimizationLevel: level,
      optimizedModelFilePath: out,
      logSeverityLevel: 3,
    })
    await s.release()
    return onnxProto.onnx.ModelProto.decode(await readFile(out)).graph?.node ?? []
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * onnxruntime's CPU graph of a model at level 'all' (with the CPU-specific NCHWc layout it runs):
 * every node's name and op type, to check which layout a node ends up in.
 */
export async function ortCpuNodes(onnxBytes: Uint8Array): Promise<{ name: string; op: string }[]> {
  return (await optimizedNodes(onnxBytes, 'all')).map((n) => ({
    name: n.name ?? '',
    op: n.opType ?? '',
  }))
}

export async function optimizedGraphReport(onnxBytes: Uint8Array): Promise<OptimizedGraphReport> {
  // 'extended' is the highest level whose result is portable (the 'all' level adds CPU-specific
  // NCHWc reorders at session start anyway).
  const nodes = await optimizedNodes(onnxBytes, 'extended')
  const producer = new Map<string, string>()
  const consumers = new Map<string, string[]>()
  for (const n of nodes) {
    for (const o of n.output ?? []) producer.set(o, n.opType ?? '')
    for (const i of n.input ?? []) consumers.set(i, [...(consumers.get(i) ?? []), n.opType ?? ''])
  }
  const opCounts: Record<string, number> = {}
  let transposePairs = 0
  let sandwiched = 0
  for (const n of nodes) {
    const op = n.opType ?? ''
    opCounts[op] = (opCounts[op] ?? 0) + 1
    const firstIn = n.input?.[0] ?? ''
    if (op === 'Transpose' && producer.get(firstIn) === 'Transpose') transposePairs++
    if (
      /Conv/.test(op) &&
      producer.get(firstIn) === 'Transpose' &&
      (consumers.get(n.output?.[0] ?? '') ?? []).includes('Transpose')
    ) {
      sandwiched++
    }
  }
  return {
    level: 'extended',
    nodeCount: nodes.length,
    opCounts,
    transposePairs,
    transposeSandwichedConvs: sandwiched,
    transposes: opCounts.Transpose ?? 0,
  }
}
