/**
 * `models/dist/manifest.json`, zod-validated at startup (STYLE.md §3.5). Only the fields the
 * inference service relies on are declared; the models package owns the full schema.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { AppError } from '@tailor/proto'

const TensorSpec = z.object({
  name: z.string().min(1),
  dtype: z.string(),
  dims: z.array(z.union([z.number().int(), z.string()])),
})
export type TensorSpec = z.infer<typeof TensorSpec>

const ModelEntry = z.object({
  name: z.string().min(1),
  file: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().positive(),
  inputs: z.array(TensorSpec).min(1),
  outputs: z.array(TensorSpec).min(1),
})

const Manifest = z.object({ schemaVersion: z.literal(1), models: z.array(ModelEntry) })

/** One model as the session layer needs it: absolute path plus what to check after opening. */
export interface ModelSpec extends z.infer<typeof ModelEntry> {
  path: string
}

export const MANIFEST_FILE = 'manifest.json'

/** Reads and validates `<modelsDir>/manifest.json` and returns the entry called `name`. */
export async function loadModelSpec(modelsDir: string, name: string): Promise<ModelSpec> {
  const file = join(modelsDir, MANIFEST_FILE)
  let raw: unknown
  try {
    raw = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw new AppError(
      'service_unavailable',
      `cannot read the model manifest ${file} (run pnpm models)`,
      {
        cause: err,
      },
    )
  }
  const parsed = Manifest.safeParse(raw)
  if (!parsed.success) {
    throw new AppError(
      'service_unavailable',
      `invalid model manifest ${file}: ${z.prettifyError(parsed.error)}`,
      {
        cause: parsed.error,
      },
    )
  }
  const entry = parsed.data.models.find((m) => m.name === name)
  if (entry === undefined) {
    throw new AppError('service_unavailable', `model '${name}' is not in ${file}`)
  }
  return { ...entry, path: join(modelsDir, entry.file) }
}
