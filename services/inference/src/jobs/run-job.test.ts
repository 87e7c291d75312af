import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError, newJobId, type JobEnvelope } from '@tailor/proto'
import { runJob, type RunJobDeps } from './run-job.ts'

// Hand-written fakes of our own ports; the work directory is real.
let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tailor-runjob-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const job = (): JobEnvelope => ({
  id: newJobId(),
  kind: 'remove-background',
  createdAt: new Date().toISOString(),
  params: {
    video_url: 'http://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
})

/** A pipeline that writes scratch files, then hangs until aborted (like a stopped ffmpeg). */
const hangingDeps = (): RunJobDeps => ({
  workRoot: root,
  fetchInput: async (_url, dest) => writeFile(dest, 'input'),
  removeBackground: async (req, ctx) => {
    await writeFile(join(req.workDir, 'result.mp4'), 'partial')
    return new Promise((_resolve, reject) =>
      ctx.signal.addEventListener('abort', () => reject(new AppError('job_cancelled', 'aborted'))),
    )
  },
  results: { put: async () => Promise.reject(new Error('unused')) },
})

describe('runJob when aborted', () => {
  it('a time-limit abort → failed request_timeout, its work dir removed', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(new AppError('request_timeout', 'too long')), 50)
    const out = await runJob(
      job(),
      { signal: ac.signal, onProgress: () => undefined },
      hangingDeps(),
    )
    expect(out).toEqual({ status: 'failed', code: 'request_timeout', message: 'too long' })
    expect(await readdir(root)).toEqual([])
  })

  it('any other abort (client cancel, shutdown) → job_cancelled, its work dir removed', async () => {
    const ac = new AbortController()
    setTimeout(() => ac.abort(new Error('shutdown')), 50)
    const out = await runJob(
      job(),
      { signal: ac.signal, onProgress: () => undefined },
      hangingDeps(),
    )
    expect(out).toMatchObject({ status: 'failed', code: 'job_cancelled' })
    expect(await readdir(root)).toEqual([])
  })
})
