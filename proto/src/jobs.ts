import { z } from 'zod'
import type { ErrorCode } from './errors.ts'
import { OUTPUT_FORMATS } from './output-formats.ts'

export const BACKGROUND_COLOR_RE = /^(transparent|#[0-9A-Fa-f]{3}|#[0-9A-Fa-f]{6})$/

export const JOB_KINDS = ['try-on', 'remove-background'] as const
export type JobKind = (typeof JOB_KINDS)[number]
export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]

/** NATS naming (STYLE.md §3.3). */
export const STREAM = 'JOBS'
export const subjectFor = (kind: JobKind): string => `jobs.${kind}.v1`
/**
 * One durable pull consumer per job kind (a lane): `inference-try-on` over `jobs.try-on.*`,
 * `inference-remove-background` over `jobs.remove-background.*`. A worker pulls from the lanes of
 * the kinds it is configured for (JOB_KINDS), and KEDA scales each kind's workers on its own lag.
 */
export const durableFor = (kind: JobKind): string => `inference-${kind}`
export const laneFilterFor = (kind: JobKind): string => `jobs.${kind}.*`
/**
 * The single consumer over `jobs.>` of releases before the per-kind lanes. A work-queue stream
 * refuses consumers whose filters overlap, so a worker deletes it at start (its waiting jobs stay
 * in the stream and go to the lanes; a job it had in flight is redelivered by a lane).
 */
export const LEGACY_DURABLE = 'inference'
export const GARMENT_CATEGORIES = ['upper', 'lower', 'full'] as const
export type GarmentCategory = (typeof GARMENT_CATEGORIES)[number]
/** `auto` detects the category from the garment photo; a category overrides detection. */
export const GARMENT_MODES = ['auto', 'full', 'upper', 'lower'] as const
export type GarmentMode = (typeof GARMENT_MODES)[number]

/**
 * What the garment photo shows (as FASHN's API has it): `flat-lay` (laid flat, ghost mannequin or
 * any cut-out packshot: the whole foreground is the garment), `model` (worn by a person: the
 * garment is extracted from the person), `auto` (detected from the photo).
 */
export const GARMENT_PHOTO_TYPES = ['auto', 'flat-lay', 'model'] as const
export type GarmentPhotoType = (typeof GARMENT_PHOTO_TYPES)[number]

/**
 * Each job kind's parameters, defined once: what the gateway stores in the job record and sends
 * in the job message, and what the worker runs. The request bodies (api.ts) map onto them
 * (`TryOnBody` minus `wait_for_result` and `webhook_url`, garment_mode defaulted).
 */
export const TryOnParams = z.object({
  person_image_url: z.string().min(1),
  garment_image_url: z.string().min(1),
  garment_mode: z.enum(GARMENT_MODES).default('auto'),
  garment_photo_type: z.enum(GARMENT_PHOTO_TYPES).default('auto'),
  preprocess_garment: z.boolean().default(true),
  remove_background: z.boolean().default(false),
})
export type TryOnParams = z.infer<typeof TryOnParams>

export const RemoveBackgroundParams = z.object({
  video_url: z.string().url(),
  background_color: z.string().regex(BACKGROUND_COLOR_RE).default('#000000'),
  output_format: z.enum(OUTPUT_FORMATS).default('mp4_h264'),
})
export type RemoveBackgroundParams = z.infer<typeof RemoveBackgroundParams>

/** What a job message carries: references, never media bytes (ARCHITECTURE.md §5). */
export const JobEnvelope = z.discriminatedUnion('kind', [
  z.object({
    id: z.string().uuid(),
    kind: z.literal('remove-background'),
    params: RemoveBackgroundParams,
    createdAt: z.string(),
  }),
  z.object({
    id: z.string().uuid(),
    kind: z.literal('try-on'),
    params: TryOnParams,
    createdAt: z.string(),
  }),
])
export type JobEnvelope = z.infer<typeof JobEnvelope>

/** A job's kind with its parameters: what is submitted, stored in the record and sent to a worker. */
export type JobSubmission =
  | { kind: 'try-on'; params: TryOnParams }
  | { kind: 'remove-background'; params: RemoveBackgroundParams }

/** The job message for a job (the record's id, kind and params). */
export const jobEnvelope = (id: string, job: JobSubmission, createdAt: string): JobEnvelope =>
  job.kind === 'try-on'
    ? { id, kind: 'try-on', params: { ...job.params }, createdAt }
    : { id, kind: 'remove-background', params: { ...job.params }, createdAt }

/** What a use case returns for outcomes it expects; bugs are thrown. */
export type JobOutcome =
  | { status: 'succeeded'; resultKey: string; contentType: string; bytes: number }
  | { status: 'failed'; code: ErrorCode; message: string }
