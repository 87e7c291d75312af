import type { JobStatusDocument } from '@tailor/client'

/**
 * The progress bar's label for a status document: the percentage while running, else the status;
 * a job run again (its worker died, or a retryable error) says so, since its progress went back to 0.
 */
export function progressLabel(
  d: Pick<JobStatusDocument, 'status' | 'progress' | 'attempt'>,
): string {
  const base = d.status === 'running' ? `${Math.round(d.progress * 100)} %` : d.status
  return d.attempt > 1 ? `${base} (attempt ${d.attempt}: started again)` : base
}
