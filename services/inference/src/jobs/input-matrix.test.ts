/**
 * Input and SSRF matrix, layer 2 (cases in input-matrix.cases.ts, table in docs/input-matrix.md):
 * whole jobs through `runJob` with the real download guard, real sharp and real ffprobe/ffmpeg;
 * only our engine ports are hand-written fakes (these inputs never reach a network).
 *
 * Safety: the only server is the test's own, on 127.0.0.1 and ::1; a connection tripwire
 * (`watchConnections`) records every connection attempt in this process. After every case: the
 * expected outcome, an empty work root, no ffmpeg/ffprobe child left, no non-loopback attempt.
 * "Never opened" is proved with a FIFO: opening a FIFO for writing completes only once a reader
 * opens it, so a pending writer that is still pending after the job shows nothing read it.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { constants } from 'node:fs'
import { mkdtemp, open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { crc32, deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { JobEnvelope, JobOutcome } from '@tailor/proto'
import { safeFetchToFile, type Resolver, type SafeFetchOptions } from '@tailor/proto/net'
import { matrixTitle, watchConnections, type ConnectionLog } from '@tailor/proto/net/testing'
import { childFfmpegs } from '../media/video.test-support.ts'
import { JOB_CASES } from './input-matrix.cases.ts'
import { removeBackground, type MattingEngine } from './remove-background.ts'
import { runJob } from './run-job.ts'
import type { TryOnEngine, TryOnImage } from './try-on.ts'

/** Generous bounds: they catch hangs, they are not speed targets. */
const CASE_TIMEOUT_MS = 60_000
const SETUP_TIMEOUT_MS = 60_000
const FETCH = {
  maxBytes: 100 * 1024 * 1024,
  connectTimeoutMs: 10_000,
  timeoutMs: 30_000,
  maxRedirects: 5,
}
const GIF_FRAMES = 5000
const GIF_SIDE = 96

type Id = (typeof JOB_CASES)[number]['id']
type Outcome = JobOutcome & { frames?: number }

// ---- the world of the test: one loopback server, a resolver stub, a FIFO --------------------------

interface Served {
  body: Buffer
  type: string
}
const files = new Map<string, Served>()
const hits: string[] = []
let server4: Server
let server6: Server
let port: number
let port6: number
let base: string
let root: string
let workRoot: string
let fifo: string
let log: ConnectionLog

/** `localhost` answers as the system resolver would; nothing else resolves. */
const resolver: Resolver = async (host) => {
  if (host === 'localhost') {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]
  }
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
}

async function listen(host: string): Promise<Server> {
  const s = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.push(path)
    const f = files.get(path)
    if (f === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body)
  })
  await new Promise<void>((r) => s.listen(0, host, r))
  return s
}

// ---- crafted media --------------------------------------------------------------------------------

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([len, body, crc])
}

