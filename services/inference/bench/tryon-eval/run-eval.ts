/**
 * Runs evaluation pairs through a try-on engine (the `TryOnEngine` port: the in-process engine of
 * openTryOnEngine or any wrapper around it) and computes each pair's figures (metrics.ts) and the
 * per-split summary. Used by `pnpm eval:tryon` (eval-tryon.ts) and the regression tests.
 */
import { AppError } from '@tailor/proto'
import {
  GARMENT_WORK_SIDE_PX,
  type GarmentCategory,
  type TryOnEngine,
  type TryOnEngineOptions,
} from '../../src/jobs/try-on.ts'
import { decodeImage, type RasterImage } from '../../src/media/image.ts'
import type { TryOnDetails } from '../../src/engine/tryon/tryon-engine.ts'
import type { EvalPair, Split } from './eval-set.ts'
import {
  boundingRect,
  changedMask,
  maskedMae,
  oldGarmentLeft,
  percentile,
  rectMask,
  regionFigures,
  regionRects,
  ssim,
  BOX_DILATE,
} from './metrics.ts'

export const EVAL_OPTIONS: TryOnEngineOptions = {
  preprocessGarment: true,
  garmentMode: 'auto',
  removeBackground: false,
}
/** A pair passes placement when at least this share of its changed pixels is in its region. */
export const REGION_PASS = 0.8

export interface PairResult {
  pair: string
  person: string
  garment: string
  split: Split
  paired: boolean
  labelled: GarmentCategory
  /** `answered`, or the refusal's error code, or `error` (not an AppError: a bug). */
  outcome: 'answered' | 'refused' | 'error'
  code: string | null
  message: string | null
  detected: GarmentCategory | null
  /** The category the engine used (auto mode: the detected one). */
  used: GarmentCategory | null
  regionScore: number | null
  boxChanged: number | null
  imageChanged: number | null
  /**
   * Where the warp put the garment, before the compositor clips it to the body: the share of the
   * warped parts' alpha inside the dilated garment region (engines that expose details only).
   */
  warpInside: number | null
  /**
   * Share of the person's old-garment pixels (of the replaced category, inside its labelled box)
   * left unchanged (metrics.ts oldGarmentLeft); null: refused, or no old garment found there.
   */
  oldLeft: number | null
  ssim: number | null
  mae: number | null
  /** Engine wall time, ms (decode excluded). */
  ms: number
  timings: Record<string, number>
}

export interface PairOutput {
  result: PairResult
  person: RasterImage
  garment: RasterImage
  /** The dressed photo (null when refused). */
  rgb: Uint8Array | null
  changed: Uint8Array | null
}

const round = (v: number, d = 4): number => +v.toFixed(d)

