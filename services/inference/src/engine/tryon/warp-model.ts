/**
 * Where the warp graph comes from: `tryon-warp` in models/dist/manifest.json once `pnpm models`
 * builds it; until then (and in unit tests) it is built in memory from the same builder and written
 * to a content-addressed file under the OS temp dir, so the session layer still checks its size
 * and sha256 like any other model.
 */
import { createHash } from 'node:crypto'
import { writeFile, rename } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildWarpModel, WARP_MODEL_NAME } from '../../../../../models/src/warp/build-warp-model.ts'
import { loadModelSpec, type ModelSpec } from '../manifest.ts'

export { WARP_MODEL_NAME }

export async function loadWarpSpec(modelsDir: string): Promise<{ spec: ModelSpec; source: 'manifest' | 'built-in-memory' }> {
  try {
    return { spec: await loadModelSpec(modelsDir, WARP_MODEL_NAME), source: 'manifest' }
  } catch {
    return { spec: await builtWarpSpec(), source: 'built-in-memory' }
  }
}

export async function builtWarpSpec(): Promise<ModelSpec> {
  const m = buildWarpModel()
  const sha256 = createHash('sha256').update(m.bytes).digest('hex')
  const path = join(tmpdir(), `tailor-${m.name}-${sha256.slice(0, 16)}.onnx`)
  if (!existsSync(path)) {
    const tmp = `${path}.${process.pid}.tmp`
    await writeFile(tmp, m.bytes)
    await rename(tmp, path)
  }
  return {
    name: m.name,
    file: path,
    path,
    sha256,
    bytes: m.bytes.length,
    inputs: m.inputs.map((i) => ({ name: i.name, dtype: i.dtype, dims: i.dims })),
    outputs: m.outputs.map((o) => ({ name: o.name, dtype: o.dtype, dims: o.dims })),
  }
}
