/**
 * The try-on engine adapter: opens the networks (BlazePose detector, full + heavy, selfie segmentation, the
 * garment-warping graph) through the session layer and runs the four stages behind the
 * `TryOnEngine` port that jobs/try-on.ts declares:
 *
 *   person analysis (person.ts) ─┐
 *   garment extraction (garment-mask.ts) + category and landmarks (garment-shape.ts)
 *                                 ├→ correspondences (fit.ts) → warp (warp.ts, ONNX) → compositing (composite.ts)
 *
 * Each stage is an interface with a plain-data contract (stages.ts), so a learned warp or a
 * generator network can replace one stage (`openTryOnEngine({ stages: { warper } })`) without
 * touching the others.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { AppError } from '@tailor/proto'
import type {
  TryOnEngine,
  TryOnEngineOptions,
  TryOnEngineResult,
  TryOnImage,
  GarmentCategory,
  GarmentMode,
  GarmentPhotoType,
} from '../../jobs/try-on.ts'
import { loadModelSpec } from '../manifest.ts'
import {
  ModelSession,
  type ExecutionProvider,
  type OrtLogSeverity,
  type ProviderFallback,
} from '../session.ts'
import { segmentClothing } from './clothing.ts'
import { compositeGarment, TAKE_OFF_DEFAULT, type Composite } from './composite.ts'
import { fitParts, type WarpPart } from './fit.ts'
import { extractGarmentMasks, maskArea } from './garment-mask.ts'
import {
  bottomLandmarks,
  detectCategory,
  maskBbox,
  topLandmarks,
  type CategoryEvidence,
} from './garment-shape.ts'
import { analyzePerson, type PersonAnalysis, type PersonModels } from './person.ts'
import { extractWornGarment, findWearer, wornEvidence, type WearerModels } from './garment-photo.ts'
import { wornTopLandmarks } from './worn-landmarks.ts'
import type { Plane, Rgb } from './raster.ts'
import type { GarmentAnalysis, TryOnStages } from './stages.ts'
import { oldBottomInFront } from './tuck.ts'
import { warpParts } from './warp.ts'

export const TRYON_MODELS = {
  detector: 'blazepose-detector',
  poseFull: 'blazepose-full',
  poseHeavy: 'blazepose-heavy',
  selfie: 'selfie',
  warp: 'tryon-warp',
} as const
/** A garment must cover at least this fraction of its photo. */
export const MIN_GARMENT_AREA = 0.02

export interface OpenTryOnEngineOptions {
  modelsDir: string
  executionProviders?: ExecutionProvider[]
  intraOpThreads?: number
  /** ORT log severity (ortLogSeverity(LOG_LEVEL), engine/session.ts). */
  logSeverityLevel?: OrtLogSeverity
  /** Replaces built-in stages (a learned warp, a generator…); the rest stay as they are. */
  stages?: Partial<TryOnStages>
  /** Take the old garment off before drawing the new one (composite.ts TAKE_OFF_DEFAULT when unset). */
  takeOffOldGarment?: boolean
  /** Told each model run's wall time (metrics). */
  onRun?: (model: string, seconds: number) => void
}

/** Everything a test or the contact sheet wants to look at besides the picture. */
export interface TryOnDetails {
  person: PersonAnalysis
  garmentMask: Plane
  evidence: CategoryEvidence
  /** What the garment photo showed (garment_photo_type, or what auto detected). */
  photoType: 'flat-lay' | 'model'
  parts: WarpPart[]
  /** Each part's warped alpha before clipping and occlusion, over its box of the person photo. */
  warpedCoverage: { x0: number; y0: number; width: number; height: number; alpha: Float32Array }[]
  composite: Composite
}

export interface TryOnEngineWithDetails extends TryOnEngine {
  readonly providerFallbacks: readonly ProviderFallback[]
  readonly warmupMs: number
  tryOnDetailed(
    person: TryOnImage,
    garment: TryOnImage,
    o: TryOnEngineOptions,
  ): Promise<TryOnEngineResult & { details: TryOnDetails }>
}

