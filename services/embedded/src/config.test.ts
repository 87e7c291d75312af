import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

describe('loadConfig (embedded)', () => {
  it('listens on loopback unless HOST says otherwise (one machine: nothing exposed by default)', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
  })
})
