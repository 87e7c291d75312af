import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openFileKeyStore } from '@tailor/gateway/src/access/key-store-files.ts'
import { openDataDir } from './data-dir.ts'
import { ensureDefaultKey } from './default-key.ts'

const withDir = async (f: (dir: string) => Promise<void>): Promise<void> => {
  const dir = await mkdtemp(join(tmpdir(), 'tailor-dd-'))
  try {
    await f(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe('openDataDir', () => {
  it('keeps the URL secret across opens', () =>
    withDir(async (dir) => {
      const first = await openDataDir(dir)
      const second = await openDataDir(dir)
      expect(second.resultUrlSecret).toBe(first.resultUrlSecret)
      expect(first.resultUrlSecret.length).toBeGreaterThanOrEqual(32)
      expect(first.legacyApiKeyHash).toBeNull()
    }))
})

describe('ensureDefaultKey', () => {
  it('creates a key named "default" once, stores only its hash (file mode 0600)', () =>
    withDir(async (dir) => {
      const keys = openFileKeyStore(dir)
      const key = await ensureDefaultKey(keys, null)
      expect(key).toMatch(/^tk_[A-Za-z0-9_-]{43}$/)
      const [rec, ...rest] = await keys.list()
      expect(rest).toEqual([])
      expect(rec).toMatchObject({
        name: 'default',
        sha256: createHash('sha256').update(key!).digest('hex'),
      })
      const text = await readFile(join(dir, 'api-keys.json'), 'utf8')
      expect(text).not.toContain(key!)
      expect((await stat(join(dir, 'api-keys.json'))).mode & 0o777).toBe(0o600)
      expect(await ensureDefaultKey(keys, null)).toBeNull()
      expect(await keys.list()).toHaveLength(1)
    }))
  it('creates none when the store holds keys, revoked ones included', () =>
    withDir(async (dir) => {
      const keys = openFileKeyStore(dir)
      await ensureDefaultKey(keys, null)
      const [rec] = await keys.list()
      await keys.update(rec!.id, (r) => ({ ...r, revokedAt: new Date().toISOString() }))
      expect(await ensureDefaultKey(keys, null)).toBeNull()
      expect(await keys.list()).toHaveLength(1)
    }))
  it('imports the key an earlier version generated (api-key.sha256) instead of creating one', () =>
    withDir(async (dir) => {
      const hash = createHash('sha256').update('tailor_old-key').digest('hex')
      await writeFile(join(dir, 'api-key.sha256'), `${hash}\n`)
      const data = await openDataDir(dir)
      expect(data.legacyApiKeyHash).toBe(hash)
      const keys = openFileKeyStore(dir)
      expect(await ensureDefaultKey(keys, data.legacyApiKeyHash)).toBeNull()
      expect(await keys.list()).toMatchObject([{ name: 'default', sha256: hash }])
    }))
})
