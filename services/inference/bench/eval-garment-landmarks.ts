/**
 * `pnpm eval:garment-landmarks`: every garment photo of the evaluation set through the garment
 * stage (analyzeGarment, garment_mode and garment_photo_type auto), its landmarks against the hand
 * labels of tryon-eval/garment-landmarks.json: one line per garment (category detected / labelled,
 * each landmark's error × the garment's scale, * past LANDMARK_TOLERANCE), then per split (tune,
 * holdout, dev) the share of landmarks within the tolerance and of garments with all of them.
 *
 *   pnpm eval:garment-landmarks [--garment upper_0]
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadModelSpec } from '../src/engine/manifest.ts'
import { ModelSession } from '../src/engine/session.ts'
import { analyzeGarment } from '../src/engine/tryon/tryon-engine.ts'
import { GARMENT_WORK_SIDE_PX } from '../src/jobs/try-on.ts'
import { decodeImage } from '../src/media/image.ts'
import { HOLDOUT_GARMENTS, TUNE_GARMENTS } from './tryon-eval/eval-set.ts'
import {
  checkLandmarks,
  LANDMARK_TOLERANCE,
  loadLandmarkLabels,
} from './tryon-eval/garment-landmarks.ts'

const { values } = parseArgs({ options: { garment: { type: 'string' } } })
const MODELS = resolve(fileURLToPath(new URL('../../../models/dist', import.meta.url)))
const open = async (name: string) =>
  ModelSession.open(await loadModelSpec(MODELS, name), { executionProviders: ['cpu'] })
const models = { poseFull: await open('blazepose-full'), poseHeavy: await open('blazepose-heavy') }
const splitOf = (id: string) => {
  const [set, name] = id.split('/') as [string, string]
  if (set === 'dev') return 'dev'
  return TUNE_GARMENTS.includes(name) ? 'tune' : HOLDOUT_GARMENTS.includes(name) ? 'holdout' : '?'
}
const sums = new Map<string, { pts: number; ok: number; garments: number; allOk: number }>()
for (const g of await loadLandmarkLabels()) {
  if (values.garment !== undefined && !g.id.includes(values.garment)) continue
  const img = await decodeImage(g.path, {
    what: 'garment image',
    maxWorkSidePx: GARMENT_WORK_SIDE_PX,
  })
  const a = await analyzeGarment(
    { width: img.width, height: img.height, data: img.rgb },
    img.alpha,
    { preprocess: true, garmentMode: 'auto', photoType: 'auto' },
    models,
  )
  const checks = checkLandmarks(g.label, a, img.width, img.height)
  const ok = checks.filter((c) => c.error <= LANDMARK_TOLERANCE).length
  const split = splitOf(g.id)
  const s = sums.get(split) ?? { pts: 0, ok: 0, garments: 0, allOk: 0 }
  s.pts += checks.length
  s.ok += ok
  s.garments++
  if (ok === checks.length) s.allOk++
  sums.set(split, s)
  const cells = checks.map(
    (c) =>
      `${c.name} ${Number.isFinite(c.error) ? c.error.toFixed(3) : 'miss'}${c.error <= LANDMARK_TOLERANCE ? '' : '*'}`,
  )
  console.log(
    `${g.id.padEnd(24)} ${split.padEnd(7)} ${a.category}/${g.label.category} ${a.photoType.padEnd(8)} ${cells.join('  ')}`,
  )
}
for (const [split, s] of sums) {
  console.log(
    `${split}: landmarks within ${LANDMARK_TOLERANCE}: ${s.ok}/${s.pts}; garments with all: ${s.allOk}/${s.garments}`,
  )
}
await models.poseFull.release()
await models.poseHeavy.release()
