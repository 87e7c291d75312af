/**
 * `tailor keys create|list|revoke|rotate-webhook-secret`: API keys in the key store the gateway reads, the KV bucket
 * `api_keys` on NATS (distributed mode: --nats-url / NATS_URL) or the data directory's
 * api-keys.json (embedded mode: --data-dir / TAILOR_DATA_DIR, default ./tailor-data). Only the
 * keys' sha256 hashes are stored; `create` shows the key once, with the key's webhook signing secret
 * (stored: signing needs it; `rotate-webhook-secret` replaces it). Gateways pick changes up within a
 * second (a revoked key is refused by every replica).
 */
import {
  type ApiKeyRecord,
  creditsRemaining,
  generateApiKey,
  KEY_NAME_MAX,
  keyWebhookSecrets,
  MAX_JOB_CAP,
  openKeyStoreAt,
  rotateWebhookSecret,
} from '@tailor/gateway/keys'
import {
  DEFAULT_DATA_DIR,
  EXIT,
  parseCliArgs,
  UsageError,
  userPath,
  type CliIO,
} from '../service.ts'
import { natsClientOptions } from '@tailor/proto/net'

export { DEFAULT_DATA_DIR }

/** Default overlap of a webhook secret rotation: the old secret keeps signing this long. */
export const DEFAULT_OVERLAP_HOURS = 24

export const KEYS_HELP = `Usage: tailor keys <create|list|revoke|rotate-webhook-secret> [options]

  tailor keys create --name NAME [--rate-limit N] [--max-concurrent-jobs N] [--credits N]
      Creates a key and prints it once (only its sha256 is stored), with the key's own webhook
      signing secret (whsec_…, Standard Webhooks): every webhook of its jobs is signed with it,
      so its receivers verify with it and no other key can sign for it. Also shown only once.
      --rate-limit N            requests per second for this key (default: the gateway's
                                DEFAULT_RATE_LIMIT_PER_S, 5)
      --max-concurrent-jobs N   jobs pending or running at once, at most ${MAX_JOB_CAP}; 0 = no cap
                                (default: the gateway's DEFAULT_MAX_CONCURRENT_JOBS, 10)
      --credits N               a budget of N credits: each job that completes costs one
                                (GET /v1/credits); when none is left, jobs are refused with
                                403 insufficient_api_credits (default: unlimited)
  tailor keys list
      Id, name, creation time, revocation time and limits of every key (never keys or hashes).
  tailor keys revoke ID
      Revokes a key by its id; every gateway refuses it within a second.
  tailor keys rotate-webhook-secret ID [--overlap-hours N]
      Gives the key a new webhook signing secret and prints it once. For N hours (default
      ${DEFAULT_OVERLAP_HOURS}; 0 = stop at once) deliveries carry signatures by both the new and the
      old secret, so receivers can switch without losing any. A key made before per-key secrets
      (its webhooks signed with the server's WEBHOOK_SECRET) gets its first own one.

Where the keys live (one of):
  --nats-url URL     distributed mode: KV bucket api_keys on this NATS server (env NATS_URL)
  --data-dir DIR     embedded mode: DIR/api-keys.json (env TAILOR_DATA_DIR; default ${DEFAULT_DATA_DIR})
Other options:
  --json             machine-readable output
  -h, --help         this help

Exit codes: 0 done, 1 failed (unknown id, store unreachable), 2 bad usage.
`

const OPTIONS = {
  name: { type: 'string' },
  'rate-limit': { type: 'string' },
  'max-concurrent-jobs': { type: 'string' },
  credits: { type: 'string' },
  'overlap-hours': { type: 'string' },
  'nats-url': { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const wholeNumber = (
  flag: string,
  v: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined => {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(
      `${flag} must be a whole number, at least ${min}${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ''}; got ${JSON.stringify(v)}`,
    )
  }
  return n
}

/** What `list` and `create --json` show of a record: everything but the hash. */
const publicView = (r: ApiKeyRecord): Record<string, unknown> => ({
  id: r.id,
  name: r.name,
  createdAt: r.createdAt,
  revokedAt: r.revokedAt ?? null,
  rateLimitPerS: r.rateLimitPerS ?? null,
  maxConcurrentJobs: r.maxConcurrentJobs ?? null,
  credits: r.credits ?? null,
  creditsRemaining: creditsRemaining(r),
  // Which secret signs its webhooks (never the secret): its own, or the server's WEBHOOK_SECRET.
  webhookSigning: r.webhookSecret === undefined ? 'WEBHOOK_SECRET' : 'own',
  previousWebhookSecretUntil:
    r.previousWebhookSecretUntil !== undefined &&
    (keyWebhookSecrets(r, Date.now())?.length ?? 0) > 1
      ? r.previousWebhookSecretUntil
      : null,
})

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  )
}

