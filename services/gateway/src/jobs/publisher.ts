import type { JobEnvelope } from '@tailor/proto'

/** Port: hands a job to the workers (JetStream stream JOBS distributed; in-process embedded). */
export interface JobPublisher {
  publish(job: JobEnvelope): Promise<void>
}

/** Port: tells whichever worker runs a job to stop it (gRPC stream distributed; in-process embedded). */
export interface CancelNotifier {
  cancel(jobId: string): void
}