/** A 1-bit greyscale PNG of w×h zeros: a few KB that would inflate to w·h·4 bytes of RGBA. */
function pngBomb(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(w, 0)
  ihdr.writeUInt32BE(h, 4)
  ihdr[8] = 1 // bit depth
  ihdr[9] = 0 // greyscale
  const rows = Buffer.alloc((1 + Math.ceil(w / 8)) * h)
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([
    sig,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A GIF whose logical screen is w×h, holding `frames` 1×1 frames `delayCs` hundredths apart. */
function gif(w: number, h: number, frames: number, delayCs: number): Buffer {
  const size = Buffer.alloc(4)
  size.writeUInt16LE(w, 0)
  size.writeUInt16LE(h, 2)
  const parts = [
    Buffer.from('GIF89a', 'latin1'),
    size,
    Buffer.from([0x80, 0, 0, 0, 0, 0, 255, 255, 255]),
  ]
  if (frames > 1) parts.push(Buffer.from('\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00', 'latin1'))
  const delay = Buffer.from([0x21, 0xf9, 0x04, 0x00, delayCs & 255, delayCs >> 8, 0x00, 0x00])
  const frame = Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00])
  for (let i = 0; i < frames; i++) parts.push(delay, frame)
  parts.push(Buffer.from([0x3b]))
  return Buffer.concat(parts)
}

/** A real JPEG whose SOF0 header is rewritten to claim w×h. */
async function jpegClaiming(w: number, h: number): Promise<Buffer> {
  const jpg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
    .jpeg({ mozjpeg: false })
    .toBuffer()
  const sof = jpg.indexOf(Buffer.from([0xff, 0xc0]))
  jpg.writeUInt16BE(h, sof + 5)
  jpg.writeUInt16BE(w, sof + 7)
  return jpg
}

// ---- FIFO: proof that a file named in an input is never opened -----------------------------------

/** Starts a writer that completes only when something opens `fifo` for reading. */
function armFifo(): { opened: () => boolean; disarm: () => Promise<void> } {
  let opened = false
  let writer: FileHandle | undefined
  const pending = open(fifo, constants.O_WRONLY).then((fh) => {
    opened = true
    writer = fh
  })
  return {
    opened: () => opened,
    async disarm() {
      // Open a reader ourselves so that the pending writer completes, then close both.
      const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
      await pending
      await writer?.close()
      await reader.close()
    },
  }
}

// ---- the job, composed as start.ts composes it, with fake engines ----------------------------------

const garmentsSeen: TryOnImage[] = []
const tryOnEngine: TryOnEngine = {
  provider: 'cpu',
  async tryOn(person, garment) {
    garmentsSeen.push(garment)
    return { rgb: person.rgb, category: 'upper', detectedCategory: 'upper', timings: {} }
  },
  close: async () => undefined,
}
const matting: MattingEngine = {
  provider: 'cpu',
  providerFallbacks: [],
  openStream: ({ width, height }, background) => ({
    next: async (rgb) =>
      background.kind === 'transparent'
        ? new Uint8Array(width * height * 4).fill(255)
        : Uint8Array.from(rgb),
    dispose: () => undefined,
  }),
  close: async () => undefined,
}

async function run(job: JobEnvelope, allowLoopback: boolean): Promise<Outcome> {
  const options: SafeFetchOptions = { ...FETCH, allowLoopback, resolver }
  const fetchInput = (url: string, dest: string, signal: AbortSignal): Promise<unknown> =>
    safeFetchToFile(url, dest, options, signal)
  return runJob(
    job,
    { signal: new AbortController().signal, onProgress: () => undefined },
    {
      workRoot,
      fetchInput,
      results: { put: async (_key, path) => ({ bytes: (await stat(path)).size }) },
      removeBackground: (req, ctx) =>
        removeBackground(req, { matting, signal: ctx.signal, onProgress: ctx.onProgress }),
      tryOn: {
        engine: tryOnEngine,
        fetchInput: (url, dest, signal) =>
          safeFetchToFile(url, dest, { ...options, maxBytes: 25 * 1024 * 1024 }, signal),
      },
    },
  )
}

const video = (url: string, allowLoopback = true): Promise<Outcome> =>
  run(
    {
      id: randomUUID(),
      kind: 'remove-background',
      params: { video_url: url, background_color: '#000000', output_format: 'mp4_h264' },
      createdAt: new Date().toISOString(),
    },
    allowLoopback,
  )

const tryOn = (person: string, garment: string, allowLoopback = true): Promise<Outcome> =>
  run(
    {
      id: randomUUID(),
      kind: 'try-on',
      params: {
        person_image_url: person,
        garment_image_url: garment,
        garment_mode: 'auto',
        garment_photo_type: 'auto',
        preprocess_garment: true,
        remove_background: false,
      },
      createdAt: new Date().toISOString(),
    },
    allowLoopback,
  )

/** Runs a case whose input names the FIFO, and checks the FIFO was never opened. */
async function neverOpensFifo(job: () => Promise<Outcome>): Promise<Outcome> {
  const f = armFifo()
  try {
    return await job()
  } finally {
    const opened = f.opened()
    await f.disarm()
    expect(opened, 'the local file named in the input was opened').toBe(false)
  }
}

/** The message names the field, then the one refusal sentence (nothing about the address). */
const REFUSED_LOOPBACK =
  /^(video_url|person_image_url|garment_image_url): The URL does not point at a publicly reachable host; use a publicly accessible URL\.$/

const RUN = {
  L01: () => video(`http://127.1:${port}/clip.mp4`, false),
  L02: () => video(`http://0x7f000001:${port}/clip.mp4`, false),
  L03: () => video(`http://2130706433:${port}/clip.mp4`, false),
  L04: () => video(`http://0177.0.0.1:${port}/clip.mp4`, false),
  L05: () => video(`http://[::1]:${port6}/clip.mp4`, false),
  L06: () => video(`http://[::ffff:127.0.0.1]:${port}/clip.mp4`, false),
  L07: () => video(`http://0.0.0.0:${port}/clip.mp4`, false),
  L08: () =>
    tryOn(`http://localhost:${port}/person.jpg`, `http://localhost:${port}/garment.jpg`, false),
  L09: () => tryOn(`http://127.1:${port}/person.jpg`, `http://127.1:${port}/garment.jpg`),
  M01: () => tryOn(`${base}/bomb.png`, `${base}/garment.jpg`),
  M02: () => tryOn(`${base}/huge.jpg`, `${base}/garment.jpg`),
  M03: async () => {
    garmentsSeen.length = 0
    const o = await tryOn(`${base}/person.jpg`, `${base}/frames.gif`)
    expect(garmentsSeen.map((g) => [g.width, g.height])).toEqual([[GIF_SIDE, GIF_SIDE]])
    return o
  },
  M04: () => video(`${base}/frames.gif`),
  M05: () => video(`${base}/wide.gif`),
  M06: () => video(`${base}/huge.gif`),
  M07: () => neverOpensFifo(() => video(`${base}/local.m3u8`)),
  M08: () => video(`${base}/remote.m3u8`),
  M09: () => neverOpensFifo(() => video(`${base}/list.ffconcat`)),
  M10: () => neverOpensFifo(() => tryOn(`${base}/person.svg`, `${base}/garment.jpg`)),
  M11: () => video(`${base}/page.html`),
  M12: () => tryOn(`${base}/page.jpg`, `${base}/garment.jpg`),
  M13: () => tryOn(`${base}/person-as-html.jpg`, `${base}/garment.jpg`),
  M14: () => tryOn(`${base}/truncated.png`, `${base}/garment.jpg`),
  M15: async () => {
    const o = await video(`${base}/fast.mp4`)
    expect(
      (o as { frames?: number }).frames,
      'frames processed at the 60 fps cap, not 3000',
    ).toBeLessThanOrEqual(181)
    return o
  },
} satisfies Record<Id, () => Promise<Outcome>>

// ---- set-up ----------------------------------------------------------------------------------------

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tailor-matrix-job-'))
  workRoot = join(root, 'work')
  fifo = join(root, 'secret.ts')
  await promisify(execFile)('mkfifo', [fifo])
  log = watchConnections()
  server4 = await listen('127.0.0.1')
  server6 = await listen('::1')
  port = (server4.address() as AddressInfo).port
  port6 = (server6.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`

  const person = await sharp({
    create: { width: 160, height: 200, channels: 3, background: '#a08070' },
  })
    .jpeg()
    .toBuffer()
  const noise = await sharp(
    Buffer.from(Array.from({ length: 128 * 128 * 3 }, (_, i) => (i * 7919) % 251)),
    { raw: { width: 128, height: 128, channels: 3 } },
  )
    .png()
    .toBuffer()
  const html = Buffer.from(
    '<!doctype html><html><head><title>Not found</title></head><body><h1>404</h1></body></html>\n',
  )
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="200">` +
      `<image href="file://${fifo}" xlink:href="file://${fifo}" width="200" height="200"/></svg>`,
  )
  const served: Record<string, Served> = {
    '/clip.mp4': { body: Buffer.alloc(1024), type: 'video/mp4' },
    '/person.jpg': { body: person, type: 'image/jpeg' },
    '/garment.jpg': { body: person, type: 'image/jpeg' },
    '/person-as-html.jpg': { body: person, type: 'text/html; charset=utf-8' },
    '/bomb.png': { body: pngBomb(20_000, 20_000), type: 'image/png' },
    '/huge.jpg': { body: await jpegClaiming(50_000, 50_000), type: 'image/jpeg' },
    '/frames.gif': { body: gif(GIF_SIDE, GIF_SIDE, GIF_FRAMES, 2), type: 'image/gif' },
    '/wide.gif': { body: gif(16_000, 16_000, 1, 10), type: 'image/gif' },
    '/huge.gif': { body: gif(65_535, 65_535, 1, 10), type: 'image/gif' },
    // Playlists ffmpeg itself would follow by default (a .ts segment, same protocol as the list).
    '/local.m3u8': {
      body: Buffer.from(
        `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${fifo}\n#EXT-X-ENDLIST\n`,
      ),
      type: 'application/vnd.apple.mpegurl',
    },
    '/remote.m3u8': {
      body: Buffer.from(
        `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nhttp://127.0.0.1:${port}/canary.ts\n#EXT-X-ENDLIST\n`,
      ),
      type: 'application/vnd.apple.mpegurl',
    },
    '/list.ffconcat': {
      body: Buffer.from(`ffconcat version 1.0\nfile '${fifo}'\nfile '/etc/passwd'\n`),
      type: 'video/mp4',
    },
    '/person.svg': { body: svg, type: 'image/png' },
    '/page.html': { body: html, type: 'video/mp4' },
    '/page.jpg': { body: html, type: 'image/jpeg' },
    '/truncated.png': { body: noise.subarray(0, Math.floor(noise.length / 2)), type: 'image/png' },
  }
  // 3 s at 1000 fps: 3000 frames that pass the duration limit (issue 11 §3).
  const fast = join(root, 'fast.mp4')
  await promisify(execFile)('ffmpeg', [
    '-nostdin',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=256x256:rate=1000',
    '-t',
    '3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    fast,
  ])
  served['/fast.mp4'] = { body: await readFile(fast), type: 'video/mp4' }
  for (const [k, v] of Object.entries(served)) files.set(k, v)
}, SETUP_TIMEOUT_MS)

