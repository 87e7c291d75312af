/**
 * The try-on engine in a worker thread (tryon-worker.ts) against the in-process engine, on real
 * media with the real networks: the same pixels and categories, refusals as the same AppError,
 * model runs reported to onRun on the caller's thread, close ends the worker.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { threadId } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { GARMENT_WORK_SIDE_PX } from '../../jobs/try-on.ts'
import { decodeImage } from '../../media/image.ts'
import { openTryOnEngine, type TryOnEngineWithDetails } from './tryon-engine.ts'
import { openTryOnEngineInWorker, type TryOnWorkerEngine } from './tryon-worker.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const MEDIA = resolve(ROOT, '../shared/media')
const MODELS = join(ROOT, 'models', 'dist')
const opts = { preprocessGarment: true, garmentMode: 'auto' as const, removeBackground: false }

let inProcess: TryOnEngineWithDetails
let worker: TryOnWorkerEngine
const runs: string[] = []

beforeAll(async () => {
  inProcess = await openTryOnEngine({ modelsDir: MODELS })
  worker = await openTryOnEngineInWorker({ modelsDir: MODELS, onRun: (model) => runs.push(model) })
}, 300_000)

afterAll(async () => {
  await inProcess?.close()
  await worker?.close()
})

describe('try-on engine in a worker thread', () => {
  it("runs on another thread and gives the in-process engine's pixels and categories", async () => {
    expect(worker.threadId).toBeGreaterThan(0)
    expect(worker.threadId).not.toBe(threadId)
    expect(worker.provider).toBe('cpu')
    const person = await decodeImage(join(MEDIA, 'person_02.jpg'), { what: 'person image' })
    const garment = await decodeImage(join(MEDIA, 'garment_full_01.jpg'), {
      what: 'garment image',
      maxWorkSidePx: GARMENT_WORK_SIDE_PX,
    })
    const personCopy = person.rgb.slice()
    runs.length = 0
    const [a, b] = await Promise.all([
      inProcess.tryOn(person, garment, opts),
      worker.tryOn(person, garment, opts),
    ])
    expect(b.category).toBe(a.category)
    expect(b.detectedCategory).toBe(a.detectedCategory)
    expect(b.rgb.length).toBe(person.width * person.height * 3)
    expect(Buffer.compare(Buffer.from(a.rgb), Buffer.from(b.rgb))).toBe(0)
    expect(Object.keys(b.timings)).toEqual(
      expect.arrayContaining(['pose', 'garment', 'warp', 'composite']),
    )
    // The caller's images are copied, not taken.
    expect(Buffer.compare(Buffer.from(person.rgb), Buffer.from(personCopy))).toBe(0)
    // Model runs reach onRun on this thread (metrics).
    expect(runs).toEqual(
      expect.arrayContaining(['blazepose-full', 'blazepose-heavy', 'selfie', 'tryon-warp']),
    )
  }, 120_000)

  it('a refusal comes back as the same AppError; the worker keeps serving', async () => {
    const notAPerson = await decodeImage(join(MEDIA, 'garment_lower_02.jpg'), {
      what: 'person image',
    })
    const garment = await decodeImage(join(MEDIA, 'garment_upper_01.jpg'), {
      what: 'garment image',
      maxWorkSidePx: GARMENT_WORK_SIDE_PX,
    })
    const err = await worker.tryOn(notAPerson, garment, opts).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('no_person_detected')
    const person = await decodeImage(join(MEDIA, 'person_01.jpg'), { what: 'person image' })
    const r = await worker.tryOn(person, garment, opts)
    expect(r.category).toBe('upper')
  }, 120_000)

  it('close ends the worker; a closed engine refuses new work', async () => {
    await worker.close()
    expect(worker.threadId).toBe(-1)
    const person = await decodeImage(join(MEDIA, 'person_01.jpg'), { what: 'person image' })
    await expect(worker.tryOn(person, person, opts)).rejects.toThrow(/closed/)
  }, 60_000)
})
