/**
 * `@tailor/client` as a project outside the workspace gets it: `pnpm pack` (which builds
 * client/dist), `npm install --offline <tarball>` into a fresh temporary project, then used from
 * Node 20 as an ES module and as CommonJS, type-checked by tsc as both, and bundled by esbuild for
 * a page in Chromium (playwright-core). The code it runs is docs/client.md's snippets, extracted
 * as written, against a real embedded service (real models, ffmpeg); the package README's too.
 */
import { execFile, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ffmpeg, probe, SHARED_MEDIA_DIR } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { REPO_ROOT, startService, type ServiceProcess } from '../helpers/processes.ts'

const run = promisify(execFile)
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking']
const JOB_TIMEOUT_MS = 240_000
const DOC = resolve(REPO_ROOT, 'docs/client.md')

interface Snippet {
  lang: string
  code: string
}

/** The fenced code blocks of a Markdown page, in order. */
export function codeBlocks(markdown: string): Snippet[] {
  return [...markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1]!,
    code: m[2]!,
  }))
}

let models: { dir: string; remove(): Promise<void> }
let tailor: ServiceProcess
let work: string
let app: string
let baseUrl: string
let tarball: string
let snippets: Snippet[]
const apiKey = `tk_client_package_${randomUUID().replaceAll('-', '')}`

/** Runs a file of the consumer project with node, as its own process, from the project's directory. */
function node(
  file: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [file], {
      cwd: app,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: app,
        TAILOR_URL: baseUrl,
        TAILOR_API_KEY: apiKey,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const t = setTimeout(() => p.kill('SIGKILL'), JOB_TIMEOUT_MS - 10_000)
    p.once('error', rej)
    p.once('exit', (code) => {
      clearTimeout(t)
      res({ code, stdout, stderr })
    })
  })
}

beforeAll(async () => {
  models = await snapshotModels(SERVICE_MODELS)
  work = await mkdtemp(join(tmpdir(), 'tailor-client-package-'))
  app = join(work, 'my-app')
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  tailor = startService('services/embedded/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: join(work, 'data'),
    MODELS_DIR: models.dir,
    TAILOR_API_KEY: apiKey,
    TRYON_WAIT_TIMEOUT_MS: '200000',
  })
  snippets = codeBlocks(await readFile(DOC, 'utf8'))
  // As docs/client.md says: pnpm pack (its prepack builds dist/), then npm install of the tarball, offline.
  await run('pnpm', ['--filter', '@tailor/client', 'pack', '--pack-destination', work], {
    cwd: REPO_ROOT,
    timeout: 120_000,
  })
  tarball = join(
    work,
    (await readdir(work)).find((f) => f.endsWith('.tgz'))!,
  )
  await run('mkdir', ['-p', app])
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-app', version: '1.0.0', private: true }),
  )
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
    {
      cwd: app,
      timeout: 120_000,
      env: { ...process.env, npm_config_cache: join(work, 'npm-cache') },
    },
  )
  for (const f of ['person_02.jpg', 'garment_upper_01.jpg']) {
    await copyFile(
      join(SHARED_MEDIA_DIR, f),
      join(app, f.startsWith('person') ? 'person.jpg' : 'garment.jpg'),
    )
  }
  await ffmpeg([
    '-i',
    join(SHARED_MEDIA_DIR, 'video_01.mp4'),
    '-t',
    '1',
    '-vf',
    'scale=-2:256',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-an',
    join(app, 'clip.mp4'),
  ])
  await tailor.waitFor('Tailor is running at')
})

