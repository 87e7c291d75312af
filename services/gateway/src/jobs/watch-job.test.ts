import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError, newJobId } from '@tailor/proto'
import { openFileJobStore } from './job-store-files.ts'
import type { JobRecord, JobState, JobStore } from './job-store.ts'
import type { JobWatcher } from './job-watch.ts'
import { watchJob, type JobUpdate } from './watch-job.ts'

const config = {
  resultUrlTtlS: 3600,
  resultRetentionS: 7200,
  resultExpiryMarginS: 300,
  jobRetentionS: 86_400,
  resultUrlSecret: 's'.repeat(32),
}
const BASE = 'http://tailor.test'

const pending = (): JobRecord => {
  const now = new Date().toISOString()
  return {
    id: newJobId(),
    kind: 'remove-background',
    status: 'pending',
    progress: 0,
    params: {
      video_url: 'https://example.com/v.mp4',
      background_color: '#000000',
      output_format: 'mp4_h264',
    },
    result: null,
    error: null,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  }
}
const stamp = (r: JobRecord, patch: Partial<JobState>): JobRecord => ({
  ...r,
  ...patch,
  updatedAt: new Date().toISOString(),
})

/** Collects a generator's values until it ends. */
async function collect(it: AsyncIterable<JobUpdate>): Promise<JobUpdate[]> {
  const out: JobUpdate[] = []
  for await (const u of it) out.push(u)
  return out
}

let dir: string
let store: JobStore & JobWatcher
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-watch-'))
  store = await openFileJobStore(dir)
})
afterEach(async () => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

describe('file job store: watch', () => {
  it('yields the record now, then every write to it, and stops when the signal aborts', async () => {
    const rec = pending()
    await store.create(rec)
    const ac = new AbortController()
    const seen: JobRecord[] = []
    const done = (async () => {
      for await (const r of store.watch(rec.id, ac.signal)) {
        seen.push(r!)
        if (seen.length === 3) ac.abort()
      }
    })()
    await store.update(rec.id, (r) => stamp(r, { status: 'running' }))
    await store.update(rec.id, (r) => stamp(r, { progress: 0.5 }))
    await done // ends on abort: the listener is gone
    expect(seen.map((r) => [r.status, r.progress])).toEqual([
      ['pending', 0],
      ['running', 0],
      ['running', 0.5],
    ])
    await store.update(rec.id, (r) => stamp(r, { progress: 0.75 })) // nobody listens any more: no error
  })

  it('an aborted watch of an idle record ends without a write', async () => {
    const rec = pending()
    await store.create(rec)
    const ac = new AbortController()
    const seen: unknown[] = []
    const done = (async () => {
      for await (const r of store.watch(rec.id, ac.signal)) seen.push(r)
    })()
    await new Promise((r) => setTimeout(r, 20))
    ac.abort()
    await done
    expect(seen).toHaveLength(1)
  })
})

describe('watchJob use case', () => {
  it('streams pending → running → progress → completed with a result_url, then ends; rewrites without a change are skipped', async () => {
    const rec = pending()
    await store.create(rec)
    const updates = collect(
      watchJob(
        { jobs: store, watcher: store, config },
        rec.id,
        {},
        BASE,
        new AbortController().signal,
      ),
    )
    await new Promise((r) => setTimeout(r, 20))
    await store.update(rec.id, (r) => stamp(r, { status: 'running', attempts: 1 }))
    await store.update(rec.id, (r) => stamp(r, { attempts: 1 })) // same public state
    await store.update(rec.id, (r) => stamp(r, { progress: 0.5 }))
    await store.update(rec.id, (r) =>
      stamp(r, {
        status: 'completed',
        progress: 1,
        result: { key: `remove-background/${r.id}.mp4`, contentType: 'video/mp4', bytes: 9 },
        completedAt: new Date().toISOString(),
      }),
    )
    const got = await updates
    expect(got.map((u) => [u.document.status, u.document.progress])).toEqual([
      ['pending', 0],
      ['running', 0],
      ['running', 0.5],
      ['completed', 1],
    ])
    expect(got.every((u) => u.kind === 'remove-background')).toBe(true)
    expect(got.at(-1)!.document.result_url).toMatch(
      new RegExp(`^${BASE}/results/remove-background/${rec.id}\\.mp4\\?expires=\\d+&sig=`),
    )
  })

  it('a finished job: its final state, then the end', async () => {
    const rec = {
      ...pending(),
      status: 'failed' as const,
      error: { code: 'job_cancelled' as const, message: 'cancelled' },
    }
    await store.create(rec)
    const got = await collect(
      watchJob(
        { jobs: store, watcher: store, config },
        rec.id,
        {},
        BASE,
        new AbortController().signal,
      ),
    )
    expect(got.map((u) => u.document)).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: { error_code: 'job_cancelled', message: 'cancelled' },
      }),
    ])
  })

  it('an unknown job: not_found before anything is yielded; a job of another kind is outside a kind scope', async () => {
    const rec = pending()
    await store.create(rec)
    const deps = { jobs: store, watcher: store, config }
    await expect(
      collect(watchJob(deps, newJobId(), {}, BASE, new AbortController().signal)),
    ).rejects.toMatchObject({ code: 'not_found' })
    const err = await collect(
      watchJob(
        deps,
        rec.id,
        { kind: 'try-on', label: 'try-on' },
        BASE,
        new AbortController().signal,
      ),
    ).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).message).toBe(`No try-on job with id "${rec.id}".`)
  })

  it('ends when the client goes away (the signal aborts), the job still running', async () => {
    const rec = pending()
    await store.create(rec)
    const ac = new AbortController()
    const got: JobUpdate[] = []
    const done = (async () => {
      for await (const u of watchJob(
        { jobs: store, watcher: store, config },
        rec.id,
        {},
        BASE,
        ac.signal,
      )) {
        got.push(u)
        if (u.document.status === 'running') ac.abort()
      }
    })()
    await new Promise((r) => setTimeout(r, 20))
    await store.update(rec.id, (r) => stamp(r, { status: 'running' }))
    await done
    expect(got.map((u) => u.document.status)).toEqual(['pending', 'running'])
  })
})
