import { collectDefaultMetrics, Registry } from 'prom-client'

/**
 * The metrics registry set-up, once for both services: one registry per process with the process
 * metrics (CPU, memory, event-loop lag, GC); the embedded mode shares one between the gateway and
 * its worker. Each service defines its own metrics on it (services/{gateway,inference}/src/metrics.ts).
 * A separate entry point (`@tailor/proto/metrics`) so `@tailor/proto` never loads prom-client.
 */
export type MetricsRegistry = Registry

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}

/** Job durations span a 1 s try-on to a 60 s clip on a CPU (minutes): both services' job histograms. */
export const JOB_SECONDS_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200]
