// loadConfig for the webhook and Idempotency-Key variables (beside config.test.ts, which another
// change owns at the moment; merge when convenient).
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

const BASE = { RESULT_URL_SECRET: 's'.repeat(32), API_KEYS: 'k'.repeat(32) }
const WHSEC = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

describe('loadConfig: webhooks and idempotency', () => {
  it('defaults: webhooks off, 8 attempts over ~33 h, 15 s per attempt, keys kept 24 h, no loopback', () => {
    const c = loadConfig(BASE)
    expect(c.webhookSecrets).toEqual([])
    expect(c.webhookRetryDelaysMs).toEqual([
      5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ])
    expect([c.webhookTimeoutMs, c.idempotencyTtlS, c.allowLoopback]).toEqual([
      15_000,
      86_400,
      false,
    ])
  })
  it('takes a whsec_ secret as its bytes, a delay list, and the shared loopback setting', () => {
    const c = loadConfig({
      ...BASE,
      WEBHOOK_SECRET: WHSEC,
      WEBHOOK_RETRY_DELAYS_MS: '100, 200',
      IDEMPOTENCY_TTL_S: '60',
      TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    })
    expect(c.webhookSecrets).toEqual([Buffer.alloc(32, 7)])
    const two = loadConfig({
      ...BASE,
      WEBHOOK_SECRET: `${WHSEC}, whsec_${Buffer.alloc(24, 1).toString('base64')}`,
    })
    expect(two.webhookSecrets).toEqual([Buffer.alloc(32, 7), Buffer.alloc(24, 1)]) // rotation: both sign
    expect(c.webhookRetryDelaysMs).toEqual([100, 200])
    expect([c.idempotencyTtlS, c.allowLoopback]).toEqual([60, true])
    expect(loadConfig({ ...BASE, WEBHOOK_RETRY_DELAYS_MS: '' }).webhookRetryDelaysMs).toEqual([]) // one attempt only
  })
  it('refuses a secret that is not whsec_ + base64 of 24–64 bytes, and bad delays', () => {
    for (const bad of [
      'secret',
      `whsec_${Buffer.alloc(8).toString('base64')}`,
      Buffer.alloc(32).toString('base64'),
    ]) {
      expect(() => loadConfig({ ...BASE, WEBHOOK_SECRET: bad })).toThrow(/WEBHOOK_SECRET/)
    }
    expect(() => loadConfig({ ...BASE, WEBHOOK_RETRY_DELAYS_MS: '5s,10s' })).toThrow(
      /WEBHOOK_RETRY_DELAYS_MS/,
    )
    expect(() => loadConfig({ ...BASE, IDEMPOTENCY_TTL_S: '0' })).toThrow(/IDEMPOTENCY_TTL_S/)
  })
})
