import { RetentionPolicy, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream'
import { STREAM } from '../jobs.ts'

/**
 * The JOBS stream, defined once and created by whichever service starts first (the gateway's
 * publisher, inference's job source): a work queue over `jobs.>` with a 2-minute de-duplication
 * window for msgID = job id. A separate entry point (`@tailor/proto/jetstream`) so code that
 * imports `@tailor/proto` never loads NATS.
 */
export const JOBS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: STREAM,
  subjects: ['jobs.>'],
  retention: RetentionPolicy.Workqueue,
  duplicate_window: 120_000_000_000,
}

/** Creates the JOBS stream if missing (idempotent; safe when the other service creates it meanwhile). */
export async function ensureJobsStream(jsm: JetStreamManager): Promise<void> {
  try {
    await jsm.streams.info(STREAM)
  } catch {
    try {
      await jsm.streams.add(JOBS_STREAM_CONFIG)
    } catch (err) {
      await jsm.streams.info(STREAM).catch(() => Promise.reject(err)) // created meanwhile by the other service
    }
  }
}
