import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { DestinationRefusedError } from '@tailor/proto/net'
import type { JobRecord, JobState } from '../jobs/job-store.ts'
import { createLogger } from '../logger.ts'
import { createWebhookAttempt, webhookFor, type WebhookPost } from './deliver-webhook.ts'
import { generateWebhookSecret, parseWebhookSecret, signWebhook } from './standard-webhooks.ts'

const secretText = generateWebhookSecret()
const secret = parseWebhookSecret(secretText)!
const NOW_MS = Date.parse('2026-11-23T12:00:00Z')
const rec = (patch: Partial<JobState>): JobRecord => ({
  id: '0190b2c4-7e1f-7a55-9c3e-2f1d0c9b8a77',
  kind: 'try-on',
  status: 'completed',
  progress: 1,
  params: {
    person_image_url: 'https://example.com/p.jpg',
    garment_image_url: 'https://example.com/g.jpg',
    garment_mode: 'auto',
    garment_photo_type: 'auto',
    preprocess_garment: true,
    remove_background: false,
  },
  result: {
    key: 'try-on/0190b2c4-7e1f-7a55-9c3e-2f1d0c9b8a77.png',
    contentType: 'image/png',
    bytes: 10,
  },
  error: null,
  attempts: 1,
  createdAt: '2026-11-23T11:59:00.000Z',
  updatedAt: '2026-11-23T11:59:30.000Z',
  webhook: { url: 'https://hooks.example.com/tailor', resultBaseUrl: 'https://tailor.example.com' },
  ...patch,
})

function recorder(answers: (number | Error)[]) {
  const calls: { url: string; body: string; headers: Record<string, string>; timeoutMs: number }[] =
    []
  const post: WebhookPost = async (url, body, headers, timeoutMs) => {
    calls.push({ url, body, headers, timeoutMs })
    const a = answers.shift() ?? 200
    if (a instanceof Error) throw a
    return { status: a }
  }
  return { calls, post }
}
const TIMEOUTS = { timeoutMs: 15_000, failingTimeoutMs: 3_000, failingAfter: 3 }
const attemptWith = (
  post: WebhookPost,
  retryDelaysMs = [10, 20],
  secrets: Buffer[] | ((owner: string | undefined) => Buffer[]) = [secret],
) =>
  createWebhookAttempt({
    post,
    secretsFor: typeof secrets === 'function' ? secrets : () => secrets,
    resultUrlSecret: 'r'.repeat(32),
    resultUrlTtlS: 3600,
    retryDelaysMs,
    logger: createLogger('silent'),
    now: () => NOW_MS,
    timeouts: TIMEOUTS,
  })

describe('webhook secret and signature', () => {
  it('whsec_ secrets of 24–64 bytes only', () => {
    expect(secret).toHaveLength(32)
    expect(parseWebhookSecret(`whsec_${Buffer.alloc(24).toString('base64')}`)).toHaveLength(24)
    for (const bad of [
      'whsec_',
      `whsec_${Buffer.alloc(16).toString('base64')}`,
      `whsec_${Buffer.alloc(65).toString('base64')}`,
      Buffer.alloc(32).toString('base64'),
      'whsec_not base64!',
    ]) {
      expect(parseWebhookSecret(bad)).toBeNull()
    }
  })
  it('signs with every secret while one is rotated, space separated', async () => {
    const next = parseWebhookSecret(generateWebhookSecret())!
    const { calls, post } = recorder([200])
    await attemptWith(post, [10], [secret, next])(webhookFor(rec({}))!, 1)
    const c = calls[0]!
    const sigs = c.headers['webhook-signature']!.split(' ')
    expect(sigs).toEqual([
      signWebhook(secret, c.headers['webhook-id']!, NOW_MS / 1000, c.body),
      signWebhook(next, c.headers['webhook-id']!, NOW_MS / 1000, c.body),
    ])
  })
  it('signs "<id>.<timestamp>.<body>" with HMAC-SHA256 of the secret bytes', () => {
    const want = createHmac('sha256', secret).update('msg_1.1700000000.{"a":1}').digest('base64')
    expect(signWebhook(secret, 'msg_1', 1700000000, '{"a":1}')).toBe(`v1,${want}`)
  })
})

