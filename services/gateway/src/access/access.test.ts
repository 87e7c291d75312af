/**
 * The HTTP edge of access control (middleware/api-key.ts, the submit use case, job ownership)
 * through `app.request`, with the real adapters of the embedded mode: the data-dir key store, the
 * in-memory rate budget and slot lists, the file job store.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import type { JobStore } from '../jobs/job-store.ts'
import { createLogger } from '../logger.ts'
import type { ResultReader } from '../results/result-reader.ts'
import { openKeyAccessControl, type KeyAccessControl } from './access-control-keys.ts'
import { generateApiKey } from './api-key.ts'
import { createJobSlots, createMemorySlotListStore } from './job-slots.ts'
import { openFileKeyStore } from './key-store-files.ts'
import { createMemoryRateBudget } from './rate-budget.ts'
import { RateLimiter } from './rate-limiter.ts'
import { holdsSlot, releaseSlotsOnFinal } from './release-slots-on-final.ts'

const ENV_KEY = 'env-key-0123456789-abcdefghijklm'
const config = loadConfig({
  API_KEYS: ENV_KEY,
  RESULT_URL_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'http://tailor.test',
})
const logger = createLogger('silent')
const results: ResultReader = {
  size: async () => null,
  open: async () => {
    throw new Error('no results here')
  },
}
/** Long enough for a poll of the key file (250 ms) to see a change, with room for a loaded machine. */
const KEY_CHANGE_WAIT_MS = 1_000

let dir: string
let jobs: JobStore
let access: KeyAccessControl
let app: ReturnType<typeof createApp>
let keys: ReturnType<typeof openFileKeyStore>
let now: number

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-access-'))
  now = Date.parse('2026-01-01T00:00:00Z')
  keys = openFileKeyStore(dir, { pollMs: 50 })
  const limiter = new RateLimiter(createMemoryRateBudget(), { now: () => now })
  access = await openKeyAccessControl({
    keys,
    envHashes: config.apiKeyHashes,
    limits: { rateLimitPerS: config.rateLimitPerS, maxConcurrentJobs: config.maxConcurrentJobs },
    limiter,
  })
  const files = await openFileJobStore(join(dir, 'jobs'))
  const slots = createJobSlots(createMemorySlotListStore(), holdsSlot(files))
  jobs = releaseSlotsOnFinal(files, slots, (err) => {
    throw err
  })
  app = createApp({
    config,
    logger,
    jobs,
    results,
    access,
    slots,
    publisher: { publish: async () => undefined },
    cancel: { cancel: () => undefined },
    health: () => ({ ok: true }),
  })
})
afterEach(async () => {
  await access.close()
  await rm(dir, { recursive: true, force: true })
})

const submit = (key: string) =>
  app.request('/v1/video/remove-background', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ video_url: 'https://cdn.example.com/clip.mp4' }),
  })
const poll = (key: string, id: string) =>
  app.request(`/v1/video/remove-background/job/${id}`, { headers: { 'x-api-key': key } })
const cancel = (key: string, id: string) =>
  app.request(`/v1/video/remove-background/job/${id}/cancel`, {
    method: 'POST',
    headers: { 'x-api-key': key },
  })

async function newKey(
  o: { rateLimitPerS?: number; maxConcurrentJobs?: number } = {},
): Promise<string> {
  const { key, record } = generateApiKey({ name: 'test', ...o })
  await keys.create(record)
  await waitFor(async () => (await access.authenticate(key)) !== null)
  return key
}

