import { createHash } from 'node:crypto'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { MATTING_MODELS } from '@tailor/inference/src/engine/matting-engine.ts'
import { TRYON_MODELS } from '@tailor/inference/src/engine/tryon/tryon-engine.ts'

/** Every model a service that runs both job kinds opens: the matting engine's and the try-on engine's (one list each, from the engines). */
export const SERVICE_MODELS: string[] = [...MATTING_MODELS, ...Object.values(TRYON_MODELS)]

export const MODELS_DIST_DIR = resolve(import.meta.dirname, '../../models/dist')
const SNAPSHOT_ATTEMPTS = 60
const SNAPSHOT_RETRY_MS = 5_000

interface ManifestEntry {
  name: string
  file: string
  sha256: string
}

/**
 * A consistent private copy of the built models the tests need (manifest + files whose sha256
 * matches it), so a `pnpm models` rebuild running beside the tests cannot break them halfway.
 * Waits (up to ~5 min) while models/dist is being rewritten.
 */
export async function snapshotModels(
  names: readonly string[] = MATTING_MODELS,
): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'tailor-models-'))
  let last = ''
  for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
    try {
      const manifestText = await readFile(join(MODELS_DIST_DIR, 'manifest.json'), 'utf8')
      const manifest = JSON.parse(manifestText) as { models: ManifestEntry[] }
      let ok = true
      for (const name of names) {
        const e = manifest.models.find((m) => m.name === name)
        if (e === undefined) throw new Error(`model ${name} not in manifest (run pnpm models)`)
        await copyFile(join(MODELS_DIST_DIR, e.file), join(dir, e.file))
        const sha = createHash('sha256')
          .update(await readFile(join(dir, e.file)))
          .digest('hex')
        if (sha !== e.sha256) {
          ok = false
          last = `${e.file} does not match the manifest (rebuild in progress?)`
        }
      }
      if (ok) {
        await writeFile(join(dir, 'manifest.json'), manifestText)
        return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
      }
    } catch (err) {
      last = (err as Error).message
    }
    await new Promise((r) => setTimeout(r, SNAPSHOT_RETRY_MS))
  }
  await rm(dir, { recursive: true, force: true })
  throw new Error(`no consistent models/dist: ${last}`)
}
