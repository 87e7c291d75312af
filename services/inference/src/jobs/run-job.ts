import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  AppError,
  OUTPUT_FORMAT_SPECS,
  type JobEnvelope,
  type JobOutcome,
  type OutputFormat,
} from '@tailor/proto'
import type { ResultStore } from '../results/result-store.ts'
import { fetchField } from './input-field.ts'
import { runTryOnJob, tryOnResultKey, type TryOnJobDeps } from './try-on.ts'

/** What the remove-background pipeline needs from one job (jobs/remove-background.ts). */
export interface RemoveBackgroundCall {
  (
    req: {
      inputPath: string
      workDir: string
      backgroundColor: string
      outputFormat: OutputFormat
    },
    ctx: { signal: AbortSignal; onProgress: (framesDone: number, framesTotal: number) => void },
  ): Promise<{ outputPath: string; contentType: string; bytes: number; frames: number }>
}

export interface RunJobDeps {
  /** Downloads a video_url to a local file (@tailor/proto/net safeFetchToFile with the configured limits). */
  fetchInput(url: string, dest: string, signal: AbortSignal): Promise<unknown>
  /** The remove-background pipeline; absent when this worker runs only try-on (JOB_KINDS). */
  removeBackground?: RemoveBackgroundCall
  results: ResultStore
  /** Each job works in its own fresh subdirectory of this, removed when the job ends. */
  workRoot: string
  /** The try-on pipeline (jobs/try-on.ts); absent when this worker has no try-on engine. */
  tryOn?: TryOnJobDeps
}

/**
 * Why an aborted job stopped: the consumer aborts with AppError `request_timeout` when the job ran
 * past its limit; any other reason (client cancel, shutdown) is `job_cancelled`.
 */
export function abortedOutcome(signal: AbortSignal): JobOutcome {
  const r: unknown = signal.reason
  if (r instanceof AppError && r.code === 'request_timeout') {
    return { status: 'failed', code: r.code, message: r.message }
  }
  return { status: 'failed', code: 'job_cancelled', message: 'The job was cancelled.' }
}

export const resultKeyFor = (jobId: string, format: OutputFormat): string =>
  `remove-background/${jobId}.${OUTPUT_FORMAT_SPECS[format].extension}`

/**
 * Use case: fetch → pipeline → store. Returns the outcome it expects (including a failure with a
 * public error code); throws retryable errors and bugs for the consumer loop to decide on.
 * Nothing is left in the work directory, whatever happens.
 */
export async function runJob(
  job: JobEnvelope,
  ctx: { signal: AbortSignal; onProgress: (framesDone: number, framesTotal: number) => void },
  deps: RunJobDeps,
): Promise<JobOutcome & { frames?: number }> {
  if (job.kind === 'try-on' && deps.tryOn === undefined) {
    return {
      status: 'failed',
      code: 'service_unavailable',
      message: 'This worker has no try-on engine.',
    }
  }
  if (job.kind === 'remove-background' && deps.removeBackground === undefined) {
    return {
      status: 'failed',
      code: 'service_unavailable',
      message: 'This worker does not run remove-background jobs.',
    }
  }
  await mkdir(deps.workRoot, { recursive: true })
  const workDir = await mkdtemp(join(deps.workRoot, `${job.id}-`))
  try {
    if (job.kind === 'try-on') {
      const r = await runTryOnJob(job, workDir, ctx.signal, deps.tryOn!)
      if (ctx.signal.aborted) throw new AppError('job_cancelled', 'The job was cancelled.')
      const key = tryOnResultKey(job.id)
      const stored = await deps.results.put(key, r.outputPath, r.contentType)
      return {
        status: 'succeeded',
        resultKey: key,
        contentType: r.contentType,
        bytes: stored.bytes,
      }
    }
    const inputPath = join(workDir, 'input')
    await fetchField('video_url', () =>
      deps.fetchInput(job.params.video_url, inputPath, ctx.signal),
    )
    const r = await deps.removeBackground!(
      {
        inputPath,
        workDir,
        backgroundColor: job.params.background_color,
        outputFormat: job.params.output_format,
      },
      ctx,
    )
    if (ctx.signal.aborted) throw new AppError('job_cancelled', 'The job was cancelled.')
    const key = resultKeyFor(job.id, job.params.output_format)
    const stored = await deps.results.put(key, r.outputPath, r.contentType)
    return {
      status: 'succeeded',
      resultKey: key,
      contentType: r.contentType,
      bytes: stored.bytes,
      frames: r.frames,
    }
  } catch (err) {
    if (ctx.signal.aborted) return abortedOutcome(ctx.signal)
    if (err instanceof AppError && !err.retryable) {
      return { status: 'failed', code: err.code, message: err.message }
    }
    throw err
  } finally {
    await rm(workDir, { recursive: true, force: true })
  }
}
