/**
 * Use case: a submission with an Idempotency-Key creates at most one job per (API key, header
 * value) for IDEMPOTENCY_TTL_S. Used by every edge that submits jobs (HTTP routes, gRPC API).
 *
 *   first request         claims the key for a fresh job id, then submits under that id
 *   same key, same body   the job of the first request (`replayed`), once its record exists
 *   same key, other body  422 idempotency_key_reused
 *   first still creating  the record is awaited up to CLAIM_WAIT_MS, then 409 idempotency_key_in_use
 *   first died before     a claim older than STALE_CLAIM_MS with no job record is taken over
 *   creating its job      (compare-and-set) and the job is submitted under a new id
 *   submission failed     the claim is released, so a retry with the key submits again
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { AppError, newJobId } from '@tailor/proto'
import type { JobRecord, JobStore } from '../jobs/job-store.ts'
import type { IdempotencyStore } from './idempotency-store.ts'
import { IDEMPOTENCY_KEY_HEADER, idempotencyStorageKey } from './idempotency-key.ts'

export const CLAIM_WAIT_MS = 2_000
export const STALE_CLAIM_MS = 30_000
const POLL_MS = 25
const ROUNDS = 3

export interface SubmitOnceDeps {
  /** Absent (an app built without one): a request with a key answers service_unavailable. */
  idempotency?: IdempotencyStore
  jobs: Pick<JobStore, 'get'>
  now?: () => number
}

/** The caller's Idempotency-Key, the API key it is scoped to, and the request's fingerprint. */
export interface IdempotentRequest {
  scope: string
  key: string
  fingerprint: string
}

export interface SubmitOnceResult {
  job: JobRecord
  /** True when an earlier request with this key created the job. */
  replayed: boolean
}

/** `submit(jobId)` creates and queues the job under the given id and returns its record. */
export async function submitOnce(
  deps: SubmitOnceDeps,
  req: IdempotentRequest | null,
  submit: (jobId: string) => Promise<JobRecord>,
): Promise<SubmitOnceResult> {
  if (req === null) return { job: await submit(newJobId()), replayed: false }
  const store = deps.idempotency
  if (store === undefined) {
    throw new AppError(
      'service_unavailable',
      `${IDEMPOTENCY_KEY_HEADER} is not available on this server.`,
    )
  }
  const now = deps.now ?? Date.now
  const key = idempotencyStorageKey(req.scope, req.key)
  const submitClaimed = async (jobId: string): Promise<SubmitOnceResult> => {
    try {
      return { job: await submit(jobId), replayed: false }
    } catch (err) {
      await store.release(key, jobId).catch(() => undefined)
      throw err
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    const mine = {
      jobId: newJobId(),
      fingerprint: req.fingerprint,
      createdAt: new Date(now()).toISOString(),
    }
    const found = await store.claim(key, mine)
    if (found === null) return submitClaimed(mine.jobId)
    if (found.fingerprint !== req.fingerprint) {
      throw new AppError(
        'idempotency_key_reused',
        `This ${IDEMPOTENCY_KEY_HEADER} was already used with a different request body (job ${found.jobId}); use a new key for a new request.`,
      )
    }
    const deadline = now() + CLAIM_WAIT_MS
    for (;;) {
      const job = await deps.jobs.get(found.jobId)
      if (job !== null) return { job, replayed: true }
      if (now() >= deadline) break
      await sleep(POLL_MS)
    }
    if (now() - Date.parse(found.createdAt) < STALE_CLAIM_MS) {
      throw new AppError(
        'idempotency_key_in_use',
        `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry in a few seconds.`,
        { retryable: true },
      )
    }
    // The request that claimed the key never created its job (its gateway stopped): take over.
    if (await store.replace(key, found, mine)) return submitClaimed(mine.jobId)
  }
  throw new AppError(
    'idempotency_key_in_use',
    `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry in a few seconds.`,
    { retryable: true },
  )
}
