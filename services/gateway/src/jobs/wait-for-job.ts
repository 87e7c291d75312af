import { setTimeout as sleep } from 'node:timers/promises'
import { isFinal, type JobRecord, type JobStore } from './job-store.ts'

/** How often a waiting request re-reads the job record. */
export const WAIT_POLL_MS = 100

/**
 * Use case: wait for a job to end (try-on with wait_for_result). Polls the record until it is
 * final, `timeoutMs` passes or `signal` aborts (the client went away); returns the last record read.
 */
export async function waitForFinal(
  jobs: Pick<JobStore, 'get'>,
  id: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<JobRecord | null> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rec = await jobs.get(id)
    if (rec !== null && isFinal(rec.status)) return rec
    const left = deadline - Date.now()
    if (left <= 0 || signal.aborted) return rec
    await sleep(Math.min(WAIT_POLL_MS, left)).catch(() => undefined)
  }
}
