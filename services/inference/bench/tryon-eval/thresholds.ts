/**
 * Regression thresholds on the evaluation figures (issue 10 §6), just under what the engine on
 * main reaches: last raised from the whole-set run of main at 150d39c (2026-11-26 00:37–00:55 UTC,
 * `pnpm eval:tryon --suggest-floors`), its 44 lower-garment pairs rerun at 25069e4 (after e83bc14,
 * which changed how a new bottom is composited under an old top); docs/tryon-eval.md has its
 * figures. A change that makes the engine better raises them; one that makes it worse fails
 * tryon-eval.test.ts (the fixed subset below, in `pnpm test`) or tryon-eval.full.test.ts (the whole
 * set, `pnpm test:full`).
 */
import type { Split } from './eval-set.ts'

/**
 * A fixed subset that represents the set in `pnpm test` (about a minute): the six paired pairs, and
 * every category, framing (full, half, torso, face cropped), pose (three-quarter, arms crossed,
 * leg kicked up), garment photo (flat, ghost-mannequin, on-model) and split at least once.
 */
export const REGRESSION_SUBSET: readonly string[] = [
  // paired: the real photo is the ground truth
  'tryon/person_01 × tryon/garment_upper_01',
  'tryon/person_02 × tryon/garment_upper_02',
  'tryon/person_03 × tryon/garment_upper_03',
  'tryon/person_04 × tryon/garment_upper_04',
  'tryon/person_05 × tryon/garment_upper_05',
  'dev/person_01 × dev/garment_upper_01',
  // tune
  'tryon/person_11 × tryon/garment_lower_01',
  'tryon/person_15 × tryon/garment_full_01',
  'tryon/person_06 × tryon/garment_upper_07',
  'tryon/person_12 × tryon/garment_upper_08',
  'tryon/person_07 × tryon/garment_upper_03',
  // holdout
  'tryon/person_13 × tryon/garment_full_02',
  'tryon/person_16 × tryon/garment_lower_02',
  'tryon/person_09 × tryon/garment_upper_09',
  'tryon/person_14 × tryon/garment_upper_06',
  // mixed and dev
  'tryon/person_03 × tryon/garment_lower_04',
  'dev/person_02 × dev/garment_lower_02',
  'dev/person_03 × dev/garment_full_01',
]

export interface Floors {
  /** Garments of the split with their category right, at least this share. */
  categoryAccuracy: number
  /** Answered pairs with region score ≥ 0.8, at least this share. */
  regionPass: number
  /** Mean region score over answered pairs, at least. */
  regionScoreMean: number
  /** Mean share of the warped garment inside its labelled region, at least. */
  warpInsideMean: number
  /** Pairs refused, at most this share. */
  refusedShare: number
}

/** The whole set, per split (tryon-eval.full.test.ts). */
export const FULL_FLOORS: Record<Split | 'all', Floors> = {
  // tryon/person_07 (arms crossed) is refused `unsupported_pose` for tops: 5 tune pairs (10 %)
  // since garment_upper_08 is read as the top it is (the cardigan, not the jeans; 2026-11-28).
  tune: {
    categoryAccuracy: 0.99,
    regionPass: 0.99,
    regionScoreMean: 0.98,
    warpInsideMean: 0.97,
    refusedShare: 0.11,
  },
  holdout: {
    categoryAccuracy: 0.99,
    regionPass: 0.99,
    regionScoreMean: 0.98,
    warpInsideMean: 0.95,
    refusedShare: 0.01,
  },
  mixed: {
    categoryAccuracy: 0.99,
    regionPass: 0.99,
    regionScoreMean: 0.98,
    warpInsideMean: 0.97,
    refusedShare: 0.05,
  },
  dev: {
    categoryAccuracy: 0.99,
    regionPass: 0.99,
    regionScoreMean: 0.98,
    warpInsideMean: 0.98,
    refusedShare: 0.01,
  },
  all: {
    categoryAccuracy: 0.99,
    regionPass: 0.99,
    regionScoreMean: 0.98,
    warpInsideMean: 0.97,
    refusedShare: 0.05,
  },
}

/** The subset, all splits together (tryon-eval.test.ts): one pair of slack. */
export const SUBSET_FLOORS: Floors = {
  categoryAccuracy: 0.88,
  regionPass: 0.94,
  regionScoreMean: 0.94,
  warpInsideMean: 0.91,
  refusedShare: 0.12,
}

/**
 * Paired SSIM inside the garment box, at least (both tests): per pair, just under the run's. The
 * engine before issue 10 (before.json, a3af431): 0.744, 0.864, 0.790, 0.629, 0.882, 0.748. Since
 * tops are sized from the body (fit.ts CHEST_SPAN, with tuck.ts) person_03 × upper_03 reached
 * only 0.791, the level of before.json (her tucked-in floral blouse, drawn at her size, redraws
 * more of the box, and every redrawn pixel of a busy print carries the warp's error); since her
 * fingers stay in front of the new top (composite.ts handsFront, 2026-11-28) it reaches 0.798,
 * and its floor 0.794 is above before.json: every floor is now above the engine before issue 10. person_01 and person_05 were lowered by 0.003 and 0.002 on 2026-11-28 (fourth session):
 * sleeves at the worn scale (43e6141), tops to the old hem (a445f7b) and the painted-over old
 * sleeve hem (9976232) took them to 0.837 and 0.905, within 0.002–0.003 of their floors, too thin
 * for a run on another CPU; both stay far above before.json (0.744, 0.882).
 */
export const PAIRED_SSIM_FLOORS: Record<string, number> = {
  'tryon/person_01 × tryon/garment_upper_01': 0.832,
  'tryon/person_02 × tryon/garment_upper_02': 0.871,
  'tryon/person_03 × tryon/garment_upper_03': 0.794,
  'tryon/person_04 × tryon/garment_upper_04': 0.65,
  'tryon/person_05 × tryon/garment_upper_05': 0.9,
  'dev/person_01 × dev/garment_upper_01': 0.847,
}