export async function keysCommand(argv: string[], io: CliIO): Promise<number> {
  let values: {
    [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string
  }
  let positionals: string[]
  try {
    ;({ values, positionals } = parseCliArgs(argv, OPTIONS))
    const [sub, ...rest] = positionals
    if (values.help === true || sub === 'help') {
      io.stdout.write(KEYS_HELP)
      return EXIT.ok
    }
    if (sub === undefined) {
      throw new UsageError('expected a subcommand: create, list, revoke or rotate-webhook-secret')
    }
    if (values['nats-url'] !== undefined && values['data-dir'] !== undefined) {
      throw new UsageError('give --nats-url or --data-dir, not both')
    }
    const natsUrl =
      values['nats-url'] ??
      (values['data-dir'] === undefined ? io.env.NATS_URL || undefined : undefined)
    const dataDir = userPath(io, values['data-dir'] ?? io.env.TAILOR_DATA_DIR ?? DEFAULT_DATA_DIR)
    const only = (allowed: string[]): void => {
      for (const f of ['name', 'rate-limit', 'max-concurrent-jobs', 'credits'] as const) {
        if (values[f] !== undefined && !allowed.includes(f)) {
          throw new UsageError(`--${f} is only for keys create`)
        }
      }
      if (values['overlap-hours'] !== undefined && !allowed.includes('overlap-hours')) {
        throw new UsageError('--overlap-hours is only for keys rotate-webhook-secret')
      }
    }
    let run: (store: Awaited<ReturnType<typeof openKeyStoreAt>>) => Promise<number>
    switch (sub) {
      case 'create': {
        only(['name', 'rate-limit', 'max-concurrent-jobs', 'credits'])
        if (rest.length > 0) {
          throw new UsageError(`keys create takes no arguments; got ${rest.join(' ')}`)
        }
        const name = values.name?.trim()
        if (name === undefined || name === '') throw new UsageError('--name NAME is required')
        if (name.length > KEY_NAME_MAX || /\p{Cc}/u.test(name)) {
          throw new UsageError(`--name must be 1 to ${KEY_NAME_MAX} printable characters`)
        }
        const rateLimitPerS = wholeNumber('--rate-limit', values['rate-limit'], 1)
        const maxConcurrentJobs = wholeNumber(
          '--max-concurrent-jobs',
          values['max-concurrent-jobs'],
          0,
          MAX_JOB_CAP,
        )
        const credits = wholeNumber('--credits', values.credits, 0)
        run = async ({ store, where }) => {
          const { key, webhookSecret, record } = generateApiKey({
            name,
            rateLimitPerS,
            maxConcurrentJobs,
            credits,
          })
          await store.create(record)
          if (values.json === true) {
            io.stdout.write(`${JSON.stringify({ ...publicView(record), key, webhookSecret })}\n`)
          } else {
            io.stdout.write(
              `Created API key ${record.id} (${JSON.stringify(name)}) in ${where}.\n` +
                `Shown only this once; only its sha256 is stored:\n\n  ${key}\n\n` +
                'Send it in the X-API-KEY header.\n\n' +
                `Webhooks of this key's jobs are signed (Standard Webhooks) with its own secret, also shown only this once:\n\n  ${webhookSecret}\n\n` +
                `Give it to the key's webhook receivers; replace it with: tailor keys rotate-webhook-secret ${record.id}\n`,
            )
          }
          return EXIT.ok
        }
        break
      }
      case 'list': {
        only([])
        if (rest.length > 0) {
          throw new UsageError(`keys list takes no arguments; got ${rest.join(' ')}`)
        }
        run = async ({ store, where }) => {
          const keys = (await store.list()).sort((a, b) => a.createdAt.localeCompare(b.createdAt))
          if (values.json === true) {
            io.stdout.write(`${JSON.stringify(keys.map(publicView))}\n`)
            return EXIT.ok
          }
          if (keys.length === 0) {
            io.stdout.write(
              `No API keys in ${where}. Create one with: tailor keys create --name NAME\n`,
            )
            return EXIT.ok
          }
          const rows = [
            [
              'ID',
              'NAME',
              'CREATED',
              'REVOKED',
              'RATE LIMIT',
              'MAX JOBS',
              'CREDITS LEFT',
              'WEBHOOK SIGNING',
            ],
            ...keys.map((k) => [
              k.id,
              k.name,
              k.createdAt,
              k.revokedAt ?? '-',
              k.rateLimitPerS === undefined ? 'default' : `${k.rateLimitPerS}/s`,
              k.maxConcurrentJobs === undefined
                ? 'default'
                : k.maxConcurrentJobs === 0
                  ? 'no cap'
                  : String(k.maxConcurrentJobs),
              k.credits === undefined ? 'unlimited' : `${creditsRemaining(k)} of ${k.credits}`,
              ((v) =>
                v.webhookSigning === 'own'
                  ? v.previousWebhookSecretUntil === null
                    ? 'own'
                    : `own (+old until ${String(v.previousWebhookSecretUntil)})`
                  : 'WEBHOOK_SECRET')(publicView(k)),
            ]),
          ]
          io.stdout.write(table(rows))
          return EXIT.ok
        }
        break
      }
      case 'revoke': {
        only([])
        if (rest.length !== 1) {
          throw new UsageError(
            `keys revoke takes one key id (see tailor keys list); got ${rest.length} argument(s)`,
          )
        }
        const id = rest[0]!
        run = async ({ store, where }) => {
          let already: string | undefined
          const now = new Date().toISOString()
          const rec = await store.update(id, (r) => {
            already = r.revokedAt
            return r.revokedAt === undefined ? { ...r, revokedAt: now } : null
          })
          if (rec === null) {
            io.stderr.write(
              `tailor keys: no API key with id ${JSON.stringify(id)} in ${where} (see tailor keys list)\n`,
            )
            return EXIT.failed
          }
          if (values.json === true) io.stdout.write(`${JSON.stringify(publicView(rec))}\n`)
          else if (already !== undefined) {
            io.stdout.write(
              `API key ${id} (${JSON.stringify(rec.name)}) was already revoked at ${already}.\n`,
            )
          } else {
            io.stdout.write(
              `Revoked API key ${id} (${JSON.stringify(rec.name)}); gateways refuse it within a second.\n`,
            )
          }
          return EXIT.ok
        }
        break
      }
      case 'rotate-webhook-secret': {
        only(['overlap-hours'])
        if (rest.length !== 1) {
          throw new UsageError(
            `keys rotate-webhook-secret takes one key id (see tailor keys list); got ${rest.length} argument(s)`,
          )
        }
        const id = rest[0]!
        const overlapHours =
          wholeNumber('--overlap-hours', values['overlap-hours'], 0, 24 * 30) ??
          DEFAULT_OVERLAP_HOURS
        run = async ({ store, where }) => {
          let secret = ''
          let hadOwn = false
          const rec = await store.update(id, (r) => {
            hadOwn = r.webhookSecret !== undefined
            const next = rotateWebhookSecret(r, overlapHours * 3600_000)
            secret = next.secret
            return next.record
          })
          if (rec === null) {
            io.stderr.write(
              `tailor keys: no API key with id ${JSON.stringify(id)} in ${where} (see tailor keys list)\n`,
            )
            return EXIT.failed
          }
          if (values.json === true) {
            io.stdout.write(`${JSON.stringify({ ...publicView(rec), webhookSecret: secret })}\n`)
          } else {
            io.stdout.write(
              `New webhook signing secret of API key ${id} (${JSON.stringify(rec.name)}), shown only this once:\n\n  ${secret}\n\n` +
                (rec.previousWebhookSecretUntil !== undefined
                  ? `Until ${rec.previousWebhookSecretUntil} every delivery is signed with the new and the old secret; then with the new one only.\n`
                  : hadOwn
                    ? 'The old secret no longer signs anything (gateways pick the change up within a second).\n'
                    : "Its webhooks were signed with the server's WEBHOOK_SECRET until now; from now on with this secret only.\n"),
            )
          }
          return EXIT.ok
        }
        break
      }
      default:
        throw new UsageError(
          `unknown keys subcommand ${JSON.stringify(sub)}: expected create, list, revoke or rotate-webhook-secret`,
        )
    }
    let opened: Awaited<ReturnType<typeof openKeyStoreAt>>
    try {
      // NATS with auth/TLS: the same NATS_USER, NATS_PASSWORD and NATS_TLS_* variables as the services.
      opened = await openKeyStoreAt({
        ...(natsUrl === undefined ? {} : { natsUrl }),
        dataDir,
        natsClient: natsClientOptions(process.env),
      })
    } catch (err) {
      io.stderr.write(
        `tailor keys: cannot open the key store at ${natsUrl === undefined ? dataDir : `NATS ${natsUrl}`}: ${(err as Error).message}\n`,
      )
      return EXIT.failed
    }
    try {
      return await run(opened)
    } catch (err) {
      io.stderr.write(`tailor keys: ${sub} failed: ${(err as Error).message}\n`)
      return EXIT.failed
    } finally {
      await opened.close()
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`tailor keys: ${err.message}\nRun 'tailor keys --help' for usage.\n`)
      return EXIT.usage
    }
    throw err
  }
}
