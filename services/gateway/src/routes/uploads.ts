/**
 * POST /v1/uploads: how local files reach the service (README "Uploads"). The raw body is the
 * media itself, its Content-Type one of UPLOAD_CONTENT_TYPES; it is streamed into the UploadStore
 * (never buffered whole) with the size limit of its media kind, and answered with
 * 201 {upload_id, url: "tailor://uploads/<id>", expires_at}. The url is accepted wherever an input
 * URL is, by jobs of the same API key, for UPLOAD_TTL_MS.
 */
import { randomUUID } from 'node:crypto'
import { Hono } from 'hono'
import { AppError, UPLOAD_CONTENT_TYPES, UPLOAD_TTL_MS, uploadMediaKind, uploadUrl } from '@tailor/proto'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { tooLargeUpload } from '../uploads/limit-stream.ts'
import { callerKeyId } from '../uploads/caller-key-id.ts'
import type { UploadUsage } from '../uploads/upload-store.ts'

export const UPLOADS_PATH = '/v1/uploads'

const MIB = 1024 * 1024

function uploadQuotaExceeded(held: UploadUsage, quota: { bytes: number; count: number }): AppError {
  const when = held.firstExpiresAt === null ? '' : ` The first of them expires at ${held.firstExpiresAt}.`
  return new AppError(
    'upload_quota_exceeded',
    `This API key's unexpired uploads (${held.count}, ${(held.bytes / MIB).toFixed(1)} MB) leave no room for this one: the quota is ${quota.count} uploads and ${(quota.bytes / MIB).toFixed(1)} MB per key, each kept one hour.${when}`,
  )
}

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
    const maxBytes = kind === 'image' ? deps.config.uploadMaxImageBytes : deps.config.uploadMaxVideoBytes
    const declared = c.req.header('content-length')
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLargeUpload(maxBytes)
    const body = c.req.raw.body
    if (body === null || declared === '0') throw new AppError('invalid_request_body', 'The upload is empty: send the file\'s bytes as the request body.')
    if (deps.uploads === undefined) throw new AppError('service_unavailable', 'Uploads are not enabled on this gateway.')
    // Per-key quota (UPLOAD_QUOTA_BYTES / UPLOAD_QUOTA_COUNT) on the key's unexpired uploads:
    // checked before (with the declared length) and again after the write, which is deleted if
    // the key went past its quota meanwhile (uploads of one key sent at once).
    const owner = callerKeyId(c)
    const quota = { bytes: deps.config.uploadQuotaBytes, count: deps.config.uploadQuotaCount }
    const before = await deps.uploads.usage(owner)
    const declaredBytes = declared === undefined ? 1 : Number(declared)
    if (before.count + 1 > quota.count || before.bytes + declaredBytes > quota.bytes) throw uploadQuotaExceeded(before, quota)
    const created = new Date()
    const meta = await deps.uploads.put(
      {
        id: randomUUID(),
        ownerKeyId: owner,
        contentType: type!.split(';')[0]!.trim().toLowerCase(),
        createdAt: created.toISOString(),
        expiresAt: new Date(created.getTime() + UPLOAD_TTL_MS).toISOString(),
      },
      body,
      maxBytes,
    )
    if (meta.bytes === 0) {
      await deps.uploads.remove(meta.id)
      throw new AppError('invalid_request_body', 'The upload is empty: send the file\'s bytes as the request body.')
    }
    const after = await deps.uploads.usage(owner)
    if (after.count > quota.count || after.bytes > quota.bytes) {
      await deps.uploads.remove(meta.id)
      throw uploadQuotaExceeded({ ...after, count: after.count - 1, bytes: after.bytes - meta.bytes }, quota)
    }
    c.get('log').info({ uploadId: meta.id, bytes: meta.bytes, contentType: meta.contentType }, 'upload stored')
    return c.json({ upload_id: meta.id, url: uploadUrl(meta.id), expires_at: meta.expiresAt }, 201)
  })
}
