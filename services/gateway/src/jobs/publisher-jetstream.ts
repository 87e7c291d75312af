import { jetstream, jetstreamManager, RetentionPolicy, type JetStreamClient } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError, JOBS_STREAM_CONFIG, STREAM, subjectFor } from '@tailor/proto'
import type { JobPublisher } from './publisher.ts'

/** Creates the JOBS work-queue stream if missing (idempotent; inference does the same). */
export async function ensureJobsStream(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc)
  try {
    await jsm.streams.info(STREAM)
  } catch {
    try {
      await jsm.streams.add({ ...JOBS_STREAM_CONFIG, subjects: [...JOBS_STREAM_CONFIG.subjects], retention: RetentionPolicy.Workqueue })
    } catch (err) {
      await jsm.streams.info(STREAM).catch(() => Promise.reject(err)) // created meanwhile by the other service
    }
  }
}

/** Adapter: publish to `jobs.<kind>.v1` with msgID = job id (JetStream de-duplicates retries). */
export async function openJetStreamPublisher(nc: NatsConnection): Promise<JobPublisher> {
  await ensureJobsStream(nc)
  const js: JetStreamClient = jetstream(nc)
  return {
    async publish(job) {
      try {
        await js.publish(subjectFor(job.kind), JSON.stringify(job), { msgID: job.id })
      } catch (err) {
        throw new AppError('service_unavailable', 'the job queue is unavailable; try again shortly', { cause: err, retryable: true })
      }
    },
  }
}
