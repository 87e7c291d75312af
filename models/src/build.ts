/**
 * Builds models/dist/<name>.onnx and models/dist/manifest.json from the installed npm package.
 * Idempotent: a model whose inputs (source files, converter sources, catalog entry) are unchanged
 * and whose built file still has the recorded sha256 is skipped.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  DERIVED,
  GENERATED,
  MODELS,
  SOURCE_PACKAGE,
  type DerivedEntry,
  type GeneratedEntry,
  type ModelEntry,
} from './catalog.ts'
import { convertGraph } from './convert/convert.ts'
import {
  opCountsOf,
  optimizedGraphReport,
  type OptimizedGraphReport,
} from './convert/graph-report.ts'
import { OPSET } from './convert/onnx-builder.ts'
import { batchDepthwisePairs } from './convert/batch-depthwise-pairs.ts'
import { rvmTailOptions, tailOutputs } from './convert/rvm-tail.ts'
import { splitConcatConvs } from './convert/split-concat-conv.ts'
import { loadTfjsGraphModel } from './convert/tfjs-model.ts'
import { Manifest, type ManifestModel } from './manifest.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
export const MODELS_ROOT = path.resolve(here, '..')
export const DIST_DIR = path.join(MODELS_ROOT, 'dist')

export function sourcePackageDir(): string {
  const req = createRequire(path.join(MODELS_ROOT, 'package.json'))
  return path.dirname(req.resolve(`${SOURCE_PACKAGE.name}/package.json`))
}

const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

async function lockfileIntegrity(): Promise<string | null> {
  const lock = path.resolve(MODELS_ROOT, '..', 'pnpm-lock.yaml')
  if (!existsSync(lock)) return null
  const text = await readFile(lock, 'utf8')
  const key = `'${SOURCE_PACKAGE.name}@${SOURCE_PACKAGE.version}':`
  const at = text.indexOf(key)
  if (at < 0) return null
  return /integrity: ([^}\s]+)/.exec(text.slice(at, at + 400))?.[1] ?? null
}

async function converterFingerprint(sub = 'convert'): Promise<string> {
  const dir = path.join(here, sub)
  const files = (await readdir(dir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort()
  const h = createHash('sha256')
  for (const f of files) h.update(f).update(await readFile(path.join(dir, f)))
  return h.digest('hex')
}

export interface BuildReport {
  name: string
  status: 'built' | 'up-to-date'
  ms: number
  bytes: number
  nodes: number
}

export async function buildModels(
  opts: { only?: string[]; log?: (s: string) => void } = {},
): Promise<BuildReport[]> {
  const log = opts.log ?? (() => {})
  await mkdir(DIST_DIR, { recursive: true })
  const pkgDir = sourcePackageDir()
  const pkgJson = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as {
    version: string
    license?: string
  }
  if (pkgJson.version !== SOURCE_PACKAGE.version) {
    throw new Error(
      `${SOURCE_PACKAGE.name} ${pkgJson.version} is installed, the catalog pins ${SOURCE_PACKAGE.version}`,
    )
  }
  const manifestPath = path.join(DIST_DIR, 'manifest.json')
  const previous = existsSync(manifestPath)
    ? Manifest.safeParse(JSON.parse(await readFile(manifestPath, 'utf8')))
    : null
  const prevModels = new Map(
    (previous?.success ? previous.data.models : []).map((m) => [m.name, m]),
  )
  const integrity = await lockfileIntegrity()
  const converter = await converterFingerprint()
  const reports: BuildReport[] = []
  const out: ManifestModel[] = []

  for (const entry of MODELS) {
    if (opts.only && !opts.only.includes(entry.name)) {
      const prev = prevModels.get(entry.name)
      if (prev) out.push(prev)
      continue
    }
    const t0 = performance.now()
    const jsonPath = path.join(pkgDir, entry.file)
    const jsonBytes = await readFile(jsonPath)
    const shardNames = (
      JSON.parse(jsonBytes.toString('utf8')) as { weightsManifest: { paths: string[] }[] }
    ).weightsManifest.flatMap((g) => g.paths)
    const sourceHash = createHash('sha256').update(jsonBytes)
    for (const s of shardNames) {
      sourceHash.update(await readFile(path.join(path.dirname(jsonPath), s)))
    }
    const buildKey = sha256(`${sourceHash.digest('hex')}|${converter}|${JSON.stringify(entry)}`)
    const file = `${entry.name}.onnx`
    const onnxPath = path.join(DIST_DIR, file)
    const prev = prevModels.get(entry.name)
    if (prev && (await isUpToDate(prev, buildKey, onnxPath))) {
      out.push(prev)
      reports.push(upToDateReport(prev, performance.now() - t0))
      log(`${entry.name}: up to date`)
      continue
    }
    const model = await loadTfjsGraphModel(jsonPath)
    const tailMade = entry.rvmTail ? tailOutputs(entry.rvmTail.kind) : []
    const converted = entry.outputs.filter((o) => !tailMade.includes(o.name))
    const converted0 = convertGraph(model, {
      graphName: entry.name,
      producerVersion: converter.slice(0, 12),
      docString: `${entry.name} from ${SOURCE_PACKAGE.name}@${SOURCE_PACKAGE.version}/${entry.file}; ${entry.licence}`,
      branches: entry.branches,
      inputs: Object.fromEntries(
        entry.inputs.map((i) => [
          i.name,
          { dims: i.dims, layout: i.layout === 'NCHW' ? ('nchw' as const) : ('nhwc' as const) },
        ]),
      ),
      outputs: Object.fromEntries(converted.map((o) => [o.name, o.from])),
      nchwOutputs: converted.filter((o) => o.layout === 'NCHW').map((o) => o.name),
      ...(entry.rvmTail ? rvmTailOptions(entry.rvmTail.kind, entry.rvmTail.refined) : {}),
    })
    // RVM: the guided filter's four box filters batched (src/convert/batch-depthwise-pairs.ts) and
    // the decoder's Concat → Conv pairs as sums of per-part convolutions
    // (src/convert/split-concat-conv.ts), so that onnxruntime runs them in its NCHWc layout.
    const bytes = entry.rvmTail
      ? splitConcatConvs(batchDepthwisePairs(converted0.bytes).bytes).bytes
      : converted0.bytes
    const opCounts = entry.rvmTail ? opCountsOf(bytes) : converted0.opCounts
    const tmp = `${onnxPath}.tmp-${process.pid}`
    await writeFile(tmp, bytes)
    await rename(tmp, onnxPath)
    const optimized = await optimizedGraphReport(bytes)
    if (optimized.transposePairs > 0 || optimized.transposeSandwichedConvs > 0) {
      throw new Error(
        `${entry.name}: after onnxruntime's optimisation the graph still has ${optimized.transposePairs} back-to-back Transpose pairs and ${optimized.transposeSandwichedConvs} Transpose-sandwiched convolutions`,
      )
    }
    const m = manifestEntry(entry, {
      file,
      bytes,
      buildKey,
      integrity,
      opCounts,
      optimized,
      sourceFiles: [
        entry.file,
        ...shardNames.map((s) => path.posix.join(path.posix.dirname(entry.file), s)),
      ],
    })
    out.push(m)
    reports.push({
      name: entry.name,
      status: 'built',
      ms: performance.now() - t0,
      bytes: bytes.length,
      nodes: m.onnxNodeCount,
    })
    log(
      `${entry.name}: built ${file} (${(bytes.length / 1e6).toFixed(1)} MB, ${m.onnxNodeCount} nodes; ${optimized.nodeCount} after onnxruntime's optimiser, ${optimized.transposes} Transposes) in ${Math.round(performance.now() - t0)} ms`,
    )
  }
  for (const gen of GENERATED) {
    if (opts.only && !opts.only.includes(gen.name)) {
      const prev = prevModels.get(gen.name)
      if (prev) out.push(prev)
      continue
    }
    const r = await buildGenerated(
      gen,
      prevModels.get(gen.name),
      `${converter}|${await converterFingerprint(gen.sourceDir)}`,
      log,
    )
    out.push(r.entry)
    reports.push(r.report)
  }
  for (const d of DERIVED) {
    const from = out.find((m) => m.name === d.from)
    if ((opts.only && !opts.only.includes(d.name) && !opts.only.includes(d.from)) || !from) {
      const prev = prevModels.get(d.name)
      if (prev) out.push(prev)
      continue
    }
    const r = await buildDerived(d, from, prevModels.get(d.name), log)
    out.push(r.entry)
    reports.push(r.report)
  }
  const manifest = {
    schemaVersion: 1,
    opset: OPSET,
    source: { ...SOURCE_PACKAGE, integrity },
    models: out,
  }
  Manifest.parse(manifest)
  const tmp = `${manifestPath}.tmp-${process.pid}`
  await writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`)
  await rename(tmp, manifestPath)
  return reports
}

/** The manifest's entry still describes the file on disk, built with the same key. */
async function isUpToDate(prev: ManifestModel, buildKey: string, onnxPath: string) {
  return (
    prev.buildKey === buildKey &&
    existsSync(onnxPath) &&
    sha256(await readFile(onnxPath)) === prev.sha256
  )
}

