import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { JobRecord } from '../jobs/job-store.ts'
import { idempotencyStorageKey, requestFingerprint } from './idempotency-key.ts'
import { openFileIdempotencyStore } from './idempotency-store-files.ts'
import type { IdempotencyStore } from './idempotency-store.ts'
import { CLAIM_WAIT_MS, STALE_CLAIM_MS, submitOnce } from './submit-once.ts'

const TTL_MS = 60_000
let dir: string
let store: IdempotencyStore
let records: Map<string, JobRecord>
let submitted: string[]

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
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
})
/** A submission that creates the record after `delayMs` (a slow publish), like submitJob. */
const submit =
  (delayMs = 0) =>
  async (id: string): Promise<JobRecord> => {
    submitted.push(id)
    await new Promise((r) => setTimeout(r, delayMs))
    const rec = record(id)
    records.set(id, rec)
    return rec
  }
const deps = () => ({
  idempotency: store,
  jobs: { get: async (id: string) => records.get(id) ?? null },
})
const req = (key: string, body: unknown) => ({
  scope: 'key-a',
  key,
  fingerprint: requestFingerprint('remove-background', body),
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-idem-'))
  store = await openFileIdempotencyStore(dir, { ttlMs: TTL_MS })
  records = new Map()
  submitted = []
})
afterEach(async () => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

describe('submitOnce', () => {
  it('without a key submits every time', async () => {
    const a = await submitOnce(deps(), null, submit())
    const b = await submitOnce(deps(), null, submit())
    expect(a.job.id).not.toBe(b.job.id)
    expect(a.replayed || b.replayed).toBe(false)
  })

  it('same key and body: the same job, replayed; another API key: a job of its own', async () => {
    const first = await submitOnce(deps(), req('k1', { video_url: 'https://x/v.mp4' }), submit())
    const again = await submitOnce(deps(), req('k1', { video_url: 'https://x/v.mp4' }), submit())
    expect(first.replayed).toBe(false)
    expect(again).toMatchObject({ replayed: true, job: { id: first.job.id } })
    const other = await submitOnce(
      deps(),
      { ...req('k1', { video_url: 'https://x/v.mp4' }), scope: 'key-b' },
      submit(),
    )
    expect(other.job.id).not.toBe(first.job.id)
    expect(submitted).toHaveLength(2)
  })

  it('same key, different body: idempotency_key_reused (and nothing submitted)', async () => {
    await submitOnce(deps(), req('k2', { video_url: 'https://x/a.mp4' }), submit())
    await expect(
      submitOnce(deps(), req('k2', { video_url: 'https://x/b.mp4' }), submit()),
    ).rejects.toMatchObject({ code: 'idempotency_key_reused' })
    expect(submitted).toHaveLength(1)
  })

  it('concurrent requests with one key create exactly one job', async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, () => submitOnce(deps(), req('k3', { a: 1 }), submit(100))),
    )
    expect(submitted).toHaveLength(1)
    expect(new Set(all.map((r) => r.job.id)).size).toBe(1)
    expect(all.filter((r) => !r.replayed)).toHaveLength(1)
  })

  it('a failed submission releases the key, so a retry submits again', async () => {
    const failing = async (id: string): Promise<JobRecord> => {
      submitted.push(id)
      throw new Error('queue down')
    }
    await expect(submitOnce(deps(), req('k4', { a: 1 }), failing)).rejects.toThrow('queue down')
    const retry = await submitOnce(deps(), req('k4', { a: 1 }), submit())
    expect(retry.replayed).toBe(false)
    expect(submitted).toHaveLength(2)
  })

  it('a claim whose job never appears: 409 in use while fresh, taken over once stale', async () => {
    const fp = requestFingerprint('remove-background', { a: 1 })
    const key = idempotencyStorageKey('key-a', 'k5')
    await store.claim(key, {
      jobId: 'lost-job',
      fingerprint: fp,
      createdAt: new Date().toISOString(),
    })
    const t0 = Date.now()
    await expect(submitOnce(deps(), req('k5', { a: 1 }), submit())).rejects.toMatchObject({
      code: 'idempotency_key_in_use',
    })
    expect(Date.now() - t0).toBeGreaterThanOrEqual(CLAIM_WAIT_MS - 50)
    const later = () => Date.now() + STALE_CLAIM_MS + 1000
    const taken = await submitOnce({ ...deps(), now: later }, req('k5', { a: 1 }), submit())
    expect(taken.replayed).toBe(false)
    expect(submitted).toEqual([taken.job.id])
  })
})
