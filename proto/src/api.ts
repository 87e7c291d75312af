/**
 * The public API's request and response shapes (spec 2.1, 2.3; ARCHITECTURE.md §2), shared by the
 * gateway's HTTP routes and its gRPC API, the OpenAPI document and the typed client. Browser-safe:
 * zod and our own modules only.
 *
 * Request bodies are validated with `parseTryOnBody` / `parseRemoveBackgroundBody`, which throw the
 * same `AppError` (missing_parameter / invalid_parameter, with the same sentence) at every edge.
 */
import { z } from 'zod'
import { AppError, ERROR_CODES } from './errors.ts'
import { BACKGROUND_COLOR_RE, GARMENT_MODES, GARMENT_PHOTO_TYPES, JOB_STATUSES } from './jobs.ts'
import { OUTPUT_FORMATS, transparencyIssue } from './output-formats.ts'
import { isInputUrl } from './uploads.ts'

/** A value as JSON, cut to 80 characters, for error sentences. */
export const show = (v: unknown): string => {
  let s: string
  try {
    s = JSON.stringify(v) ?? String(v)
  } catch {
    // Nested too deeply to serialise (JSON.stringify recurses: 100 000 levels overflow the stack).
    s = Array.isArray(v) ? '[…]' : typeof v === 'object' && v !== null ? '{…}' : typeof v
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s
}

/** Whether an absolute URL carries a user name or password (refused: inputs must need none). */
export const hasCredentials = (s: string): boolean => {
  try {
    const u = new URL(s)
    return u.username !== '' || u.password !== ''
  } catch {
    return false
  }
}

export const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0
  } catch {
    return false
  }
}

/** Longest input URL accepted (the same bound as webhook_url). */
export const MAX_INPUT_URL_LENGTH = 2048

/** An input URL field: http(s), or tailor://uploads/<id> from POST /v1/uploads (uploads.ts). */
const url = (name: string) =>
  z
    .string({
      error: (i) =>
        `${name} must be a string holding an http or https URL (or tailor://uploads/<id>); got ${show(i.input)}.`,
    })
    .max(MAX_INPUT_URL_LENGTH, {
      error: `${name} must be at most ${MAX_INPUT_URL_LENGTH} characters.`,
      abort: true,
    })
    .refine(isInputUrl, {
      error: (i) =>
        `${name} must be an absolute http or https URL, or tailor://uploads/<id> from POST /v1/uploads; got ${show(i.input)}.`,
    })
    .refine((s) => !hasCredentials(s), {
      error: `${name} must not carry credentials (user:password@); give a URL that needs none.`,
    })

/** Longest webhook_url accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048

/**
 * Optional `webhook_url` of both bodies (an additive extension): http or https only. Called when
 * the job completes or fails, signed per Standard Webhooks (docs/api.md "Webhooks").
 */
const webhookUrl = z
  .string({
    error: (i) =>
      `webhook_url must be a string holding an http or https URL; got ${show(i.input)}.`,
  })
  .max(MAX_WEBHOOK_URL_LENGTH, {
    error: `webhook_url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`,
  })
  .refine(isHttpUrl, {
    error: (i) => `webhook_url must be an absolute http or https URL; got ${show(i.input)}.`,
  })
  .optional()

/** "true" / "false" (the spec's form) or a JSON boolean → boolean. */
const stringBool = (name: string, dflt: boolean) =>
  z
    .union([z.enum(['true', 'false']), z.boolean()], {
      error: (i) => `${name} must be "true" or "false"; got ${show(i.input)}.`,
    })
    .default(dflt)
    .transform((v) => v === true || v === 'true')

/** POST /v1/try-on request body (spec 2.1). Unknown fields are ignored. */
export const TryOnBody = z.object({
  person_image_url: url('person_image_url'),
  garment_image_url: url('garment_image_url'),
  garment_mode: z
    .enum(GARMENT_MODES, {
      error: (i) =>
        `garment_mode must be one of ${GARMENT_MODES.join(', ')}; got ${show(i.input)}.`,
    })
    .optional(),
  garment_photo_type: z
    .enum(GARMENT_PHOTO_TYPES, {
      error: (i) =>
        `garment_photo_type must be one of ${GARMENT_PHOTO_TYPES.join(', ')}; got ${show(i.input)}.`,
    })
    .default('auto'),
  preprocess_garment: stringBool('preprocess_garment', true),
  remove_background: stringBool('remove_background', false),
  wait_for_result: stringBool('wait_for_result', true),
  webhook_url: webhookUrl,
})
export type TryOnBody = z.infer<typeof TryOnBody>
/** What a client may send (before defaults and the "true"/"false" transform). */
export type TryOnBodyInput = z.input<typeof TryOnBody>

