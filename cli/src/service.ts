/**
 * What the commands that call the HTTP API share: --url / --api-key (or TAILOR_URL /
 * TAILOR_API_KEY), turning a command-line input into an input URL (a local file is uploaded,
 * http(s) and tailor://uploads/ URLs pass as they are), saving a result, and reporting errors.
 */
import { createWriteStream, openAsBlob } from 'node:fs'
import { rename, rm, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { pipeline } from 'node:stream/promises'
import { TailorClient, TailorError } from '@tailor/client'
import { mediaTypeOf } from './media-type.ts'
import type { ProgressSink } from './progress-bar.ts'

export const DEFAULT_URL = 'http://localhost:8080'

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

/**
 * Arguments of a command that calls the service: its own options plus --url, --api-key and
 * --help; a bad flag is a UsageError (exit 2).
 */
export function parseServiceArgs<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  const all = { ...options, help: { type: 'boolean', short: 'h' }, ...SERVICE_OPTIONS } as const
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: all })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export const SERVICE_HELP = `  --url URL          service address (env TAILOR_URL; default ${DEFAULT_URL})
  --api-key KEY      API key (env TAILOR_API_KEY)`

export function createClient(values: { url?: string | undefined; 'api-key'?: string | undefined }, env: CliIO['env']): TailorClient {
  const baseUrl = values.url ?? env.TAILOR_URL ?? DEFAULT_URL
  const apiKey = values['api-key'] ?? env.TAILOR_API_KEY
  if (apiKey === undefined || apiKey === '') throw new UsageError('no API key: pass --api-key KEY or set TAILOR_API_KEY')
  if (!/^https?:\/\/[^/]/i.test(baseUrl)) throw new UsageError(`--url must be an http or https URL; got ${JSON.stringify(baseUrl)}`)
  return new TailorClient({ baseUrl, apiKey })
}

/** A path from the command line, relative to where the user ran it (pnpm runs scripts from the repository root but sets INIT_CWD). */
export const userPath = (io: CliIO, p: string): string => resolve(io.env.INIT_CWD ?? process.cwd(), p)

const isUrl = (s: string): boolean => /^(https?:\/\/|tailor:\/\/)/i.test(s)

/**
 * An input as the service takes it: URLs as given; a local file is uploaded (POST /v1/uploads,
 * kept 1 hour, usable only with this API key) and its tailor://uploads/<id> returned.
 */
export async function resolveInput(client: TailorClient, arg: string, what: string, io: CliIO, signal: AbortSignal): Promise<string> {
  if (isUrl(arg)) return arg
  const path = userPath(io, arg)
  const st = await stat(path).catch(() => null)
  if (st === null || !st.isFile()) throw new UsageError(`${what}: ${arg} is not a file (give a local file or an http(s) URL)`)
  const type = await mediaTypeOf(path)
  if (type === null) throw new UsageError(`${what}: cannot tell the media type of ${arg} (JPEG, PNG, WebP, GIF, TIFF, AVIF images; MP4, MOV, WebM, MKV videos)`)
  const blob = await openAsBlob(path, { type }) // streamed from disk, never read whole
  const up = await client.upload(blob, type, { signal })
  io.stderr.write(`uploaded ${arg} (${st.size} bytes, ${type}) as ${up.url}\n`)
  return up.url
}

/** Downloads a result URL to `outPath` (written beside it first, renamed when complete). */
export async function saveResult(client: TailorClient, resultUrl: string, outPath: string, signal: AbortSignal): Promise<number> {
  const res = await client.downloadResult(resultUrl, { signal })
  if (res.body === null) throw new TailorError('The result download had no body.', { status: res.status, errorCode: 'invalid_response' })
  const tmp = `${outPath}.partial`
  try {
    await pipeline(Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>), createWriteStream(tmp), { signal })
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
    io.stderr.write(`tailor ${command}: ${err.message}\nRun 'tailor ${command} --help' for usage.\n`)
    return EXIT.usage
  }
  if (err instanceof TailorError) {
    if (err.errorCode === 'aborted') {
      io.stderr.write(`tailor ${command}: interrupted\n`)
      return EXIT.interrupted
    }
    const details = [`error_code: ${err.errorCode}`, ...(err.status > 0 ? [`HTTP ${err.status}`] : []), ...(err.jobId ? [`job_id: ${err.jobId}`] : []), ...(err.requestId ? [`request_id: ${err.requestId}`] : [])]
    io.stderr.write(`tailor ${command}: error: ${err.message} (${details.join(', ')})\n`)
    if (err.retryAfter !== undefined) io.stderr.write(`retry after ${err.retryAfter} s\n`)
    return EXIT.failed
  }
  if (err instanceof Error && (err as NodeJS.ErrnoException).code !== undefined && (err as NodeJS.ErrnoException).syscall !== undefined) {
    io.stderr.write(`tailor ${command}: error: ${err.message}\n`)
    return EXIT.failed
  }
  io.stderr.write(`tailor ${command}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  return EXIT.failed
}

/** An AbortController aborted by the first Ctrl-C (SIGINT); `dispose` removes the handler. */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController()
  const onSigint = (): void => ac.abort(new Error('interrupted'))
  process.once('SIGINT', onSigint)
  return { signal: ac.signal, dispose: () => void process.removeListener('SIGINT', onSigint) }
}