afterAll(async () => {
  log?.stop()
  for (const s of [server4, server6]) {
    s?.closeAllConnections()
    await new Promise((r) => s?.close(r))
  }
  if (root) await rm(root, { recursive: true, force: true })
})

beforeEach(() => {
  log.clear()
  hits.length = 0
})

describe('input matrix: whole jobs', () => {
  it.each(JOB_CASES.map((c) => [matrixTitle(c), c] as const))(
    '%s',
    async (_title, c) => {
      const outcome = await RUN[c.id]()

      if (c.expected === 'completed') {
        expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 'succeeded' })
      } else {
        expect(outcome, JSON.stringify(outcome)).toMatchObject({
          status: 'failed',
          code: c.expected,
        })
      }
      expect(await readdir(workRoot), 'nothing is left in the work root').toEqual([])
      expect(await childFfmpegs(), 'no ffmpeg or ffprobe is left running').toEqual([])
      expect(log.blocked, 'no connection to a non-loopback address was ever attempted').toEqual([])
      expect(
        new Set(log.attempts).size <= 1 &&
          log.attempts.every((a) => a === '127.0.0.1' || a === '::1'),
      ).toBe(true)
      expect(hits, 'nothing named inside an input was requested').not.toContain('/canary.ts')
      if (c.id.startsWith('L') && c.expected !== 'completed') {
        expect((outcome as { message: string }).message).toMatch(REFUSED_LOOPBACK)
        expect(log.attempts, 'refused before any connection was attempted').toEqual([])
        expect(hits).toEqual([])
      }
    },
    CASE_TIMEOUT_MS,
  )
})