describe('per-key signing and failing destinations', () => {
  it("signs with the secrets of the job's owner key; a key without any secret gets no delivery", async () => {
    const other = parseWebhookSecret(generateWebhookSecret())!
    const secrets = (owner: string | undefined) =>
      owner === 'key_A' ? [secret] : owner === 'key_B' ? [other] : []
    const { calls, post } = recorder([200, 200])
    const attempt = attemptWith(post, [10], secrets)
    await attempt(webhookFor(rec({ ownerKeyId: 'key_A' }))!, 1)
    await attempt(webhookFor(rec({ ownerKeyId: 'key_B' }))!, 1)
    expect(webhookFor(rec({ ownerKeyId: 'key_A' }))!.ownerKeyId).toBe('key_A')
    const sig = (c: (typeof calls)[number], s: Buffer) =>
      signWebhook(s, c.headers['webhook-id']!, NOW_MS / 1000, c.body)
    expect(calls[0]!.headers['webhook-signature']).toBe(sig(calls[0]!, secret))
    expect(calls[1]!.headers['webhook-signature']).toBe(sig(calls[1]!, other))
    expect(await attempt(webhookFor(rec({ ownerKeyId: 'key_C' }))!, 1)).toEqual({ done: true })
    expect(calls).toHaveLength(2)
  })

  it('a destination whose last 3 attempts failed gets the shorter timeout until one succeeds; others keep the full one', async () => {
    const down = Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })
    const { calls, post } = recorder([500, down, 503, 500, 200, 200, 200])
    const attempt = attemptWith(post, [1, 1, 1, 1, 1, 1, 1])
    const slow = webhookFor(
      rec({
        webhook: { url: 'https://slow.example.com/a', resultBaseUrl: 'https://t.example.com' },
      }),
    )!
    const slowOtherPath = { ...slow, url: 'https://slow.example.com/b' }
    const fine = webhookFor(rec({}))!
    for (let n = 1; n <= 4; n++) await attempt(slow, n)
    await attempt(fine, 1)
    await attempt(slowOtherPath, 5) // same origin: still failing → short; it succeeds
    await attempt(slow, 6)
    expect(calls.map((c) => [new URL(c.url).host, c.timeoutMs])).toEqual([
      ['slow.example.com', 15_000],
      ['slow.example.com', 15_000],
      ['slow.example.com', 15_000],
      ['slow.example.com', 3_000],
      ['hooks.example.com', 15_000],
      ['slow.example.com', 3_000],
      ['slow.example.com', 15_000],
    ])
  })
})

describe('webhook attempts', () => {
  it('completed: signed payload with a fresh signed result_url; 2xx is done', async () => {
    const { calls, post } = recorder([204])
    const d = webhookFor(rec({}))!
    expect(await attemptWith(post)(d, 1)).toEqual({ done: true })
    const [c] = calls
    expect(c!.url).toBe('https://hooks.example.com/tailor')
    expect(c!.headers['webhook-id']).toBe(`msg_${d.jobId}_completed`)
    expect(c!.headers['webhook-timestamp']).toBe(String(NOW_MS / 1000))
    expect(c!.headers['webhook-signature']).toBe(
      signWebhook(secret, d.webhookId, NOW_MS / 1000, c!.body),
    )
    const body = JSON.parse(c!.body)
    expect(body).toMatchObject({
      type: 'job.completed',
      timestamp: '2026-11-23T11:59:30.000Z',
      data: { job_id: d.jobId, kind: 'try-on', status: 'completed' },
    })
    expect(body.data.result_url).toMatch(
      /^https:\/\/tailor\.example\.com\/results\/try-on\/.+\.png\?expires=\d+&sig=/,
    )
    expect(body.data.error).toBeUndefined()
  })

  it('failed: the error as in status documents', async () => {
    const { calls, post } = recorder([200])
    const d = webhookFor(
      rec({
        status: 'failed',
        result: null,
        error: { code: 'no_person_detected', message: 'No person.' },
      }),
    )!
    await attemptWith(post)(d, 1)
    expect(JSON.parse(calls[0]!.body)).toEqual({
      type: 'job.failed',
      timestamp: '2026-11-23T11:59:30.000Z',
      data: {
        job_id: d.jobId,
        kind: 'try-on',
        status: 'failed',
        error: { message: 'No person.', error_code: 'no_person_detected' },
      },
    })
  })

  it('500s and network errors retry on the schedule, then give up; 410 stops at once', async () => {
    const { post } = recorder([
      500,
      Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      503,
    ])
    const attempt = attemptWith(post, [10, 20])
    const d = webhookFor(rec({}))!
    expect(await attempt(d, 1)).toEqual({ done: false, retryInMs: 10 })
    expect(await attempt(d, 2)).toEqual({ done: false, retryInMs: 20 })
    expect(await attempt(d, 3)).toEqual({ done: true }) // third and last attempt
    expect(await attemptWith(recorder([410]).post)(d, 1)).toEqual({ done: true })
    expect(await attemptWith(recorder([302]).post)(d, 1)).toEqual({ done: false, retryInMs: 10 })
  })

  it('a refused destination is not retried', async () => {
    const { post } = recorder([
      new DestinationRefusedError('webhook_url resolves to a private address'),
    ])
    expect(await attemptWith(post)(webhookFor(rec({}))!, 1)).toEqual({ done: true })
  })

  it('records without a webhook, or not final, give none', () => {
    expect(webhookFor(rec({ webhook: undefined }))).toBeNull()
    expect(webhookFor(rec({ status: 'running' }))).toBeNull()
  })
})
