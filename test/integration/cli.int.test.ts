/**
 * The `tailor` CLI as a user runs it: a real subprocess (`node --import tsx cli/src/main.ts`)
 * against a running embedded service with the real models, on real media. Local files are
 * uploaded (POST /v1/uploads) and used as tailor://uploads/<id> inputs.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '@tailor/inference/src/media/image.ts'
import { ffmpeg, probe, SHARED_MEDIA_DIR } from '../helpers/media.ts'
import { SERVICE_MODELS, snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { REPO_ROOT, startService, type ServiceProcess } from '../helpers/processes.ts'

const KEY = 'cli-int-test-key-0123456789-abcd'
const MODELS = SERVICE_MODELS
const CLI_TIMEOUT_MS = 240_000

let tailor: ServiceProcess
let models: { dir: string; remove(): Promise<void> }
let dataDir: string
let work: string
let url: string

interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `tailor <args>` as its own process, as `pnpm tailor` would (tsx, from the repository root). */
function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((res, rej) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(REPO_ROOT, 'cli/src/main.ts'), ...args],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          TAILOR_URL: url,
          TAILOR_API_KEY: KEY,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const t = setTimeout(() => p.kill('SIGKILL'), CLI_TIMEOUT_MS - 5_000)
    p.once('error', rej)
    p.once('exit', (code) => {
      clearTimeout(t)
      res({ code, stdout, stderr })
    })
  })
}

beforeAll(async () => {
  models = await snapshotModels(MODELS)
  dataDir = await mkdtemp(join(tmpdir(), 'tailor-cli-data-'))
  work = await mkdtemp(join(tmpdir(), 'tailor-cli-work-'))
  const port = await freePort()
  // No TAILOR_FETCH_ALLOW_LOOPBACK: local files reach the service as uploads, never by URL.
  tailor = startService('services/embedded/src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: dataDir,
    MODELS_DIR: models.dir,
    TAILOR_API_KEY: KEY,
    TRYON_WAIT_TIMEOUT_MS: '150000',
  })
  // A 1 s cut of a real clip, scaled down so the CPU run takes seconds.
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
    '-c:a',
    'aac',
    join(work, 'clip.mp4'),
  ])
  await tailor.waitFor('Tailor is running at')
  url = `http://127.0.0.1:${port}`
})

afterAll(async () => {
  await tailor?.stop()
  await models?.remove()
  for (const d of [dataDir, work]) if (d) await rm(d, { recursive: true, force: true })
})

