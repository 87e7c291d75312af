import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { JOB_SECONDS_BUCKETS } from '@tailor/proto/metrics'
import type { JobMetrics } from './consumer/consume-jobs.ts'

/**
 * The worker's metrics (the only prom-client user of inference): served at GET /metrics on the
 * health port, or by the gateway's /metrics in the embedded mode (one registry per process).
 * The session layer reports run times through a callback and the consumer through the JobMetrics
 * port, so neither imports this.
 */
export interface InferenceMetrics extends JobMetrics {
  readonly registry: Registry
  modelRun(model: string, seconds: number): void
}

/** One model run: a 256 px pose crop on a GPU (~1 ms) to a 4K matting frame on a CPU (seconds). */
const RUN_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const FPS_BUCKETS = [0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 240]

export function createInferenceMetrics(o: {
  registry: Registry
  /** Jobs running now. */
  inFlight: () => number
  /** Execution provider actually in use ('cuda', 'cpu'). */
  provider: () => string
}): InferenceMetrics {
  const registers = [o.registry]
  const jobs = new Counter({
    name: 'tailor_inference_jobs_total',
    help: 'Job deliveries handled by this worker, by kind, status (completed, failed, cancelled, retried, released) and error_code ("" when none).',
    labelNames: ['kind', 'status', 'error_code'] as const,
    registers,
  })
  const jobSeconds = new Histogram({
    name: 'tailor_inference_job_duration_seconds',
    help: 'Wall time of one delivery on this worker (download, inference, encoding, storing the result), by kind and status.',
    labelNames: ['kind', 'status'] as const,
    buckets: JOB_SECONDS_BUCKETS,
    registers,
  })
  const frames = new Counter({
    name: 'tailor_video_frames_total',
    help: 'Video frames of completed remove-background jobs (rate() of it is frames/s over all jobs).',
    registers,
  })
  const fps = new Histogram({
    name: 'tailor_video_frames_per_second',
    help: 'Frames per second of each completed remove-background job, end to end (frames / job wall time).',
    buckets: FPS_BUCKETS,
    registers,
  })
  const runSeconds = new Histogram({
    name: 'tailor_model_run_duration_seconds',
    help: 'Latency of one onnxruntime session run, by model (warm-up runs included).',
    labelNames: ['model'] as const,
    buckets: RUN_SECONDS_BUCKETS,
    registers,
  })
  new Gauge({
    name: 'tailor_inference_jobs_in_flight',
    help: 'Jobs this worker is running now.',
    registers,
    collect() {
      this.set(o.inFlight())
    },
  })
  new Gauge({
    name: 'tailor_inference_execution_provider',
    help: 'The execution provider in use (value 1, provider in the label).',
    labelNames: ['provider'] as const,
    registers,
    collect() {
      this.reset()
      this.set({ provider: o.provider() }, 1)
    },
  })
  return {
    registry: o.registry,
    modelRun: (model, seconds) => runSeconds.observe({ model }, seconds),
    jobFinished: ({ kind, status, errorCode, seconds, frames: n }) => {
      jobs.inc({ kind, status, error_code: errorCode ?? '' })
      jobSeconds.observe({ kind, status }, seconds)
      if (status === 'completed' && kind === 'remove-background' && n !== undefined && n > 0) {
        frames.inc(n)
        if (seconds > 0) fps.observe(n / seconds)
      }
    },
  }
}
