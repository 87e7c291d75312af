import type { ErrorCode, JobStatus, JobSubmission } from '@tailor/proto'

/** A job's record: its kind and parameters (one definition, proto/src/jobs.ts) and its state. */
export type JobRecord = JobSubmission & JobState

export interface JobState {
  id: string
  status: JobStatus
  /** 0–1 from frames done. */
  progress: number
  result: { key: string; contentType: string; bytes: number } | null
  error: { code: ErrorCode; message: string } | null
  /** Deliveries that reached inference (1 on the first). */
  attempts: number
  createdAt: string
  updatedAt: string
  /** When the job completed (set with the result; retention of the result counts from it). */
  completedAt?: string
  /** Id of the API key that submitted the job (access/): only that key sees or cancels it, and it holds one of the key's job slots until final. */
  ownerKeyId?: string
  /** The request's webhook_url, and the origin its result_url is built on (webhooks/). */
  webhook?: JobWebhook
}

export interface JobWebhook {
  url: string
  resultBaseUrl: string
}

/**
 * Port: where job records live (JetStream KV `jobs` distributed; files in the data dir embedded).
 * `update` is a compare-and-set loop: `change` returns the new record, or null for "no change".
 */
export interface JobStore {
  create(record: JobRecord): Promise<void>
  get(id: string): Promise<JobRecord | null>
  update(id: string, change: (current: JobRecord) => JobRecord | null): Promise<JobRecord | null>
  /** Records still pending or running (used by the embedded mode to requeue after a restart). */
  listUnfinished(): Promise<JobRecord[]>
  close(): Promise<void>
}

export const isFinal = (s: JobStatus): boolean => s === 'completed' || s === 'failed'
