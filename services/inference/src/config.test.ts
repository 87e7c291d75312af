import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

const TOKEN = 't'.repeat(32)

describe('loadConfig (inference)', () => {
  it('applies defaults', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      ORT_EP: 'cpu',
      ACK_WAIT_MS: 10_000,
      MAX_DELIVER: 3,
      FETCH_MAX_BYTES: 100 * 1024 * 1024,
      TAILOR_FETCH_ALLOW_LOOPBACK: false,
      VIDEO_MAX_DURATION_S: 60,
    })
    expect(c.MODELS_DIR).toMatch(/models\/dist$/)
    expect(c.RVM_PRECISION).toBe('fp32')
    expect(loadConfig({ RVM_PRECISION: 'int8' }).RVM_PRECISION).toBe('int8')
    expect(() => loadConfig({ RVM_PRECISION: 'int4' })).toThrow(/RVM_PRECISION/)
    expect(Object.isFrozen(c)).toBe(true)
  })
  it('reads booleans as words, never by truthiness', () => {
    expect(loadConfig({ TAILOR_FETCH_ALLOW_LOOPBACK: 'false' }).TAILOR_FETCH_ALLOW_LOOPBACK).toBe(
      false,
    )
    expect(loadConfig({ TAILOR_FETCH_ALLOW_LOOPBACK: 'true' }).TAILOR_FETCH_ALLOW_LOOPBACK).toBe(
      true,
    )
    expect(() => loadConfig({ TAILOR_FETCH_ALLOW_LOOPBACK: 'maybe' })).toThrow(
      /TAILOR_FETCH_ALLOW_LOOPBACK/,
    )
  })
  it('requires the gateway address with NATS', () => {
    expect(() => loadConfig({ NATS_URL: 'nats://x:4222' })).toThrow(/GATEWAY_GRPC_ADDR/)
    expect(
      loadConfig({
        NATS_URL: 'nats://x:4222',
        GATEWAY_GRPC_ADDR: 'gateway:50051',
        JOB_EVENTS_TOKEN: TOKEN,
      }).GATEWAY_GRPC_ADDR,
    ).toBe('gateway:50051')
  })
  it('requires the job-events token (at least 32 characters) with NATS, and the mTLS files all together', () => {
    const base = { NATS_URL: 'nats://x:4222', GATEWAY_GRPC_ADDR: 'gateway:50051' }
    expect(() => loadConfig(base)).toThrow(/JOB_EVENTS_TOKEN/)
    expect(() => loadConfig({ ...base, JOB_EVENTS_TOKEN: 'short' })).toThrow(/JOB_EVENTS_TOKEN/)
    expect(() =>
      loadConfig({ ...base, JOB_EVENTS_TOKEN: TOKEN, JOB_EVENTS_TLS_CERT: '/c.pem' }),
    ).toThrow(/JOB_EVENTS_TLS_CERT/)
    expect(
      loadConfig({
        ...base,
        JOB_EVENTS_TOKEN: TOKEN,
        JOB_EVENTS_TLS_CERT: '/c',
        JOB_EVENTS_TLS_KEY: '/k',
        JOB_EVENTS_TLS_CA: '/ca',
      }).JOB_EVENTS_TLS_CA,
    ).toBe('/ca')
  })
  it('lists every bad variable at once', () => {
    let msg = ''
    try {
      loadConfig({ ORT_EP: 'tpu', ACK_WAIT_MS: '5', GATEWAY_GRPC_ADDR: 'nope' })
    } catch (err) {
      msg = (err as Error).message
    }
    for (const v of ['GATEWAY_GRPC_ADDR', 'ORT_EP', 'ACK_WAIT_MS']) expect(msg).toContain(v)
  })
  it('JOB_KINDS: every kind by default, a comma list, unknown kinds refused', () => {
    expect(loadConfig({}).JOB_KINDS).toEqual(['try-on', 'remove-background'])
    expect(loadConfig({ JOB_KINDS: ' remove-background ' }).JOB_KINDS).toEqual([
      'remove-background',
    ])
    expect(loadConfig({ JOB_KINDS: 'try-on,remove-background,try-on' }).JOB_KINDS).toEqual([
      'try-on',
      'remove-background',
    ])
    expect(() => loadConfig({ JOB_KINDS: 'video' })).toThrow(
      /unknown job kind video[\s\S]*JOB_KINDS/,
    )
    expect(() => loadConfig({ JOB_KINDS: ',' })).toThrow(/JOB_KINDS/)
  })
  it('REQUIRE_EXECUTION_PROVIDER=cuda needs ORT_EP=cuda; JOBS_MAX_ACK_PENDING is one config value', () => {
    expect(
      loadConfig({ ORT_EP: 'cuda', REQUIRE_EXECUTION_PROVIDER: 'cuda' }).REQUIRE_EXECUTION_PROVIDER,
    ).toBe('cuda')
    expect(() => loadConfig({ ORT_EP: 'cpu', REQUIRE_EXECUTION_PROVIDER: 'cuda' })).toThrow(
      /REQUIRE_EXECUTION_PROVIDER/,
    )
    expect(loadConfig({}).JOBS_MAX_ACK_PENDING).toBe(256)
    expect(loadConfig({ JOBS_MAX_ACK_PENDING: '64', CONCURRENCY: '2' }).JOBS_MAX_ACK_PENDING).toBe(
      64,
    )
    expect(() => loadConfig({ JOBS_MAX_ACK_PENDING: '0' })).toThrow(/JOBS_MAX_ACK_PENDING/)
  })
})
