import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { JOB_SECONDS_BUCKETS } from '@tailor/proto/metrics'
import type { ErrorCode, JobKind } from '@tailor/proto'

/**
 * The gateway's metrics (the only prom-client user of the gateway). Served at GET /metrics in the
 * Prometheus text format. Label values are bounded: routes are Hono's route patterns (never raw
 * paths), kinds and error codes come from closed vocabularies.
 */
export interface GatewayMetrics {
  readonly registry: Registry
  httpRequest(o: { method: string; route: string; status: number; seconds: number }): void
  jobSubmitted(kind: JobKind): void
  jobFinished(o: {
    kind: JobKind
    status: 'completed' | 'failed'
    errorCode: ErrorCode | null
    seconds: number
  }): void
}

const HTTP_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

export function createGatewayMetrics(o: {
  registry: Registry
  /** Jobs waiting for a worker (JetStream consumer num_pending; the in-process queue's length). */
  queueDepth?: () => Promise<number | null>
}): GatewayMetrics {
  const registers = [o.registry]
  const httpRequests = new Counter({
    name: 'tailor_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  })
  const httpSeconds = new Histogram({
    name: 'tailor_http_request_duration_seconds',
    help: 'HTTP request latency until the response is handed to the server (streamed bodies excluded), by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_SECONDS_BUCKETS,
    registers,
  })
  const submitted = new Counter({
    name: 'tailor_jobs_submitted_total',
    help: 'Jobs created (records written and handed to the queue), by kind.',
    labelNames: ['kind'] as const,
    registers,
  })
  const finished = new Counter({
    name: 'tailor_jobs_finished_total',
    help: 'Jobs that reached a final status, by kind, status (completed, failed) and error_code ("" when completed).',
    labelNames: ['kind', 'status', 'error_code'] as const,
    registers,
  })
  const jobSeconds = new Histogram({
    name: 'tailor_job_duration_seconds',
    help: 'Time from job creation to its final status (queue wait included), by kind and status.',
    labelNames: ['kind', 'status'] as const,
    buckets: JOB_SECONDS_BUCKETS,
    registers,
  })
  if (o.queueDepth !== undefined) {
    const depth = o.queueDepth
    new Gauge({
      name: 'tailor_queue_depth',
      help: 'Jobs waiting for a worker (JetStream consumer num_pending; embedded: the in-process queue length).',
      registers,
      async collect() {
        const n = await depth().catch(() => null)
        if (n !== null) this.set(n)
      },
    })
  }
  return {
    registry: o.registry,
    httpRequest: ({ method, route, status, seconds }) => {
      const labels = { method, route, status: String(status) }
      httpRequests.inc(labels)
      httpSeconds.observe(labels, seconds)
    },
    jobSubmitted: (kind) => submitted.inc({ kind }),
    jobFinished: ({ kind, status, errorCode, seconds }) => {
      finished.inc({ kind, status, error_code: errorCode ?? '' })
      jobSeconds.observe({ kind, status }, Number.isFinite(seconds) ? Math.max(0, seconds) : 0)
    },
  }
}
