import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger } from '../logger.ts'
import { createJobEventHandler, isResultKeyOf } from './job-events.ts'
import { openFileJobStore } from './job-store-files.ts'
import type { JobRecord, JobStore } from './job-store.ts'

const A = '0190f3a0-0000-7000-8000-00000000000a'
const B = '0190f3a0-0000-7000-8000-00000000000b'
let dir: string
let jobs: JobStore

const record = (id: string, kind: JobRecord['kind']): JobRecord => ({
  id,
  status: 'running',
  progress: 0,
  result: null,
  error: null,
  attempts: 1,
  ...(kind === 'try-on'
    ? {
        kind,
        params: {
          person_image_url: 'https://example.com/p.jpg',
          garment_image_url: 'https://example.com/g.jpg',
          garment_mode: 'auto',
          garment_photo_type: 'auto',
          preprocess_garment: true,
          remove_background: false,
        },
      }
    : {
        kind,
        params: {
          video_url: 'https://example.com/v.mp4',
          background_color: '#000000',
          output_format: 'mp4_h264',
        },
      }),
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
  ownerKeyId: 'k1',
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'job-events-'))
  jobs = await openFileJobStore(dir)
})
afterEach(async () => {
  await jobs.close()
  await rm(dir, { recursive: true, force: true })
})

describe("job events: a completed event names only its own job's result", () => {
  it('accepts <kind>/<job id>.<ext> and refuses every other form', () => {
    expect(isResultKeyOf({ id: A, kind: 'remove-background' }, `remove-background/${A}.webm`)).toBe(
      true,
    )
    expect(isResultKeyOf({ id: A, kind: 'try-on' }, `try-on/${A}.png`)).toBe(true)
    for (const key of [
      `remove-background/${B}.webm`, // another job's result
      `try-on/${A}.png`, // another kind
      `remove-background/${A}`,
      `remove-background/${A}.`,
      `remove-background/${A}.web/m`,
      `remove-background/${A}.webm/../../x`,
      `../remove-background/${A}.webm`,
      `uploads/k1/${A}.webm`,
      '',
    ]) {
      expect(isResultKeyOf({ id: A, kind: 'remove-background' }, key), key).toBe(false)
    }
  })

  it("a completed event with another job's result key fails the job instead of completing it with that result", async () => {
    await jobs.create(record(A, 'remove-background'))
    await jobs.create(record(B, 'remove-background'))
    const handle = createJobEventHandler(jobs, createLogger('silent'))
    await handle({
      type: 'completed',
      jobId: A,
      resultKey: `remove-background/${B}.webm`,
      contentType: 'video/webm',
      bytes: 10,
      frames: 1,
    })
    const a = await jobs.get(A)
    expect(a?.status).toBe('failed')
    expect(a?.result).toBeNull()
    expect(a?.error?.code).toBe('unexpected_error')
    await handle({
      type: 'completed',
      jobId: B,
      resultKey: `remove-background/${B}.webm`,
      contentType: 'video/webm',
      bytes: 10,
      frames: 1,
    })
    expect((await jobs.get(B))?.result?.key).toBe(`remove-background/${B}.webm`)
  })
})
