/**
 * Use case: follow a job (gRPC WatchJob). Yields its status now, then every change of status,
 * progress or error, until the job is completed or failed; then ends. Nothing is polled: changes
 * come from the JobWatcher port.
 */
import type { JobKind, JobStatusDocument } from '@tailor/proto'
import { isFinal } from './job-store.ts'
import type { JobWatcher } from './job-watch.ts'
import {
  documentFor,
  expiredStatusDocument,
  getJobStatus,
  type JobStatusDeps,
} from './job-status.ts'
import type { JobScope } from './load-job.ts'

export interface WatchJobDeps extends JobStatusDeps {
  watcher: JobWatcher
}

export interface JobUpdate {
  /** Null when the job's record has expired. */
  kind: JobKind | null
  document: JobStatusDocument
}

/** What a watcher reports a change of (a record rewritten with the same values is not one). */
const changeKey = (d: JobStatusDocument): string =>
  JSON.stringify([d.status, d.progress, d.error?.error_code ?? null, d.result_url !== null])

/**
 * Throws not_found (before yielding anything) for an unknown job or one outside `scope`. Ends when
 * the job is final, when `signal` aborts (the client went away), or when the record is deleted.
 */
export async function* watchJob(
  deps: WatchJobDeps,
  id: string,
  scope: JobScope,
  baseUrl: string,
  signal: AbortSignal,
): AsyncGenerator<JobUpdate> {
  const first = await getJobStatus(deps, id, scope, baseUrl)
  yield { kind: first.kind, document: first.document }
  if (first.record === null || isFinal(first.document.status)) return
  let last = changeKey(first.document)
  for await (const rec of deps.watcher.watch(id, signal)) {
    if (rec === null) {
      // Deleted under us (retention): report it as expired, which is final.
      yield { kind: first.kind, document: expiredStatusDocument(id, null, Date.now()) }
      return
    }
    const document = documentFor(rec, deps, baseUrl)
    const key = changeKey(document)
    if (key !== last) {
      last = key
      yield { kind: rec.kind, document }
    }
    if (isFinal(document.status)) return
  }
}
