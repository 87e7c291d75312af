/**
 * The try-on evaluation set (issue 10 §1): the labelled photos of ../shared/media/tryon
 * (labels.json, SOURCES.md) plus the old dev set ../shared/media (labelled in dev-labels.json,
 * next to this file), the fixed tune / holdout split, and which person × garment pairs are run.
 *
 * Category-compatible pairs:
 * - an upper garment on every person;
 * - a lower garment or a dress on a person whose photo shows the legs: the labelled lower box
 *   reaches below the labelled upper box (which ends at the crotch, or at the image bottom when
 *   the hips are cut off) by at least LEGS_SHOWN of the upper box's height — at least the upper
 *   thighs are in the frame. Decided from the labels, never from file names or framing words.
 *
 * Split (docs/tryon-eval.md): a pair is `tune` when its person and garment are both TUNE,
 * `holdout` when both are HOLDOUT, else `mixed`; every pair of the old set is `dev`.
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { GarmentCategory } from '../../src/jobs/try-on.ts'

export type Split = 'tune' | 'holdout' | 'mixed' | 'dev'
export const SPLITS: readonly Split[] = ['tune', 'holdout', 'mixed', 'dev']
/** [x0, y0, x1, y1] as fractions of the image's width and height. */
export type Box = readonly [number, number, number, number]

export interface EvalPerson {
  /** `tryon/person_01` or `dev/person_01`. */
  id: string
  set: 'tryon' | 'dev'
  path: string
  framing: string
  pose: string
  /** Garment id this person wears in the photo (paired ground truth), or null. */
  wears: string | null
  boxes: { upper: Box; lower: Box }
  split: 'tune' | 'holdout' | 'dev'
}

export interface EvalGarment {
  id: string
  set: 'tryon' | 'dev'
  path: string
  category: GarmentCategory
  type: string
  photo: string
  split: 'tune' | 'holdout' | 'dev'
}

export interface EvalPair {
  /** `tryon/person_01 × tryon/garment_upper_01`. */
  id: string
  person: EvalPerson
  garment: EvalGarment
  split: Split
  /** The person wears this very garment: the photo is the ground truth. */
  paired: boolean
}

export interface EvalSet {
  persons: EvalPerson[]
  garments: EvalGarment[]
  pairs: EvalPair[]
}

/** Lower garments and dresses need at least this much leg below the upper box (× its height). */
export const LEGS_SHOWN = 0.25

/** The fixed split of issue 10 (everyone tunes on TUNE, reports HOLDOUT). */
export const TUNE_PERSONS = [
  'person_01',
  'person_02',
  'person_06',
  'person_07',
  'person_11',
  'person_12',
  'person_15',
]
export const HOLDOUT_PERSONS = [
  'person_03',
  'person_04',
  'person_05',
  'person_08',
  'person_09',
  'person_13',
  'person_14',
  'person_16',
]
export const TUNE_GARMENTS = [
  'garment_upper_01',
  'garment_upper_03',
  'garment_upper_05',
  'garment_upper_07',
  'garment_upper_08',
  'garment_lower_01',
  'garment_lower_03',
  'garment_lower_04',
  'garment_full_01',
  'garment_full_03',
]
export const HOLDOUT_GARMENTS = [
  'garment_upper_02',
  'garment_upper_04',
  'garment_upper_06',
  'garment_upper_09',
  'garment_lower_02',
  'garment_lower_05',
  'garment_full_02',
  'garment_full_04',
]

const ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)))
export const DEFAULT_MEDIA_DIR = process.env.TAILOR_MEDIA_DIR ?? resolve(ROOT, '../shared/media')
const DEV_LABELS = fileURLToPath(new URL('./dev-labels.json', import.meta.url))

interface LabelFile {
  persons: {
    file: string
    framing: string
    pose: string
    wears: string | null
    boxes: { upper: number[]; lower: number[] }
  }[]
  garments: { file: string; category: GarmentCategory; type: string; photo: string }[]
}

