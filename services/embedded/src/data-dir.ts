import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateWebhookSecret, parseWebhookSecret } from '@tailor/gateway'

export interface DataDir {
  jobsDir: string
  resultsDir: string
  workDir: string
  /** POST /v1/uploads files (kept 1 hour), read by inference for `tailor://uploads/<id>` inputs. */
  uploadsDir: string
  /** Idempotency-Key claims (one file each, kept IDEMPOTENCY_TTL_S). */
  idempotencyDir: string
  /** Pending webhook deliveries (resumed after a restart). */
  webhooksDir: string
  /** Standard Webhooks signing secret (`whsec_…`), created once and kept in `webhookSecretFile`. */
  webhookSecret: string
  webhookSecretFile: string
  /** HMAC secret for result URLs, created once and kept (URLs survive a restart). */
  resultUrlSecret: string
  /** sha256 hex from `api-key.sha256`, where an earlier version kept its generated key (default-key.ts imports it). */
  legacyApiKeyHash: string | null
}

const LEGACY_API_KEY_HASH_FILE = 'api-key.sha256'
const SECRET_FILE = 'result-url.secret'
const WEBHOOK_SECRET_FILE = 'webhook.secret'

async function readOptional(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * Lays out the data directory. API keys live in its key store (`api-keys.json`, gateway
 * access/key-store-files.ts; the default key: default-key.ts).
 */
export async function openDataDir(dir: string): Promise<DataDir> {
  const d = {
    jobsDir: join(dir, 'jobs'),
    resultsDir: join(dir, 'results'),
    workDir: join(dir, 'work'),
    uploadsDir: join(dir, 'uploads'),
    idempotencyDir: join(dir, 'idempotency'),
    webhooksDir: join(dir, 'webhooks'),
  }
  for (const p of [dir, ...Object.values(d)]) await mkdir(p, { recursive: true, mode: 0o700 })
  let secret = await readOptional(join(dir, SECRET_FILE))
  if (secret === null || secret.length < 32) {
    secret = randomBytes(32).toString('base64url')
    await writeFile(join(dir, SECRET_FILE), `${secret}\n`, { mode: 0o600 })
  }
  const webhookSecretFile = join(dir, WEBHOOK_SECRET_FILE)
  let webhookSecret = await readOptional(webhookSecretFile)
  if (webhookSecret === null || parseWebhookSecret(webhookSecret) === null) {
    webhookSecret = generateWebhookSecret()
    await writeFile(webhookSecretFile, `${webhookSecret}\n`, { mode: 0o600 })
  }
  const legacy = await readOptional(join(dir, LEGACY_API_KEY_HASH_FILE))
  const legacyApiKeyHash = legacy !== null && /^[0-9a-f]{64}$/.test(legacy) ? legacy : null
  return { ...d, resultUrlSecret: secret, webhookSecret, webhookSecretFile, legacyApiKeyHash }
}
