import { z } from 'zod'
import type { ErrorCode } from './errors.ts'

export const OUTPUT_FORMATS = [
  'mp4_h264', 'mp4_h265', 'webm_vp9', 'mov_h265', 'mov_proresks', 'mkv_h264', 'mkv_h265', 'mkv_vp9', 'gif',
] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]
/** Formats whose container and codec can carry an alpha channel (spec 2.3). */
export const ALPHA_FORMATS: readonly OutputFormat[] = ['webm_vp9', 'mov_proresks', 'gif']

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
/**
 * The JOBS stream as both services create it (whichever starts first): a work queue over
 * `jobs.>` with a 2-minute de-duplication window for msgID = job id. One definition, so the
 * gateway's and inference's copies cannot drift.
 */
export const JOBS_STREAM_CONFIG = {
  name: STREAM,
  subjects: ['jobs.>'],
  retention: 'workqueue',
  duplicate_window: 120_000_000_000,
} as const

export const RemoveBackgroundParams = z.object({
  video_url: z.string().url(),
  background_color: z.string().regex(BACKGROUND_COLOR_RE).default('#000000'),
  output_format: z.enum(OUTPUT_FORMATS).default('mp4_h264'),
})
export type RemoveBackgroundParams = z.infer<typeof RemoveBackgroundParams>

/** What a job message carries: references, never media bytes (ARCHITECTURE.md §5). */
export const JobEnvelope = z.discriminatedUnion('kind', [
  z.object({ id: z.string().uuid(), kind: z.literal('remove-background'), params: RemoveBackgroundParams, createdAt: z.string() }),
  z.object({ id: z.string().uuid(), kind: z.literal('try-on'), params: z.record(z.string(), z.unknown()), createdAt: z.string() }),
])
export type JobEnvelope = z.infer<typeof JobEnvelope>

/** What a use case returns for outcomes it expects; bugs are thrown. */
export type JobOutcome =
  | { status: 'succeeded'; resultKey: string; contentType: string; bytes: number }
  | { status: 'failed'; code: ErrorCode; message: string }
