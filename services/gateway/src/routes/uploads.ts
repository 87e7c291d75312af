/**
 * POST /v1/uploads: how local files reach the service (docs/api.md "Uploads"). The raw body is the
 * media itself, its Content-Type one of UPLOAD_CONTENT_TYPES; it is streamed into the UploadStore
 * (never buffered whole) with the size limit of its media kind, and answered with
 * 201 {upload_id, url: "tailor://uploads/<id>", expires_at}. The url is accepted wherever an input
 * URL is, by jobs of the same API key, for UPLOAD_TTL_MS.
 */
import { randomUUID } from 'node:crypto'
import { Hono } from 'hono'
import {
  AppError,
  UPLOAD_CONTENT_TYPES,
  UPLOAD_TTL_MS,
  uploadMediaKind,
  uploadUrl,
} from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { tooLargeUpload } from '../uploads/limit-stream.ts'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import { putWithinQuota } from '../uploads/upload-quota.ts'

export const UPLOADS_PATH = '/v1/uploads'

export function uploadRoutes(deps: GatewayDeps) {
  return new Hono<AppEnv>().post('/', async (c) => {
    const type = c.req.header('content-type')
    const kind = uploadMediaKind(type)
    if (kind === null) {
      throw new AppError(
        'unsupported_content_type',
        `Unsupported Content-Type ${type === undefined ? '(none)' : JSON.stringify(type)} for an upload: send the file's bytes as the body with Content-Type one of ${[...UPLOAD_CONTENT_TYPES.image, ...UPLOAD_CONTENT_TYPES.video].join(', ')}.`,
      )
    }
    const maxBytes =
      kind === 'image' ? deps.config.uploadMaxImageBytes : deps.config.uploadMaxVideoBytes
    const declared = c.req.header('content-length')
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLargeUpload(maxBytes)
    const body = c.req.raw.body
    if (body === null || declared === '0') {
      throw new AppError(
        'invalid_request_body',
        "The upload is empty: send the file's bytes as the request body.",
      )
    }
    if (deps.uploads === undefined) {
      throw new AppError('service_unavailable', 'Uploads are not enabled on this gateway.')
    }
    // Per-key quota (UPLOAD_QUOTA_BYTES / UPLOAD_QUOTA_COUNT) on the key's unexpired uploads.
    const created = new Date()
    const meta = await putWithinQuota(
      deps.uploads,
      { bytes: deps.config.uploadQuotaBytes, count: deps.config.uploadQuotaCount },
      {
        id: randomUUID(),
        ownerKeyId: callerKeyId(c),
        contentType: type!.split(';')[0]!.trim().toLowerCase(),
        createdAt: created.toISOString(),
        expiresAt: new Date(created.getTime() + UPLOAD_TTL_MS).toISOString(),
      },
      body,
      { maxBytes, announcedBytes: declared === undefined ? 1 : Number(declared) },
    )
    if (meta.bytes === 0) {
      await deps.uploads.remove(meta.id)
      throw new AppError(
        'invalid_request_body',
        "The upload is empty: send the file's bytes as the request body.",
      )
    }
    c.get('log').info(
      { uploadId: meta.id, bytes: meta.bytes, contentType: meta.contentType },
      'upload stored',
    )
    return c.json({ upload_id: meta.id, url: uploadUrl(meta.id), expires_at: meta.expiresAt }, 201)
  })
}
