import { parseUploadUrl } from '@tailor/proto'
import type { UploadSource } from './upload-source.ts'

export type FetchToFile = (url: string, dest: string, signal: AbortSignal) => Promise<unknown>

/**
 * One fetchInput for the use cases: `tailor://uploads/<id>` is read from upload storage with the
 * same byte limit as a download (`maxBytes`); anything else goes to `download` (@tailor/proto/net
 * safeFetchToFile). Format checks happen after, on the local file, whichever way it came.
 */
export function createInputFetcher(
  download: FetchToFile,
  uploads: UploadSource,
  maxBytes: number,
): FetchToFile {
  return async (url, dest, signal) => {
    const id = parseUploadUrl(url)
    if (id === null) return download(url, dest, signal)
    return uploads.read(id, dest, maxBytes, signal)
  }
}