/** POST /v1/video/remove-background request body (spec 2.3). Messages say what was wrong and what is allowed. */
export const RemoveBackgroundBody = z
  .object({
    video_url: url('video_url'),
    background_color: z
      .string({
        error: (i) =>
          `background_color must be a string: "transparent", #RGB or #RRGGBB; got ${show(i.input)}.`,
      })
      .regex(BACKGROUND_COLOR_RE, {
        error: (i) =>
          `background_color must be "transparent" or a hex colour #RGB or #RRGGBB; got ${show(i.input)}.`,
      })
      .default('#000000'),
    output_format: z
      .enum(OUTPUT_FORMATS, {
        error: (i) =>
          `output_format must be one of ${OUTPUT_FORMATS.join(', ')}; got ${show(i.input)}.`,
      })
      .default('mp4_h264'),
    webhook_url: webhookUrl,
  })
  .superRefine((b, ctx) => {
    const issue = transparencyIssue(b.background_color === 'transparent', b.output_format)
    if (issue !== null) {
      ctx.addIssue({ code: 'custom', path: ['output_format'], message: issue })
    }
  })
export type RemoveBackgroundBody = z.infer<typeof RemoveBackgroundBody>
export type RemoveBackgroundBodyInput = z.input<typeof RemoveBackgroundBody>

type Raw = Record<string, unknown>
/** A failed parse's error (zod's classic or core error type). */
type Issues = { issues: readonly { message: string }[] }

/** The AppError for a failed TryOnBody parse of `raw`: missing URLs first, else the first issue. */
export function tryOnBodyError(raw: Raw, error: Issues): AppError {
  const missing = ['person_image_url', 'garment_image_url'].filter((k) => raw[k] === undefined)
  if (missing.length > 0) {
    return new AppError(
      'missing_parameter',
      `Missing required parameter ${missing.join(' and ')}: give the http or https URL of the ${missing.map((m) => m.replace('_image_url', '')).join(' and the ')} image.`,
    )
  }
  return new AppError('invalid_parameter', error.issues[0]?.message ?? 'Invalid parameters.', {
    cause: error,
  })
}

/** The AppError for a failed RemoveBackgroundBody parse of `raw`. */
export function removeBackgroundBodyError(raw: Raw, error: Issues): AppError {
  if (raw.video_url === undefined) {
    return new AppError(
      'missing_parameter',
      'Missing required parameter video_url: give the http or https URL of the video to process.',
    )
  }
  return new AppError('invalid_parameter', error.issues[0]?.message ?? 'Invalid parameters.', {
    cause: error,
  })
}

/** Validates a try-on request object; throws AppError missing_parameter / invalid_parameter. */
export function parseTryOnBody(raw: Raw): TryOnBody {
  const r = TryOnBody.safeParse(raw)
  if (!r.success) throw tryOnBodyError(raw, r.error)
  return r.data
}

/** Validates a video background-removal request object; throws AppError missing_parameter / invalid_parameter. */
export function parseRemoveBackgroundBody(raw: Raw): RemoveBackgroundBody {
  const r = RemoveBackgroundBody.safeParse(raw)
  if (!r.success) throw removeBackgroundBodyError(raw, r.error)
  return r.data
}

/** 202 answer of a submission (and of a try-on wait that ran out). */
export const JobAccepted = z.object({ job_id: z.string() })
export type JobAccepted = z.infer<typeof JobAccepted>

/** 200 answer of a try-on with wait_for_result "true" that completed in time. */
export const TryOnCompleted = z.object({ result_url: z.string(), job_id: z.string() })
export type TryOnCompleted = z.infer<typeof TryOnCompleted>

export const ErrorCodeSchema = z.enum(
  ERROR_CODES as [(typeof ERROR_CODES)[number], ...(typeof ERROR_CODES)[number][]],
)

/** Every HTTP error body (STYLE.md §3.4); a failed try-on wait adds the job_id. */
export const ErrorBody = z.object({
  error: z.string(),
  error_code: ErrorCodeSchema,
  job_id: z.string().optional(),
  request_id: z.string().optional(),
})
export type ErrorBody = z.infer<typeof ErrorBody>

/** GET …/job/{id}: the public job status document. `result_url` is signed and expires. */
export const JobStatusDocument = z.object({
  job_id: z.string(),
  status: z.enum(JOB_STATUSES),
  /** 0–1, of the current attempt: a retried job starts again from 0. */
  progress: z.number(),
  /** Which delivery of the job runs (or ran last): 0 while no worker has taken it, 1 the first, 2 after one retry… */
  attempt: z.number().int().min(0),
  result_url: z.string().nullable(),
  error: z.object({ message: z.string(), error_code: ErrorCodeSchema }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})
export type JobStatusDocument = z.infer<typeof JobStatusDocument>

/** POST …/job/{id}/cancel answer. */
export const CancelAccepted = z.object({ message: z.string() })
export type CancelAccepted = z.infer<typeof CancelAccepted>

/**
 * The internal gRPC API (package tailor.v1, service TailorApi): absolute path of its .proto for
 * @grpc/proto-loader (include dir: JOB_EVENTS_PROTO_INCLUDE_DIR, the proto package root). Its
 * metadata entry for the API key, and the trailing metadata entry that names the error code.
 */
export const TAILOR_API_PROTO_PATH: string = new URL(
  '../tailor/v1/tailor_api.proto',
  import.meta.url,
).pathname
export const GRPC_API_KEY_METADATA = 'x-api-key'
export const GRPC_ERROR_CODE_METADATA = 'error-code'
