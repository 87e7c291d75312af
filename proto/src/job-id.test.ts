import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { JobEnvelope } from './jobs.ts'
import { jobIdTimeMs, newJobId } from './job-id.ts'

describe('job ids (UUIDv7)', () => {
  it('carries its creation time and the v7 version and variant bits', () => {
    const t = Date.UTC(2026, 10, 23, 21, 30, 0, 123)
    const id = newJobId(t)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(jobIdTimeMs(id)).toBe(t)
    expect(id.slice(0, 13)).toBe('01a20a50-d83b') // 0x01a20a50d83b = t
  })

  it('is strictly increasing within one millisecond and across a clock step back', () => {
    const t = 1_800_000_000_000
    const ids = [newJobId(t), newJobId(t), newJobId(t), newJobId(t - 5_000), newJobId(t + 1)]
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(jobIdTimeMs(newJobId(t - 3_600_000))).toBe(t - 3_600_000) // an explicit older time is taken as given
  })

  it('stays monotonic when the per-millisecond counter runs out', () => {
    const t = 1_900_000_000_000
    const ids = Array.from({ length: 5000 }, () => newJobId(t))
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('is a valid job envelope id; random (v4) and malformed ids have no time', () => {
    const id = newJobId()
    expect(
      JobEnvelope.safeParse({
        id,
        kind: 'try-on',
        params: {
          person_image_url: 'https://example.com/p.jpg',
          garment_image_url: 'https://example.com/g.jpg',
        },
        createdAt: new Date().toISOString(),
      }).success,
    ).toBe(true)
    expect(jobIdTimeMs(randomUUID())).toBeNull()
    expect(jobIdTimeMs('not-an-id')).toBeNull()
    expect(jobIdTimeMs(id.toUpperCase())).toBeNull()
  })
})
