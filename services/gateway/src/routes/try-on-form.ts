/**
 * POST /v1/try-on as `multipart/form-data` (Pixelcut documents JSON or multipart): the JSON
 * fields as text parts, and the images either as URLs (`person_image_url`, `garment_image_url`)
 * or as file parts `person_image` / `garment_image`. A file part is stored as an upload of the
 * calling key (exactly as POST /v1/uploads would) and the job gets its `tailor://uploads/<id>`,
 * so inference reads it from storage like any other upload.
 *
 * The whole form is limited to two images (UPLOAD_MAX_IMAGE_BYTES each) plus MAX_BODY_BYTES of
 * fields; a file part past UPLOAD_MAX_IMAGE_BYTES is `file_size_too_large`. The fields are
 * validated before anything is stored: an invalid request leaves no upload behind.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Context } from 'hono'
import {
  AppError,
  TryOnBody,
  tryOnBodyError,
  UPLOAD_CONTENT_TYPES,
  UPLOAD_TTL_MS,
  uploadUrl,
} from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import { tooLargeUpload } from '../uploads/limit-stream.ts'
import { putWithinQuota } from '../uploads/upload-quota.ts'

const MULTIPART_RE = /^multipart\/form-data\s*(?:;|$)/i
export const isMultipartForm = (contentType: string | undefined): boolean =>
  MULTIPART_RE.test(contentType ?? '')

/** The file parts a try-on form may carry, and the URL field each stands for. */
const FILE_PARTS = { person_image: 'person_image_url', garment_image: 'garment_image_url' } as const
type FilePart = keyof typeof FILE_PARTS

/** Largest multipart try-on body: both images at their limit plus the fields. */
export const tryOnFormMaxBytes = (deps: Pick<GatewayDeps, 'config'>): number =>
  2 * deps.config.uploadMaxImageBytes + deps.config.maxBodyBytes

/** The image type of a file part: its declared type when it is one we accept, else from its first bytes. */
function imageType(declared: string, head: Uint8Array): string | null {
  const t = declared.split(';')[0]!.trim().toLowerCase()
  if ((UPLOAD_CONTENT_TYPES.image as readonly string[]).includes(t)) return t
  const b = (i: number): number => head[i] ?? -1
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return 'image/jpeg'
  if (b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47) return 'image/png'
  const ascii = (from: number, to: number): string =>
    String.fromCharCode(...head.subarray(from, to))
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  if (ascii(4, 12) === 'ftypavif') return 'image/avif'
  if (
    (b(0) === 0x49 && b(1) === 0x49 && b(2) === 0x2a) ||
    (b(0) === 0x4d && b(1) === 0x4d && b(3) === 0x2a)
  ) {
    return 'image/tiff'
  }
  return null
}

export interface TryOnForm {
  body: TryOnBody
  /** What an Idempotency-Key compares: the fields, and each file part by its sha256 (not the fresh upload id). */
  fingerprint: Record<string, unknown>
}

/**
 * Reads and validates a multipart try-on request; stores its file parts as uploads of the caller.
 * Throws the same AppErrors as the JSON body (missing_parameter / invalid_parameter), plus
 * invalid_request_body (unreadable form), unsupported_image_format and file_size_too_large.
 */
