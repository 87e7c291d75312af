import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { MODELS_DIR, requireModels } from '../media/video.test-support.ts'
import { openMattingEngine } from './matting-engine.ts'
import { loadModelSpec } from './manifest.ts'
import { ModelSession, ortLogSeverity } from './session.ts'

const OPEN_TIMEOUT_MS = 60_000
let root: string

beforeAll(async () => {
  requireModels()
  root = await mkdtemp(join(tmpdir(), 'tailor-session-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** A copy of models/dist with the rvm manifest entry edited by `edit`. */
async function editedModels(edit: (rvm: Record<string, unknown>) => void): Promise<string> {
  const dir = await mkdtemp(join(root, 'models-'))
  const manifest = JSON.parse(await readFile(join(MODELS_DIR, 'manifest.json'), 'utf8')) as {
    models: Record<string, unknown>[]
  }
  const rvm = manifest.models.find((m) => m['name'] === 'rvm')!
  edit(rvm)
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, models: [rvm] }))
  await copyFile(join(MODELS_DIR, 'rvm.onnx'), join(dir, 'rvm.onnx'))
  return dir
}

describe('ModelSession', () => {
  it(
    'opens rvm on the CPU, reports it, and keeps recurrent state per stream',
    async () => {
      const engine = await openMattingEngine({ modelsDir: MODELS_DIR, executionProviders: ['cpu'] })
      try {
        expect(engine.provider).toBe('cpu')
        expect(engine.providerFallbacks).toEqual([])
        // Two interleaved streams over the same frames must agree: state is per stream, runs serialised.
        const size = { width: 96, height: 64 }
        const frames = [0, 1, 2].map((k) =>
          new Uint8Array(96 * 64 * 3).map((_, i) => (i * (k + 3)) % 256),
        )
        const a = engine.openStream(size, { kind: 'transparent' })
        const b = engine.openStream(size, { kind: 'transparent' })
        for (const f of frames) {
          const [ra, rb] = await Promise.all([a.next(f), b.next(f)])
          expect(ra.length).toBe(96 * 64 * 4)
          expect(Array.from(rb)).toEqual(Array.from(ra))
        }
        a.dispose()
        b.dispose()
        await expect(a.next(frames[0]!)).rejects.toThrow(/dispose/)
      } finally {
        await engine.close()
      }
    },
    OPEN_TIMEOUT_MS,
  )

  it(
    'reports a CUDA fallback instead of hiding it',
    async () => {
      const engine = await openMattingEngine({
        modelsDir: MODELS_DIR,
        executionProviders: ['cuda', 'cpu'],
      })
      try {
        if (engine.provider === 'cpu') {
          expect(engine.providerFallbacks.map((f) => f.provider)).toEqual(['cuda'])
          expect(engine.providerFallbacks[0]!.reason.length).toBeGreaterThan(0)
        } else {
          expect(engine.providerFallbacks).toEqual([])
        }
      } finally {
        await engine.close()
      }
    },
    OPEN_TIMEOUT_MS,
  )

  it('refuses a model file that does not match the manifest', async () => {
    const dir = await editedModels((m) => {
      m['sha256'] = '0'.repeat(64)
    })
    const err = await ModelSession.open(await loadModelSpec(dir, 'rvm')).catch((e: unknown) => e)
    expect((err as AppError).code).toBe('service_unavailable')
    expect((err as AppError).message).toMatch(/does not match the manifest/)
  })

  it(
    'refuses a model whose inputs differ from the manifest',
    async () => {
      const dir = await editedModels((m) => {
        ;(m['inputs'] as { name: string }[])[0]!.name = 'source'
      })
      const err = await ModelSession.open(await loadModelSpec(dir, 'rvm')).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).message).toMatch(/lacks inputs \[source\]/)
    },
    OPEN_TIMEOUT_MS,
  )

  it('refuses a missing or invalid manifest', async () => {
    await expect(loadModelSpec(root, 'rvm')).rejects.toMatchObject({ code: 'service_unavailable' })
    const dir = await editedModels((m) => {
      delete m['sha256']
    })
    await expect(loadModelSpec(dir, 'rvm')).rejects.toMatchObject({ code: 'service_unavailable' })
    await expect(loadModelSpec(MODELS_DIR, 'nope')).rejects.toMatchObject({
      code: 'service_unavailable',
    })
  })
})

describe('ortLogSeverity', () => {
  it("follows LOG_LEVEL: ORT's info and verbose lines only at debug and trace, errors from info to error", () => {
    expect(
      ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) =>
        ortLogSeverity(l as Parameters<typeof ortLogSeverity>[0]),
      ),
    ).toEqual([0, 1, 3, 3, 3, 4, 4])
  })
})