const stem = (file: string): string => file.replace(/\.[a-z]+$/i, '')
const box = (b: number[], what: string): Box => {
  if (b.length !== 4 || b.some((v) => !(v >= 0 && v <= 1)) || b[0]! >= b[2]! || b[1]! >= b[3]!) {
    throw new Error(`bad box for ${what}: ${JSON.stringify(b)}`)
  }
  return [b[0]!, b[1]!, b[2]!, b[3]!]
}

/** The legs are in the frame (see the module comment). */
export function showsLegs(p: Pick<EvalPerson, 'boxes'>): boolean {
  const [, uy0, , uy1] = p.boxes.upper
  const [, , , ly1] = p.boxes.lower
  return ly1 - uy1 >= LEGS_SHOWN * (uy1 - uy0)
}

export const compatible = (p: EvalPerson, g: EvalGarment): boolean =>
  g.category === 'upper' || showsLegs(p)

function splitOf(name: string, tune: string[], holdout: string[]): 'tune' | 'holdout' {
  if (tune.includes(name)) return 'tune'
  if (holdout.includes(name)) return 'holdout'
  throw new Error(`${name} is in neither the tune nor the holdout list (eval-set.ts)`)
}

async function readSet(
  set: 'tryon' | 'dev',
  labelsPath: string,
  dir: string,
): Promise<{ persons: EvalPerson[]; garments: EvalGarment[] }> {
  const labels = JSON.parse(await readFile(labelsPath, 'utf8')) as LabelFile
  const persons = labels.persons.map((p): EvalPerson => {
    const name = stem(p.file)
    return {
      id: `${set}/${name}`,
      set,
      path: join(dir, p.file),
      framing: p.framing,
      pose: p.pose,
      wears: p.wears === null ? null : `${set}/${stem(p.wears)}`,
      boxes: {
        upper: box(p.boxes.upper, `${set}/${name} upper`),
        lower: box(p.boxes.lower, `${set}/${name} lower`),
      },
      split: set === 'dev' ? 'dev' : splitOf(name, TUNE_PERSONS, HOLDOUT_PERSONS),
    }
  })
  const garments = labels.garments.map((g): EvalGarment => {
    const name = stem(g.file)
    return {
      id: `${set}/${name}`,
      set,
      path: join(dir, g.file),
      category: g.category,
      type: g.type,
      photo: g.photo,
      split: set === 'dev' ? 'dev' : splitOf(name, TUNE_GARMENTS, HOLDOUT_GARMENTS),
    }
  })
  return { persons, garments }
}

function pairSplit(p: EvalPerson, g: EvalGarment): Split {
  if (p.split === 'dev' || g.split === 'dev') return 'dev'
  return p.split === g.split ? p.split : 'mixed'
}

/** Every category-compatible pair of each set (persons and garments are not mixed across sets). */
export async function loadEvalSet(mediaDir = DEFAULT_MEDIA_DIR): Promise<EvalSet> {
  const sets = [
    await readSet('tryon', join(mediaDir, 'tryon', 'labels.json'), join(mediaDir, 'tryon')),
    await readSet('dev', DEV_LABELS, mediaDir),
  ]
  const pairs: EvalPair[] = []
  for (const s of sets) {
    for (const p of s.persons) {
      for (const g of s.garments) {
        if (!compatible(p, g)) continue
        pairs.push({
          id: `${p.id} × ${g.id}`,
          person: p,
          garment: g,
          split: pairSplit(p, g),
          paired: p.wears === g.id,
        })
      }
    }
  }
  return {
    persons: sets.flatMap((s) => s.persons),
    garments: sets.flatMap((s) => s.garments),
    pairs,
  }
}

export interface PairFilter {
  split?: readonly Split[]
  /** Substrings of the person id (`person_03`, `dev/person_01`). */
  person?: readonly string[]
  garment?: readonly string[]
}

export function filterPairs(pairs: readonly EvalPair[], f: PairFilter): EvalPair[] {
  const has = (id: string, subs: readonly string[] | undefined) =>
    subs === undefined || subs.length === 0 || subs.some((s) => id.includes(s))
  return pairs.filter(
    (p) =>
      (f.split === undefined || f.split.length === 0 || f.split.includes(p.split)) &&
      has(p.person.id, f.person) &&
      has(p.garment.id, f.garment),
  )
}