export async function readTryOnForm(c: Context<AppEnv>, deps: GatewayDeps): Promise<TryOnForm> {
  let form: FormData
  try {
    form = await c.req.formData()
  } catch (err) {
    if (err instanceof AppError) throw err
    throw new AppError(
      'invalid_request_body',
      'The multipart/form-data body could not be read: send form fields (and the image files as parts person_image / garment_image) with a boundary.',
      { cause: err },
    )
  }
  const fields: Record<string, string> = {}
  const files = new Map<FilePart, { data: Uint8Array<ArrayBuffer>; type: string; sha256: string }>()
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      if (name in fields) {
        throw new AppError(
          'invalid_parameter',
          `The form field ${JSON.stringify(name)} is given more than once; give it once.`,
        )
      }
      fields[name] = value
      continue
    }
    if (!(name in FILE_PARTS)) {
      throw new AppError(
        'invalid_parameter',
        `Unexpected file part ${JSON.stringify(name.slice(0, 80))}: image files go in the parts person_image and garment_image.`,
      )
    }
    const part = name as FilePart
    if (files.has(part)) {
      throw new AppError(
        'invalid_parameter',
        `The file part ${part} is given more than once; give it once.`,
      )
    }
    if (value.size > deps.config.uploadMaxImageBytes) {
      throw tooLargeUpload(deps.config.uploadMaxImageBytes)
    }
    const data = new Uint8Array(await value.arrayBuffer())
    if (data.length === 0) {
      throw new AppError(
        'invalid_parameter',
        `The file part ${part} is empty: attach the image file.`,
      )
    }
    const type = imageType(value.type, data.subarray(0, 16))
    if (type === null) {
      throw new AppError(
        'unsupported_image_format',
        `The file part ${part} is not an image this service reads (${UPLOAD_CONTENT_TYPES.image.join(', ')}).`,
      )
    }
    files.set(part, { data, type, sha256: createHash('sha256').update(data).digest('hex') })
  }
  // A file part stands for its URL field: not both, and the job gets the upload's URL.
  const ids = new Map<FilePart, string>()
  const raw: Record<string, unknown> = { ...fields }
  for (const [part, urlField] of Object.entries(FILE_PARTS) as [FilePart, string][]) {
    if (!files.has(part)) continue
    if (fields[urlField] !== undefined) {
      throw new AppError(
        'invalid_parameter',
        `Give either the file part ${part} or the field ${urlField}, not both.`,
      )
    }
    const id = randomUUID()
    ids.set(part, id)
    raw[urlField] = uploadUrl(id)
  }
  const missing = (Object.entries(FILE_PARTS) as [FilePart, string][]).filter(
    ([, urlField]) => raw[urlField] === undefined,
  )
  if (missing.length > 0) {
    throw new AppError(
      'missing_parameter',
      `Missing required parameter ${missing.map(([part, urlField]) => `${urlField} (or a file part ${part})`).join(' and ')}: give the image's http or https URL, or attach the image file.`,
    )
  }
  const parsed = TryOnBody.safeParse(raw)
  if (!parsed.success) throw tryOnBodyError(raw, parsed.error)
  if (files.size > 0 && deps.uploads === undefined) {
    throw new AppError(
      'service_unavailable',
      'Uploads are not enabled on this gateway: give the images as URLs.',
    )
  }
  const owner = callerKeyId(c)
  for (const [part, f] of files) {
    const created = new Date()
    // The same per-key quota as POST /v1/uploads (UPLOAD_QUOTA_BYTES / UPLOAD_QUOTA_COUNT).
    const meta = await putWithinQuota(
      deps.uploads!,
      { bytes: deps.config.uploadQuotaBytes, count: deps.config.uploadQuotaCount },
      {
        id: ids.get(part)!,
        ownerKeyId: owner,
        contentType: f.type,
        createdAt: created.toISOString(),
        expiresAt: new Date(created.getTime() + UPLOAD_TTL_MS).toISOString(),
      },
      new Blob([f.data]).stream(),
      { maxBytes: deps.config.uploadMaxImageBytes, announcedBytes: f.data.byteLength },
    )
    c.get('log').info(
      { uploadId: meta.id, bytes: meta.bytes, contentType: meta.contentType, part },
      'try-on form image stored',
    )
  }
  const fingerprint: Record<string, unknown> = { ...parsed.data }
  for (const [part, f] of files) {
    delete fingerprint[FILE_PARTS[part]]
    fingerprint[part] = `sha256:${f.sha256}`
  }
  return { body: parsed.data, fingerprint }
}
