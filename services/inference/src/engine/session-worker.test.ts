/**
 * The session worker (session-worker.ts) against the in-process runner (session-runner.ts), with
 * the real rvm-ratio1 model on real frames of video_01: the same outputs frame by frame with the
 * recurrent state carried in the worker and two runs in flight, the feeds handed back for reuse,
 * errors and dispose as documented, close ends the thread.
 */
import { execFileSync } from 'node:child_process'
import { threadId } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '@tailor/proto'
import { MODELS_DIR, requireModels, VIDEO_01 } from '../media/video.test-support.ts'
import { loadModelSpec, type ModelSpec } from './manifest.ts'
import { rgb24ToPlanar } from './rvm/pre.ts'
import { localRunner, type SessionRunner, type StreamSpec } from './session-runner.ts'
import { openSessionWorker } from './session-worker.ts'
import { ModelSession } from './session.ts'

/** The float ratio-1 graph (fgr/pha out): the runner is generic, any graph does. */
const RVM_RATIO1_MODEL_NAME = 'rvm-ratio1'

const W = 96
const H = 176
const FRAMES = 6
const OPEN_TIMEOUT_MS = 120_000
const RUN_TIMEOUT_MS = 60_000

let spec: ModelSpec
let local: SessionRunner
let worker: Awaited<ReturnType<typeof openSessionWorker>>
let frames: Uint8Array[]
const runs: string[] = []

const streamSpec = (): StreamSpec => ({
  carry: { r1o: 'r1i', r2o: 'r2i', r3o: 'r3i', r4o: 'r4i' },
  initial: Object.fromEntries(
    ['r1i', 'r2i', 'r3i', 'r4i'].map((n) => [n, { data: new Float32Array(1), dims: [1, 1, 1, 1] }]),
  ),
})
const srcFeed = (rgb: Uint8Array) => ({
  src: { data: rgb24ToPlanar(rgb, new Float32Array(W * H * 3)), dims: [1, 3, H, W] },
})

beforeAll(async () => {
  requireModels()
  spec = await loadModelSpec(MODELS_DIR, RVM_RATIO1_MODEL_NAME)
  local = localRunner([await ModelSession.open(spec)])
  worker = await openSessionWorker([spec], { onRun: (model) => runs.push(model) })
  const raw = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-i', VIDEO_01, '-frames:v', String(FRAMES), '-vf', `scale=${W}:${H}`].concat([
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ]),
    { maxBuffer: 64 << 20 },
  )
  frames = Array.from({ length: FRAMES }, (_, i) =>
    raw.subarray(i * W * H * 3, (i + 1) * W * H * 3),
  )
}, OPEN_TIMEOUT_MS)

afterAll(async () => {
  await local?.close()
  await worker?.close()
})

describe('session worker', () => {
  it(
    "runs on another thread and gives the in-process runner's outputs, state carried, two in flight",
    async () => {
      expect(worker.thread).toBe('worker')
      expect(worker.threadId).toBeGreaterThan(0)
      expect(worker.threadId).not.toBe(threadId)
      expect(worker.provider).toBe('cpu')
      const a = local.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      const b = worker.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      runs.length = 0
      // All frames handed to the worker at once: they must still run in order, each on the
      // state the previous one left.
      const remote = frames.map((f) => b.run(srcFeed(f), ['pha', 'fgr']))
      for (const [i, f] of frames.entries()) {
        const want = await a.run(srcFeed(f), ['pha', 'fgr'])
        const got = await remote[i]!
        expect(got.outputs['pha']!.dims).toEqual([1, 1, H, W])
        expect(Array.from(got.outputs['pha']!.data)).toEqual(Array.from(want.outputs['pha']!.data))
        expect(Array.from(got.outputs['fgr']!.data)).toEqual(Array.from(want.outputs['fgr']!.data))
        // The feed comes back whole, to be filled again.
        expect(got.feeds['src']!.data.length).toBe(W * H * 3)
      }
      // The state was carried: the same frame through a fresh stream gives another matte.
      const fresh = local.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      const first = await fresh.run(srcFeed(frames[FRAMES - 1]!), ['pha'])
      const last = await remote[FRAMES - 1]!
      const firstPha = first.outputs['pha']!.data
      const lastPha = last.outputs['pha']!.data
      let diff = 0
      for (let i = 0; i < firstPha.length; i++) diff += Math.abs(firstPha[i]! - lastPha[i]!)
      expect(diff / (W * H)).toBeGreaterThan(1e-4)
      // The sweater (matting-regression.test.ts's hand-labelled chest box, scaled) is opaque.
      let chest = 0
      for (let y = 93; y < 108; y++) {
        for (let x = 26; x < 66; x++) {
          chest += last.outputs['pha']!.data[y * W + x]!
        }
      }
      expect(chest / (15 * 40)).toBeGreaterThan(0.9)
      expect(runs).toEqual(Array(FRAMES).fill(RVM_RATIO1_MODEL_NAME))
      a.dispose()
      b.dispose()
      fresh.dispose()
    },
    RUN_TIMEOUT_MS,
  )

  it(
    'a failed run fails the later runs of its stream only; dispose fails what is queued',
    async () => {
      const bad = worker.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      const wrong = { src: { data: new Float32Array(5 * 5 * 3), dims: [1, 3, 5, 5] } }
      const failed = bad.run({ src: { data: new Float32Array(7), dims: [1, 3, 7] } }, ['pha'])
      const after = bad.run(wrong, ['pha'])
      await expect(failed).rejects.toThrow()
      const err = await after.catch((e: unknown) => e)
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code).toBe('unexpected_error')
      expect((err as AppError).message).toMatch(/earlier run/)
      bad.dispose()

      const ok = worker.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      const queued = [0, 1, 2].map((i) => ok.run(srcFeed(frames[i]!), ['pha']))
      ok.dispose()
      for (const q of queued) {
        await expect(q).rejects.toThrow(/dispose/)
      }
      await expect(ok.run(srcFeed(frames[0]!), ['pha'])).rejects.toThrow(/dispose/)
      // The worker keeps serving other streams.
      const next = worker.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      expect((await next.run(srcFeed(frames[0]!), ['pha'])).outputs['pha']!.data.length).toBe(W * H)
      next.dispose()
    },
    RUN_TIMEOUT_MS,
  )

  it(
    "a model that cannot be opened fails the worker's start with the session's AppError",
    async () => {
      const err = await openSessionWorker([{ ...spec, sha256: '0'.repeat(64) }]).catch(
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code).toBe('service_unavailable')
      expect((err as AppError).message).toMatch(/does not match the manifest/)
    },
    OPEN_TIMEOUT_MS,
  )

  it(
    'close ends the worker; a closed runner refuses new work',
    async () => {
      await worker.close()
      expect(worker.threadId).toBe(-1)
      const s = worker.openStream(RVM_RATIO1_MODEL_NAME, streamSpec())
      await expect(s.run(srcFeed(frames[0]!), ['pha'])).rejects.toMatchObject({
        code: 'service_unavailable',
      })
    },
    RUN_TIMEOUT_MS,
  )
})
