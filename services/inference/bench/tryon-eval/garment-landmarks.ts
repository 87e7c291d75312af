/**
 * The garment landmark check (issue 10 §2): the hand labels of garment-landmarks.json against what
 * the garment stage (analyzeGarment) finds. An error is the distance between a detected landmark
 * and its label in pixels, over the garment's scale (the diagonal of the box around its labelled
 * points), so a garment small in a large frame is held to the same standard as one that fills it.
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { GarmentAnalysis } from '../../src/engine/tryon/stages.ts'
import type { GarmentCategory } from '../../src/engine/tryon/garment-shape.ts'

type Xy = readonly [number, number]

export interface LandmarkLabel {
  category: GarmentCategory
  /** Fractions of the image's width and height; null where the garment has none (no sleeves, a skirt's crotch). */
  points: Record<string, Xy | null>
}

/** Largest error (× the garment's scale) a landmark may have. */
export const LANDMARK_TOLERANCE = 0.08

const HERE = resolve(fileURLToPath(new URL('.', import.meta.url)))
const MEDIA = resolve(HERE, '../../../../../shared/media')

export interface LabelledGarment {
  /** `tryon/garment_upper_01`, `dev/garment_lower_02`. */
  id: string
  path: string
  label: LandmarkLabel
}

export async function loadLandmarkLabels(): Promise<LabelledGarment[]> {
  const raw = JSON.parse(await readFile(join(HERE, 'garment-landmarks.json'), 'utf8')) as {
    garments: Record<string, LandmarkLabel>
  }
  return Object.entries(raw.garments).map(([id, label]) => {
    const [set, name] = id.split('/') as [string, string]
    return { id, path: join(MEDIA, set === 'dev' ? '' : 'tryon', `${name}.jpg`), label }
  })
}

/** The detected landmarks under the labels' names, in pixels (null: the stage found none). */
export function detectedPoints(g: GarmentAnalysis): Record<string, Xy | null> {
  const l = g.landmarks
  const p = (q: { x: number; y: number }): Xy => [q.x, q.y]
  if (l.kind === 'bottom') {
    return {
      waistL: p(l.waistL),
      waistR: p(l.waistR),
      crotch: l.legs ? p(l.crotch) : null,
      hemLOuter: p(l.hemLOuter),
      hemLInner: l.legs ? p(l.hemLInner) : null,
      hemRInner: l.legs ? p(l.hemRInner) : null,
      hemROuter: p(l.hemROuter),
    }
  }
  return {
    neck: p(l.neck),
    shoulderL: p(l.shoulderL),
    shoulderR: p(l.shoulderR),
    cuffL: l.sleeveL ? p(l.sleeveL.cuff) : null,
    cuffR: l.sleeveR ? p(l.sleeveR.cuff) : null,
    hemL: p(l.hemL),
    hemR: p(l.hemR),
  }
}

export interface LandmarkCheck {
  name: string
  /** Error × the garment's scale; Infinity when one of label and detection is null and the other not. */
  error: number
}

/**
 * Each labelled landmark's error. The neck is checked on x only (the warp takes only its x; its
 * height comes from the shoulders). A null label wants a null detection and the reverse. When the
 * category is wrong the landmarks are of another kind: every error is Infinity.
 */
export function checkLandmarks(
  label: LandmarkLabel,
  g: GarmentAnalysis,
  width: number,
  height: number,
): LandmarkCheck[] {
  const pts = Object.values(label.points).filter((v): v is Xy => v !== null)
  const xs = pts.map((v) => v[0] * width)
  const ys = pts.map((v) => v[1] * height)
  const scale = Math.hypot(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys))
  const kindOk = (label.category === 'lower') === (g.landmarks.kind === 'bottom')
  const det = kindOk ? detectedPoints(g) : {}
  return Object.entries(label.points).map(([name, want]) => {
    const got = det[name]
    if (!kindOk || got === undefined) return { name, error: Infinity }
    if (want === null || got === null) return { name, error: want === got ? 0 : Infinity }
    const dx = got[0] - want[0] * width
    const dy = got[1] - want[1] * height
    return { name, error: (name === 'neck' ? Math.abs(dx) : Math.hypot(dx, dy)) / scale }
  })
}
