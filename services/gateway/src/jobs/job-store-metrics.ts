import type { GatewayMetrics } from '../metrics.ts'
import { isFinal, type JobRecord, type JobStore } from './job-store.ts'

/**
 * Decorates a JobStore so that every job counts once when created and once when its record turns
 * final, whichever path did it (inference events, cancel, a failure at publish): the records are
 * the single source of truth for job status, so the metrics follow them rather than the edges.
 * Every other method passes through untouched (adapters may have more than the port).
 */
export function withJobMetrics(
  store: JobStore,
  metrics: Pick<GatewayMetrics, 'jobSubmitted' | 'jobFinished'>,
): JobStore {
  const create: JobStore['create'] = async (record) => {
    await store.create(record)
    metrics.jobSubmitted(record.kind)
  }
  const update: JobStore['update'] = async (id, change) => {
    // `change` may run more than once (compare-and-set retries): only the last run counts.
    let turnedFinal: JobRecord | null = null
    const rec = await store.update(id, (current) => {
      const next = change(current)
      turnedFinal = next !== null && !isFinal(current.status) && isFinal(next.status) ? next : null
      return next
    })
    const done = turnedFinal as JobRecord | null
    if (
      rec !== null &&
      done !== null &&
      (done.status === 'completed' || done.status === 'failed')
    ) {
      metrics.jobFinished({
        kind: done.kind,
        status: done.status,
        errorCode: done.error?.code ?? null,
        seconds: (Date.parse(done.updatedAt) - Date.parse(done.createdAt)) / 1000,
      })
    }
    return rec
  }
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'create') return create
      if (prop === 'update') return update
      const v: unknown = Reflect.get(target, prop, target)
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
}
