/**
 * What the commands that call the HTTP API share: --url / --api-key (or TAILOR_URL /
 * TAILOR_API_KEY), turning a command-line input into an input URL (a local file is uploaded,
 * http(s) and tailor://uploads/ URLs pass as they are), saving a result, and reporting errors.
 */
import { createWriteStream, openAsBlob, readFileSync } from 'node:fs'
import { rename, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { pipeline } from 'node:stream/promises'
import { TailorClient, TailorError } from '@tailor/client'
import { mediaTypeOf } from './media-type.ts'
import type { ProgressSink } from './progress-bar.ts'

export const DEFAULT_URL = 'http://localhost:8080'
/** The embedded service's data directory when TAILOR_DATA_DIR is not set (as `bash scripts/run.sh` starts it). */
export const DEFAULT_DATA_DIR = './tailor-data'
/** The file in the data directory where a running embedded service writes the URL it bound (services/embedded/src/start.ts). */
export const SERVICE_URL_FILE = 'service-url'

/** Exit codes: 0 done, 1 the service or the job failed, 2 bad usage, 130 interrupted (Ctrl-C). */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const

export interface CliIO {
  stdout: { write(s: string): unknown }
  stderr: ProgressSink
  env: Record<string, string | undefined>
}

/** A mistake in the command line: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** parseArgs option specs for --url and --api-key. */
export const SERVICE_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const

/** Edit distance (insertions, deletions, substitutions), for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur.push(
        Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)),
      )
    }
    prev = cur
  }
  return prev[b.length]!
}

/** The candidate closest to `given` when it is close enough to be a typo (or a prefix of it), else null. */
export function didYouMean(given: string, candidates: readonly string[]): string | null {
  let best: { c: string; d: number } | null = null
  for (const c of candidates) {
    let common = 0
    while (common < given.length && given[common] === c[common]) common++
    // A prefix of it, or most of it typed before going wrong (--remove-bg for --remove-background).
    const d =
      (c.startsWith(given) && given.length >= 2) || common >= Math.max(5, given.length - 3)
        ? 0
        : distance(given, c)
    if (best === null || d < best.d) best = { c, d }
  }
  return best !== null && best.d <= Math.max(1, Math.floor(best.c.length / 3)) ? best.c : null
}

/**
 * node:util parseArgs with the CLI's messages: an unknown option names the closest known one
 * ("did you mean --format?"); every parse error is a UsageError (exit 2).
 */
export function parseCliArgs<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options })
  } catch (err) {
    const e = err as Error & { code?: string }
    const unknown = /Unknown option '([^']+)'/.exec(e.message)?.[1]
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== undefined) {
      const names = Object.entries(options).flatMap(([long, o]) => [
        `--${long}`,
        ...(o.short !== undefined ? [`-${o.short}`] : []),
      ])
      const name = unknown.split('=')[0]!
      const near = name.startsWith('--')
        ? didYouMean(
            name,
            names.filter((n) => n.startsWith('--')),
          )
        : null
      throw new UsageError(
        `unknown option ${name}${near !== null ? ` (did you mean ${near}?)` : ''}`,
      )
    }
    const missing = /Option '([^']+)' argument missing/.exec(e.message)?.[1]
    if (missing !== undefined) {
      throw new UsageError(`${missing.replace(/ <value>$/, '')} needs a value`)
    }
    throw new UsageError(e.message)
  }
}

/**
 * Arguments of a command that calls the service: its own options plus --url, --api-key and
 * --help; a bad flag is a UsageError (exit 2).
 */
export function parseServiceArgs<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
) {
  return parseCliArgs(argv, {
    ...options,
    help: { type: 'boolean', short: 'h' },
    ...SERVICE_OPTIONS,
  } as const)
}

/** Option lines of a --help text: the descriptions in one column, wrapped lines indented to it. */
export function optionLines(rows: readonly (readonly [string, string])[]): string {
  const col = 2 + Math.max(...rows.map(([flag]) => flag.length)) + 3
  return rows
    .map(([flag, text]) =>
      text
        .split('\n')
        .map((line, i) => (i === 0 ? `  ${flag}`.padEnd(col) : ' '.repeat(col)) + line)
        .join('\n'),
    )
    .join('\n')
}

export const SERVICE_HELP_ROWS = [
  [
    '--url URL',
    `service address (env TAILOR_URL; default: the URL a running embedded\nservice wrote in ${DEFAULT_DATA_DIR}/${SERVICE_URL_FILE}, else ${DEFAULT_URL})`,
  ],
  ['--api-key KEY', 'API key, tk_… (env TAILOR_API_KEY)'],
] as const

/**
 * The service address: --url, else TAILOR_URL, else the URL the embedded service running on this
 * machine's data directory (TAILOR_DATA_DIR, else ./tailor-data) wrote when it started, else
 * http://localhost:8080. `from` says which, for the message when nothing answers there.
 */
export function serviceUrl(
  values: { url?: string | undefined },
  io: CliIO,
): { url: string; from: string } {
  if (values.url !== undefined) return { url: values.url, from: '--url' }
  if (io.env.TAILOR_URL !== undefined && io.env.TAILOR_URL !== '') {
    return { url: io.env.TAILOR_URL, from: 'TAILOR_URL' }
  }
  const file = join(userPath(io, io.env.TAILOR_DATA_DIR ?? DEFAULT_DATA_DIR), SERVICE_URL_FILE)
  try {
    const written = readFileSync(file, 'utf8').trim()
    if (/^https?:\/\/[^/\s]+$/i.test(written)) return { url: written, from: file }
  } catch {
    // no embedded service has written one here
  }
  return { url: DEFAULT_URL, from: 'the default' }
}

