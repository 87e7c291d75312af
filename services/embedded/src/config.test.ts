import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

describe('loadConfig (embedded)', () => {
  it('listens on loopback unless HOST says otherwise (one machine: nothing exposed by default)', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
  })
  it('refuses a TAILOR_API_KEY shorter than 32 characters with one clear line naming it', () => {
    expect(() => loadConfig({ TAILOR_API_KEY: 'scripted-key-123456' })).toThrow(
      /at least 32 characters[\s\S]*at TAILOR_API_KEY/,
    )
    expect(loadConfig({ TAILOR_API_KEY: 'k'.repeat(32) }).apiKeyConfigured).toBe(true)
  })
})
