/**
 * The start-up banner (issue 15 §5): one block, printed once the logs have settled, saying where
 * the service is and how to use it — the URL it is actually bound to, the playground, /docs, the
 * gRPC API's port, the API key (on first start) and the `export TAILOR_URL=…` line for the CLI.
 * The embedded mode and the distributed gateway print the same block. Pure: `formatBanner` takes
 * everything it shows, so a test checks it without a server.
 */
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os'

/** An address as a server reports it (`server.address()`). */
export interface BoundAddress {
  address: string
  port: number
}

export type BannerKey =
  /** Created on this start (embedded, first start): shown once, with its own webhook signing secret. */
  | { kind: 'created'; key: string; webhookSecret?: string }
  /** Given in the environment (TAILOR_API_KEY, API_KEYS): not shown. */
  | { kind: 'configured'; source: string }
  /** Keys in a key store: how many, and the command that makes one. */
  | { kind: 'store'; count: number; where: string; createCommand: string }

export interface BannerInput {
  mode: 'embedded' | 'distributed'
  http: BoundAddress
  apiGrpc: BoundAddress
  /** PUBLIC_BASE_URL when set: where clients reach the service through a proxy. */
  publicBaseUrl?: string | undefined
  key: BannerKey
  /** More `label: value` rows (data dir, NATS URL, webhook secret…). */
  rows?: readonly (readonly [string, string])[]
  /** The machine's interfaces (os.networkInterfaces()), for the addresses of a wildcard bind. */
  interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]>
}

const isWildcard = (a: string): boolean =>
  a === '0.0.0.0' || a === '::' || a === '' || a === '::ffff:0.0.0.0'
const hostForUrl = (a: string): string => (a.includes(':') ? `[${a}]` : a)

/**
 * The URLs a client uses for a server bound to `b`: `local` from this machine (the bound address,
 * or loopback for a wildcard bind), and for a wildcard bind the machine's external addresses.
 */
export function bannerUrls(
  b: BoundAddress,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): { local: string; others: string[] } {
  if (!isWildcard(b.address)) {
    return { local: `http://${hostForUrl(b.address)}:${b.port}`, others: [] }
  }
  const v6 = b.address === '::'
  const others = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal && (i.family === 'IPv4' || (v6 && !i.address.startsWith('fe80'))))
    .map((i) => `http://${hostForUrl(i.address)}:${b.port}`)
  return { local: `http://127.0.0.1:${b.port}`, others: [...new Set(others)].slice(0, 4) }
}

/** Who can reach a server bound to `address`, in words. */
function reach(address: string): string {
  if (isWildcard(address)) return 'every interface, reachable from other machines; put TLS in front'
  if (address === '127.0.0.1' || address === '::1' || address.startsWith('127.')) {
    return 'this machine only; HOST=0.0.0.0 exposes it'
  }
  return 'this address only'
}

export function formatBanner(b: BannerInput): string {
  const { local, others } = bannerUrls(b.http, b.interfaces)
  const base = b.publicBaseUrl ?? local
  const grpcHost = isWildcard(b.apiGrpc.address) ? '127.0.0.1' : hostForUrl(b.apiGrpc.address)
  const rows: [string, string][] = [
    [
      'URL',
      `${local}   (bound to ${hostForUrl(b.http.address)}:${b.http.port}: ${reach(b.http.address)})`,
    ],
    ...others.map((u): [string, string] => ['', `${u}   (from other machines)`]),
    ...(b.publicBaseUrl !== undefined
      ? [['Public URL', `${b.publicBaseUrl}   (PUBLIC_BASE_URL)`] as [string, string]]
      : []),
    ['Playground', `${base}/`],
    ['API docs', `${base}/docs   (OpenAPI: ${base}/openapi.json)`],
    ['gRPC API', `${grpcHost}:${b.apiGrpc.port}   (tailor.v1.TailorApi, plaintext; docs/grpc.md)`],
    ...(b.rows ?? []).map(([k, v]): [string, string] => [k, v]),
  ]
  const width = Math.max(...rows.map(([k]) => k.length))
  const lines = [
    `Tailor is running at ${local}  (${b.mode} mode)`,
    '',
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
    '',
  ]
  let keyForCli = '<your key>'
  switch (b.key.kind) {
    case 'created':
      keyForCli = b.key.key
      lines.push(
        'Created an API key named "default" (shown only this once; only its hash is stored):',
        '',
        `  X-API-KEY: ${b.key.key}`,
        '',
      )
      if (b.key.webhookSecret !== undefined) {
        lines.push(
          "Its webhooks are signed (Standard Webhooks) with the key's own secret, also shown only this once:",
          '',
          `  ${b.key.webhookSecret}`,
          '',
        )
      }
      break
    case 'configured':
      lines.push(`Accepting the API key from ${b.key.source}.`, '')
      break
    case 'store':
      lines.push(
        b.key.count === 0
          ? `No API key yet (${b.key.where}). Create one with:\n\n  ${b.key.createCommand}\n`
          : `API keys: ${b.key.count} in ${b.key.where} (more: ${b.key.createCommand}).\n`,
      )
      break
  }
  lines.push(
    'For the CLI (pnpm tailor …):',
    '',
    `  export TAILOR_URL=${base} TAILOR_API_KEY=${keyForCli}`,
    '',
  )
  const rule = '─'.repeat(
    Math.min(100, Math.max(...lines.flatMap((l) => l.split('\n')).map((l) => l.length))),
  )
  return `\n${rule}\n${lines.join('\n')}${rule}\n\n`
}

/**
 * Where a main process's logger writes: stdout through `process.stdout.write` (pino's default
 * writes to fd 1 directly, unseen), so `logsSettled` can tell when the start-up lines have stopped.
 */
export const stdoutLogDestination = { write: (line: string): boolean => process.stdout.write(line) }

/**
 * Resolves once `quietMs` has passed without a write to stdout or stderr (at most `maxMs`), so the
 * banner comes after the start-up log lines rather than among them. Sees what goes through
 * `process.stdout.write` / `process.stderr.write` (loggers made with `stdoutLogDestination`).
 */
export async function logsSettled(quietMs = 300, maxMs = 3_000): Promise<void> {
  let last = Date.now()
  const started = last
  const streams = [process.stdout, process.stderr]
  const originals = streams.map((s) => s.write)
  streams.forEach((s, i) => {
    const orig = originals[i]!
    s.write = function (this: NodeJS.WriteStream, ...args: unknown[]) {
      last = Date.now()
      return (orig as (...a: unknown[]) => boolean).apply(this, args)
    } as typeof s.write
  })
  try {
    while (Date.now() - last < quietMs && Date.now() - started < maxMs) {
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    streams.forEach((s, i) => (s.write = originals[i]!))
  }
}
