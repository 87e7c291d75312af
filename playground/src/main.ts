/**
 * The playground page's script (bundled by build.ts). Every call to the service goes through the
 * typed client @tailor/client; local files and samples reach the service as uploads
 * (POST /v1/uploads → tailor://uploads/<id>), URLs are passed as they are.
 */
import {
  TailorClient,
  TailorError,
  type JobStatusDocument,
  type OutputFormat,
} from '@tailor/client'
import { progressLabel } from './progress-label.ts'

const KEY_STORAGE = 'tailor.apiKey'
/** Poll often: the page shows live progress (the service's rate limit answers 429 → the client waits). */
const POLL_INTERVAL_MS = 300
const ALPHA_FORMATS: readonly string[] = ['webm_vp9', 'mov_proresks', 'gif']
const EXTENSIONS: Record<string, string> = {
  mp4_h264: 'mp4',
  mp4_h265: 'mp4',
  webm_vp9: 'webm',
  mov_h265: 'mov',
  mov_proresks: 'mov',
  mkv_h264: 'mkv',
  mkv_h265: 'mkv',
  mkv_vp9: 'mkv',
  gif: 'gif',
}

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`playground: #${id} missing`)
  return el as T
}

// ---- API key ---------------------------------------------------------------------------------
const keyInput = $<HTMLInputElement>('api-key')
const remember = $<HTMLInputElement>('api-key-remember')
keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? ''
const saveKey = (): void => {
  if (remember.checked && keyInput.value !== '') sessionStorage.setItem(KEY_STORAGE, keyInput.value)
  else sessionStorage.removeItem(KEY_STORAGE)
}
keyInput.addEventListener('input', saveKey)
remember.addEventListener('change', saveKey)
const keyStatus = $('key-status')

/**
 * Checks the key as soon as it is entered (GET /v1/credits: answers any valid key, 401 for a wrong
 * one), so a wrong key is found before Run. Only the latest check is shown.
 */
let keyCheck = 0
async function checkKey(): Promise<void> {
  const key = keyInput.value.trim()
  const mine = ++keyCheck
  keyInput.removeAttribute('aria-invalid')
  if (key === '') {
    keyStatus.textContent = ''
    keyStatus.className = 'key-status'
    return
  }
  keyStatus.textContent = 'Checking the key…'
  keyStatus.className = 'key-status'
  try {
    const credits = await new TailorClient({ baseUrl: location.origin, apiKey: key }).getCredits()
    if (mine !== keyCheck) return
    keyStatus.textContent = `Key accepted${credits.unlimited ? '' : ` · ${credits.credits_remaining} credits left`}.`
    keyStatus.className = 'key-status ok'
  } catch (err) {
    if (mine !== keyCheck) return
    const wrong = err instanceof TailorError && err.errorCode === 'invalid_auth_token'
    if (wrong) keyInput.setAttribute('aria-invalid', 'true')
    keyStatus.textContent = wrong
      ? `This key is not accepted: ${err.message} Keys look like tk_…; the service's start banner shows the first one.`
      : `The key could not be checked: ${describeError(err)}`
    keyStatus.className = 'key-status error'
  }
}

function client(): TailorClient {
  const apiKey = keyInput.value.trim()
  if (apiKey === '') {
    keyInput.focus()
    throw new TailorError('Paste an API key first.', { status: 0, errorCode: 'invalid_auth_token' })
  }
  return new TailorClient({ baseUrl: location.origin, apiKey })
}

// ---- status lines --------------------------------------------------------------------------------
function say(el: HTMLElement, text: string, kind: 'info' | 'ok' | 'error' = 'info'): void {
  el.textContent = text
  el.className = `status${kind === 'info' ? '' : ` ${kind}`}`
}
const describeError = (err: unknown): string =>
  err instanceof TailorError
    ? `${err.errorCode}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}`
    : err instanceof Error
      ? err.message
      : String(err)

// ---- sources: sample, URL or local file ---------------------------------------------------------
interface Samples {
  images: string[]
  videos: string[]
}
let samplesLoaded: Promise<Samples> | null = null
let samplesKey = ''

/** The sample list, fetched with the key (samples are served to key holders only). */
function loadSamples(): Promise<Samples> {
  const key = keyInput.value.trim()
  if (samplesLoaded === null || samplesKey !== key) {
    samplesKey = key
    samplesLoaded =
      key === ''
        ? Promise.resolve({ images: [], videos: [] })
        : fetch('/playground/samples', { headers: { 'X-API-KEY': key } }).then(async (r) => {
            if (r.ok) return (await r.json()) as Samples
            samplesLoaded = null // a wrong key or a passing failure: ask again next time
            return { images: [], videos: [] }
          })
  }
  return samplesLoaded
}