export async function openTryOnEngine(o: OpenTryOnEngineOptions): Promise<TryOnEngineWithDetails> {
  const sessionOpts = {
    executionProviders: o.executionProviders ?? ['cpu'],
    ...(o.intraOpThreads !== undefined ? { intraOpThreads: o.intraOpThreads } : {}),
    ...(o.logSeverityLevel !== undefined ? { logSeverityLevel: o.logSeverityLevel } : {}),
    ...(o.onRun !== undefined ? { onRun: o.onRun } : {}),
  }
  const opened: ModelSession[] = []
  const open = async (spec: Parameters<typeof ModelSession.open>[0]) => {
    const s = await ModelSession.open(spec, sessionOpts)
    opened.push(s)
    return s
  }
  try {
    const detector = await open(await loadModelSpec(o.modelsDir, TRYON_MODELS.detector))
    const poseFull = await open(await loadModelSpec(o.modelsDir, TRYON_MODELS.poseFull))
    const poseHeavy = await open(await loadModelSpec(o.modelsDir, TRYON_MODELS.poseHeavy))
    const selfie = await open(await loadModelSpec(o.modelsDir, TRYON_MODELS.selfie))
    const warp = await open(await loadModelSpec(o.modelsDir, TRYON_MODELS.warp))
    const models = { detector, poseFull, poseHeavy, selfie }
    const stages: TryOnStages = { ...builtInStages(models, warp), ...o.stages }

    const run = async (person: TryOnImage, garment: TryOnImage, opt: TryOnEngineOptions) => {
      const timings: Record<string, number> = {}
      const personRgb = { width: person.width, height: person.height, data: person.rgb }
      const garmentRgb = { width: garment.width, height: garment.height, data: garment.rgb }
      const analysis = await stages.person.analyze(personRgb, timings)
      // The JS stages each hold the event loop for tens of ms: give it back between them.
      await yieldToLoop()
      let t = performance.now()
      const g = await stages.garment.extract(garmentRgb, garment.alpha, {
        preprocess: opt.preprocessGarment,
        garmentMode: opt.garmentMode,
        photoType: opt.garmentPhotoType ?? 'auto',
      })
      timings.garment = performance.now() - t
      await yieldToLoop()
      // What the person wears is found once (clothing.ts, and for a new top the old bottom below
      // the old top, tuck.ts): a new top reaches where the old top ended (fit.ts HEM_STRETCH), and
      // the compositor takes the old garment off and keeps the old bottom in front.
      t = performance.now()
      const takeOff = o.takeOffOldGarment ?? TAKE_OFF_DEFAULT
      const clothing = takeOff ? segmentClothing(personRgb, analysis) : null
      await yieldToLoop()
      const oldBottom =
        clothing && g.category === 'upper' ? oldBottomInFront(personRgb, analysis, clothing) : null
      timings.clothing = performance.now() - t
      await yieldToLoop()
      // The old top ended at the higher of its lowest row and where the bottom in front begins.
      const ends = [oldBottom?.hemY, clothing?.topHemY].filter((y) => typeof y === 'number')
      const drawn = g.rgb ? { ...garmentRgb, data: g.rgb } : garmentRgb
      const { parts, warped } = await stages.warper.warp(drawn, g, analysis, timings, {
        wornHemY: ends.length > 0 ? Math.min(...ends) : null,
      })
      await yieldToLoop()
      t = performance.now()
      const composite = stages.compositor.composite(personRgb, analysis, warped, {
        removeBackground: opt.removeBackground,
        category: g.category,
        takeOff,
        clothing,
        ...(g.category === 'upper' ? { oldBottom } : {}),
      })
      timings.composite = performance.now() - t
      return {
        rgb: composite.rgb,
        category: g.category,
        detectedCategory: g.evidence.category,
        timings,
        details: {
          person: analysis,
          garmentMask: g.mask,
          evidence: g.evidence,
          photoType: g.photoType,
          parts,
          composite,
          warpedCoverage: warped.map((w) => ({
            x0: w.x0,
            y0: w.y0,
            width: w.width,
            height: w.height,
            alpha: w.rgba.subarray(3 * w.width * w.height, 4 * w.width * w.height),
          })),
        },
      }
    }

    // Warm-up on a synthetic pair (a grey "person" fails the person test; run the networks directly).
    const tw = performance.now()
    await warmUp(models, warp)
    const warmupMs = performance.now() - tw

    return {
      provider: poseFull.provider,
      providerFallbacks: poseFull.fallbacks,
      warmupMs,
      tryOnDetailed: run,
      async tryOn(person, garment, opt) {
        const { details: _details, ...r } = await run(person, garment, opt)
        return r
      },
      async close() {
        await Promise.all(opened.map((s) => s.release()))
      },
    }
  } catch (err) {
    await Promise.all(opened.map((s) => s.release()))
    throw err
  }
}

