/**
 * Use case: submit a job. Validated parameters become a pending job record, then a job message for
 * the workers. Both edges call it (HTTP routes, the internal gRPC API), so a job means the same
 * whichever way it came in.
 */
import {
  AppError,
  jobEnvelope,
  newJobId,
  type JobSubmission,
  type RemoveBackgroundBody,
  type RemoveBackgroundParams,
  type TryOnBody,
  type TryOnParams,
} from '@tailor/proto'
import type { Principal } from '../access/access-control.ts'
import type { JobSlots } from '../access/job-slots.ts'
import { RateLimitError } from '../access/rate-limit-error.ts'
import type { JobPublisher } from './publisher.ts'
import type { JobRecord, JobStore, JobWebhook } from './job-store.ts'

export interface SubmitJobDeps {
  jobs: JobStore
  publisher: JobPublisher
  /** Per-key concurrent-job slots (access/job-slots.ts); absent: no cap. */
  slots?: JobSlots
}

/** Retry-After of a submission refused at the concurrent-job cap: jobs take seconds to minutes. */
export const JOB_CAP_RETRY_AFTER_S = 5

export type { JobSubmission } from '@tailor/proto'
export type TryOnSubmission = { kind: 'try-on'; params: TryOnParams }
export type RemoveBackgroundSubmission = {
  kind: 'remove-background'
  params: RemoveBackgroundParams
}

export const tryOnSubmission = (body: TryOnBody): TryOnSubmission => ({
  kind: 'try-on',
  params: {
    person_image_url: body.person_image_url,
    garment_image_url: body.garment_image_url,
    garment_mode: body.garment_mode ?? 'auto',
    garment_photo_type: body.garment_photo_type,
    preprocess_garment: body.preprocess_garment,
    remove_background: body.remove_background,
  },
})

export const removeBackgroundSubmission = (
  body: RemoveBackgroundBody,
): RemoveBackgroundSubmission => ({
  kind: 'remove-background',
  params: {
    video_url: body.video_url,
    background_color: body.background_color,
    output_format: body.output_format,
  },
})

export interface SubmitOptions {
  /** The job id (an Idempotency-Key claim picks it first: idempotency/submit-once.ts); default a new one. */
  id?: string
  /** Called when the job becomes final (webhooks/webhook-request.ts checks it first). */
  webhook?: JobWebhook
  /** The submitting key: it owns the job (only it sees or cancels it) and the job takes one of its slots. */
  owner?: Principal
}

/**
 * Creates the pending record and publishes the job. When publishing fails the record is marked
 * failed (service_unavailable) and the publisher's error is rethrown.
 */
export async function submitJob(
  deps: SubmitJobDeps,
  job: JobSubmission,
  o: SubmitOptions = {},
): Promise<JobRecord> {
  const now = new Date().toISOString()
  const rec: JobRecord = {
    id: o.id ?? newJobId(),
    ...copyOf(job),
    status: 'pending',
    progress: 0,
    result: null,
    error: null,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    ...(o.webhook ? { webhook: o.webhook } : {}),
    ...(o.owner ? { ownerKeyId: o.owner.keyId } : {}),
  }
  const owner = o.owner
  if (owner !== undefined && owner.creditsRemaining !== null && owner.creditsRemaining <= 0) {
    throw new AppError(
      'insufficient_api_credits',
      'This API key has no credits left (GET /v1/credits); a job is charged one credit when it completes. Ask the operator for more.',
    )
  }
  if (owner !== undefined && deps.slots !== undefined) {
    // The slot is given back when the record becomes final (access/release-slots-on-final.ts).
    const { admitted } = await deps.slots.acquire(owner.keyId, rec.id, owner.maxConcurrentJobs)
    if (!admitted) {
      throw new RateLimitError(
        `This API key already has ${owner.maxConcurrentJobs} jobs pending or running, its limit; submit again when one has finished (retry in ${JOB_CAP_RETRY_AFTER_S} s).`,
        JOB_CAP_RETRY_AFTER_S,
      )
    }
    try {
      await deps.jobs.create(rec)
    } catch (err) {
      await deps.slots.release(owner.keyId, rec.id).catch(() => undefined) // the error that matters is the create's
      throw err
    }
  } else {
    await deps.jobs.create(rec)
  }
  const envelope = jobEnvelope(rec.id, job, now)
  try {
    await deps.publisher.publish(envelope)
  } catch (err) {
    // The store may be down too (NATS outage): the publisher's error is the one the client needs.
    await deps.jobs
      .update(rec.id, (r) => ({
        ...r,
        status: 'failed',
        error: { code: 'service_unavailable', message: 'The job could not be queued.' },
        updatedAt: new Date().toISOString(),
      }))
      .catch(() => null)
    throw err
  }
  return rec
}

const copyOf = (job: JobSubmission): JobSubmission =>
  job.kind === 'try-on'
    ? { kind: 'try-on', params: { ...job.params } }
    : { kind: 'remove-background', params: { ...job.params } }