/** Runs the pairs one after the other; `onPair` sees each output (contact sheets, progress). */
export async function runPairs(
  engine: TryOnEngine,
  pairs: readonly EvalPair[],
  onPair?: (o: PairOutput, index: number) => void | Promise<void>,
  options: TryOnEngineOptions = EVAL_OPTIONS,
): Promise<PairResult[]> {
  const persons = new Map<string, RasterImage>()
  const garments = new Map<string, RasterImage>()
  const out: PairResult[] = []
  for (const [index, pair] of pairs.entries()) {
    let person = persons.get(pair.person.id)
    if (person === undefined) {
      persons.set(
        pair.person.id,
        (person = await decodeImage(pair.person.path, { what: 'person image' })),
      )
    }
    let garment = garments.get(pair.garment.id)
    if (garment === undefined) {
      garments.set(
        pair.garment.id,
        (garment = await decodeImage(pair.garment.path, {
          what: 'garment image',
          maxWorkSidePx: GARMENT_WORK_SIDE_PX,
        })),
      )
    }
    const base = {
      pair: pair.id,
      person: pair.person.id,
      garment: pair.garment.id,
      split: pair.split,
      paired: pair.paired,
      labelled: pair.garment.category,
    }
    const t0 = performance.now()
    let r: Awaited<ReturnType<TryOnEngine['tryOn']>> & {
      details?: Pick<TryOnDetails, 'warpedCoverage'>
    }
    try {
      r = hasDetails(engine)
        ? await engine.tryOnDetailed(person, garment, options)
        : await engine.tryOn(person, garment, options)
    } catch (err) {
      const ms = performance.now() - t0
      const refused = err instanceof AppError
      const result: PairResult = {
        ...base,
        outcome: refused ? 'refused' : 'error',
        code: refused ? err.code : null,
        message: err instanceof Error ? err.message : String(err),
        detected: null,
        used: null,
        regionScore: null,
        warpInside: null,
        oldLeft: null,
        boxChanged: null,
        imageChanged: null,
        ssim: null,
        mae: null,
        ms: round(ms, 1),
        timings: {},
      }
      out.push(result)
      await onPair?.({ result, person, garment, rgb: null, changed: null }, index)
      continue
    }
    const ms = performance.now() - t0
    const { width: w, height: h } = person
    const changed = changedMask(person.rgb, r.rgb, w, h)
    const rects = regionRects(pair.garment.category, pair.person.boxes, w, h)
    const region = rectMask(rects, w, h)
    const dilated = rectMask(
      regionRects(pair.garment.category, pair.person.boxes, w, h, BOX_DILATE),
      w,
      h,
    )
    const f = regionFigures(changed, region, dilated)
    const result: PairResult = {
      ...base,
      outcome: 'answered',
      code: null,
      message: null,
      detected: r.detectedCategory,
      used: r.category,
      regionScore: round(f.regionScore),
      boxChanged: round(f.boxChanged),
      imageChanged: round(f.imageChanged),
      warpInside:
        r.details === undefined
          ? null
          : round(warpShareInside(r.details.warpedCoverage, dilated, w)),
      oldLeft: ((v) => (v === null ? null : round(v)))(
        oldGarmentLeft(person.rgb, r.rgb, w, h, pair.garment.category, pair.person.boxes),
      ),
      ssim: pair.paired ? round(ssim(person.rgb, r.rgb, w, boundingRect(rects))) : null,
      mae: pair.paired ? round(maskedMae(person.rgb, r.rgb, region), 2) : null,
      ms: round(ms, 1),
      timings: Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, round(v, 1)])),
    }
    out.push(result)
    await onPair?.({ result, person, garment, rgb: r.rgb, changed }, index)
  }
  return out
}

type DetailedEngine = TryOnEngine & {
  tryOnDetailed(
    ...a: Parameters<TryOnEngine['tryOn']>
  ): Promise<
    Awaited<ReturnType<TryOnEngine['tryOn']>> & { details: Pick<TryOnDetails, 'warpedCoverage'> }
  >
}
const hasDetails = (e: TryOnEngine): e is DetailedEngine =>
  typeof (e as Partial<DetailedEngine>).tryOnDetailed === 'function'

/** Share of the warped alpha (max over parts per pixel) inside a 0/1 mask of the person photo. */
export function warpShareInside(
  parts: TryOnDetails['warpedCoverage'],
  inside: Uint8Array,
  w: number,
): number {
  const h = inside.length / w
  const alpha = new Float32Array(inside.length)
  for (const p of parts) {
    for (let y = 0; y < p.height; y++) {
      const py = p.y0 + y
      if (py < 0 || py >= h) continue
      for (let x = 0; x < p.width; x++) {
        const px = p.x0 + x
        if (px < 0 || px >= w) continue
        const v = p.alpha[y * p.width + x]!
        if (v > alpha[py * w + px]!) alpha[py * w + px] = v
      }
    }
  }
  let all = 0
  let inn = 0
  for (let i = 0; i < alpha.length; i++) {
    all += alpha[i]!
    if (inside[i]) inn += alpha[i]!
  }
  return all === 0 ? 0 : inn / all
}

