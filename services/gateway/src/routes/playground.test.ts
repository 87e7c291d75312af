import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import type { JobStore } from '../jobs/job-store.ts'
import { createLogger } from '../logger.ts'

const KEY = 'test-key-0123456789-abcdefghijkl'
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3])

let dir: string
let jobs: JobStore
const apps: Record<'built' | 'bare', ReturnType<typeof createApp>> = {} as never

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-playground-'))
  const built = join(dir, 'dist')
  const samples = join(dir, 'samples')
  await mkdir(built)
  await mkdir(samples)
  await mkdir(join(samples, 'nested.jpg')) // a folder, not a file
  await writeFile(join(built, 'index.html'), '<!doctype html><title>Tailor playground</title>')
  await writeFile(join(built, 'playground.js'), 'console.log(1)')
  await writeFile(join(built, 'playground.css'), 'body{}')
  await writeFile(join(samples, 'person_01.jpg'), JPEG)
  await writeFile(join(samples, 'clip.mp4'), 'mp4')
  await writeFile(join(samples, 'anim.gif'), 'gif')
  await writeFile(join(samples, 'notes.txt'), 'not media')
  await writeFile(join(samples, '.hidden.jpg'), JPEG)
  await writeFile(join(dir, 'secret.jpg'), 'outside the samples dir')
  await symlink(join(dir, 'secret.jpg'), join(samples, 'link.jpg'))
  jobs = await openFileJobStore(join(dir, 'jobs'))
  const make = (env: Record<string, string>) =>
    createApp({
      config: loadConfig({ API_KEYS: KEY, RESULT_URL_SECRET: 'x'.repeat(32), ...env }),
      logger: createLogger('silent'),
      jobs,
      results: { size: async () => null, open: async () => Readable.from([]) },
      publisher: { publish: async () => undefined },
      cancel: { cancel: () => undefined },
      health: () => ({ ok: true }),
    })
  apps.built = make({ PLAYGROUND_DIR: built, PLAYGROUND_SAMPLES_DIR: samples })
  apps.bare = make({ PLAYGROUND_DIR: join(dir, 'not-built') })
})
afterAll(async () => {
  await jobs?.close()
  await rm(dir, { recursive: true, force: true })
})

const withKey = { headers: { 'X-API-KEY': KEY } }

describe('playground page and assets', () => {
  it('serves the page with a same-origin-only script policy, and its script and style sheet', async () => {
    const page = await apps.built.request('/')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toMatch(
      /script-src 'self';.*connect-src 'self'/,
    )
    expect(await page.text()).toContain('Tailor playground')
    const js = await apps.built.request('/playground/playground.js')
    expect([js.status, js.headers.get('content-type'), await js.text()]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'console.log(1)',
    ])
    const css = await apps.built.request('/playground/playground.css')
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8'])
  })

  it('serves nothing else from the build folder', async () => {
    for (const p of [
      '/playground/index.html',
      '/playground/..%2Fsecret.jpg',
      '/playground/other.js',
    ]) {
      const r = await apps.built.request(p)
      expect(r.status, p).toBe(404)
      expect(await r.json()).toMatchObject({ error_code: 'not_found' })
    }
  })

  it('says how to build it when it is not built (503 page, 404 assets)', async () => {
    const page = await apps.bare.request('/')
    expect(page.status).toBe(503)
    expect(await page.text()).toContain('pnpm build:playground')
    expect((await apps.bare.request('/playground/playground.js')).status).toBe(404)
  })
})

describe('playground samples', () => {
  it('need the API key', async () => {
    for (const p of ['/playground/samples', '/playground/samples/person_01.jpg']) {
      const r = await apps.built.request(p)
      expect(r.status, p).toBe(401)
      expect(await r.json()).toMatchObject({ error_code: 'invalid_auth_token' })
    }
  })

  it('lists the plain media files of PLAYGROUND_SAMPLES_DIR (no folders, links, hidden or other files)', async () => {
    const r = await apps.built.request('/playground/samples', withKey)
    expect(await r.json()).toEqual({ images: ['person_01.jpg'], videos: ['anim.gif', 'clip.mp4'] })
  })

  it('serves a listed file with its media type, and nothing outside the list', async () => {
    const r = await apps.built.request('/playground/samples/person_01.jpg', withKey)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/jpeg')
    expect(Buffer.from(await r.arrayBuffer())).toEqual(JPEG)
    expect(
      (await apps.built.request('/playground/samples/clip.mp4', withKey)).headers.get(
        'content-type',
      ),
    ).toBe('video/mp4')
    for (const name of [
      'link.jpg',
      'notes.txt',
      '.hidden.jpg',
      'nested.jpg',
      '..%2Fsecret.jpg',
      'missing.jpg',
      '%2E%2E',
    ]) {
      const res = await apps.built.request(`/playground/samples/${name}`, withKey)
      expect(res.status, name).toBe(404)
      expect(await res.json()).toMatchObject({ error_code: 'not_found' })
    }
  })

  it('offers none when PLAYGROUND_SAMPLES_DIR is not set (the default)', async () => {
    expect(await (await apps.bare.request('/playground/samples', withKey)).json()).toEqual({
      images: [],
      videos: [],
    })
    expect((await apps.bare.request('/playground/samples/person_01.jpg', withKey)).status).toBe(404)
  })
})
