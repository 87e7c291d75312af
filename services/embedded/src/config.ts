import { resolve } from 'node:path'
import { configError } from '@tailor/proto'
import { z } from 'zod'
import { MIN_API_KEY_LENGTH } from '@tailor/gateway'

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** One machine: loopback only unless HOST says otherwise (HOST=0.0.0.0 exposes it; put TLS in front). */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Job records, results, generated secrets and scratch space. */
  TAILOR_DATA_DIR: z.string().min(1).default('./tailor-data'),
  /** A key to accept (scripted use); without it a key is created on first start. */
  TAILOR_API_KEY: z
    .string()
    .min(
      MIN_API_KEY_LENGTH,
      `must be at least ${MIN_API_KEY_LENGTH} characters (e.g. \`openssl rand -hex 24\`)`,
    )
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})

export interface Config {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly apiKeyConfigured: boolean
  readonly logLevel: string
  /** The whole environment, handed to the gateway's and inference's own loadConfig. */
  readonly env: Readonly<Record<string, string | undefined>>
}

/** Pure: a test passes a literal object. Throws listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = Env.safeParse(env)
  if (!r.success) throw configError(r.error)
  return Object.freeze({
    port: r.data.PORT,
    host: r.data.HOST,
    dataDir: resolve(r.data.TAILOR_DATA_DIR),
    apiKeyConfigured: r.data.TAILOR_API_KEY !== undefined,
    logLevel: r.data.LOG_LEVEL,
    env: Object.freeze({ ...env }),
  })
}
