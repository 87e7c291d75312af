import { describe, expect, it } from 'vitest'
import type { JobRecord, JobStore } from './job-store.ts'
import { withJobMetrics } from './job-store-metrics.ts'

/** A small in-memory JobStore whose update retries `change` once (as a compare-and-set loop does on a conflict). */
function memoryStore(): JobStore & { extra(): string } {
  const recs = new Map<string, JobRecord>()
  return {
    async create(r) {
      recs.set(r.id, r)
    },
    async get(id) {
      return recs.get(id) ?? null
    },
    async update(id, change) {
      const cur = recs.get(id)
      if (cur === undefined) return null
      change(cur) // a lost race: computed, then thrown away
      const next = change(recs.get(id)!)
      if (next === null) return cur
      recs.set(id, next)
      return next
    },
    async listUnfinished() {
      return [...recs.values()].filter((r) => r.status === 'pending' || r.status === 'running')
    },
    async close() {},
    extra: () => 'passes through',
  }
}

const record = (id: string): JobRecord => ({
  id,
  kind: 'remove-background',
  status: 'pending',
  progress: 0,
  params: {
    video_url: 'https://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
  result: null,
  error: null,
  attempts: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
})

describe('withJobMetrics', () => {
  it('counts a job once when created and once when its record turns final, with its duration', async () => {
    const submitted: string[] = []
    const finished: unknown[] = []
    const inner = memoryStore()
    const store = withJobMetrics(inner, {
      jobSubmitted: (k) => submitted.push(k),
      jobFinished: (o) => finished.push(o),
    })
    await store.create(record('a'))
    expect(submitted).toEqual(['remove-background'])
    await store.update('a', (r) => ({
      ...r,
      status: 'running',
      updatedAt: '2026-01-01T00:00:01.000Z',
    }))
    expect(finished).toEqual([])
    const done = (r: JobRecord): JobRecord => ({
      ...r,
      status: 'failed',
      error: { code: 'job_cancelled', message: 'x' },
      updatedAt: '2026-01-01T00:00:07.500Z',
    })
    await store.update('a', done)
    expect(finished).toEqual([
      { kind: 'remove-background', status: 'failed', errorCode: 'job_cancelled', seconds: 7.5 },
    ])
    // Already final: a duplicate event or a second cancel counts nothing.
    await store.update('a', done)
    await store.update('a', () => null)
    await store.update('missing', done)
    expect(finished).toHaveLength(1)
    // Everything else reaches the adapter, methods beyond the port included.
    expect((await store.get('a'))?.status).toBe('failed')
    expect((store as unknown as { extra(): string }).extra()).toBe('passes through')
  })
})
