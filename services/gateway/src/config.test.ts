import { describe, expect, it } from 'vitest'
import { loadConfig, sha256Hex } from './config.ts'

const SECRET = 's'.repeat(32)

describe('loadConfig', () => {
  it('applies defaults and keeps only key hashes', () => {
    const [a, b, k] = ['a', 'b', 'c'].map((x) => x.repeat(32)) as [string, string, string]
    const c = loadConfig({
      API_KEYS: ` ${a} , ${b},,`,
      TAILOR_API_KEY: k,
      RESULT_URL_SECRET: SECRET,
    })
    expect(c).toMatchObject({
      port: 8080,
      grpcPort: 50051,
      resultUrlTtlS: 3600,
      natsUrl: undefined,
      logLevel: 'info',
    })
    expect(c.apiKeyHashes.map((h) => h.toString('hex')).sort()).toEqual(
      [sha256Hex(a), sha256Hex(b), sha256Hex(k)].sort(),
    )
    expect(JSON.stringify(c)).not.toMatch(/aaaa|bbbb|cccc/)
    expect(Object.isFrozen(c)).toBe(true)
  })
  it('accepts pre-hashed keys', () => {
    const h = sha256Hex('k')
    expect(
      loadConfig({
        API_KEY_SHA256: h.toUpperCase(),
        RESULT_URL_SECRET: SECRET,
      }).apiKeyHashes[0]?.toString('hex'),
    ).toBe(h)
  })
  it('lists every bad variable at once', () => {
    let msg = ''
    try {
      loadConfig({
        PORT: 'x',
        RESULT_URL_SECRET: 'short',
        API_KEY_SHA256: 'zz',
        PUBLIC_BASE_URL: 'nope',
      })
    } catch (err) {
      msg = (err as Error).message
    }
    for (const v of ['PORT', 'API_KEY_SHA256', 'RESULT_URL_SECRET', 'PUBLIC_BASE_URL']) {
      expect(msg).toContain(v)
    }
  })
  it('refuses keys shorter than 32 characters in API_KEYS and TAILOR_API_KEY, naming the variable (never the key)', () => {
    const long = 'k'.repeat(32)
    const msg = (env: Record<string, string>): string => {
      try {
        loadConfig({ RESULT_URL_SECRET: SECRET, ...env })
        return ''
      } catch (err) {
        return (err as Error).message
      }
    }
    const m1 = msg({ API_KEYS: `${long},short-key-123` })
    expect(m1).toMatch(/at least 32 characters[\s\S]*at API_KEYS/)
    expect(m1).not.toContain('short-key-123')
    expect(msg({ TAILOR_API_KEY: 'k'.repeat(31) })).toMatch(
      /at least 32 characters[\s\S]*at TAILOR_API_KEY/,
    )
    expect(msg({ API_KEYS: long, TAILOR_API_KEY: long })).toBe('')
  })
  it('accepts no key by environment (keys made by `tailor keys` live in the key store)', () => {
    expect(loadConfig({ RESULT_URL_SECRET: SECRET }).apiKeyHashes).toEqual([])
  })
  it('rate limit and concurrent-job defaults: 5 req/s and 10 jobs, configurable, 0 = no job cap', () => {
    const d = loadConfig({ RESULT_URL_SECRET: SECRET })
    expect([d.rateLimitPerS, d.maxConcurrentJobs]).toEqual([5, 10])
    const c = loadConfig({
      RESULT_URL_SECRET: SECRET,
      DEFAULT_RATE_LIMIT_PER_S: '100',
      DEFAULT_MAX_CONCURRENT_JOBS: '0',
    })
    expect([c.rateLimitPerS, c.maxConcurrentJobs]).toEqual([100, 0])
    expect(() => loadConfig({ RESULT_URL_SECRET: SECRET, DEFAULT_RATE_LIMIT_PER_S: '0' })).toThrow(
      /DEFAULT_RATE_LIMIT_PER_S/,
    )
  })
})
