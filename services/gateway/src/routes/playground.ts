/**
 * The browser playground: GET / (its page), GET /playground/{asset} (its script and style sheet,
 * built into PLAYGROUND_DIR by `pnpm build:playground`), and the operator's sample media:
 * GET /playground/samples (list) and GET /playground/samples/{name} (one file), served only from
 * PLAYGROUND_SAMPLES_DIR when it is set and only to callers with an API key (the caller mounts
 * the key check on /playground/samples/*).
 */
import { createReadStream } from 'node:fs'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { AppError } from '@tailor/proto'
import type { AppEnv } from '../app.ts'
import type { Logger } from '../logger.ts'

export interface PlaygroundOptions {
  /** Folder holding index.html, playground.js and playground.css (the build output). */
  dir: string
  /** Folder of sample media offered by the page; null serves none. */
  samplesDir: string | null
  logger: Logger
}

const ASSETS = {
  'playground.js': 'text/javascript; charset=utf-8',
  'playground.css': 'text/css; charset=utf-8',
} as const
const IMAGE_TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
}
const VIDEO_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.gif': 'image/gif',
}
/** A sample name: one plain file name, no path, no hidden files. */
const SAMPLE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/**
 * Scripts only from this origin; images and videos also from anywhere (inputs given as URLs,
 * result URLs on PUBLIC_BASE_URL) and from blob: (local previews); fetch/XHR to this origin only.
 */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data: http: https:; " +
  "media-src 'self' blob: http: https:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tailor playground</title></head>
<body style="font:16px system-ui;margin:40px"><h1>The playground is not built</h1>
<p>Run <code>pnpm build:playground</code> (part of <code>bash scripts/setup.sh</code>) and reload.
The <a href="/docs">API reference</a> works without it.</p></body></html>`

/** Content-Type of a sample file, or null when its extension is not offered. */
const sampleType = (name: string): string | null => {
  const ext = extname(name).toLowerCase()
  return IMAGE_TYPES[ext] ?? VIDEO_TYPES[ext] ?? null
}

export function playgroundRoutes(o: PlaygroundOptions) {
  const samples = async (): Promise<{ images: string[]; videos: string[] }> => {
    if (o.samplesDir === null) return { images: [], videos: [] }
    const entries = await readdir(o.samplesDir, { withFileTypes: true }).catch((err: unknown) => {
      o.logger.warn({ err, dir: o.samplesDir }, 'playground samples dir unreadable')
      return []
    })
    const names = entries
      .filter((e) => e.isFile() && SAMPLE_NAME_RE.test(e.name))
      .map((e) => e.name)
      .sort()
    return {
      images: names.filter((n) => IMAGE_TYPES[extname(n).toLowerCase()] !== undefined),
      videos: names.filter((n) => VIDEO_TYPES[extname(n).toLowerCase()] !== undefined),
    }
  }

  return new Hono<AppEnv>()
    .get('/', async (c) => {
      const html = await readFile(join(o.dir, 'index.html'), 'utf8').catch(() => null)
      if (html === null) return c.html(NOT_BUILT, 503)
      return c.html(html, 200, { 'Content-Security-Policy': PAGE_CSP, 'Cache-Control': 'no-cache' })
    })
    .get('/playground/samples', async (c) =>
      c.json(await samples(), 200, { 'Cache-Control': 'no-store' }),
    )
    .get('/playground/samples/:name', async (c) => {
      const name = c.req.param('name')
      const type = sampleType(name)
      const notFound = new AppError(
        'not_found',
        `No sample named ${JSON.stringify(name.slice(0, 80))}; GET /playground/samples lists them.`,
      )
      if (o.samplesDir === null || type === null || !SAMPLE_NAME_RE.test(name)) throw notFound
      const path = join(o.samplesDir, name)
      const st = await lstat(path).catch(() => null)
      if (st === null || !st.isFile()) throw notFound
      const stream = Readable.toWeb(createReadStream(path)) as ReadableStream
      return c.body(stream, 200, {
        'Content-Type': type,
        'Content-Length': String(st.size),
        'Cache-Control': 'private, max-age=300',
      })
    })
    .get('/playground/:asset', async (c) => {
      const asset = c.req.param('asset')
      if (!Object.hasOwn(ASSETS, asset)) throw new AppError('not_found', 'No such playground file.')
      const body = await readFile(join(o.dir, asset)).catch(() => null)
      if (body === null) {
        throw new AppError('not_found', 'The playground is not built: run pnpm build:playground.')
      }
      return c.body(body, 200, {
        'Content-Type': ASSETS[asset as keyof typeof ASSETS],
        'Cache-Control': 'no-cache',
      })
    })
}
