/**
 * Start-up problems an operator fixes, said in one line each, never as a stack trace (issue 15 §3):
 * every bad environment variable of a service, and the usual reasons a service cannot start (a port
 * in use, NATS unreachable or without JetStream, NATS credentials refused).
 */
import { z } from 'zod'

export interface ConfigProblem {
  /** The environment variable (or `environment` when the problem is not one variable's). */
  variable: string
  message: string
}

/** A service's environment is not valid: every problem at once. */
export class ConfigError extends Error {
  constructor(
    readonly problems: readonly ConfigProblem[],
    prettified: string,
  ) {
    super(`invalid environment\n${prettified}`)
    this.name = 'ConfigError'
  }
}

/** The ConfigError for a failed parse of a service's environment schema. */
export function configError(err: z.ZodError): ConfigError {
  const problems = err.issues.map((i) => ({
    variable: i.path.length > 0 ? i.path.map(String).join('.') : 'environment',
    message: i.message,
  }))
  return new ConfigError(problems, z.prettifyError(err))
}

/** What a start-up error concerns, to name it: the NATS URL (shown without credentials), and which variable holds each port. */
export interface StartupContext {
  natsUrl?: string | undefined
  ports?: Readonly<Record<string, number | undefined>>
}

/** A NATS URL (or comma-separated list) without its credentials. */
export function withoutCredentials(url: string): string {
  return url
    .split(',')
    .map((u) => u.trim().replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1'))
    .join(',')
}

const chain = (
  err: unknown,
): {
  name: string
  message: string
  code: string | undefined
  port: number | undefined
  address: string | undefined
}[] => {
  const out = []
  for (
    let e: unknown = err, depth = 0;
    e instanceof Error && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const x = e as Error & { code?: unknown; port?: unknown; address?: unknown }
    out.push({
      name: x.name,
      message: x.message,
      code: typeof x.code === 'string' ? x.code : undefined,
      port: typeof x.port === 'number' ? x.port : undefined,
      address: typeof x.address === 'string' ? x.address : undefined,
    })
  }
  return out
}

/**
 * Lines for a start-up failure the operator can fix, each prefixed with `service: `; null when the
 * error is not one of those (a bug: keep its stack for the report).
 */
export function describeStartupError(
  service: string,
  err: unknown,
  ctx: StartupContext = {},
): string[] | null {
  if (err instanceof ConfigError) {
    return err.problems.map((p) => `${service}: ${p.variable}: ${p.message}`)
  }
  const errs = chain(err)
  const text = errs.map((e) => `${e.name} ${e.message}`).join(' | ')
  const nats = ctx.natsUrl === undefined ? 'NATS' : `NATS at ${withoutCredentials(ctx.natsUrl)}`
  if (
    errs.some((e) => e.name === 'JetStreamNotEnabled') ||
    /jetstream is not enabled/i.test(text)
  ) {
    return [
      `${service}: ${nats} has no JetStream: start the server with it, e.g. \`nats-server -js -sd ./nats-data\``,
    ]
  }
  const inUse =
    errs.find((e) => e.code === 'EADDRINUSE') ?? (/EADDRINUSE/.test(text) ? errs[0] : undefined)
  if (inUse !== undefined) {
    const port =
      inUse.port ??
      Number(/:(\d+)\b[^:]*$/.exec(/EADDRINUSE[^|]*/.exec(text)?.[0] ?? '')?.[1] ?? NaN)
    const variable = Object.entries(ctx.ports ?? {}).find(([, p]) => p === port)?.[0]
    const where = Number.isFinite(port)
      ? `port ${port}${inUse.address !== undefined ? ` on ${inUse.address}` : ''}`
      : 'a port it needs'
    return [
      `${service}: cannot listen on ${where}: another process is using it${variable !== undefined ? ` (set ${variable} to a free port, or stop the other process)` : ''}`,
    ]
  }
  if (errs.some((e) => e.code === 'EACCES' && e.port !== undefined)) {
    const e = errs.find((x) => x.code === 'EACCES')!
    return [
      `${service}: not allowed to listen on port ${e.port} (ports below 1024 need privileges): choose a port of 1024 or more`,
    ]
  }
  if (
    /authorization violation|authentication/i.test(text) &&
    /nats/i.test(text + errs.map((e) => e.name).join(' '))
  ) {
    return [`${service}: ${nats} refused this service's credentials (NATS_USER / NATS_PASSWORD)`]
  }
  if (
    errs.some((e) => e.name === 'ConnectionError') ||
    (errs.some((e) => e.code === 'ECONNREFUSED') && ctx.natsUrl !== undefined)
  ) {
    const why = errs.find((e) => e.code !== undefined)?.code ?? errs[0]?.message ?? 'no connection'
    return [`${service}: cannot reach ${nats} (${why}): is nats-server running there?`]
  }
  return null
}
