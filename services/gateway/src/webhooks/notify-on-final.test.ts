import { describe, expect, it } from 'vitest'
import type { JobRecord, JobStore } from '../jobs/job-store.ts'
import { notifyOnFinal } from './notify-on-final.ts'
import type { WebhookDelivery, WebhookQueue } from './webhook-queue.ts'

function memoryStore(): JobStore {
  const m = new Map<string, JobRecord>()
  return {
    create: async (r) => void m.set(r.id, r),
    get: async (id) => m.get(id) ?? null,
    update: async (id, change) => {
      const cur = m.get(id)
      if (cur === undefined) return null
      const next = change(cur)
      if (next === null) return cur
      m.set(id, next)
      return next
    },
    listUnfinished: async () =>
      [...m.values()].filter((r) => r.status === 'pending' || r.status === 'running'),
    close: async () => undefined,
  }
}
const queued: WebhookDelivery[] = []
const queue: WebhookQueue = {
  enqueue: async (d) => void queued.push(d),
  start: () => undefined,
  close: async () => undefined,
}
const rec = (id: string, webhook = true): JobRecord => ({
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
  createdAt: '2026-11-23T12:00:00.000Z',
  updatedAt: '2026-11-23T12:00:00.000Z',
  ...(webhook
    ? { webhook: { url: 'https://hooks.example.com/', resultBaseUrl: 'https://t.example.com' } }
    : {}),
})

describe('notifyOnFinal', () => {
  it('queues a webhook when, and only when, a record becomes final', async () => {
    queued.length = 0
    const jobs = notifyOnFinal(memoryStore(), queue)
    await jobs.create(rec('a'))
    await jobs.update('a', (r) => ({ ...r, status: 'running' }))
    expect(queued).toHaveLength(0)
    await jobs.update('a', (r) => ({
      ...r,
      status: 'failed',
      error: { code: 'job_cancelled', message: 'Cancelled.' },
    }))
    expect(queued.map((d) => [d.jobId, d.status, d.error?.code])).toEqual([
      ['a', 'failed', 'job_cancelled'],
    ])
    await jobs.update('a', (r) => ({ ...r, progress: 1 })) // already final: no second webhook
    await jobs.update('a', () => null)
    expect(queued).toHaveLength(1)
    await jobs.create(rec('b', false))
    await jobs.update('b', (r) => ({
      ...r,
      status: 'completed',
      result: { key: 'k', contentType: 'video/mp4', bytes: 1 },
    }))
    expect(queued).toHaveLength(1) // no webhook_url, no webhook
    await jobs.requeue((await jobs.get('a'))!)
    expect(queued).toHaveLength(2) // the queue de-duplicates on webhook-id
    expect(queued[1]!.webhookId).toBe(queued[0]!.webhookId)
  })
})
