import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { AppError } from '../errors.ts'
import { classifyAddress, isAllowedAddress, refusedDestination } from './address-policy.ts'
import {
  guardConnectedAddress,
  guardedLookup,
  systemResolver,
  type LookupGuard,
  type Resolver,
} from './guarded-lookup.ts'

export interface SafeFetchOptions {
  maxBytes: number
  connectTimeoutMs: number
  timeoutMs: number
  maxRedirects: number
  allowLoopback: boolean
  resolver?: Resolver
}

export interface FetchedFile {
  path: string
  bytes: number
  contentType: string | undefined
}

const fail = (message: string, cause?: unknown): AppError =>
  new AppError('input_fetch_failed', message, { cause })
/** A refused destination: one sentence (address-policy.ts); what was refused goes to the cause. */
const refused = (detail: string, cause?: unknown): AppError =>
  fail(refusedDestination(), Object.assign(new Error(detail), cause === undefined ? {} : { cause }))
/** Refusals of input URLs; a name that does not resolve reads like a refused one: no probing for internal names. */
const guardFor = (allowLoopback: boolean): LookupGuard => ({
  allowLoopback,
  refuse: refused,
  unresolved: (hostname, cause) => refused(`${hostname} did not resolve`, cause),
})
const tooLarge = (max: number): AppError =>
  new AppError(
    'file_size_too_large',
    `The file is larger than the ${Math.round(max / (1024 * 1024))} MB limit.`,
  )

/**
 * Checks a URL before any connection: http/https only, no credentials, and an IP-literal host must
 * be an allowed address. Host names are checked again on every resolved address (see lookup).
 */
export function checkUrl(raw: string, allowLoopback: boolean): URL {
  let u: URL
  try {
    u = new URL(raw)
  } catch (err) {
    throw fail('The URL is not valid.', err)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw fail(`The URL must use http or https, not ${u.protocol.slice(0, -1)}.`)
  }
  if (u.username !== '' || u.password !== '') throw fail('The URL must not carry credentials.')
  const host = u.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && !isAllowedAddress(host, { allowLoopback })) {
    throw refused(`${host} is a ${classifyAddress(host)} address`)
  }
  return u
}

/**
 * Downloads `rawUrl` to `dest` under every rule of ARCHITECTURE.md §5. The destination is
 * checked on the address the socket actually connected to, for the first request and after every
 * redirect. On any failure the partial file is removed.
 */
export async function safeFetchToFile(
  rawUrl: string,
  dest: string,
  o: SafeFetchOptions,
  signal?: AbortSignal,
): Promise<FetchedFile> {
  const resolver = o.resolver ?? systemResolver
  const total = AbortSignal.timeout(o.timeoutMs)
  const combined = signal ? AbortSignal.any([signal, total]) : total
  let url = checkUrl(rawUrl, o.allowLoopback)
  try {
    for (let hop = 0; ; hop++) {
      const res = await request(url, resolver, o, combined)
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400 && res.headers.location !== undefined) {
        res.resume()
        if (hop >= o.maxRedirects) {
          throw fail(`The URL redirected more than ${o.maxRedirects} times.`)
        }
        let next: URL
        try {
          next = new URL(res.headers.location, url)
        } catch (err) {
          throw fail('The URL redirected to an invalid URL.', err)
        }
        url = checkUrl(next.href, o.allowLoopback)
        continue
      }
      if (status < 200 || status >= 300) {
        res.resume()
        throw fail(`Downloading the URL failed: the server answered HTTP ${status}.`)
      }
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > o.maxBytes) {
        res.destroy()
        throw tooLarge(o.maxBytes)
      }
      const bytes = await pipeCapped(res, dest, o.maxBytes, combined)
      return { path: dest, bytes, contentType: res.headers['content-type'] }
    }
  } catch (err) {
    await rm(dest, { force: true })
    if (signal?.aborted) {
      throw new AppError('job_cancelled', 'The job was cancelled.', { cause: err })
    }
    if (err instanceof AppError) throw err
    if (total.aborted) {
      throw fail(`Downloading the URL took longer than ${Math.round(o.timeoutMs / 1000)} s.`, err)
    }
    const code = (err as NodeJS.ErrnoException).code
    throw fail(
      `Downloading the URL failed${code ? ` (${code})` : ''}: ${(err as Error).message}`,
      err,
    )
  }
}

function request(
  url: URL,
  resolver: Resolver,
  o: SafeFetchOptions,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http
    const req = mod.request(url, {
      method: 'GET',
      lookup: guardedLookup(resolver, guardFor(o.allowLoopback)),
      signal,
      agent: false,
      headers: {
        'user-agent': 'tailor-inference/0.1',
        accept: 'video/*, image/gif, */*;q=0.5',
        'accept-encoding': 'identity',
      },
    })
    const connectTimer = setTimeout(
      () =>
        req.destroy(fail(`Could not connect to the URL's host within ${o.connectTimeoutMs} ms.`)),
      o.connectTimeoutMs,
    )
    guardConnectedAddress(req, guardFor(o.allowLoopback), () => clearTimeout(connectTimer))
    req.on('response', (res) => {
      clearTimeout(connectTimer)
      resolve(res)
    })
    req.on('error', (err) => {
      clearTimeout(connectTimer)
      reject(err)
    })
    req.end()
  })
}

async function pipeCapped(
  res: http.IncomingMessage,
  dest: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<number> {
  const out = createWriteStream(dest, { flags: 'wx' })
  // The file is opened asynchronously: on failure wait for 'close' (opened, then closed) before the
  // caller removes it, or the open could land after the removal and leave an empty file behind.
  const closed = new Promise<void>((r) => out.once('close', () => r()))
  let outError: Error | null = null
  out.on('error', (err) => {
    outError ??= err
  })
  let bytes = 0
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (signal.aborted) throw signal.reason
      if (outError !== null) throw outError
      bytes += chunk.length
      if (bytes > maxBytes) throw tooLarge(maxBytes)
      if (!out.write(chunk)) await drained(out)
    }
    await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())))
    return bytes
  } catch (err) {
    res.destroy()
    out.destroy()
    await closed
    throw err
  }
}

function drained(out: NodeJS.WritableStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      out.off('drain', onDrain)
      reject(err)
    }
    const onDrain = (): void => {
      out.off('error', onError)
      resolve()
    }
    out.once('drain', onDrain)
    out.once('error', onError)
  })
}
