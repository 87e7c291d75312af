/**
 * Use case: virtual try-on of one garment photo on one person photo (ARCHITECTURE.md §4).
 *
 * decode + check both images (media/image.ts) → engine (person analysis, garment extraction and
 * category, warp, compositing; engine/tryon/) → JPEG at the person photo's size, EXIF orientation
 * applied. Inputs are local files (fetched by the caller with @tailor/proto/net safeFetchToFile).
 *
 * Orchestration only: no onnxruntime and no sharp here (STYLE.md §3.2).
 */
import { join } from 'node:path'
import {
  AppError,
  type ErrorCode,
  type GarmentCategory,
  type GarmentMode,
  type GarmentPhotoType,
  type JobEnvelope,
} from '@tailor/proto'
import { decodeImage, encodeJpeg, type ImageLimits } from '../media/image.ts'
import { fetchField } from './input-field.ts'

export type { GarmentCategory, GarmentMode, GarmentPhotoType } from '@tailor/proto'

// ---- port: the try-on engine, implemented by engine/tryon/tryon-engine.ts ---------------------

export interface TryOnImage {
  width: number
  height: number
  /** w·h·3 bytes, RGB, upright. */
  rgb: Uint8Array
  /** w·h bytes when the file had an alpha channel. */
  alpha: Uint8Array | null
}

export interface TryOnEngineOptions {
  /** true: remove the garment photo's background; false: take the photo as already cut out. */
  preprocessGarment: boolean
  /** `auto` detects the category from the garment photo; anything else overrides detection. */
  garmentMode: GarmentMode
  /**
   * `flat-lay`: the photo's foreground is the garment; `model`: a person wears it (the garment is
   * cut out of the person); `auto`: detected. Default `auto`.
   */
  garmentPhotoType?: GarmentPhotoType
  /** true: the person (wearing the garment) on white. */
  removeBackground: boolean
}

export interface TryOnEngineResult {
  /** The dressed person, RGB at the person photo's size. */
  rgb: Uint8Array
  /** The category used, and the one detected (equal unless garment_mode overrode it). */
  category: GarmentCategory
  detectedCategory: GarmentCategory
  /** Per-stage wall time, ms. */
  timings: Record<string, number>
}

export interface TryOnEngine {
  readonly provider: 'cuda' | 'cpu'
  /**
   * Throws AppError `no_person_detected` / `no_garment_detected` / `unsupported_pose` for inputs it cannot use; other
   * throws are bugs or environment failures.
   */
  tryOn(person: TryOnImage, garment: TryOnImage, o: TryOnEngineOptions): Promise<TryOnEngineResult>
  close(): Promise<void>
}

// ---- use case -----------------------------------------------------------------------------------

export interface TryOnRequest {
  personPath: string
  garmentPath: string
  workDir: string
  options: TryOnEngineOptions
}

export interface TryOnResult {
  outputPath: string
  contentType: 'image/jpeg'
  bytes: number
  width: number
  height: number
  category: GarmentCategory
  detectedCategory: GarmentCategory
  timings: Record<string, number>
}

/** Codes this use case throws for inputs it cannot use (each documented in docs/errors-and-limits.md). */
export const TRY_ON_INPUT_ERRORS: readonly ErrorCode[] = [
  'malformed_image',
  'unsupported_image_format',
  'resolution_too_high',
  'resolution_too_low',
  'file_size_too_large',
  'no_person_detected',
  'no_garment_detected',
  'unsupported_pose',
]

/** The garment photo is analysed at most this large (longer side); the person photo never is. */
export const GARMENT_WORK_SIDE_PX = 768
export const RESULT_BASENAME = 'result.jpg'
export const JPEG_QUALITY = 92

export async function tryOn(
  req: TryOnRequest,
  deps: { engine: TryOnEngine; limits?: Partial<ImageLimits>; signal?: AbortSignal },
): Promise<TryOnResult> {
  const t0 = performance.now()
  deps.signal?.throwIfAborted()
  const [person, garment] = await Promise.all([
    decodeImage(req.personPath, {
      what: 'person image',
      ...(deps.limits ? { limits: deps.limits } : {}),
    }),
    decodeImage(req.garmentPath, {
      what: 'garment image',
      maxWorkSidePx: GARMENT_WORK_SIDE_PX,
      ...(deps.limits ? { limits: deps.limits } : {}),
    }),
  ])
  const tDecode = performance.now() - t0
  deps.signal?.throwIfAborted()
  const r = await deps.engine.tryOn(person, garment, req.options)
  deps.signal?.throwIfAborted()
  const t1 = performance.now()
  const outputPath = join(req.workDir, RESULT_BASENAME)
  const bytes = await encodeJpeg(r.rgb, person.width, person.height, outputPath, JPEG_QUALITY)
  const tEncode = performance.now() - t1
  return {
    outputPath,
    contentType: 'image/jpeg',
    bytes,
    width: person.width,
    height: person.height,
    category: r.category,
    detectedCategory: r.detectedCategory,
    timings: { decode: tDecode, ...r.timings, encode: tEncode, total: performance.now() - t0 },
  }
}

// ---- the job: fetch → try-on → store ---------------------------------------------------------------

export interface TryOnJobDeps {
  engine: TryOnEngine
  /** Downloads a URL to a local file (@tailor/proto/net safeFetchToFile with the image limits). */
  fetchInput(url: string, dest: string, signal: AbortSignal): Promise<unknown>
  limits?: Partial<ImageLimits>
}

export const tryOnResultKey = (jobId: string): string => `try-on/${jobId}.jpg`

/**
 * Runs one try-on job in `workDir` (which the caller creates and removes). Returns the JPEG's path;
 * throws AppError for inputs it cannot use (TRY_ON_INPUT_ERRORS, `input_fetch_failed`). A malformed
 * message never gets here: the consumer parses the envelope (proto JobEnvelope) and terminates it.
 */
export async function runTryOnJob(
  job: Extract<JobEnvelope, { kind: 'try-on' }>,
  workDir: string,
  signal: AbortSignal,
  deps: TryOnJobDeps,
): Promise<TryOnResult> {
  // Validated with the envelope (proto TryOnParams) by the consumer.
  const p = job.params
  const personPath = join(workDir, 'person')
  const garmentPath = join(workDir, 'garment')
  await Promise.all([
    fetchField('person_image_url', () => deps.fetchInput(p.person_image_url, personPath, signal)),
    fetchField('garment_image_url', () =>
      deps.fetchInput(p.garment_image_url, garmentPath, signal),
    ),
  ])
  return tryOn(
    {
      personPath,
      garmentPath,
      workDir,
      options: {
        preprocessGarment: p.preprocess_garment,
        garmentMode: p.garment_mode,
        garmentPhotoType: p.garment_photo_type,
        removeBackground: p.remove_background,
      },
    },
    { engine: deps.engine, signal, ...(deps.limits ? { limits: deps.limits } : {}) },
  )
}