async function fetchSample(name: string): Promise<Blob> {
  const r = await fetch(`/playground/samples/${encodeURIComponent(name)}`, {
    headers: { 'X-API-KEY': keyInput.value.trim() },
  })
  if (!r.ok) throw new Error(`Sample ${name}: HTTP ${r.status}`)
  return r.blob()
}

type Kind = 'sample' | 'url' | 'file'

class Source {
  readonly kind: HTMLSelectElement
  readonly sample: HTMLSelectElement
  readonly url: HTMLInputElement
  readonly file: HTMLInputElement
  #objectUrl: string | null = null
  #userChoseKind = false
  #sampleBlob: { name: string; blob: Promise<Blob> } | null = null

  constructor(
    readonly name: string,
    readonly media: 'image' | 'video',
    readonly preview: HTMLImageElement | HTMLVideoElement,
    readonly prefer: RegExp,
  ) {
    this.kind = $(`${name}-kind`)
    this.sample = $(`${name}-sample`)
    this.url = $(`${name}-url`)
    this.file = $(`${name}-file`)
    this.kind.addEventListener('change', () => {
      this.#userChoseKind = true
      this.#show()
    })
    this.sample.addEventListener('change', () => void this.refreshPreview())
    this.url.addEventListener('change', () => void this.refreshPreview())
    this.file.addEventListener('change', () => void this.refreshPreview())
    this.#show()
  }

  get selected(): Kind {
    return this.kind.value as Kind
  }

