/**
 * Regression test on the evaluation figures (issue 10 §6), `pnpm test:full` part: every
 * category-compatible pair of the evaluation set (what `pnpm eval:tryon` runs, ~10 min on 2
 * cores) through the real engine, each split's figures against floors just under what main
 * reaches (thresholds.ts FULL_FLOORS), refusals only with documented codes, paired SSIM per pair.
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
import { FULL_FLOORS, PAIRED_SSIM_FLOORS } from './thresholds.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)))

let engine: TryOnEngineWithDetails
let results: PairResult[]

beforeAll(async () => {
  const set = await loadEvalSet()
  engine = await openTryOnEngine({ modelsDir: join(ROOT, 'models', 'dist') })
  results = await runPairs(engine, set.pairs)
}, 3_600_000)

afterAll(async () => {
  await engine?.close()
})

describe('the whole evaluation set', () => {
  it('every pair is answered or refused with a documented error code', () => {
    expect(undocumentedRefusals(results)).toEqual([])
  })

  it.each(['tune', 'holdout', 'mixed', 'dev', 'all'] as const)(
    '%s: category, placement and refusals at or above the floors',
    (split) => {
      expect(belowFloors(summarize(results, split), FULL_FLOORS[split])).toEqual([])
    },
  )

  it('paired SSIM inside the garment box stays at or above its floor on every paired pair', () => {
    expect(results.filter((r) => r.paired)).toHaveLength(6)
    expect(pairedBelow(results, PAIRED_SSIM_FLOORS)).toEqual([])
  })
})
