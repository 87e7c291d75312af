import { describe, expect, it } from 'vitest'
import { loadConfig, sha256Hex } from './config.ts'

const SECRET = 's'.repeat(32)

describe('loadConfig', () => {
  it('applies defaults and keeps only key hashes', () => {
    const c = loadConfig({ API_KEYS: ' a , b,,', TAILOR_API_KEY: 'c', RESULT_URL_SECRET: SECRET })
    expect(c).toMatchObject({ port: 8080, grpcPort: 50051, resultUrlTtlS: 3600, natsUrl: undefined, logLevel: 'info' })
    expect(c.apiKeyHashes.map((h) => h.toString('hex')).sort()).toEqual([sha256Hex('a'), sha256Hex('b'), sha256Hex('c')].sort())
    expect(JSON.stringify(c)).not.toMatch(/"a"|"b"|"c"/)
    expect(Object.isFrozen(c)).toBe(true)
  })
  it('accepts pre-hashed keys', () => {
    const h = sha256Hex('k')
    expect(loadConfig({ API_KEY_SHA256: h.toUpperCase(), RESULT_URL_SECRET: SECRET }).apiKeyHashes[0]?.toString('hex')).toBe(h)
  })
  it('lists every bad variable at once', () => {
    let msg = ''
    try {
      loadConfig({ PORT: 'x', RESULT_URL_SECRET: 'short', API_KEY_SHA256: 'zz', PUBLIC_BASE_URL: 'nope' })
    } catch (err) {
      msg = (err as Error).message
    }
    for (const v of ['PORT', 'API_KEY_SHA256', 'RESULT_URL_SECRET', 'PUBLIC_BASE_URL']) expect(msg).toContain(v)
  })
  it('accepts no key by environment (keys made by `tailor keys` live in the key store)', () => {
    expect(loadConfig({ RESULT_URL_SECRET: SECRET }).apiKeyHashes).toEqual([])
  })
  it('rate limit and concurrent-job defaults: 5 req/s and 10 jobs, configurable, 0 = no job cap', () => {
    const d = loadConfig({ RESULT_URL_SECRET: SECRET })
    expect([d.rateLimitPerS, d.maxConcurrentJobs]).toEqual([5, 10])
    const c = loadConfig({ RESULT_URL_SECRET: SECRET, DEFAULT_RATE_LIMIT_PER_S: '100', DEFAULT_MAX_CONCURRENT_JOBS: '0' })
    expect([c.rateLimitPerS, c.maxConcurrentJobs]).toEqual([100, 0])
    expect(() => loadConfig({ RESULT_URL_SECRET: SECRET, DEFAULT_RATE_LIMIT_PER_S: '0' })).toThrow(/DEFAULT_RATE_LIMIT_PER_S/)
  })
})
