import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError, subjectFor } from '@tailor/proto'
import { ensureJobsStream } from '@tailor/proto/jetstream'
import type { JobPublisher } from './publisher.ts'

/** Adapter: publish to `jobs.<kind>.v1` with msgID = job id (JetStream de-duplicates retries). */
export async function openJetStreamPublisher(nc: NatsConnection): Promise<JobPublisher> {
  await ensureJobsStream(await jetstreamManager(nc))
  const js: JetStreamClient = jetstream(nc)
  return {
    async publish(job) {
      try {
        await js.publish(subjectFor(job.kind), JSON.stringify(job), { msgID: job.id })
      } catch (err) {
        throw new AppError(
          'service_unavailable',
          'the job queue is unavailable; try again shortly',
          { cause: err, retryable: true },
        )
      }
    },
  }
}