export function createClient(
  values: { url?: string | undefined; 'api-key'?: string | undefined },
  io: CliIO,
): TailorClient {
  const { url: baseUrl, from } = serviceUrl(values, io)
  const apiKey = values['api-key'] ?? io.env.TAILOR_API_KEY
  if (apiKey === undefined || apiKey === '') {
    throw new UsageError(
      "no API key: pass --api-key KEY or set TAILOR_API_KEY (the service's start banner shows the export line)",
    )
  }
  if (!/^https?:\/\/[^/]/i.test(baseUrl)) {
    throw new UsageError(
      `${from === '--url' ? '--url' : from} must be an http or https URL; got ${JSON.stringify(baseUrl)}`,
    )
  }
  urlFrom = from
  return new TailorClient({ baseUrl, apiKey })
}

/** Where the last client's address came from, for the hint after a network_error. */
let urlFrom: string | undefined

/** A path from the command line, relative to where the user ran it (pnpm runs scripts from the repository root but sets INIT_CWD). */
export const userPath = (io: CliIO, p: string): string =>
  resolve(io.env.INIT_CWD ?? process.cwd(), p)

const isUrl = (s: string): boolean => /^(https?:\/\/|tailor:\/\/)/i.test(s)

/**
 * An input as the service takes it: URLs as given; a local file is uploaded (POST /v1/uploads,
 * kept 1 hour, usable only with this API key) and its tailor://uploads/<id> returned.
 */
export async function resolveInput(
  client: TailorClient,
  arg: string,
  what: string,
  io: CliIO,
  signal: AbortSignal,
): Promise<string> {
  if (isUrl(arg)) return arg
  const path = userPath(io, arg)
  const st = await stat(path).catch(() => null)
  if (st === null || !st.isFile()) {
    throw new UsageError(`${what}: ${arg} is not a file (give a local file or an http(s) URL)`)
  }
  const type = await mediaTypeOf(path)
  if (type === null) {
    throw new UsageError(
      `${what}: cannot tell the media type of ${arg} (JPEG, PNG, WebP, GIF, TIFF, AVIF images; MP4, MOV, WebM, MKV videos)`,
    )
  }
  const blob = await openAsBlob(path, { type }) // streamed from disk, never read whole
  const up = await client.upload(blob, type, { signal })
  io.stderr.write(`uploaded ${arg} (${st.size} bytes, ${type}) as ${up.url}\n`)
  return up.url
}

/** Downloads a result URL to `outPath` (written beside it first, renamed when complete). */
export async function saveResult(
  client: TailorClient,
  resultUrl: string,
  outPath: string,
  signal: AbortSignal,
): Promise<number> {
  const res = await client.downloadResult(resultUrl, { signal })
  if (res.body === null) {
    throw new TailorError('The result download had no body.', {
      status: res.status,
      errorCode: 'invalid_response',
    })
  }
  const tmp = `${outPath}.partial`
  try {
    await pipeline(
      Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>),
      createWriteStream(tmp),
      { signal },
    )
    await rename(tmp, outPath)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
  return (await stat(outPath)).size
}

/** Prints an error the way every command does and returns the exit code. */
export function reportError(err: unknown, io: CliIO, command: string): number {
  if (err instanceof UsageError) {
    io.stderr.write(
      `tailor ${command}: ${err.message}\nRun 'tailor ${command} --help' for usage.\n`,
    )
    return EXIT.usage
  }
  if (err instanceof TailorError) {
    if (err.errorCode === 'aborted') {
      io.stderr.write(`tailor ${command}: interrupted\n`)
      return EXIT.interrupted
    }
    const details = [
      `error_code: ${err.errorCode}`,
      ...(err.status > 0 ? [`HTTP ${err.status}`] : []),
      ...(err.jobId ? [`job_id: ${err.jobId}`] : []),
      ...(err.requestId ? [`request_id: ${err.requestId}`] : []),
    ]
    io.stderr.write(`tailor ${command}: error: ${err.message} (${details.join(', ')})\n`)
    if (err.errorCode === 'network_error') {
      io.stderr.write(
        `The address came from ${urlFrom ?? 'the default'}. Is the service running? Start it with \`bash scripts/run.sh\`; ` +
          'its start banner prints the `export TAILOR_URL=…` line to use (or pass --url).\n',
      )
    }
    if (err.retryAfter !== undefined) io.stderr.write(`retry after ${err.retryAfter} s\n`)
    return EXIT.failed
  }
  if (
    err instanceof Error &&
    (err as NodeJS.ErrnoException).code !== undefined &&
    (err as NodeJS.ErrnoException).syscall !== undefined
  ) {
    io.stderr.write(`tailor ${command}: error: ${err.message}\n`)
    return EXIT.failed
  }
  io.stderr.write(
    `tailor ${command}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  )
  return EXIT.failed
}

/** An AbortController aborted by the first Ctrl-C (SIGINT); `dispose` removes the handler. */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController()
  const onSigint = (): void => ac.abort(new Error('interrupted'))
  process.once('SIGINT', onSigint)
  return { signal: ac.signal, dispose: () => void process.removeListener('SIGINT', onSigint) }
}
