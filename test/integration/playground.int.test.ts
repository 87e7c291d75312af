/**
 * The browser playground end to end: Debian's Chromium driven by playwright-core against the
 * embedded service (real models, ffmpeg) with a fresh data dir and a samples dir made from
 * ../shared/media. Screenshots are kept in test-results/playground/ (git-ignored) to look at.
 */
import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPlayground } from '@tailor/playground/build.ts'
import { ffmpeg, probe, SHARED_MEDIA_DIR } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { REPO_ROOT, startService, type ServiceProcess } from '../helpers/processes.ts'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking']
const MODELS = SERVICE_MODELS
const ENTRY = 'services/embedded/src/main.ts'
const SCREENSHOTS = resolve(REPO_ROOT, 'test-results/playground')
/** Generous bounds on a shared 2-core CPU. */
const JOB_TIMEOUT_MS = 180_000
const UI_TIMEOUT_MS = 15_000
/** A test that waits for a job: two job bounds (the machine may be shared). */
const TEST_TIMEOUT_MS = 2 * JOB_TIMEOUT_MS
const SAMPLE_VIDEO = 'short_video_01.mp4'
/** Long enough to still be running when the test cancels it. */
const LONG_VIDEO = 'video_01_5s.mp4'

let models: { dir: string; remove(): Promise<void> }
let work: string
let tailor: ServiceProcess
let apiKey: string
let baseUrl: string
let browser: Browser
let page: Page
const pageErrors: string[] = []

const shot = (name: string): Promise<Buffer> =>
  page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })

beforeAll(async () => {
  models = await snapshotModels(MODELS)
  work = await mkdtemp(join(tmpdir(), 'tailor-playground-'))
  const samples = join(work, 'samples')
  const built = join(work, 'playground')
  await mkdir(samples)
  await mkdir(SCREENSHOTS, { recursive: true })
  await buildPlayground(built)
  for (const f of [
    'person_02.jpg',
    'person_03.jpg',
    'garment_upper_01.jpg',
    'garment_lower_01.jpg',
  ]) {
    await copyFile(join(SHARED_MEDIA_DIR, f), join(samples, f))
  }
  // A 1 s cut of a real clip, 384 px tall (the network's own size: no downsampling), keeps the browser test quick.
  await ffmpeg([
    '-i',
    join(SHARED_MEDIA_DIR, 'video_01.mp4'),
    '-t',
    '1',
    '-vf',
    'scale=-2:384',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-an',
    join(samples, SAMPLE_VIDEO),
  ])
  await ffmpeg([
    '-i',
    join(SHARED_MEDIA_DIR, 'video_01.mp4'),
    '-t',
    '5',
    '-vf',
    'scale=-2:384',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-an',
    join(samples, LONG_VIDEO),
  ])
  apiKey = `tailor_playground_test_${randomUUID()}`
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  tailor = startService(ENTRY, {
    PORT: String(port),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: join(work, 'data'),
    MODELS_DIR: models.dir,
    PLAYGROUND_DIR: built,
    PLAYGROUND_SAMPLES_DIR: samples,
    TAILOR_API_KEY: apiKey,
  })
  await tailor.waitFor('Tailor is running at')
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  })
  page = await context.newPage()
  page.on('pageerror', (e) => pageErrors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text())
  })
})

