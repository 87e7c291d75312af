/**
 * Regression test on the evaluation figures (issue 10 §6), `pnpm test` part: a fixed subset of the
 * evaluation set (thresholds.ts REGRESSION_SUBSET) through the real engine (real networks, CPU),
 * its figures against floors just under what main reaches: category, placement against the
 * hand-labelled boxes (region score of the changed pixels, and where the warp put the garment
 * before clipping), refusals only with documented codes, and paired SSIM per pair. The whole set
 * is tryon-eval.full.test.ts. Needs ../shared/media (the evaluation photos).
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  openTryOnEngine,
  type TryOnEngineWithDetails,
} from '../../src/engine/tryon/tryon-engine.ts'
import { belowFloors, pairedBelow, undocumentedRefusals } from './check.ts'
import { loadEvalSet } from './eval-set.ts'
import { runPairs, summarize, type PairResult } from './run-eval.ts'
import { PAIRED_SSIM_FLOORS, REGRESSION_SUBSET, SUBSET_FLOORS } from './thresholds.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)))

let engine: TryOnEngineWithDetails
let results: PairResult[]

beforeAll(async () => {
  const set = await loadEvalSet()
  const pairs = REGRESSION_SUBSET.map((id) => {
    const p = set.pairs.find((q) => q.id === id)
    if (p === undefined) throw new Error(`${id} is not a pair of the evaluation set`)
    return p
  })
  engine = await openTryOnEngine({ modelsDir: join(ROOT, 'models', 'dist') })
  results = await runPairs(engine, pairs)
  console.table(
    results.map((r) => ({
      pair: r.pair,
      result: r.code ?? r.outcome,
      detected: r.detected,
      labelled: r.labelled,
      region: r.regionScore,
      warp: r.warpInside,
      ssim: r.ssim,
    })),
  )
}, 600_000)

afterAll(async () => {
  await engine?.close()
})

describe('evaluation subset', () => {
  it('every pair is answered or refused with a documented error code', () => {
    expect(results).toHaveLength(REGRESSION_SUBSET.length)
    expect(undocumentedRefusals(results)).toEqual([])
  })

  it('category, placement against the labelled boxes and refusals stay at or above the floors', () => {
    expect(belowFloors(summarize(results, 'all'), SUBSET_FLOORS)).toEqual([])
  })

  it('paired SSIM inside the garment box stays at or above its floor on every paired pair', () => {
    const paired = results.filter((r) => r.paired)
    expect(paired.length).toBe(6)
    expect(pairedBelow(results, PAIRED_SSIM_FLOORS)).toEqual([])
  })
})
