// loadConfig for the variables of issue 11 (internal auth, quotas, safe defaults), beside
// config.test.ts so the two do not collide.
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

const BASE = { RESULT_URL_SECRET: 's'.repeat(32) }
const TOKEN = 't'.repeat(32)

describe('loadConfig: the job-events port', () => {
  it('requires JOB_EVENTS_TOKEN (at least 32 characters) with NATS_URL; embedded needs none', () => {
    expect(loadConfig(BASE).jobEventsToken).toBeUndefined()
    expect(() => loadConfig({ ...BASE, NATS_URL: 'nats://n:4222' })).toThrow(/JOB_EVENTS_TOKEN/)
    expect(() =>
      loadConfig({ ...BASE, NATS_URL: 'nats://n:4222', JOB_EVENTS_TOKEN: 'short' }),
    ).toThrow(/JOB_EVENTS_TOKEN/)
    expect(
      loadConfig({ ...BASE, NATS_URL: 'nats://n:4222', JOB_EVENTS_TOKEN: TOKEN }).jobEventsToken,
    ).toBe(TOKEN)
  })
  it('mTLS files go together', () => {
    const d = { ...BASE, NATS_URL: 'nats://n:4222', JOB_EVENTS_TOKEN: TOKEN }
    expect(() =>
      loadConfig({ ...d, JOB_EVENTS_TLS_CERT: '/c.pem', JOB_EVENTS_TLS_KEY: '/k.pem' }),
    ).toThrow(/all three or none/)
    expect(
      loadConfig({
        ...d,
        JOB_EVENTS_TLS_CERT: '/c.pem',
        JOB_EVENTS_TLS_KEY: '/k.pem',
        JOB_EVENTS_TLS_CA: '/ca.pem',
      }).jobEventsTls,
    ).toEqual({ certFile: '/c.pem', keyFile: '/k.pem', caFile: '/ca.pem' })
    expect(loadConfig(d).jobEventsTls).toBeUndefined()
  })
})

describe('loadConfig: storage quotas', () => {
  it('defaults: 500 MiB / 50 uploads per key; uploads 2 GiB, results 4 GiB, other streams 256 MiB', () => {
    const c = loadConfig(BASE)
    expect([c.uploadQuotaBytes, c.uploadQuotaCount]).toEqual([500 * 1024 ** 2, 50])
    expect(c.storageCaps).toEqual({
      uploadsMaxBytes: 2 * 1024 ** 3,
      resultsMaxBytes: 4 * 1024 ** 3,
      streamMaxBytes: 256 * 1024 ** 2,
    })
  })
  it("a key's quota cannot exceed the whole uploads store; caps are positive", () => {
    expect(() =>
      loadConfig({ ...BASE, UPLOAD_QUOTA_BYTES: '2000', UPLOADS_MAX_BYTES: '1000' }),
    ).toThrow(/UPLOAD_QUOTA_BYTES/)
    expect(() => loadConfig({ ...BASE, RESULTS_MAX_BYTES: '0' })).toThrow(/RESULTS_MAX_BYTES/)
  })
})
