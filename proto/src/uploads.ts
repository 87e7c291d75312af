/**
 * Uploads: how local files reach the service. `POST /v1/uploads` stores the raw body for
 * UPLOAD_TTL_MS and answers `tailor://uploads/<id>`, accepted wherever an input URL is. The
 * gateway writes uploads, inference reads them from the same storage (never over HTTP): the NATS
 * Object Store bucket `uploads` (distributed) or `<data dir>/uploads` (embedded). Browser-safe.
 */
import { z } from 'zod'

/** Uploads live one hour (the bucket's TTL; the data dir is swept). */
export const UPLOAD_TTL_MS = 60 * 60 * 1000
export const UPLOADS_BUCKET = 'uploads'
export const UPLOAD_URL_PREFIX = 'tailor://uploads/'
/** Upload ids are UUIDs (lower case). */
export const UPLOAD_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UPLOAD_URL_RE =
  /^tailor:\/\/uploads\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

export const uploadUrl = (id: string): string => `${UPLOAD_URL_PREFIX}${id}`

/** The upload id of a `tailor://uploads/<id>` URL, else null. */
export function parseUploadUrl(url: string): string | null {
  return UPLOAD_URL_RE.exec(url)?.[1] ?? null
}

/** True for the `tailor://uploads/…` scheme, well-formed or not (so a bad id gets its own message). */
export const looksLikeUploadUrl = (url: string): boolean =>
  url.toLowerCase().startsWith('tailor://')

/** Media types an upload may carry, by the input kind whose size limit applies. GIF counts as video (an animated GIF is a video input). */
export const UPLOAD_CONTENT_TYPES = {
  image: ['image/jpeg', 'image/png', 'image/webp', 'image/tiff', 'image/avif'],
  video: [
    'video/mp4',
    'video/quicktime',
    'video/webm',
    'video/x-matroska',
    'video/matroska',
    'image/gif',
  ],
} as const
export type UploadMediaKind = keyof typeof UPLOAD_CONTENT_TYPES

/** The media kind of a Content-Type header value (parameters ignored), or null when not accepted. */
export function uploadMediaKind(contentType: string | undefined): UploadMediaKind | null {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  for (const kind of ['image', 'video'] as const) {
    if ((UPLOAD_CONTENT_TYPES[kind] as readonly string[]).includes(t)) return kind
  }
  return null
}

/** POST /v1/uploads → 201. */
export const UploadAccepted = z.object({
  upload_id: z.string(),
  /** `tailor://uploads/<id>`: accepted wherever an input URL is, by jobs of the same API key. */
  url: z.string(),
  expires_at: z.string(),
})
export type UploadAccepted = z.infer<typeof UploadAccepted>

/** What is stored beside each upload (a JSON file embedded, object metadata distributed). */
export interface UploadMeta {
  id: string
  /** The key id of the uploader (Principal.keyId); only its jobs may use the upload. */
  ownerKeyId: string
  contentType: string
  bytes: number
  createdAt: string
  expiresAt: string
}

/**
 * What an input URL field accepts: an absolute http(s) URL, or the `tailor://` scheme (whose form,
 * existence and owner are checked at submission, with messages of their own).
 */
export function isInputUrl(s: string): boolean {
  if (looksLikeUploadUrl(s)) return true
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0
  } catch {
    return false
  }
}
