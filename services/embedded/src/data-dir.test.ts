import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openDataDir } from './data-dir.ts'

describe('openDataDir', () => {
  it('creates a key once, stores only its hash (0600), and keeps the URL secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tailor-dd-'))
    try {
      const first = await openDataDir(dir, { createApiKey: true })
      expect(first.createdApiKey).toMatch(/^tailor_[A-Za-z0-9_-]{32}$/)
      const hash = createHash('sha256').update(first.createdApiKey!).digest('hex')
      expect(first.apiKeyHash).toBe(hash)
      expect((await readFile(join(dir, 'api-key.sha256'), 'utf8')).trim()).toBe(hash)
      expect((await stat(join(dir, 'api-key.sha256'))).mode & 0o777).toBe(0o600)
      const second = await openDataDir(dir, { createApiKey: true })
      expect(second.createdApiKey).toBeNull()
      expect(second.apiKeyHash).toBe(hash)
      expect(second.resultUrlSecret).toBe(first.resultUrlSecret)
      expect(first.resultUrlSecret.length).toBeGreaterThanOrEqual(32)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
  it('creates no key when one is configured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tailor-dd-'))
    try {
      expect(await openDataDir(dir, { createApiKey: false })).toMatchObject({ createdApiKey: null, apiKeyHash: null })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
