import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { UploadMeta } from '@tailor/proto'
import { createInputFetcher } from './input-fetcher.ts'
import { createFileUploadSource } from './upload-source-files.ts'

const ID = '22222222-2222-4222-8222-222222222222'
const T0 = Date.parse('2026-01-01T00:00:00Z')
let dir: string
let work: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-upl-src-'))
  work = await mkdtemp(join(tmpdir(), 'tailor-upl-work-'))
  const meta: UploadMeta = {
    id: ID,
    ownerKeyId: 'k',
    contentType: 'image/png',
    bytes: 1000,
    createdAt: new Date(T0).toISOString(),
    expiresAt: new Date(T0 + 3600_000).toISOString(),
  }
  await writeFile(join(dir, ID), new Uint8Array(1000).fill(9))
  await writeFile(join(dir, `${ID}.json`), JSON.stringify(meta))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
  await rm(work, { recursive: true, force: true })
})

describe('file upload source (embedded)', () => {
  const signal = new AbortController().signal
  it('copies the upload into the work dir', async () => {
    const src = createFileUploadSource(dir, { now: () => T0 + 1000 })
    await expect(src.read(ID, join(work, 'in'), 10_000, signal)).resolves.toEqual({
      bytes: 1000,
      contentType: 'image/png',
    })
    expect((await readFile(join(work, 'in'))).length).toBe(1000)
  })
  it('missing, malformed or expired: input_fetch_failed; over the input limit: file_size_too_large; nothing written', async () => {
    const src = createFileUploadSource(dir, { now: () => T0 + 1000 })
    await expect(
      src.read('33333333-3333-4333-8333-333333333333', join(work, 'a'), 10_000, signal),
    ).rejects.toMatchObject({ code: 'input_fetch_failed' })
    await expect(src.read('../x', join(work, 'b'), 10_000, signal)).rejects.toMatchObject({
      code: 'input_fetch_failed',
    })
    await expect(src.read(ID, join(work, 'c'), 999, signal)).rejects.toMatchObject({
      code: 'file_size_too_large',
    })
    const late = createFileUploadSource(dir, { now: () => T0 + 3600_000 })
    await expect(late.read(ID, join(work, 'd'), 10_000, signal)).rejects.toMatchObject({
      code: 'input_fetch_failed',
      message: expect.stringMatching(/expired/),
    })
    expect(await readdir(work)).toEqual([])
  })
  it('the input fetcher sends tailor://uploads/<id> to the upload source and every other URL to the downloader', async () => {
    const downloaded: string[] = []
    const fetchInput = createInputFetcher(
      async (url) => void downloaded.push(url),
      createFileUploadSource(dir, { now: () => T0 }),
      10_000,
    )
    await fetchInput(`tailor://uploads/${ID}`, join(work, 'u'), signal)
    await fetchInput('https://example.com/a.jpg', join(work, 'h'), signal)
    await fetchInput('tailor://uploads/not-an-id', join(work, 'x'), signal)
    expect(downloaded).toEqual(['https://example.com/a.jpg', 'tailor://uploads/not-an-id'])
    expect(await readdir(work)).toEqual(['u'])
  })
})