async function waitFor(cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + KEY_CHANGE_WAIT_MS
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('webhook signing secrets by owner', () => {
  it("a stored key's own secret (and its previous one during the overlap); environment keys and ownerless deliveries: the fallback; a vanished stored key: none", async () => {
    const { key, record, webhookSecret } = generateApiKey({ name: 'hooks' })
    await keys.create(record)
    await waitFor(async () => (await access.authenticate(key)) !== null)
    const fallback = [Buffer.alloc(32, 9)]
    const own = Buffer.from(webhookSecret.slice('whsec_'.length), 'base64')
    expect(access.webhookSecretsFor(record.id, fallback)).toEqual([own])
    expect((await access.authenticate(key))?.ownWebhookSecret).toBe(true)
    const old = Buffer.alloc(32, 7)
    await keys.update(record.id, (r) => ({
      ...r,
      previousWebhookSecret: `whsec_${old.toString('base64')}`,
      previousWebhookSecretUntil: new Date(Date.now() + 60_000).toISOString(),
    }))
    await waitFor(async () => access.webhookSecretsFor(record.id, fallback).length === 2)
    expect(access.webhookSecretsFor(record.id, fallback)).toEqual([own, old])
    await keys.update(record.id, (r) => ({
      ...r,
      previousWebhookSecretUntil: new Date(Date.now() - 1).toISOString(),
    }))
    await waitFor(async () => access.webhookSecretsFor(record.id, fallback).length === 1)
    const envPrincipal = await access.authenticate(ENV_KEY)
    expect(envPrincipal?.ownWebhookSecret).toBeUndefined()
    expect(access.webhookSecretsFor(envPrincipal!.keyId, fallback)).toBe(fallback)
    expect(access.webhookSecretsFor(undefined, fallback)).toBe(fallback)
    expect(access.webhookSecretsFor('key_AAAAAAAAAAAAAAAA', fallback)).toEqual([])
  })
})

describe('API keys', () => {
  it('a stored key works, a revoked one is refused 401 once the store changes', async () => {
    const key = await newKey()
    expect((await submit(key)).status).toBe(202)
    const [rec] = await keys.list()
    await keys.update(rec!.id, (r) => ({ ...r, revokedAt: new Date().toISOString() }))
    await waitFor(async () => (await access.authenticate(key)) === null)
    const r = await submit(key)
    expect(r.status).toBe(401)
    expect(await r.json()).toMatchObject({ error_code: 'invalid_auth_token' })
  })

  it('a key written to the file a moment ago works on its first request, long before the next poll', async () => {
    // Another process (`tailor keys create`) writes the file; this gateway polls it only hourly.
    const slow = openFileKeyStore(dir, { pollMs: 3_600_000 })
    const ac = await openKeyAccessControl({
      keys: slow,
      envHashes: [],
      limits: { rateLimitPerS: 5, maxConcurrentJobs: 0 },
      limiter: new RateLimiter(createMemoryRateBudget()),
    })
    try {
      const { key, record } = generateApiKey({ name: 'just made' })
      await keys.create(record)
      expect((await ac.authenticate(key))?.keyId).toBe(record.id)
      expect(await ac.authenticate(`tk_${'y'.repeat(43)}`)).toBeNull()
    } finally {
      await ac.close()
    }
  })

  it('keys from the environment are principals with the default limits and a stable id', async () => {
    const p = await access.authenticate(ENV_KEY)
    expect(p).toMatchObject({
      keyId: expect.stringMatching(/^sha256:[0-9a-f]{32}$/),
      rateLimitPerS: 5,
      maxConcurrentJobs: 10,
    })
    expect(await access.authenticate('nope')).toBeNull()
  })
})

describe('rate limits', () => {
  it('default 5/s: RateLimit-* headers on every /v1 answer, the 6th submission in a second is 429 with Retry-After', async () => {
    const rs = []
    for (let i = 0; i < 6; i++) rs.push(await submit(ENV_KEY))
    expect(rs.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 429])
    expect(rs[0]!.headers.get('RateLimit-Limit')).toBe('5')
    expect(rs[0]!.headers.get('RateLimit-Remaining')).toBe('4')
    expect(rs[0]!.headers.get('RateLimit-Reset')).toBe('1')
    const over = rs[5]!
    expect(over.headers.get('Retry-After')).toBe('1')
    expect(over.headers.get('RateLimit-Remaining')).toBe('0')
    expect(await over.json()).toMatchObject({
      error_code: 'rate_limit_exceeded',
      error: expect.stringMatching(/5 requests per second/),
    })
    // Polls do not count (a client may follow several jobs) but carry the headers.
    const id = ((await rs[0]!.json()) as { job_id: string }).job_id
    for (let i = 0; i < 20; i++) expect((await poll(ENV_KEY, id)).status).toBe(200)
    expect((await poll(ENV_KEY, id)).headers.get('RateLimit-Limit')).toBe('5')
    now += 1000
    expect((await submit(ENV_KEY)).status).toBe(202)
  })

  it("a key's own limit overrides the default", async () => {
    const key = await newKey({ rateLimitPerS: 2 })
    expect([
      (await submit(key)).status,
      (await submit(key)).status,
      (await submit(key)).status,
    ]).toEqual([202, 202, 429])
    expect((await submit(ENV_KEY)).headers.get('RateLimit-Limit')).toBe('5')
  })
})

describe('concurrent jobs', () => {
  it('beyond the cap → 429 with a clear message; a cancelled job frees its slot', async () => {
    const key = await newKey({ maxConcurrentJobs: 2, rateLimitPerS: 100 })
    const ids = []
    for (let i = 0; i < 2; i++) {
      ids.push(((await (await submit(key)).json()) as { job_id: string }).job_id)
    }
    const over = await submit(key)
    expect(over.status).toBe(429)
    expect(over.headers.get('Retry-After')).toBe('5')
    expect(await over.json()).toMatchObject({
      error_code: 'rate_limit_exceeded',
      error: expect.stringMatching(/already has 2 jobs pending or running/),
    })
    expect((await cancel(key, ids[0]!)).status).toBe(200)
    expect((await submit(key)).status).toBe(202)
    expect((await submit(key)).status).toBe(429)
  })

  it('completed and failed jobs free their slots too', async () => {
    const key = await newKey({ maxConcurrentJobs: 1, rateLimitPerS: 100 })
    const id = ((await (await submit(key)).json()) as { job_id: string }).job_id
    expect((await submit(key)).status).toBe(429)
    await jobs.update(id, (r) => ({
      ...r,
      status: 'completed',
      progress: 1,
      result: { key: 'remove-background/x.mp4', contentType: 'video/mp4', bytes: 1 },
    }))
    const id2 = ((await (await submit(key)).json()) as { job_id: string }).job_id
    await jobs.update(id2, (r) => ({
      ...r,
      status: 'failed',
      error: { code: 'malformed_video', message: 'bad' },
    }))
    expect((await submit(key)).status).toBe(202)
  })
})

describe('job ownership', () => {
  it("another key's job is 404 not_found for status and cancel; the owner sees it", async () => {
    const a = await newKey()
    const r = await submit(a)
    const id = ((await r.json()) as { job_id: string }).job_id
    expect((await jobs.get(id))?.ownerKeyId).toMatch(/^key_/)
    for (const res of [await poll(ENV_KEY, id), await cancel(ENV_KEY, id)]) {
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ error_code: 'not_found' })
    }
    expect((await poll(a, id)).status).toBe(200)
  })
})
