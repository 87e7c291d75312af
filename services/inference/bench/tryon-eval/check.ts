/**
 * The assertions the regression tests share: figures against floors (thresholds.ts), refusals
 * only with documented codes. Returns the failures as sentences (empty: all good), so a test shows
 * every figure that fell, not just the first.
 */
import { TRY_ON_INPUT_ERRORS } from '../../src/jobs/try-on.ts'
import { summarize, type PairResult, type SplitSummary } from './run-eval.ts'
import { REGRESSION_SUBSET, type Floors } from './thresholds.ts'

export function belowFloors(s: SplitSummary, f: Floors): string[] {
  const out: string[] = []
  const lo = (name: string, v: number | null, floor: number) => {
    if (v === null || Number.isNaN(v) || v < floor) {
      out.push(`${s.split}: ${name} ${v === null ? 'n/a' : v.toFixed(4)} < ${floor}`)
    }
  }
  lo('category accuracy', s.categoryAccuracy, f.categoryAccuracy)
  lo('region ≥ 0.8 share', s.regionPass, f.regionPass)
  lo('mean region score', s.regionScoreMean, f.regionScoreMean)
  lo('mean warp inside', s.warpInsideMean, f.warpInsideMean)
  if (!(s.refusedShare <= f.refusedShare)) {
    out.push(`${s.split}: refused share ${s.refusedShare.toFixed(4)} > ${f.refusedShare}`)
  }
  return out
}

export function undocumentedRefusals(results: readonly PairResult[]): string[] {
  return results
    .filter(
      (r) =>
        r.outcome === 'error' ||
        (r.outcome === 'refused' && !TRY_ON_INPUT_ERRORS.includes(r.code as never)),
    )
    .map((r) => `${r.pair}: ${r.outcome} ${r.code ?? ''} ${r.message ?? ''}`)
}

export function pairedBelow(
  results: readonly PairResult[],
  floors: Record<string, number>,
): string[] {
  const out: string[] = []
  for (const [pair, floor] of Object.entries(floors)) {
    const r = results.find((x) => x.pair === pair)
    if (r === undefined) continue
    if (r.ssim === null || !(r.ssim >= floor)) {
      out.push(`${pair}: paired SSIM ${r.ssim ?? r.code ?? 'n/a'} < ${floor}`)
    }
  }
  return out
}

/** Floors just under a run's figures (`pnpm eval:tryon --suggest-floors`): shares lowered by `slack`, rounded down to 0.01. */
export function suggestFloors(s: SplitSummary, slack: number): Floors {
  const down = (v: number | null) =>
    v === null || Number.isNaN(v) ? 0 : Math.max(0, Math.floor((v - slack) * 100) / 100)
  return {
    categoryAccuracy: down(s.categoryAccuracy),
    regionPass: down(s.regionPass),
    regionScoreMean: down(s.regionScoreMean),
    warpInsideMean: down(s.warpInsideMean),
    refusedShare: Math.min(1, Math.ceil((s.refusedShare + slack) * 100) / 100),
  }
}

/** Paired SSIM floors just under a run's: 0.002 below, rounded down to 0.001. */
export function suggestSsimFloors(results: readonly PairResult[]): Record<string, number> {
  return Object.fromEntries(
    results
      .filter((r) => r.paired && r.ssim !== null)
      .map((r) => [r.pair, Math.floor((r.ssim! - 0.002) * 1000) / 1000]),
  )
}

/** thresholds.ts constants just under a whole-set run's figures, as TypeScript to paste. */
export function floorsSource(
  results: readonly PairResult[],
  summary: readonly SplitSummary[],
): string {
  const obj = (f: Floors) =>
    `{ ${Object.entries(f)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')} }`
  const full = summary.map((s) => `  ${s.split}: ${obj(suggestFloors(s, 0.01))},`).join('\n')
  const sub = results.filter((r) => REGRESSION_SUBSET.includes(r.pair))
  const lines = [`export const FULL_FLOORS: Record<Split | 'all', Floors> = {\n${full}\n}`]
  if (sub.length === REGRESSION_SUBSET.length) {
    // One pair of slack on the subset: a single pair flipping is within "just under".
    lines.push(
      `export const SUBSET_FLOORS: Floors = ${obj(suggestFloors(summarize(sub, 'all'), 1 / sub.length))}`,
    )
  }
  const ssim = Object.entries(suggestSsimFloors(results)).map(([k, v]) => `  '${k}': ${v},`)
  lines.push(`export const PAIRED_SSIM_FLOORS: Record<string, number> = {\n${ssim.join('\n')}\n}`)
  return lines.join('\n')
}
