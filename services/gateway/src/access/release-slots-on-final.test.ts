import { describe, expect, it } from 'vitest'
import { newJobId } from '@tailor/proto'
import type { JobRecord, JobStore } from '../jobs/job-store.ts'
import type { JobSlots } from './job-slots.ts'
import { holdsSlot, releaseSlotsOnFinal, SLOT_RECORD_GRACE_MS } from './release-slots-on-final.ts'

const rec = (id: string, status: JobRecord['status'], ownerKeyId?: string): JobRecord => ({
  id,
  kind: 'remove-background',
  status,
  progress: 0,
  params: {
    video_url: 'https://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
  result: null,
  error: null,
  attempts: 0,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...(ownerKeyId ? { ownerKeyId } : {}),
})

function memoryJobs(records: JobRecord[]): JobStore {
  const m = new Map(records.map((r) => [r.id, r]))
  return {
    create: async (r) => void m.set(r.id, r),
    get: async (id) => m.get(id) ?? null,
    async update(id, change) {
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

describe('releaseSlotsOnFinal', () => {
  it("gives the owner's slot back once, when the record becomes final", async () => {
    const released: string[] = []
    const slots: JobSlots = {
      acquire: async () => ({ admitted: true, active: 0 }),
      release: async (k, id) => void released.push(`${k}/${id}`),
      close: async () => undefined,
    }
    const jobs = releaseSlotsOnFinal(
      memoryJobs([rec('a', 'pending', 'key_1'), rec('b', 'pending')]),
      slots,
      (err) => {
        throw err
      },
    )
    await jobs.update('a', (r) => ({ ...r, status: 'running' }))
    expect(released).toEqual([])
    await jobs.update('a', (r) => ({ ...r, status: 'completed' }))
    await jobs.update('a', (r) => ({ ...r, status: 'failed' })) // final → final: not a new release
    await jobs.update('b', (r) => ({ ...r, status: 'failed' })) // no owner
    expect(released).toEqual(['key_1/a'])
  })
})

describe('holdsSlot', () => {
  it('a pending or running record holds its slot; a final or missing one does not, except just after submission', async () => {
    const young = newJobId()
    let now = Date.now()
    const check = holdsSlot(
      memoryJobs([
        rec('p', 'pending'),
        rec('r', 'running'),
        rec('c', 'completed'),
        rec('f', 'failed'),
      ]),
      () => now,
    )
    expect(await Promise.all(['p', 'r', 'c', 'f'].map(check))).toEqual([true, true, false, false])
    expect(await check(young)).toBe(true) // its slot was taken, its record is being written
    now += SLOT_RECORD_GRACE_MS + 1
    expect(await check(young)).toBe(false) // expired (retention) or never written
    expect(await check('not-a-uuid')).toBe(false)
  })
})
