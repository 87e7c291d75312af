import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface DataDir {
  jobsDir: string
  resultsDir: string
  workDir: string
  /** POST /v1/uploads files (kept 1 hour), read by inference for `tailor://uploads/<id>` inputs. */
  uploadsDir: string
  /** HMAC secret for result URLs, created once and kept (URLs survive a restart). */
  resultUrlSecret: string
  /** sha256 hex of the generated API key, when one exists. */
  apiKeyHash: string | null
  /** The plain key, only on the start that created it (to print once). */
  createdApiKey: string | null
}

const API_KEY_HASH_FILE = 'api-key.sha256'
const SECRET_FILE = 'result-url.secret'

async function readOptional(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * Lays out the data directory. With `createApiKey`, a key is generated when none exists yet: only
 * its sha256 is written (mode 0600); the key itself is returned once, to be printed.
 */
export async function openDataDir(dir: string, o: { createApiKey: boolean }): Promise<DataDir> {
  const d = { jobsDir: join(dir, 'jobs'), resultsDir: join(dir, 'results'), workDir: join(dir, 'work'), uploadsDir: join(dir, 'uploads') }
  for (const p of [dir, d.jobsDir, d.resultsDir, d.workDir, d.uploadsDir]) await mkdir(p, { recursive: true, mode: 0o700 })
  let secret = await readOptional(join(dir, SECRET_FILE))
  if (secret === null || secret.length < 32) {
    secret = randomBytes(32).toString('base64url')
    await writeFile(join(dir, SECRET_FILE), `${secret}\n`, { mode: 0o600 })
  }
  let apiKeyHash = await readOptional(join(dir, API_KEY_HASH_FILE))
  let createdApiKey: string | null = null
  if (o.createApiKey && (apiKeyHash === null || !/^[0-9a-f]{64}$/.test(apiKeyHash))) {
    createdApiKey = `tailor_${randomBytes(24).toString('base64url')}`
    apiKeyHash = createHash('sha256').update(createdApiKey).digest('hex')
    await writeFile(join(dir, API_KEY_HASH_FILE), `${apiKeyHash}\n`, { mode: 0o600 })
  }
  return { ...d, resultUrlSecret: secret, apiKeyHash, createdApiKey }
}
