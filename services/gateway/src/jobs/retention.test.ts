import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { newJobId } from '@tailor/proto'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { createLogger } from '../logger.ts'
import { createJobEventHandler } from './job-events.ts'
import { envKeyId } from '../access/api-key.ts'
import { openFileJobStore } from './job-store-files.ts'
import type { JobRecord, JobState, JobStore } from './job-store.ts'
import { isExpiredId, isResultExpired, type RetentionPolicy } from './retention.ts'

const KEY = 'retention-test-key-0123-abcdefgh'
/** The env key's id: records are owned by it (a record without an owner is found for no key). */
const KEY_ID = envKeyId(createHash('sha256').update(KEY).digest('hex'))
const SECRET = 'r'.repeat(32)
const H = 3600_000
const policy: RetentionPolicy = {
  resultUrlTtlS: 3600,
  resultRetentionS: 7200,
  resultExpiryMarginS: 300,
  jobRetentionS: 86_400,
}

const completed = (completedAt: string, extra: Partial<JobState> = {}): JobRecord => ({
  id: newJobId(Date.parse(completedAt) - 60_000),
  kind: 'remove-background',
  status: 'completed',
  progress: 1,
  params: {
    video_url: 'https://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
  result: { key: 'remove-background/x.mp4', contentType: 'video/mp4', bytes: 10 },
  error: null,
  attempts: 1,
  createdAt: completedAt,
  updatedAt: completedAt,
  completedAt,
  ownerKeyId: KEY_ID,
  ...extra,
})

describe('retention rules', () => {
  it('hands out result URLs until retention − URL TTL − margin after completion, then calls the result expired', () => {
    const t = Date.parse('2026-11-23T12:00:00.000Z')
    const rec = completed(new Date(t).toISOString())
    expect(isResultExpired(rec, t, policy)).toBe(false)
    expect(isResultExpired(rec, t + 55 * 60_000 - 1, policy)).toBe(false) // last URL expires at 1:55, result deleted at 2:00
    expect(isResultExpired(rec, t + 55 * 60_000, policy)).toBe(true)
    // Records written before completedAt existed count from updatedAt.
    const old = { ...rec, completedAt: undefined, updatedAt: new Date(t - 2 * H).toISOString() }
    expect(isResultExpired(old, t, policy)).toBe(true)
    // Only completed jobs with a result expire this way.
    expect(isResultExpired({ ...rec, status: 'failed', result: null }, t + 10 * H, policy)).toBe(
      false,
    )
  })

  it('tells an id whose record may have expired (UUIDv7 older than JOB_RETENTION_S) from a recent or foreign one', () => {
    const now = Date.now()
    expect(isExpiredId(newJobId(now - 25 * H), now, policy)).toBe(true)
    expect(isExpiredId(newJobId(now - 23 * H), now, policy)).toBe(false)
    expect(isExpiredId('00000000-0000-4000-8000-000000000000', now, policy)).toBe(false) // v4: never expired, just unknown
  })

  it('config: defaults, and refuses a result URL that would outlive its result or a record its result', () => {
    const c = loadConfig({ API_KEYS: KEY, RESULT_URL_SECRET: SECRET })
    expect(c).toMatchObject({
      resultUrlTtlS: 3600,
      resultRetentionS: 7200,
      resultExpiryMarginS: 300,
      jobRetentionS: 86_400,
    })
    expect(() =>
      loadConfig({ API_KEYS: KEY, RESULT_URL_SECRET: SECRET, RESULT_RETENTION_S: '3700' }),
    ).toThrow(/RESULT_RETENTION_S/)
    expect(() =>
      loadConfig({ API_KEYS: KEY, RESULT_URL_SECRET: SECRET, JOB_RETENTION_S: '3600' }),
    ).toThrow(/JOB_RETENTION_S/)
  })
})

describe('polling and cancelling expired jobs (HTTP)', () => {
  let dir: string
  let jobs: JobStore
  let app: ReturnType<typeof createApp>
  const headers = { 'x-api-key': KEY }
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tailor-retention-'))
    jobs = await openFileJobStore(dir)
    app = createApp({
      config: loadConfig({
        API_KEYS: KEY,
        RESULT_URL_SECRET: SECRET,
        PUBLIC_BASE_URL: 'http://tailor.test',
      }),
      logger: createLogger('silent'),
      jobs,
      results: { size: async () => null, open: async () => Promise.reject(new Error('unused')) },
      publisher: { publish: async () => undefined },
      cancel: { cancel: () => undefined },
      health: () => ({ ok: true }),
    })
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('a record past JOB_RETENTION_S: 200 failed job_expired on either kind, cancel 409 job_finished', async () => {
    const createdMs = Date.now() - 25 * H
    const id = newJobId(createdMs)
    for (const path of [`/v1/video/remove-background/job/${id}`, `/v1/try-on/job/${id}`]) {
      const r = await app.request(path, { headers })
      expect(r.status).toBe(200)
      expect(await r.json()).toMatchObject({
        job_id: id,
        status: 'failed',
        result_url: null,
        error: { error_code: 'job_expired', message: expect.stringMatching(/retention/) },
        created_at: new Date(createdMs).toISOString(),
      })
    }
    const c = await app.request(`/v1/video/remove-background/job/${id}/cancel`, {
      method: 'POST',
      headers,
    })
    expect(c.status).toBe(409)
    expect(await c.json()).toMatchObject({ error_code: 'job_finished' })
  })

  it('an unknown recent id, or one that is not UUIDv7, is still 404 not_found', async () => {
    for (const id of [newJobId(Date.now() - 23 * H), '00000000-0000-4000-8000-000000000000']) {
      const r = await app.request(`/v1/video/remove-background/job/${id}`, { headers })
      expect(r.status).toBe(404)
      expect(await r.json()).toMatchObject({ error_code: 'not_found' })
    }
  })

  it('a completed job past its result window: 200 failed job_expired (no URL); within it, completed with a URL', async () => {
    const fresh = completed(new Date(Date.now() - 10 * 60_000).toISOString())
    const stale = completed(new Date(Date.now() - 56 * 60_000).toISOString())
    await jobs.create(fresh)
    await jobs.create(stale)
    const a = await (
      await app.request(`/v1/video/remove-background/job/${fresh.id}`, { headers })
    ).json()
    expect(a).toMatchObject({
      status: 'completed',
      result_url: expect.stringMatching(/^http:\/\/tailor\.test\/results\//),
    })
    const r = await app.request(`/v1/video/remove-background/job/${stale.id}`, { headers })
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({
      job_id: stale.id,
      status: 'failed',
      progress: 1,
      result_url: null,
      error: { error_code: 'job_expired', message: expect.stringMatching(/result has expired/) },
      created_at: stale.createdAt,
    })
    expect(
      (
        await app.request(`/v1/video/remove-background/job/${stale.id}/cancel`, {
          method: 'POST',
          headers,
        })
      ).status,
    ).toBe(409)
  })

  it('the completed event records completedAt, which the window counts from', async () => {
    const id = newJobId()
    const now = new Date().toISOString()
    await jobs.create({
      ...completed(now),
      id,
      status: 'running',
      result: null,
      completedAt: undefined,
    })
    await createJobEventHandler(
      jobs,
      createLogger('silent'),
    )({
      type: 'completed',
      jobId: id,
      resultKey: `remove-background/${id}.mp4`,
      contentType: 'video/mp4',
      bytes: 3,
      frames: 1,
    })
    const rec = await jobs.get(id)
    expect(Date.now() - Date.parse(rec!.completedAt!)).toBeLessThan(60_000)
  })
})