describe('tailor CLI against the embedded service', () => {
  it(
    "try-on PERSON GARMENT -o out.jpg --category upper --remove-background with local photos: a JPEG at the person photo's size on white, not uniform",
    async () => {
      const out = join(work, 'out.jpg')
      const r = await runCli([
        'try-on',
        join(SHARED_MEDIA_DIR, 'person_02.jpg'),
        join(SHARED_MEDIA_DIR, 'garment_upper_01.jpg'),
        '-o',
        out,
        '--category',
        'upper',
        '--remove-background',
      ])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/uploaded .*person_02\.jpg .* as tailor:\/\/uploads\//)
      expect(r.stderr).toContain(`saved ${out}`)
      const bytes = await readFile(out)
      expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
      const img = await decodeImage(out, { what: 'result' })
      expect([img.width, img.height]).toEqual([768, 1024])
      let sum = 0
      let sumSq = 0
      const n = img.rgb.length
      for (let i = 0; i < n; i++) {
        sum += img.rgb[i]!
        sumSq += img.rgb[i]! * img.rgb[i]!
      }
      const std = Math.sqrt(sumSq / n - (sum / n) ** 2)
      expect(std).toBeGreaterThan(20)
      // --remove-background: the corners (background) are white.
      for (const [x, y] of [
        [2, 2],
        [img.width - 3, 2],
      ] as const) {
        const i = (y * img.width + x) * 3
        expect(
          [...img.rgb.subarray(i, i + 3)].every((v) => v > 235),
          `pixel ${x},${y}`,
        ).toBe(true)
      }
      expect((await readdir(work)).filter((f) => f.endsWith('.partial'))).toEqual([])
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'remove-bg VIDEO --format webm_vp9 --background transparent: VP9 with alpha, progress on stderr',
    async () => {
      const out = join(work, 'out.webm')
      const r = await runCli([
        'remove-bg',
        join(work, 'clip.mp4'),
        '--format',
        'webm_vp9',
        '--background',
        'transparent',
        '-o',
        out,
        '--poll-interval',
        '200',
      ])
      expect(r.code, r.stderr).toBe(0)
      // Not a terminal: plain progress lines, the last one complete.
      expect(r.stderr).toMatch(/^remove-bg: (pending|running) \d+%$/m)
      expect(r.stderr).toMatch(/^remove-bg: completed 100%$/m)
      expect(r.stderr).not.toContain('\r')
      const p = await probe(out)
      const v = p.streams.find((s) => s.codec_type === 'video')
      expect(p.format.format_name).toContain('webm')
      expect(v?.codec_name).toBe('vp9')
      expect(v?.tags?.alpha_mode ?? v?.tags?.ALPHA_MODE).toBe('1')
      expect(Number(v?.nb_read_frames)).toBeGreaterThan(10)
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'a bad key: exit 1 with invalid_auth_token on stderr, nothing written',
    async () => {
      const out = join(work, 'never.jpg')
      const r = await runCli(
        [
          'try-on',
          join(SHARED_MEDIA_DIR, 'person_02.jpg'),
          join(SHARED_MEDIA_DIR, 'garment_upper_01.jpg'),
          '-o',
          out,
        ],
        { TAILOR_API_KEY: 'not-a-key' },
      )
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('invalid_auth_token')
      expect(await readdir(work)).not.toContain('never.jpg')
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'a job failure carries its error_code: a garment photo as the person → no_person_detected, exit 1',
    async () => {
      const r = await runCli([
        'try-on',
        join(SHARED_MEDIA_DIR, 'garment_lower_02.jpg'),
        join(SHARED_MEDIA_DIR, 'garment_upper_01.jpg'),
        '-o',
        join(work, 'x.jpg'),
      ])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/error_code: no_person_detected/)
    },
    CLI_TIMEOUT_MS,
  )

  it(
    '--help exits 0; bad usage exits 2 with a pointer to --help (the other usage checks are unit tests: cli/src/cli.test.ts)',
    async () => {
      const h = await runCli(['remove-bg', '--help'])
      expect(h.code).toBe(0)
      expect(h.stdout).toContain('Usage: tailor remove-bg VIDEO -o OUT')
      const u = await runCli(['remove-bg', join(work, 'clip.mp4')])
      expect(u.code).toBe(2)
      expect(u.stderr).toMatch(/-o OUT is required[\s\S]*--help/)
    },
    CLI_TIMEOUT_MS,
  )
  it(
    'options are checked before the upload: --background transparent -o x.mp4 and --format webm_vp9 -o x.mp4 exit 2, nothing uploaded',
    async () => {
      const uploads = async (): Promise<number> =>
        (await readdir(join(dataDir, 'uploads')).catch(() => [])).length
      const before = await uploads()
      const a = await runCli([
        'remove-bg',
        join(work, 'clip.mp4'),
        '--background',
        'transparent',
        '-o',
        join(work, 'x.mp4'),
      ])
      expect(a.code).toBe(2)
      expect(a.stderr).toContain('--background transparent needs --format')
      const b = await runCli([
        'remove-bg',
        join(work, 'clip.mp4'),
        '--format',
        'webm_vp9',
        '-o',
        join(work, 'x.mp4'),
      ])
      expect(b.code).toBe(2)
      expect(b.stderr).toContain(`name it ${join(work, 'x.webm')}`)
      for (const r of [a, b]) expect(r.stderr).not.toContain('uploaded')
      expect(await uploads()).toBe(before)
      expect(await readdir(work)).not.toContain('x.mp4')
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'without TAILOR_URL it finds the service on its non-default port (the URL it wrote in its data dir)',
    async () => {
      expect((await readFile(join(dataDir, 'service-url'), 'utf8')).trim()).toBe(url)
      // A wrong key: the service answered (401), so the CLI reached it, not localhost:8080.
      const r = await runCli(
        [
          'try-on',
          'https://example.com/p.jpg',
          'https://example.com/g.jpg',
          '-o',
          join(work, 'n.jpg'),
        ],
        { TAILOR_URL: '', TAILOR_DATA_DIR: dataDir, TAILOR_API_KEY: 'tk_wrong' },
      )
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('error_code: invalid_auth_token, HTTP 401')
    },
    CLI_TIMEOUT_MS,
  )

  it(
    "`pnpm tailor …` runs the bin: the CLI's exit code and messages, no pnpm script header or ELIFECYCLE",
    async () => {
      const r = await new Promise<CliRun>((res, rej) => {
        const p = spawn('pnpm', ['tailor', 'remove-bg', '--fromat', 'webm_vp9'], {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: process.env.HOME ?? '/tmp',
            npm_config_update_notifier: 'false',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let stdout = ''
        let stderr = ''
        p.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
        p.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
        p.once('error', rej)
        p.once('exit', (code) => res({ code, stdout, stderr }))
      })
      // (pnpm's own update notice is switched off above: it is not what this checks.)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toBe(
        "tailor remove-bg: unknown option --fromat (did you mean --format?)\nRun 'tailor remove-bg --help' for usage.\n",
      )
    },
    CLI_TIMEOUT_MS,
  )
})