function upToDateReport(prev: ManifestModel, ms: number): BuildReport {
  return { name: prev.name, status: 'up-to-date', ms, bytes: prev.bytes, nodes: prev.onnxNodeCount }
}

async function buildGenerated(
  gen: GeneratedEntry,
  prev: ManifestModel | undefined,
  fingerprint: string,
  log: (s: string) => void,
): Promise<{ entry: ManifestModel; report: BuildReport }> {
  const t0 = performance.now()
  const buildKey = sha256(`${fingerprint}|${gen.name}`)
  const file = `${gen.name}.onnx`
  const onnxPath = path.join(DIST_DIR, file)
  if (prev && (await isUpToDate(prev, buildKey, onnxPath))) {
    log(`${gen.name}: up to date`)
    return { entry: prev, report: upToDateReport(prev, performance.now() - t0) }
  }
  const built = gen.build()
  const tmp = `${onnxPath}.tmp-${process.pid}`
  await writeFile(tmp, built.bytes)
  await rename(tmp, onnxPath)
  const optimized = await optimizedGraphReport(built.bytes)
  const opCounts = opCountsOf(built.bytes)
  const entry: ManifestModel = {
    name: gen.name,
    file,
    sha256: sha256(built.bytes),
    bytes: built.bytes.length,
    buildKey,
    source: {
      package: '@tailor/models',
      version: 'generated',
      integrity: null,
      files: [`models/src/${gen.sourceDir}`],
    },
    origin: gen.origin,
    licence: gen.licence,
    inputs: built.inputs.map((i) => ({
      name: i.name,
      dtype: i.dtype,
      dims: i.dims,
      normalization: i.meaning,
    })),
    outputs: built.outputs.map((o) => ({
      name: o.name,
      dtype: o.dtype,
      dims: o.dims,
      meaning: o.meaning,
    })),
    onnxNodeCount: Object.values(opCounts).reduce((a, c) => a + c, 0),
    onnxOpCounts: opCounts,
    ortOptimized: optimized,
  }
  log(
    `${gen.name}: built ${file} (${(built.bytes.length / 1e3).toFixed(1)} kB, generated; ${optimized.nodeCount} nodes after onnxruntime's optimiser) in ${Math.round(performance.now() - t0)} ms`,
  )
  return {
    entry,
    report: {
      name: gen.name,
      status: 'built',
      ms: performance.now() - t0,
      bytes: built.bytes.length,
      nodes: optimized.nodeCount,
    },
  }
}