  #show(): void {
    this.sample.hidden = this.selected !== 'sample'
    this.url.hidden = this.selected !== 'url'
    this.file.hidden = this.selected !== 'file'
    void this.refreshPreview()
  }

  /** Fills the sample list (names matching `prefer` first); without samples, URL is the default. */
  fill(s: Samples): void {
    const names = this.media === 'image' ? s.images : s.videos
    const sorted = [
      ...names.filter((n) => this.prefer.test(n)),
      ...names.filter((n) => !this.prefer.test(n)),
    ]
    const before = this.sample.value
    this.sample.replaceChildren(...sorted.map((n) => new Option(n, n)))
    if (sorted.includes(before)) this.sample.value = before
    const sampleOption = this.kind.querySelector<HTMLOptionElement>('option[value="sample"]')!
    sampleOption.disabled = sorted.length === 0
    if (sorted.length === 0 && this.selected === 'sample') this.kind.value = 'url'
    else if (sorted.length > 0 && !this.#userChoseKind) this.kind.value = 'sample'
    this.#show()
  }

  #sample(name: string): Promise<Blob> {
    if (this.#sampleBlob?.name !== name) this.#sampleBlob = { name, blob: fetchSample(name) }
    return this.#sampleBlob.blob
  }

  async refreshPreview(): Promise<void> {
    if (this.#objectUrl !== null) URL.revokeObjectURL(this.#objectUrl)
    this.#objectUrl = null
    let src = ''
    try {
      if (this.selected === 'sample' && this.sample.value !== '') {
        src = this.#objectUrl = URL.createObjectURL(await this.#sample(this.sample.value))
      } else if (this.selected === 'url' && this.url.value !== '') src = this.url.value
      else if (this.selected === 'file' && this.file.files?.[0]) {
        src = this.#objectUrl = URL.createObjectURL(this.file.files[0])
      }
    } catch {
      src = ''
    }
    if (src === '') this.preview.removeAttribute('src')
    else this.preview.src = src
    if (this.preview instanceof HTMLVideoElement) {
      // No empty (black) player before a video is chosen: the frame says so instead.
      this.preview.hidden = src === ''
      const empty = document.getElementById(`${this.preview.id}-empty`)
      if (empty !== null) empty.hidden = src !== ''
      if (src !== '') void this.preview.play().catch(() => undefined)
    }
  }

  /** The input URL to send: the URL as given, or the upload of the sample or file. */
  async resolve(c: TailorClient, status: (t: string) => void): Promise<string> {
    if (this.selected === 'url') {
      const u = this.url.value.trim()
      if (u === '') throw new Error(`Give the ${this.name} URL.`)
      return u
    }
    let blob: Blob
    if (this.selected === 'sample') {
      if (this.sample.value === '') throw new Error(`Choose a ${this.name} sample.`)
      blob = await this.#sample(this.sample.value)
    } else {
      const f = this.file.files?.[0]
      if (f === undefined) throw new Error(`Choose a ${this.name} file.`)
      blob = f
    }
    status(`Uploading the ${this.name} (${(blob.size / 1e6).toFixed(1)} MB)…`)
    const up = await c.upload(
      blob,
      blob.type || (this.media === 'image' ? 'image/jpeg' : 'video/mp4'),
    )
    return up.url
  }
}

// ---- try-on ------------------------------------------------------------------------------------
const person = new Source('person', 'image', $('person-preview'), /person/i)
const garment = new Source('garment', 'image', $('garment-preview'), /garment/i)
const tryOnRun = $<HTMLButtonElement>('tryon-run')
const tryOnStatus = $('tryon-status')
const tryOnResult = $<HTMLImageElement>('tryon-result')
const tryOnDownload = $<HTMLAnchorElement>('tryon-download')

tryOnRun.addEventListener('click', () => void runTryOn())

async function runTryOn(): Promise<void> {
  tryOnRun.disabled = true
  tryOnResult.removeAttribute('src')
  tryOnDownload.hidden = true
  // At once, so a previous run's outcome (done or an error) never stands beside this one.
  say(tryOnStatus, 'Starting…')
  try {
    const c = client()
    const status = (t: string): void => say(tryOnStatus, t)
    const person_image_url = await person.resolve(c, status)
    const garment_image_url = await garment.resolve(c, status)
    status('Submitting…')
    const started = performance.now()
    const { job_id } = await c.tryOn({
      person_image_url,
      garment_image_url,
      preprocess_garment: $<HTMLInputElement>('tryon-preprocess').checked ? 'true' : 'false',
      remove_background: $<HTMLInputElement>('tryon-white').checked ? 'true' : 'false',
      wait_for_result: 'false',
    })
    const doc = await c.waitForJob('try-on', job_id, {
      pollIntervalMs: POLL_INTERVAL_MS,
      onProgress: (d) => status(`Job ${d.job_id}: ${d.status}…`),
    })
    await showImage(tryOnResult, doc.result_url!)
    tryOnDownload.href = doc.result_url!
    tryOnDownload.download = `tailor-try-on-${job_id}.jpg`
    tryOnDownload.hidden = false
    reveal(tryOnResult.closest('figure')!)
    say(
      tryOnStatus,
      `Done in ${((performance.now() - started) / 1000).toFixed(1)} s (job ${job_id}).`,
      'ok',
    )
  } catch (err) {
    say(tryOnStatus, describeError(err), 'error')
  } finally {
    tryOnRun.disabled = false
  }
}

/** Brings a result into view when it is not (on a phone the gallery is stacked below the button). */
function reveal(el: Element): void {
  const r = el.getBoundingClientRect()
  if (r.top < 0 || r.bottom > window.innerHeight) {
    el.scrollIntoView({
      block: r.height > window.innerHeight ? 'start' : 'end',
      behavior: 'smooth',
    })
  }
}

function showImage(img: HTMLImageElement, src: string): Promise<void> {
  return new Promise((resolve, reject) => {
    img.onload = () => resolve()
    img.onerror = () => reject(new Error('The result could not be displayed.'))
    img.src = src
  })
}

// ---- video background removal --------------------------------------------------------------------
const video = new Source('video', 'video', $('video-preview'), /short|clip|video/i)
const format = $<HTMLSelectElement>('video-format')
const transparent = $<HTMLInputElement>('video-transparent')
const color = $<HTMLInputElement>('video-color')
const videoRun = $<HTMLButtonElement>('video-run')
const videoCancel = $<HTMLButtonElement>('video-cancel')
const videoStatus = $('video-status')
const progress = $('video-progress')
const stage = $('video-stage')
const videoResult = $<HTMLVideoElement>('video-result')
const gifResult = $<HTMLImageElement>('video-result-gif')
const videoDownload = $<HTMLAnchorElement>('video-download')
let running: {
  client: TailorClient
  jobId: string | null
  abort: AbortController
  cancelledByUser: boolean
} | null = null

const syncBackground = (): void => {
  const alpha = ALPHA_FORMATS.includes(format.value)
  if (!alpha) transparent.checked = false
  transparent.disabled = !alpha
  color.disabled = transparent.checked
}
format.addEventListener('change', syncBackground)
transparent.addEventListener('change', syncBackground)
syncBackground()

function setProgress(fraction: number, label: string): void {
  const pct = Math.round(Math.min(1, Math.max(0, fraction)) * 100)
  progress.setAttribute('aria-valuenow', String(pct))
  progress.querySelector<HTMLElement>('.bar')!.style.width = `${pct}%`
  progress.querySelector<HTMLElement>('.label')!.textContent = label
}

videoRun.addEventListener('click', () => void runVideo())
videoCancel.addEventListener('click', () => void cancelVideo())

async function runVideo(): Promise<void> {
  videoRun.disabled = true
  videoDownload.hidden = true
  videoResult.hidden = true
  videoResult.removeAttribute('src')
  gifResult.hidden = true
  gifResult.removeAttribute('src')
  stage.classList.remove('checkerboard')
  setProgress(0, 'starting')
  const abort = new AbortController()
  try {
    const c = client()
    running = { client: c, jobId: null, abort, cancelledByUser: false }
    const status = (t: string): void => say(videoStatus, t)
    const video_url = await video.resolve(c, status)
    const output_format = format.value as OutputFormat
    const background_color = transparent.checked ? 'transparent' : color.value
    status('Submitting…')
    const started = performance.now()
    const { job_id } = await c.removeVideoBackground(
      { video_url, output_format, background_color },
      { signal: abort.signal },
    )
    running.jobId = job_id
    videoCancel.disabled = false
    const doc = await c.waitForJob('remove-background', job_id, {
      pollIntervalMs: POLL_INTERVAL_MS,
      signal: abort.signal,
      onProgress: (d: JobStatusDocument) => {
        setProgress(d.progress, progressLabel(d))
        status(`Job ${d.job_id}: ${d.status}`)
      },
    })
    setProgress(1, 'done')
    showVideoResult(doc.result_url!, output_format, background_color === 'transparent')
    videoDownload.href = doc.result_url!
    videoDownload.download = `tailor-${job_id}.${EXTENSIONS[output_format] ?? 'bin'}`
    videoDownload.hidden = false
    reveal(stage.closest('figure')!)
    say(
      videoStatus,
      `Done in ${((performance.now() - started) / 1000).toFixed(1)} s (job ${job_id}).`,
      'ok',
    )
  } catch (err) {
    const cancelled = err instanceof TailorError && err.errorCode === 'job_cancelled'
    setProgress(0, cancelled ? 'cancelled' : 'failed')
    // The user's own Cancel is what they asked for, not an error.
    if (cancelled && running?.cancelledByUser === true) {
      say(videoStatus, `Cancelled (job ${err.jobId ?? running.jobId}).`)
    } else say(videoStatus, describeError(err), 'error')
  } finally {
    running = null
    videoRun.disabled = false
    videoCancel.disabled = true
  }
}

function showVideoResult(url: string, fmt: string, isTransparent: boolean): void {
  stage.classList.toggle('checkerboard', isTransparent)
  if (fmt === 'gif') {
    gifResult.src = url
    gifResult.hidden = false
    return
  }
  videoResult.src = url
  videoResult.hidden = false
  videoResult.onerror = () =>
    say(videoStatus, `This browser cannot play ${fmt}; use the download link.`, 'info')
  void videoResult.play().catch(() => undefined)
}

async function cancelVideo(): Promise<void> {
  const r = running
  if (r?.jobId == null) return
  videoCancel.disabled = true
  r.cancelledByUser = true
  say(videoStatus, `Cancelling job ${r.jobId}…`)
  try {
    await r.client.cancelJob('remove-background', r.jobId)
  } catch (err) {
    r.cancelledByUser = false // e.g. it finished first (job_finished): say what happened
    say(videoStatus, describeError(err), 'error')
  }
}

// ---- start -------------------------------------------------------------------------------------
async function fillSamples(): Promise<void> {
  const s = await loadSamples()
  for (const src of [person, garment, video]) src.fill(s)
}
let keyTimer: ReturnType<typeof setTimeout> | undefined
keyInput.addEventListener('input', () => {
  for (const el of [tryOnStatus, videoStatus]) if (el.classList.contains('error')) say(el, '')
  clearTimeout(keyTimer)
  keyTimer = setTimeout(() => {
    void fillSamples()
    void checkKey()
  }, 250)
})
void fillSamples()
void checkKey()
