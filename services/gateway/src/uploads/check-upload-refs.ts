import { AppError, looksLikeUploadUrl, parseUploadUrl } from '@tailor/proto'
import type { UploadStore } from './upload-store.ts'

/**
 * At submission: every input given as `tailor://uploads/<id>` must name an upload that exists, has
 * not expired and was made with the caller's own API key; otherwise the job is refused with
 * `invalid_parameter` (no record is created). Other URLs pass through untouched.
 */
export async function checkUploadRefs(
  uploads: UploadStore | undefined,
  inputs: Record<string, string>,
  callerKeyId: string,
): Promise<void> {
  for (const [field, url] of Object.entries(inputs)) {
    if (!looksLikeUploadUrl(url)) continue
    const id = parseUploadUrl(url)
    if (id === null) {
      throw new AppError(
        'invalid_parameter',
        `${field} must be tailor://uploads/<upload_id> as answered by POST /v1/uploads; got ${JSON.stringify(url.slice(0, 80))}.`,
      )
    }
    const meta = uploads === undefined ? null : await uploads.info(id)
    if (meta === null) {
      throw new AppError(
        'invalid_parameter',
        `${field} names upload ${id}, which does not exist or has expired (uploads are kept 1 hour): upload the file again.`,
      )
    }
    if (meta.ownerKeyId !== callerKeyId) {
      throw new AppError(
        'invalid_parameter',
        `${field} names upload ${id}, which was made with another API key: only the key that uploaded a file may use it.`,
      )
    }
  }
}
