import type { JobEvent, JobEventAck } from '@tailor/proto'

/** Port: where job events go (gRPC stream to the gateway distributed; a function call embedded). */
export interface JobEventSink {
  /** Resolves with the gateway's answer once the event is acknowledged; rejects after `timeoutMs`. */
  send(e: JobEvent, timeoutMs: number): Promise<JobEventAck>
  /** Called when the gateway asks to stop a job. */
  onCancel(listener: (jobId: string) => void): void
  close(): Promise<void>
}
