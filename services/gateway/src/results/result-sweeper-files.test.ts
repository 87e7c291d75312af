import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { newJobId } from '@tailor/proto'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import type { JobRecord } from '../jobs/job-store.ts'
import { startFileResultSweeper, sweepOldFiles } from './result-sweeper-files.ts'

const H = 3600_000
let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-sweep-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** A real file whose mtime is `ageMs` in the past. */
async function fileAged(path: string, ageMs: number): Promise<void> {
  await writeFile(path, 'x')
  const t = new Date(Date.now() - ageMs)
  await utimes(path, t, t)
}

const tree = async (d: string): Promise<string[]> =>
  (await readdir(d, { recursive: true })).map(String).sort()

describe('embedded retention (real files in a data dir)', () => {
  it('results: files older than the retention go, newer ones stay; crash leftovers (.partial) go at start', async () => {
    await mkdir(join(dir, 'remove-background'))
    await mkdir(join(dir, 'try-on'))
    await fileAged(join(dir, 'remove-background', 'old.mp4'), 3 * H)
    await fileAged(join(dir, 'remove-background', 'new.mp4'), 10 * 60_000)
    await fileAged(join(dir, 'remove-background', 'new.mp4.partial'), 1_000)
    await fileAged(join(dir, 'try-on', 'old.jpg'), 2 * H + 1_000)
    const swept: string[] = []
    const s = await startFileResultSweeper(dir, {
      retentionMs: 2 * H,
      intervalMs: 50,
      onSwept: (p) => swept.push(...p),
    })
    try {
      expect(await tree(dir)).toEqual(['remove-background', 'remove-background/new.mp4', 'try-on'])
      expect(swept).toHaveLength(3)
      // The periodic sweep catches a result once it ages past the retention.
      await fileAged(join(dir, 'try-on', 'later.jpg'), 2 * H + 1)
      const deadline = Date.now() + 5_000
      while ((await tree(dir)).includes('try-on/later.jpg') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(await tree(dir)).toEqual(['remove-background', 'remove-background/new.mp4', 'try-on'])
    } finally {
      s.stop()
    }
    expect(await sweepOldFiles(join(dir, 'missing'), 1, Date.now())).toEqual([])
  })

  it('job records: hidden from get once past the retention, their files deleted by the sweep; temp files go at open', async () => {
    let now = Date.parse('2026-11-23T12:00:00.000Z')
    const rec = (id: string, updatedAt: number): JobRecord => ({
      id,
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
      result: null,
      error: null,
      attempts: 1,
      createdAt: new Date(updatedAt).toISOString(),
      updatedAt: new Date(updatedAt).toISOString(),
    })
    const oldId = newJobId(now - 30 * H)
    const newId = newJobId(now - H)
    await writeFile(join(dir, `${oldId}.json`), JSON.stringify(rec(oldId, now - 25 * H)))
    await writeFile(join(dir, `${newId}.json`), JSON.stringify(rec(newId, now - H)))
    await writeFile(join(dir, `${newId}.json.tmp`), '{"half')
    const store = await openFileJobStore(dir, {
      retentionMs: 24 * H,
      sweepIntervalMs: 60_000,
      now: () => now,
    })
    try {
      expect(await tree(dir)).toEqual([`${newId}.json`])
      expect(await store.get(oldId)).toBeNull()
      expect((await store.get(newId))?.id).toBe(newId)
      now += 23 * H + 1 // newId's last change is now 24 h ago: gone from get at once, even before a sweep
      expect(await store.get(newId)).toBeNull()
      expect(await store.listUnfinished()).toEqual([])
    } finally {
      await store.close()
    }
  })
})
