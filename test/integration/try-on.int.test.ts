/**
 * Try-on end to end in the embedded mode (gateway + inference worker in one process, real models
 * on CPU, real photos from ../shared/media served over loopback HTTP): sync and async modes,
 * remove_background, the deprecated garment_mode, and the bad-input table with each documented
 * status and error_code.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage, encodeJpeg, encodePng } from '@tailor/inference/src/media/image.ts'
import { createMediaFixtures, ffmpeg, type MediaFixtures } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'
import { workLeft } from '../helpers/work-dir.ts'

const ENTRY = 'services/embedded/src/main.ts'
const MODELS = SERVICE_MODELS
const JOB_TIMEOUT_MS = 120_000
const POLL_MS = 250

let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let dataDir: string
let apiKey = ''
let tailor: ServiceProcess
let base: string
let headers: Record<string, string>

beforeAll(async () => {
  models = await snapshotModels(MODELS)
  media = await createMediaFixtures()
  // Bad inputs beside the fixtures (served from media.baseUrl).
  await writeFile(
    join(media.dir, 'page.html'),
    '<!doctype html><html><body><h1>Our new tee</h1><img src="tee.jpg"></body></html>\n',
  )
  await writeFile(join(media.dir, 'not-an-image.jpg'), 'definitely not an image\n'.repeat(64))
  await encodePng(
    new Uint8Array(20_000 * 4 * 3).fill(180),
    20_000,
    4,
    join(media.dir, 'absurd.png'),
  )
  await encodePng(Uint8Array.of(10, 20, 30), 1, 1, join(media.dir, 'one-pixel.png'))
  const blank = new Uint8Array(600 * 800 * 3).fill(236)
  await encodeJpeg(blank, 600, 800, join(media.dir, 'blank.jpg'))
  dataDir = await mkdtemp(join(tmpdir(), 'tailor-data-tryon-'))
  const port = await freePort()
  tailor = startService(ENTRY, {
    PORT: String(port),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: dataDir,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    MODELS_DIR: models.dir,
    TRYON_WAIT_TIMEOUT_MS: '90000',
  })
  await tailor.waitFor('X-API-KEY: tk_') // the banner is one write: the whole key is there
  apiKey = /X-API-KEY: (tk_[A-Za-z0-9_-]+)/.exec(tailor.output())?.[1] ?? ''
  expect(apiKey, 'the start banner shows the created key').not.toBe('')
  base = `http://127.0.0.1:${port}`
  headers = { 'content-type': 'application/json', 'x-api-key': apiKey }
})

afterAll(async () => {
  await tailor?.stop()
  await media?.stop()
  await models?.remove()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

const shared = (f: string) => `${media.baseUrl}/shared/${f}`
const local = (f: string) => `${media.baseUrl}/${f}`
const post = async (body: unknown) => {
  const r = await fetch(`${base}/v1/try-on`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> }
}
const status = async (id: string) =>
  (await (await fetch(`${base}/v1/try-on/job/${id}`, { headers })).json()) as Record<
    string,
    unknown
  >
const fetchResult = async (url: string, dir: string) => {
  const r = await fetch(url)
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('image/jpeg')
  const path = join(dir, 'result.jpg')
  await writeFile(path, Buffer.from(await r.arrayBuffer()))
  return decodeImage(path, { what: 'result' })
}

describe('try-on over HTTP (embedded)', () => {
  it(
    'wait_for_result "true": 200 {result_url}, a JPEG at the person photo\'s size',
    async () => {
      const r = await post({
        person_image_url: shared('person_01.jpg'),
        garment_image_url: shared('garment_upper_01.jpg'),
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body.result_url).toMatch(/\/results\/try-on\/[0-9a-f-]{36}\.jpg\?expires=\d+&sig=/)
      const dir = await mkdtemp(join(tmpdir(), 'tailor-tryon-int-'))
      const img = await fetchResult(r.body.result_url as string, dir)
      expect([img.width, img.height]).toEqual([768, 1024])
      await rm(dir, { recursive: true, force: true })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'a synchronous try-on does not wait behind video: with a 10 s video running it answers 200 {result_url} before the video ends',
    async () => {
      await ffmpeg([
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=640x360:rate=25:duration=10',
        '-pix_fmt',
        'yuv420p',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        join(media.dir, 'ten-seconds.mp4'),
      ])
      const v = await fetch(`${base}/v1/video/remove-background`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ video_url: local('ten-seconds.mp4') }),
      })
      expect(v.status).toBe(202)
      const videoId = ((await v.json()) as { job_id: string }).job_id
      const video = async () =>
        (await (
          await fetch(`${base}/v1/video/remove-background/job/${videoId}`, { headers })
        ).json()) as { status: string; progress: number; updated_at: string }
      const deadline = Date.now() + JOB_TIMEOUT_MS
      while ((await video()).status !== 'running' && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, POLL_MS))
      }
      expect((await video()).status).toBe('running')
      const r = await post({
        person_image_url: shared('person_02.jpg'),
        garment_image_url: shared('garment_upper_01.jpg'),
      })
      const answeredAt = Date.now()
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body.result_url).toMatch(/\/results\/try-on\/[0-9a-f-]{36}\.jpg\?expires=\d+&sig=/)
      let s = await video()
      while (
        s.status !== 'completed' &&
        s.status !== 'failed' &&
        Date.now() < deadline + JOB_TIMEOUT_MS
      ) {
        await new Promise((res) => setTimeout(res, POLL_MS))
        s = await video()
      }
      expect(s.status).toBe('completed')
      // The video finished after the try-on was answered: the try-on ran beside it, not after it.
      expect(Date.parse(s.updated_at)).toBeGreaterThan(answeredAt)
    },
    3 * JOB_TIMEOUT_MS,
  )

  it(
    'wait_for_result "false": 202 {job_id}, then pending/running → completed with a result_url',
    async () => {
      const r = await post({
        person_image_url: shared('person_03.jpg'),
        garment_image_url: shared('garment_full_01.jpg'),
        wait_for_result: 'false',
      })
      expect(r.status).toBe(202)
      const id = r.body.job_id as string
      const deadline = Date.now() + JOB_TIMEOUT_MS
      let s = await status(id)
      while (s.status !== 'completed' && s.status !== 'failed' && Date.now() < deadline) {
        expect(['pending', 'running']).toContain(s.status)
        await new Promise((res) => setTimeout(res, POLL_MS))
        s = await status(id)
      }
      expect(s, JSON.stringify(s)).toMatchObject({ status: 'completed', error: null })
      const dir = await mkdtemp(join(tmpdir(), 'tailor-tryon-int-'))
      const img = await fetchResult(s.result_url as string, dir)
      expect([img.width, img.height]).toEqual([900, 1200])
      await rm(dir, { recursive: true, force: true })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'remove_background "true": the person on white (corners white), still JPEG',
    async () => {
      const r = await post({
        person_image_url: shared('person_04.jpg'),
        garment_image_url: shared('garment_upper_02.jpg'),
        remove_background: 'true',
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const dir = await mkdtemp(join(tmpdir(), 'tailor-tryon-int-'))
      const img = await fetchResult(r.body.result_url as string, dir)
      for (const [x, y] of [
        [5, 5],
        [img.width - 6, 5],
      ]) {
        const i = (y! * img.width + x!) * 3
        expect(Math.min(img.rgb[i]!, img.rgb[i + 1]!, img.rgb[i + 2]!)).toBeGreaterThan(245)
      }
      await rm(dir, { recursive: true, force: true })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'garment_mode (deprecated) still overrides detection and sets Deprecation',
    async () => {
      const r = await post({
        person_image_url: shared('person_02.jpg'),
        garment_image_url: shared('garment_lower_01.jpg'),
        garment_mode: 'lower',
        preprocess_garment: false,
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.headers.get('deprecation')).toMatch(/^@\d+$/)
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'cancel: a pending/running job can be cancelled once',
    async () => {
      const r = await post({
        person_image_url: shared('person_02.jpg'),
        garment_image_url: shared('garment_upper_02.jpg'),
        wait_for_result: false,
      })
      const id = r.body.job_id as string
      const c = await fetch(`${base}/v1/try-on/job/${id}/cancel`, { method: 'POST', headers })
      // The job may already have finished on a fast machine: both answers are documented.
      expect([200, 409]).toContain(c.status)
      if (c.status === 200) {
        expect(await status(id)).toMatchObject({
          status: 'failed',
          error: { error_code: 'job_cancelled' },
        })
      }
    },
    JOB_TIMEOUT_MS,
  )

  it.each([
    [
      'person image is not an image',
      () => local('not-an-image.jpg'),
      () => shared('garment_upper_01.jpg'),
      400,
      'unsupported_image_format',
    ],
    [
      'garment URL returns an HTML page',
      () => shared('person_01.jpg'),
      () => local('page.html'),
      400,
      'unsupported_image_format',
    ],
    [
      'person image of absurd dimensions (20000×4)',
      () => local('absurd.png'),
      () => shared('garment_upper_01.jpg'),
      400,
      'resolution_too_high',
    ],
    [
      '1×1 person image',
      () => local('one-pixel.png'),
      () => shared('garment_upper_01.jpg'),
      400,
      'resolution_too_low',
    ],
    [
      'garment image with no garment',
      () => shared('person_01.jpg'),
      () => local('blank.jpg'),
      422,
      'no_garment_detected',
    ],
    [
      'person image with no person',
      () => shared('garment_lower_02.jpg'),
      () => shared('garment_upper_01.jpg'),
      422,
      'no_person_detected',
    ],
    [
      'garment URL that does not exist',
      () => shared('person_01.jpg'),
      () => local('missing.jpg'),
      400,
      'input_fetch_failed',
    ],
  ] as const)(
    '%s (sync answer and job record)',
    async (_n, person, garment, httpStatus, code) => {
      const r = await post({ person_image_url: person(), garment_image_url: garment() })
      expect(r.status, JSON.stringify(r.body)).toBe(httpStatus)
      expect(r.body).toMatchObject({ error_code: code, error: expect.any(String) })
      expect(await status(r.body.job_id as string)).toMatchObject({
        status: 'failed',
        error: { error_code: code },
      })
    },
    JOB_TIMEOUT_MS,
  )

  it('leaves nothing in the work directory', async () => {
    expect(await workLeft(join(dataDir, 'work'))).toEqual([])
    // The created key is kept only as its sha256.
    const keys = await readFile(join(dataDir, 'api-keys.json'), 'utf8')
    expect(keys).toContain(createHash('sha256').update(apiKey).digest('hex'))
    expect(keys).not.toContain(apiKey)
  })
})