afterAll(async () => {
  await tailor?.stop()
  await models?.remove()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('@tailor/client from its tarball, outside the workspace', () => {
  it('the tarball holds the built package only: no dependencies, ESM and CJS entries with declarations', async () => {
    const pkg = JSON.parse(
      await readFile(join(app, 'node_modules/@tailor/client/package.json'), 'utf8'),
    ) as Record<string, unknown>
    expect(pkg.dependencies ?? {}).toEqual({})
    expect(pkg.exports).toMatchObject({
      '.': {
        import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
        require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
      },
    })
    const files = (await run('tar', ['tzf', tarball])).stdout.split('\n').filter(Boolean).sort()
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]) // no TypeScript sources
    expect(files).toEqual(
      expect.arrayContaining([
        'package/README.md',
        'package/dist/esm/index.js',
        'package/dist/cjs/index.js',
        'package/dist/esm/index.d.ts',
        'package/dist/cjs/types.d.ts',
      ]),
    )
    for (const f of [
      'esm/index.d.ts',
      'esm/tailor-client.d.ts',
      'esm/types.d.ts',
      'cjs/types.d.ts',
    ]) {
      const text = await readFile(join(app, 'node_modules/@tailor/client/dist', f), 'utf8')
      expect(text, f).not.toMatch(/@tailor\/proto|from 'zod'|\.ts'/)
    }
  })

  it(
    'type-checks in a TypeScript project as an ES module and as CommonJS (tsc, module nodenext)',
    async () => {
      const use = `
const tailor = new TailorClient({ baseUrl: 'http://localhost:8080', apiKey: 'tk_x' })
const format: OutputFormat = 'webm_vp9'
export async function go(signal: AbortSignal): Promise<string | null> {
  const { job_id } = await tailor.removeVideoBackground({ video_url: 'https://e.com/v.mp4', output_format: format }, { idempotencyKey: 'k-1', signal })
  const doc: JobStatusDocument = await tailor.waitForJob('remove-background', job_id, { pollIntervalMs: 500, timeoutMs: 60_000, onProgress: (d) => d.progress })
  const err = new TailorError('x', { status: 0, errorCode: 'request_timeout' })
  const code: ErrorCode | 'network_error' | 'aborted' | 'invalid_response' = err.errorCode
  return code === 'aborted' ? null : doc.result_url
}
`
      await writeFile(
        join(app, 'use.mts'),
        `import { TailorClient, TailorError, type ErrorCode, type JobStatusDocument, type OutputFormat } from '@tailor/client'\n${use}`,
      )
      await writeFile(
        join(app, 'use.cts'),
        `import { TailorClient, TailorError, type ErrorCode, type JobStatusDocument, type OutputFormat } from '@tailor/client'\n${use}`,
      )
      await writeFile(
        join(app, 'wrong.mts'),
        `import { TailorClient } from '@tailor/client'\nnew TailorClient({ baseUrl: 'http://x' }).removeVideoBackground({ video_url: 1 })\n`,
      )
      const tsc = resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc')
      const compilerOptions = {
        noEmit: true,
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
      }
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({ compilerOptions, files: ['use.mts', 'use.cts'] }),
      )
      await writeFile(
        join(app, 'tsconfig.wrong.json'),
        JSON.stringify({ compilerOptions, files: ['wrong.mts'] }),
      )
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, timeout: 120_000 })
      // …and the types are real: a missing apiKey and a number for video_url are errors.
      const wrong = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], {
        cwd: app,
        timeout: 120_000,
      }).then(
        () => '',
        (e: { stdout: string }) => e.stdout,
      )
      expect(wrong).toMatch(/apiKey/)
      expect(wrong).toMatch(/Type 'number' is not assignable to type 'string'/)
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'Node ES module: the remove-background snippet (upload, idempotencyKey, waitForJob with pollIntervalMs/timeoutMs/onProgress) saves a WebM with alpha',
    async () => {
      const code = snippets.filter(
        (s) =>
          s.lang === 'js' &&
          s.code.includes('removeVideoBackground') &&
          s.code.includes("from 'node:fs'"),
      )
      expect(code).toHaveLength(1)
      await writeFile(join(app, 'remove-bg.mjs'), code[0]!.code)
      const r = await node('remove-bg.mjs')
      expect(r.code, r.stderr).toBe(0)
      // onProgress printed each polled document (how many depends on the machine's speed), the last one complete.
      const lines = r.stdout.trim().split('\n')
      expect(
        lines.slice(0, -2).every((l) => /^(pending|running) \d+%$/.test(l)),
        r.stdout,
      ).toBe(true)
      expect(lines.at(-2)).toBe('completed 100%')
      expect(lines.at(-1)).toBe('saved clip-cutout.webm')
      const v = (await probe(join(app, 'clip-cutout.webm'))).streams.find(
        (s) => s.codec_type === 'video',
      )
      expect(v).toMatchObject({ codec_name: 'vp9' })
      expect(
        Object.entries(v?.tags ?? {}).some(
          ([k, val]) => k.toLowerCase() === 'alpha_mode' && val === '1',
        ),
      ).toBe(true)
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'Node ES module: the try-on snippet saves a JPEG; with a wrong key it prints the TailorError and exits 1',
    async () => {
      const code = snippets.filter((s) => s.lang === 'js' && s.code.includes('tryOn('))
      expect(code).toHaveLength(1)
      await writeFile(join(app, 'try-on.mjs'), code[0]!.code)
      const r = await node('try-on.mjs')
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('saved dressed.jpg')
      expect((await readFile(join(app, 'dressed.jpg'))).subarray(0, 3).toString('hex')).toBe(
        'ffd8ff',
      )
      const bad = await node('try-on.mjs', { TAILOR_API_KEY: 'tk_wrong' })
      expect(bad.code).toBe(1)
      expect(bad.stderr).toMatch(/^invalid_auth_token \(HTTP 401\): /)
      expect(bad.stderr).not.toMatch(/\n\s+at /) // a sentence, no stack trace
    },
    JOB_TIMEOUT_MS,
  )

  it("the package README's snippet runs as written (it only makes a client)", async () => {
    const blocks = codeBlocks(
      await readFile(resolve(REPO_ROOT, 'client/README.md'), 'utf8'),
    ).filter((b) => b.lang === 'js')
    expect(blocks).toHaveLength(1)
    await writeFile(join(app, 'readme.mjs'), `${blocks[0]!.code}console.log(tailor.baseUrl)\n`)
    const r = await node('readme.mjs')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('http://localhost:8080')
  })

  it(
    'Node CommonJS: the require snippet, and idempotencyKey answering the same job twice',
    async () => {
      const code = snippets.filter((s) => s.lang === 'js' && s.code.includes('require('))
      expect(code).toHaveLength(1)
      await writeFile(join(app, 'snippet.cjs'), code[0]!.code)
      const r = await node('snippet.cjs')
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.trim()).toBe('401 invalid_auth_token')

      await writeFile(
        join(app, 'idempotent.cjs'),
        `
const { TailorClient, TailorError } = require('@tailor/client')
const tailor = new TailorClient({ baseUrl: process.env.TAILOR_URL + '/', apiKey: process.env.TAILOR_API_KEY })
;(async () => {
  const body = { video_url: 'https://example.com/never-fetched.mp4' }
  const key = 'order-42-' + Date.now()
  const a = await tailor.removeVideoBackground(body, { idempotencyKey: key })
  const b = await tailor.removeVideoBackground(body, { idempotencyKey: key })
  const c = await tailor.removeVideoBackground(body)
  const reused = await tailor.removeVideoBackground({ video_url: 'https://example.com/other.mp4' }, { idempotencyKey: key }).catch((e) => e)
  for (const id of new Set([a.job_id, c.job_id])) await tailor.cancelJob('remove-background', id).catch(() => undefined)
  console.log(JSON.stringify({ same: a.job_id === b.job_id, other: a.job_id !== c.job_id, reused: [reused instanceof TailorError, reused.status, reused.errorCode] }))
})()
`,
      )
      const i = await node('idempotent.cjs')
      expect(i.code, i.stderr).toBe(0)
      expect(JSON.parse(i.stdout)).toEqual({
        same: true,
        other: true,
        reused: [true, 422, 'idempotency_key_reused'],
      })
    },
    JOB_TIMEOUT_MS,
  )

  it(
    'browser: the snippet bundled by esbuild from the installed package plays the cut-out video in Chromium',
    async () => {
      const html = snippets.find((s) => s.lang === 'html')
      const js = snippets.filter((s) => s.lang === 'js' && s.code.includes('location.origin'))
      expect(html).toBeDefined()
      expect(js).toHaveLength(1)
      await writeFile(join(app, 'page.js'), js[0]!.code)
      const bundle = await build({
        entryPoints: [join(app, 'page.js')],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: ['es2022'],
        write: false,
        absWorkingDir: app,
        logLevel: 'silent',
      })
      const script = bundle.outputFiles[0]!.text
      expect(script).toContain('TailorError') // the client itself, from node_modules/@tailor/client/dist/esm
      let browser: Browser | undefined
      try {
        browser = await chromium.launch({
          executablePath: CHROMIUM,
          headless: true,
          args: CHROMIUM_ARGS,
        })
        const page = await browser.newPage()
        const errors: string[] = []
        page.on('pageerror', (e) => errors.push(e.message))
        // The page is served at the service's own origin (as a page the service or its proxy serves would be).
        await page.route(`${baseUrl}/my-app.html`, (r) =>
          r.fulfill({
            contentType: 'text/html',
            body: `<!doctype html><meta charset="utf-8">${html!.code}<script type="module">${script}</script>`,
          }),
        )
        await page.goto(`${baseUrl}/my-app.html`)
        await page.fill('#api-key', apiKey)
        await page.setInputFiles('#video', join(app, 'clip.mp4'))
        await page.waitForFunction(
          () => {
            const v = document.querySelector('#result') as HTMLVideoElement
            return (!v.hidden && v.readyState >= 2) || document.title !== ''
          },
          null,
          { timeout: JOB_TIMEOUT_MS - 20_000 },
        )
        expect(await page.title()).toBe('')
        const shown = await page.$eval('#result', (v) => ({
          w: (v as HTMLVideoElement).videoWidth,
          src: (v as HTMLVideoElement).src,
        }))
        expect(shown.src).toMatch(/\/results\/remove-background\/.+\.webm\?/)
        expect(shown.w).toBe(
          (await probe(join(app, 'clip.mp4'))).streams.find((s) => s.codec_type === 'video')!.width,
        )
        expect(errors).toEqual([])
      } finally {
        await browser?.close()
      }
    },
    JOB_TIMEOUT_MS,
  )
})
