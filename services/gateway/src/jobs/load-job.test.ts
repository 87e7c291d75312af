import { describe, expect, it } from 'vitest'
import type { JobRecord } from './job-store.ts'
import { ownedBy } from './load-job.ts'

const rec = (ownerKeyId?: string): JobRecord => ({
  id: '0190f3a0-0000-7000-8000-00000000000a',
  kind: 'remove-background',
  params: {
    video_url: 'https://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
  status: 'pending',
  progress: 0,
  result: null,
  error: null,
  attempts: 0,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...(ownerKeyId === undefined ? {} : { ownerKeyId }),
})

describe('ownedBy: only the owner sees a job', () => {
  it('the owner yes, another key no', () => {
    expect(ownedBy(rec('key_a'), 'key_a')).toBe(true)
    expect(ownedBy(rec('key_a'), 'key_b')).toBe(false)
  })
  it('a record without an owner is not found for every key (not visible to all)', () => {
    expect(ownedBy(rec(), 'key_a')).toBe(false)
    expect(ownedBy(rec(), 'key_b')).toBe(false)
  })
})