afterAll(async () => {
  await browser?.close()
  await tailor?.stop()
  await models?.remove()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('playground in Chromium', () => {
  it('loads with no script errors and asks for a key before running', async () => {
    await page.goto(`${baseUrl}/`)
    await expect.poll(() => page.title()).toBe('Tailor playground')
    expect(await page.getAttribute('#api-key', 'placeholder')).toBe('tk_…') // keys are tk_…
    // No empty (black) video player before a video is chosen: the frame says so instead.
    expect(await page.isHidden('#video-preview')).toBe(true)
    expect(await page.textContent('#video-preview-empty')).toBe('No video chosen')
    await page.click('#tryon-run')
    await expect
      .poll(() => page.textContent('#tryon-status'), { timeout: UI_TIMEOUT_MS })
      .toContain('Paste an API key first')
    expect(pageErrors).toEqual([])
  })

  it('finds a wrong key as it is entered, before any Run (GET /v1/credits), and says so beside the field', async () => {
    const real = (await (
      await fetch(`${baseUrl}/v1/credits`, { headers: { 'x-api-key': 'tk_wrong' } })
    ).json()) as { error: string }
    await page.fill('#api-key', 'tk_wrong')
    await page.waitForFunction(
      () => document.getElementById('key-status')!.classList.contains('error'),
      null,
      { timeout: UI_TIMEOUT_MS },
    )
    expect(await page.textContent('#key-status')).toBe(
      `This key is not accepted: ${real.error} Keys look like tk_…; the service's start banner shows the first one.`,
    )
    expect(await page.getAttribute('#api-key', 'aria-invalid')).toBe('true')
    expect(await page.textContent('#tryon-status')).not.toMatch(/invalid_auth_token/) // nothing was run
    await shot('00-wrong-key')
  })

  it('lists the operator samples once the key is given', async () => {
    await page.fill('#api-key', apiKey)
    await page.waitForFunction(
      () => document.getElementById('key-status')!.classList.contains('ok'),
      null,
      { timeout: UI_TIMEOUT_MS },
    )
    expect(await page.textContent('#key-status')).toBe('Key accepted.')
    expect(await page.getAttribute('#api-key', 'aria-invalid')).toBeNull()
    await page.waitForFunction(
      () => (document.querySelector('#person-sample') as HTMLSelectElement).options.length > 0,
      null,
      { timeout: UI_TIMEOUT_MS },
    )
    const options = (sel: string) =>
      page.$$eval(`${sel} option`, (os) => os.map((o) => (o as HTMLOptionElement).value))
    expect((await options('#person-sample'))[0]).toMatch(/^person_/) // persons first for the person, garments for the garment
    expect((await options('#garment-sample'))[0]).toMatch(/^garment_/)
    expect((await options('#video-sample')).sort()).toEqual([SAMPLE_VIDEO, LONG_VIDEO].sort())
    expect(await page.evaluate(() => sessionStorage.getItem('tailor.apiKey'))).toBe(apiKey)
    await page.selectOption('#person-sample', 'person_02.jpg')
    await page.selectOption('#garment-sample', 'garment_upper_01.jpg')
    await page.waitForFunction(
      () =>
        ['person-preview', 'garment-preview'].every(
          (id) => (document.getElementById(id) as HTMLImageElement).naturalWidth > 0,
        ),
      null,
      { timeout: UI_TIMEOUT_MS },
    )
    await shot('01-ready')
  })

  it(
    'runs try-on on samples (uploaded through the client) and shows the result beside the inputs',
    async () => {
      await page.click('#tryon-run')
      // The click sets the status to 'Starting…' at once (an earlier error cleared) and it turns
      // 'ok' only after the result image has loaded (playground runTryOn: showImage, then
      // "Done in …"); waiting for the image alone raced that last step.
      await page.waitForFunction(
        () =>
          ['ok', 'error'].some((k) =>
            document.getElementById('tryon-status')!.classList.contains(k),
          ),
        null,
        { timeout: JOB_TIMEOUT_MS },
      )
      expect(await page.textContent('#tryon-status')).toMatch(/^Done in/)
      const result = await page.$eval('#tryon-result', (img) => ({
        w: (img as HTMLImageElement).naturalWidth,
        h: (img as HTMLImageElement).naturalHeight,
        src: (img as HTMLImageElement).src,
      }))
      const person = await page.$eval('#person-preview', (img) => ({
        w: (img as HTMLImageElement).naturalWidth,
        h: (img as HTMLImageElement).naturalHeight,
      }))
      expect(result).toMatchObject(person) // the result is at the person photo's size
      expect(result.src).toMatch(/\/results\/try-on\/.+\.jpg\?expires=\d+&sig=/)
      // Beside the inputs: the three figures share one row.
      const tops = await page.$$eval('#tryon .gallery figure', (fs) =>
        fs.map((f) => Math.round(f.getBoundingClientRect().top)),
      )
      expect(new Set(tops).size).toBe(1)
      await page.locator('#tryon').screenshot({ path: join(SCREENSHOTS, '02-try-on.png') })
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'removes a video background with a live progress bar, plays it over a checkerboard and downloads it',
    async () => {
      await page.selectOption('#video-sample', SAMPLE_VIDEO)
      await page.selectOption('#video-format', 'webm_vp9')
      expect(await page.isChecked('#video-transparent')).toBe(true)
      expect(await page.isVisible('#video-preview')).toBe(true)
      expect(await page.isHidden('#video-preview-empty')).toBe(true)
      // The colour picker looks disabled while it is (transparent background), and enabled when not.
      const look = () =>
        page.$eval('#video-color', (el) => ({
          disabled: (el as HTMLInputElement).disabled,
          opacity: Number(getComputedStyle(el).opacity),
          label: getComputedStyle(el.closest('label')!).color,
        }))
      const off = await look()
      expect(off.disabled).toBe(true)
      expect(off.opacity).toBeLessThan(0.5)
      await page.uncheck('#video-transparent')
      const on = await look()
      expect(on).toMatchObject({ disabled: false, opacity: 1 })
      expect(on.label).not.toBe(off.label)
      await page.check('#video-transparent')
      // Record every progress value the bar shows.
      await page.evaluate(() => {
        const bar = document.getElementById('video-progress')!
        const seen: number[] = []
        ;(window as unknown as { progressSeen: number[] }).progressSeen = seen
        new MutationObserver(() => seen.push(Number(bar.getAttribute('aria-valuenow')))).observe(
          bar,
          { attributes: true, attributeFilter: ['aria-valuenow'] },
        )
      })
      await page.click('#video-run')
      await page.waitForFunction(
        () => {
          const v = Number(document.getElementById('video-progress')!.getAttribute('aria-valuenow'))
          return (v > 0 && v < 100) || !document.getElementById('video-download')!.hidden
        },
        null,
        { timeout: JOB_TIMEOUT_MS },
      )
      await shot('03-video-progress')
      await page.waitForFunction(
        () =>
          !document.getElementById('video-download')!.hidden ||
          document.getElementById('video-status')!.classList.contains('error'),
        null,
        { timeout: JOB_TIMEOUT_MS },
      )
      expect(await page.textContent('#video-status')).toMatch(/^Done in/)
      const seen = await page.evaluate(
        () => (window as unknown as { progressSeen: number[] }).progressSeen,
      )
      expect(
        seen.some((v) => v > 0 && v < 100),
        `progress values seen: ${seen.join(',')}`,
      ).toBe(true)
      expect(seen.at(-1)).toBe(100)
      expect(seen.filter((v) => v > 0)).toEqual(
        [...seen.filter((v) => v > 0)].sort((a, b) => a - b),
      ) // it only moves forward

      // Plays (frames decoded and time advancing) over the checkerboard.
      await page.waitForFunction(
        () => {
          const v = document.getElementById('video-result') as HTMLVideoElement
          return v.readyState >= 2 && v.currentTime > 0
        },
        null,
        { timeout: UI_TIMEOUT_MS },
      )
      const stage = await page.$eval('#video-stage', (el) => ({
        cls: el.className,
        bg: getComputedStyle(el).backgroundImage,
      }))
      expect(stage.cls).toContain('checkerboard')
      expect(stage.bg).toContain('conic-gradient')
      const video = await page.$eval('#video-result', (v) => ({
        w: (v as HTMLVideoElement).videoWidth,
        h: (v as HTMLVideoElement).videoHeight,
        hidden: (v as HTMLVideoElement).hidden,
      }))
      const source = (await probe(join(work, 'samples', SAMPLE_VIDEO))).streams.find(
        (s) => s.codec_type === 'video',
      )!
      expect(video).toEqual({ w: source.width, h: source.height, hidden: false })
      await shot('04-video-result')

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click('#video-download'),
      ])
      expect(download.suggestedFilename()).toMatch(/^tailor-.+\.webm$/)
      const file = join(work, 'download.webm')
      await download.saveAs(file)
      const bytes = await readFile(file)
      expect(bytes.subarray(0, 4).toString('hex')).toBe('1a45dfa3') // EBML (WebM)
      const p = await probe(file)
      const v = p.streams.find((s) => s.codec_type === 'video')
      expect(v).toMatchObject({ codec_name: 'vp9', width: source.width, height: source.height })
      expect(
        Object.entries(v?.tags ?? {}).some(
          ([k, val]) => k.toLowerCase() === 'alpha_mode' && val === '1',
        ),
      ).toBe(true)
      expect(v?.nb_read_frames).toBe(source.nb_read_frames) // every frame kept
    },
    TEST_TIMEOUT_MS,
  )

  it("cancels a running job from the page: the user's own Cancel is said plainly, not as a red error", async () => {
    await page.selectOption('#video-sample', LONG_VIDEO)
    await page.click('#video-run')
    await page.waitForFunction(
      () => /: running/.test(document.getElementById('video-status')!.textContent ?? ''),
      null,
      { timeout: JOB_TIMEOUT_MS },
    )
    await page.click('#video-cancel')
    await page.waitForFunction(
      () =>
        /^Cancelled \(job /.test(document.getElementById('video-status')!.textContent ?? '') ||
        document.getElementById('video-status')!.classList.contains('error'),
      null,
      { timeout: UI_TIMEOUT_MS },
    )
    expect(await page.textContent('#video-status')).toMatch(/^Cancelled \(job [0-9a-f-]{36}\)\.$/)
    expect(await page.getAttribute('#video-status', 'class')).toBe('status')
    expect(await page.textContent('#video-progress .label')).toBe('cancelled')
    expect(await page.isDisabled('#video-cancel')).toBe(true)
  })

  it("takes a URL too, and shows the service's error for one it refuses", async () => {
    await page.selectOption('#video-kind', 'url')
    await page.fill('#video-url', 'http://127.0.0.1:9/clip.mp4') // loopback: refused by the input rules
    await page.click('#video-run')
    await page.waitForFunction(
      () => document.getElementById('video-status')!.classList.contains('error'),
      null,
      { timeout: JOB_TIMEOUT_MS },
    )
    // Refused at submission (invalid_parameter) or when the job fetches it (input_fetch_failed), as the input rules decide.
    expect(await page.textContent('#video-status')).toMatch(
      /^(input_fetch_failed|invalid_parameter): /,
    )
    expect(await page.getAttribute('#video-progress', 'aria-valuenow')).toBe('0')
    await shot('05-url-refused')
    // The preview's own attempt to load the bad URL is the only failure the console may show.
    expect(pageErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([])
  })

  it('links to the API reference, which renders every operation of /openapi.json with nothing blocked', async () => {
    const errorsBefore = pageErrors.length
    await page.click('header.top a[href="/docs"]')
    await page.waitForURL(`${baseUrl}/docs`)
    expect(await page.textContent('h1')).toMatch(/^Tailor API /)
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.values(doc.paths).reduce(
      (n, item) => n + Object.keys(item).filter((k) => k !== 'parameters').length,
      0,
    )
    expect(await page.locator('article.op').count()).toBe(operations)
    expect(pageErrors.slice(errorsBefore), pageErrors.join('\n')).toEqual([]) // no CSP violation, nothing failed to load
    await page.screenshot({ path: join(SCREENSHOTS, '06-docs.png') })
    // The 401 example is the sentence a wrong key really gets.
    const real = (await (
      await fetch(`${baseUrl}/v1/credits`, { headers: { 'x-api-key': 'tk_wrong' } })
    ).json()) as { error: string }
    const examples = await page.$$eval('pre.example', (ps) => ps.map((p) => p.textContent ?? ''))
    const auth = examples
      .map((t) => JSON.parse(t) as { error?: string; error_code?: string })
      .filter((e) => e.error_code === 'invalid_auth_token')
    expect(auth.length).toBeGreaterThan(0)
    for (const e of auth) expect(e.error).toBe(real.error)
  })
})

describe('playground and /docs at 390 px (a phone)', () => {
  let phone: Page
  beforeAll(async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 1,
      isMobile: true,
      hasTouch: true,
    })
    phone = await context.newPage()
    phone.on('pageerror', (e) => pageErrors.push(e.message))
  })
  const overflow = () =>
    phone.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }))

  it('/docs fits the width: nothing scrolls sideways', async () => {
    await phone.goto(`${baseUrl}/docs`)
    const o = await overflow()
    expect(o.client).toBe(390)
    expect(o.scroll).toBeLessThanOrEqual(o.client)
    await phone.screenshot({ path: join(SCREENSHOTS, '07-docs-390.png') })
  })

  it(
    'the playground fits the width, and a finished try-on scrolls its result into view',
    async () => {
      await phone.goto(`${baseUrl}/`)
      await phone.fill('#api-key', apiKey)
      await phone.waitForFunction(
        () => (document.querySelector('#person-sample') as HTMLSelectElement).options.length > 0,
        null,
        { timeout: UI_TIMEOUT_MS },
      )
      await phone.selectOption('#person-sample', 'person_02.jpg')
      await phone.selectOption('#garment-sample', 'garment_upper_01.jpg')
      const o = await overflow()
      expect(o.scroll).toBeLessThanOrEqual(o.client)
      await phone.click('#tryon-run')
      const scrollBefore = await phone.evaluate(() => window.scrollY)
      // The click sets the status to 'Starting…' at once (an earlier error cleared) and it turns
      // 'ok' only after the result image has loaded (playground runTryOn: showImage, then
      // "Done in …"); waiting for the image alone raced that last step.
      await phone.waitForFunction(
        () =>
          ['ok', 'error'].some((k) =>
            document.getElementById('tryon-status')!.classList.contains(k),
          ),
        null,
        { timeout: JOB_TIMEOUT_MS },
      )
      expect(await phone.textContent('#tryon-status')).toMatch(/^Done in/)
      // Smooth scrolling: wait until the result figure is inside the viewport.
      await phone.waitForFunction(
        () => {
          const r = document.querySelector('#tryon figure.result')!.getBoundingClientRect()
          return r.top >= -1 && r.bottom <= window.innerHeight + 1
        },
        null,
        { timeout: UI_TIMEOUT_MS },
      )
      expect(await phone.evaluate(() => window.scrollY)).toBeGreaterThan(scrollBefore + 300) // it was well below the button
      await phone.screenshot({ path: join(SCREENSHOTS, '08-try-on-390.png') })
      // The wrong key's 401s (key check, samples) and the refused URL's preview are the only failures the console may show.
      expect(pageErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )
})
