/**
 * The four stages of the try-on engine as replaceable interfaces. The built-in implementations are
 * geometric (tryon-engine.ts wires them); a learned network placed in models/ can replace one stage
 * — a learned warp for `GarmentWarper`, a generator for `Compositor` — without touching the others,
 * as long as it keeps the stage's contract (all coordinates in pixels of the image named).
 */
import type { GarmentMode, GarmentPhotoType } from '../../jobs/try-on.ts'
import type { Composite } from './composite.ts'
import type { Clothing } from './clothing.ts'
import type { FitHints, WarpPart } from './fit.ts'
import type { CategoryEvidence, GarmentCategory, GarmentLandmarks } from './garment-shape.ts'
import type { WornEvidence, WornGarment } from './garment-photo.ts'
import type { PersonAnalysis } from './person.ts'
import type { OldBottom } from './tuck.ts'
import type { Plane, Rgb } from './raster.ts'
import type { WarpedPart } from './warp.ts'

/**
 * Stage 1. In: the person photo (upright RGB). Out: landmarks, soft person mask, head / hands / arms
 * regions, shoulder width, pose findings (person.ts, pose-check.ts). Throws AppError
 * `no_person_detected`.
 */
export interface PersonAnalyzer {
  analyze(img: Rgb, timings?: Record<string, number>): Promise<PersonAnalysis>
}

/** What stage 2 finds on the garment photo (garment pixels). */
export interface GarmentAnalysis {
  /**
   * Soft garment mask 0..1 the garment is drawn with (garment-mask.ts: on a product photo its
   * matte, the outline without the soft shadows it casts on the backdrop; `preprocess: false`
   * semantics documented there). The landmarks come from the outline itself.
   */
  mask: Plane
  /** The category used (garment_mode when given, else detected) and the detection evidence. */
  category: GarmentCategory
  evidence: CategoryEvidence
  landmarks: GarmentLandmarks
  /** What the photo showed (garment_photo_type, or what `auto` found) and, for `model`, how the garment was cut out. */
  photoType: 'flat-lay' | 'model'
  /**
   * The garment photo's pixels to draw the garment with when they differ from the photo's: on a
   * model photo, the wearer's skin seen through lace or mesh repainted in the garment's colour.
   */
  rgb?: Uint8Array
  worn?: {
    evidence: WornEvidence | null
    garments: WornGarment['garments']
    upperFill: number
    lowerFill: number
    /** What decided the category (garment-photo.ts `WornGarment.decidedBy`). */
    decidedBy: WornGarment['decidedBy']
  }
}

/**
 * Stage 2. In: the garment photo (RGB, alpha if the file had one) and the request's options. Out:
 * `GarmentAnalysis`. Throws AppError `no_garment_detected`.
 */
export interface GarmentExtractor {
  extract(
    img: Rgb,
    alpha: Uint8Array | null,
    o: { preprocess: boolean; garmentMode: GarmentMode; photoType: GarmentPhotoType },
  ): Promise<GarmentAnalysis>
}

/**
 * Stage 3. In: the garment photo and its analysis, the person analysis, and what the engine found of
 * the person's old clothes (`FitHints`: a top reaches the old top's hem, fit.ts). Out: the garment parts
 * (with their correspondences, fit.ts) and each part warped onto the person photo as premultiplied
 * RGBA over its box (warp.ts, the ONNX warp graph). Throws AppError `unsupported_pose` when the pose
 * findings rule out the garment's category (fit.ts `assertDressable`).
 */
export interface GarmentWarper {
  warp(
    garment: Rgb,
    g: GarmentAnalysis,
    person: PersonAnalysis,
    timings?: Record<string, number>,
    hints?: FitHints,
  ): Promise<{ parts: WarpPart[]; warped: WarpedPart[] }>
}

/**
 * Stage 4. In: the person photo, its analysis, the warped parts. Out: the dressed photo at the same
 * size and the garment's final coverage (composite.ts: occlusion order, shading, edges, optional
 * white background).
 */
export interface Compositor {
  composite(
    person: Rgb,
    a: PersonAnalysis,
    warped: readonly WarpedPart[],
    o: {
      removeBackground: boolean
      category: GarmentCategory
      takeOff?: boolean
      /** What the person wears, when the engine found it already (clothing.ts); else found here. */
      clothing?: Clothing | null
      /** For a new top: the old bottom in front of it (tuck.ts), when the engine found it already. */
      oldBottom?: OldBottom | null
    },
  ): Composite
}

export interface TryOnStages {
  person: PersonAnalyzer
  garment: GarmentExtractor
  warper: GarmentWarper
  compositor: Compositor
}