async function buildDerived(
  d: DerivedEntry,
  from: ManifestModel,
  prev: ManifestModel | undefined,
  log: (s: string) => void,
): Promise<{ entry: ManifestModel; report: BuildReport }> {
  const t0 = performance.now()
  const h = createHash('sha256')
    .update(from.sha256)
    .update(await converterFingerprint(d.sourceDir))
  for (const f of d.dataFiles) h.update(await readFile(path.join(here, f)))
  const buildKey = h.update(d.name).digest('hex')
  const file = `${d.name}.onnx`
  const onnxPath = path.join(DIST_DIR, file)
  if (prev && (await isUpToDate(prev, buildKey, onnxPath))) {
    log(`${d.name}: up to date`)
    return { entry: prev, report: upToDateReport(prev, 0) }
  }
  const bytes = await d.build(await readFile(path.join(DIST_DIR, from.file)))
  const tmp = `${onnxPath}.tmp-${process.pid}`
  await writeFile(tmp, bytes)
  await rename(tmp, onnxPath)
  // No layout check here: onnxruntime runs QLinearConv channels-last and puts Transposes around it.
  const optimized = await optimizedGraphReport(bytes)
  const opCounts = opCountsOf(bytes)
  const entry: ManifestModel = {
    ...from,
    name: d.name,
    file,
    sha256: sha256(bytes),
    bytes: bytes.length,
    buildKey,
    source: {
      ...from.source,
      files: [...from.source.files, ...d.dataFiles.map((f) => `models/src/${f}`)],
    },
    origin: `${d.origin}; from ${from.origin}`,
    onnxNodeCount: Object.values(opCounts).reduce((a, c) => a + c, 0),
    onnxOpCounts: opCounts,
    ortOptimized: optimized,
  }
  log(
    `${d.name}: built ${file} from ${from.file} (${(bytes.length / 1e6).toFixed(1)} MB, ${entry.onnxNodeCount} nodes; ${optimized.nodeCount} after onnxruntime's optimiser, ${optimized.transposes} Transposes) in ${Math.round(performance.now() - t0)} ms`,
  )
  return {
    entry,
    report: {
      name: d.name,
      status: 'built',
      ms: performance.now() - t0,
      bytes: bytes.length,
      nodes: entry.onnxNodeCount,
    },
  }
}

function manifestEntry(
  entry: ModelEntry,
  b: {
    file: string
    bytes: Uint8Array
    buildKey: string
    integrity: string | null
    opCounts: Record<string, number>
    optimized: OptimizedGraphReport
    sourceFiles: string[]
  },
): ManifestModel {
  return {
    name: entry.name,
    file: b.file,
    sha256: sha256(b.bytes),
    bytes: b.bytes.length,
    buildKey: b.buildKey,
    source: {
      package: SOURCE_PACKAGE.name,
      version: SOURCE_PACKAGE.version,
      integrity: b.integrity,
      files: b.sourceFiles,
    },
    origin: entry.origin,
    licence: entry.licence,
    inputs: entry.inputs,
    outputs: entry.outputs.map(({ from: _from, ...o }) => o),
    onnxNodeCount: Object.values(b.opCounts).reduce((a, c) => a + c, 0),
    onnxOpCounts: b.opCounts,
    ortOptimized: b.optimized,
  }
}