export interface SplitSummary {
  split: Split | 'all'
  pairs: number
  answered: number
  refused: number
  errors: number
  /** Distinct garments in the split's pairs, and how many of them had their category right. */
  garments: number
  categoryRight: number
  categoryAccuracy: number
  /** Share of answered pairs with regionScore ≥ REGION_PASS. */
  regionPass: number
  regionScoreMean: number
  /** Mean share of the warped garment inside its region (null: the engine gives no details). */
  warpInsideMean: number | null
  boxChangedMean: number
  /**
   * Mean old-garment-left share over the answered pairs that are not paired (a paired result should
   * leave the photo as it is) and where an old garment was found; and how many pairs that is.
   */
  oldLeftMean: number
  oldLeftPairs: number
  refusedShare: number
  pairedPairs: number
  pairedSsimMean: number
  pairedMaeMean: number
  p50Ms: number
  refusalCodes: Record<string, number>
}

/**
 * A garment's category is right when the category detected on the majority of its answered pairs
 * is its labelled one (detection looks at the garment photo only, so it is the same on every pair).
 * A garment refused on every pair has no detected category: it counts as wrong.
 */
export function garmentCategories(
  results: readonly PairResult[],
): Map<
  string,
  { labelled: GarmentCategory; detected: GarmentCategory | null; consistent: boolean }
> {
  const by = new Map<string, PairResult[]>()
  for (const r of results) (by.get(r.garment) ?? by.set(r.garment, []).get(r.garment)!).push(r)
  const out = new Map<
    string,
    { labelled: GarmentCategory; detected: GarmentCategory | null; consistent: boolean }
  >()
  for (const [g, rs] of by) {
    const counts = new Map<GarmentCategory, number>()
    for (const r of rs) {
      if (r.detected !== null) counts.set(r.detected, (counts.get(r.detected) ?? 0) + 1)
    }
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]
    out.set(g, {
      labelled: rs[0]!.labelled,
      detected: top?.[0] ?? null,
      consistent: counts.size <= 1,
    })
  }
  return out
}

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? Number.NaN : xs.reduce((s, v) => s + v, 0) / xs.length

export function summarize(results: readonly PairResult[], split: Split | 'all'): SplitSummary {
  const rs = split === 'all' ? results : results.filter((r) => r.split === split)
  const answered = rs.filter((r) => r.outcome === 'answered')
  const cats = garmentCategories(rs)
  const right = [...cats.values()].filter((c) => c.detected === c.labelled).length
  const paired = answered.filter((r) => r.paired)
  const old = answered.filter((r) => !r.paired && r.oldLeft !== null).map((r) => r.oldLeft!)
  const refusalCodes: Record<string, number> = {}
  for (const r of rs) {
    if (r.outcome !== 'answered') {
      refusalCodes[r.code ?? 'error'] = (refusalCodes[r.code ?? 'error'] ?? 0) + 1
    }
  }
  return {
    split,
    pairs: rs.length,
    answered: answered.length,
    refused: rs.filter((r) => r.outcome === 'refused').length,
    errors: rs.filter((r) => r.outcome === 'error').length,
    garments: cats.size,
    categoryRight: right,
    categoryAccuracy: cats.size === 0 ? Number.NaN : right / cats.size,
    regionPass:
      answered.length === 0
        ? Number.NaN
        : answered.filter((r) => r.regionScore! >= REGION_PASS).length / answered.length,
    regionScoreMean: mean(answered.map((r) => r.regionScore!)),
    warpInsideMean: answered.some((r) => r.warpInside === null)
      ? null
      : mean(answered.map((r) => r.warpInside!)),
    boxChangedMean: mean(answered.map((r) => r.boxChanged!)),
    oldLeftMean: mean(old),
    oldLeftPairs: old.length,
    refusedShare:
      rs.length === 0 ? Number.NaN : rs.filter((r) => r.outcome !== 'answered').length / rs.length,
    pairedPairs: paired.length,
    pairedSsimMean: mean(paired.map((r) => r.ssim!)),
    pairedMaeMean: mean(paired.map((r) => r.mae!)),
    p50Ms: percentile(
      rs.map((r) => r.ms),
      50,
    ),
    refusalCodes,
  }
}

export const summarizeAll = (results: readonly PairResult[]): SplitSummary[] =>
  [
    ...(['tune', 'holdout', 'mixed', 'dev'] as const).map((s) => summarize(results, s)),
    summarize(results, 'all'),
  ].filter((s) => s.pairs > 0)