async function warmUp(models: PersonModels, warp: ModelSession): Promise<void> {
  const img = new Float32Array(256 * 256 * 3).fill(0.5)
  await models.detector.run(
    { input: { data: new Float32Array(224 * 224 * 3), dims: [1, 224, 224, 3] } },
    ['person'],
  )
  await models.poseFull.run({ input_1: { data: img, dims: [1, 256, 256, 3] } }, ['ld_3d'])
  await models.poseHeavy.run({ input_1: { data: img, dims: [1, 256, 256, 3] } }, ['ld_3d'])
  await models.selfie.run({ input_1: { data: img, dims: [1, 256, 256, 3] } }, ['activation_10'])
  await warp.run(
    {
      garment: { data: new Float32Array(4 * 16 * 16), dims: [1, 4, 16, 16] },
      points: { data: Float32Array.of(0, 0, 1, 0, 0, 1), dims: [1, 3, 2] },
      coef: { data: Float32Array.of(0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1), dims: [1, 6, 2] },
      grid_x: { data: Float32Array.of(0, 1), dims: [2] },
      grid_y: { data: Float32Array.of(0, 1), dims: [2] },
      out_x: { data: new Float32Array(8), dims: [8] },
      out_y: { data: new Float32Array(8), dims: [8] },
    },
    ['warped'],
  )
}

/**
 * Stage 2 built in: the photo's foreground (garment-mask.ts); on a photo of the garment worn by a
 * person (`model`, or `auto` when garment-photo.ts finds a wearer with skin showing) the garment is
 * cut out of the person and its category read from the body regions it covers; otherwise the
 * foreground is the garment and its category comes from its silhouette (garment-shape.ts).
 */
export async function analyzeGarment(
  img: Rgb,
  alpha: Uint8Array | null,
  o: { preprocess: boolean; garmentMode: GarmentMode; photoType: GarmentPhotoType },
  models: WearerModels,
): Promise<GarmentAnalysis> {
  const { shape: fg, matte } = extractGarmentMasks(img, alpha, { preprocess: o.preprocess })
  if (maskBbox(fg) === null || maskArea(fg) < MIN_GARMENT_AREA) {
    throw new AppError('no_garment_detected', 'No garment was found in the garment image.')
  }
  const wearer = o.photoType === 'flat-lay' ? null : await findWearer(img, models)
  const wornEv = wearer === null ? null : wornEvidence(img, fg, wearer)
  if (o.photoType === 'model' && wearer === null) {
    throw new AppError(
      'no_garment_detected',
      'garment_photo_type is "model" but no person wearing the garment was found in the garment image; send "flat-lay" or "auto" for a product photo without a person.',
    )
  }
  if (wearer !== null && (o.photoType === 'model' || wornEv?.worn === true)) {
    const worn = extractWornGarment(
      img,
      fg,
      wearer,
      o.garmentMode === 'auto' ? null : o.garmentMode,
    )
    const box = maskBbox(worn.mask)
    if (box === null || maskArea(worn.mask) < MIN_GARMENT_AREA / 4) {
      throw new AppError(
        'no_garment_detected',
        'No garment was found on the person in the garment image.',
      )
    }
    const shape = detectCategory(worn.mask, box)
    const evidence: CategoryEvidence = { ...shape, category: worn.category, fromPose: true }
    const category = worn.category
    const landmarks =
      category === 'lower'
        ? bottomLandmarks(worn.mask, box, {
            tube: worn.tube,
            ...(worn.crotch ? { crotch: worn.crotch } : {}),
          })
        : wornTopLandmarks(worn.mask, box, category, wearer.points, worn.held)
    return {
      mask: worn.mask,
      ...(worn.rgb ? { rgb: worn.rgb } : {}),
      category,
      evidence,
      landmarks,
      photoType: 'model',
      worn: {
        evidence: wornEv,
        garments: worn.garments,
        upperFill: worn.upperFill,
        lowerFill: worn.lowerFill,
        decidedBy: worn.decidedBy,
      },
    }
  }
  const box = maskBbox(fg)!
  const evidence = detectCategory(fg, box)
  const category: GarmentCategory = o.garmentMode === 'auto' ? evidence.category : o.garmentMode
  const landmarks =
    category === 'lower' ? bottomLandmarks(fg, box) : topLandmarks(fg, box, category)
  // Drawn with the matte (no backdrop shadow around it); shaped by the outline.
  return { mask: matte, category, evidence, landmarks, photoType: 'flat-lay' }
}

/** The built-in geometric stages (see each module for its method). */
export function builtInStages(models: PersonModels, warp: ModelSession): TryOnStages {
  return {
    person: { analyze: (img, timings) => analyzePerson(img, models, timings) },
    garment: { extract: (img, alpha, o) => analyzeGarment(img, alpha, o, models) },
    warper: {
      async warp(garment, g, person, timings, hints) {
        let t = performance.now()
        const parts = fitParts(g.category, g.landmarks, g.mask, person, hints)
        if (timings) timings.fit = performance.now() - t
        t = performance.now()
        const warped = await warpParts(warp, garment, parts, {
          width: person.width,
          height: person.height,
        })
        if (timings) timings.warp = performance.now() - t
        return { parts, warped }
      },
    },
    compositor: { composite: (person, a, warped, o) => compositeGarment(person, a, warped, o) },
  }
}
