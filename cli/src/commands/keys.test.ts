import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { keysCommand } from './keys.ts'

let dir: string
let out: string[]
let err: string[]
const io = () => ({
  stdout: { write: (s: string) => out.push(s) },
  stderr: { write: (s: string) => err.push(s) },
  env: { TAILOR_DATA_DIR: dir },
})
const run = async (
  ...argv: string[]
): Promise<{ code: number; stdout: string; stderr: string }> => {
  out = []
  err = []
  const code = await keysCommand(argv, io())
  return { code, stdout: out.join(''), stderr: err.join('') }
}

beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), 'tailor-keys-')), 'data') // created by the first write
})
afterEach(async () => {
  await rm(join(dir, '..'), { recursive: true, force: true })
})

describe('tailor keys (data dir)', () => {
  it('create shows the key once and stores only its hash; list shows limits, never keys or hashes; revoke marks it', async () => {
    const c = await run(
      'create',
      '--name',
      'ci bot',
      '--rate-limit',
      '20',
      '--max-concurrent-jobs',
      '0',
    )
    expect(c.code).toBe(0)
    const key = /\n {2}(tk_[A-Za-z0-9_-]{43})\n/.exec(c.stdout)?.[1]
    expect(key).toBeDefined()
    const id = /Created API key (key_[A-Za-z0-9_-]{16})/.exec(c.stdout)?.[1]
    const file = await readFile(join(dir, 'api-keys.json'), 'utf8')
    expect(file).not.toContain(key!)
    expect(file).toContain(id!)

    const l = await run('list')
    expect(l.code).toBe(0)
    expect(l.stdout).toMatch(
      /^ID\s+NAME\s+CREATED\s+REVOKED\s+RATE LIMIT\s+MAX JOBS\s+CREDITS LEFT\s+WEBHOOK SIGNING\n/,
    )
    expect(l.stdout).toMatch(
      new RegExp(`${id}\\s+ci bot\\s+\\S+Z\\s+-\\s+20/s\\s+no cap\\s+unlimited\\s+own\\n`),
    )
    expect(l.stdout).not.toMatch(/[0-9a-f]{64}/)

    expect((await run('revoke', id!)).stdout).toContain(`Revoked API key ${id}`)
    expect((await run('revoke', id!)).stdout).toContain('was already revoked')
    const j = JSON.parse((await run('list', '--json')).stdout) as Record<string, unknown>[]
    expect(j).toEqual([
      {
        id,
        name: 'ci bot',
        createdAt: expect.any(String),
        revokedAt: expect.any(String),
        rateLimitPerS: 20,
        maxConcurrentJobs: 0,
        credits: null,
        creditsRemaining: null,
        webhookSigning: 'own',
        previousWebhookSecretUntil: null,
      },
    ])
  })

  it("create shows the key's own webhook secret once (stored, never listed); rotate-webhook-secret replaces it, the old one signing on for the overlap", async () => {
    const c = await run('create', '--name', 'hooks')
    const secret = /\n {2}(whsec_[A-Za-z0-9+/]+=*)\n/.exec(c.stdout)?.[1]
    expect(secret).toBeDefined()
    const id = /Created API key (key_[A-Za-z0-9_-]{16})/.exec(c.stdout)![1]!
    const stored = () =>
      readFile(join(dir, 'api-keys.json'), 'utf8').then((t) =>
        (JSON.parse(t) as { keys: Record<string, unknown>[] }).keys.find((k) => k.id === id)!,
      )
    expect((await stored()).webhookSecret).toBe(secret)
    expect((await run('list')).stdout).not.toContain('whsec_')

    const r = await run('rotate-webhook-secret', id)
    expect(r.code).toBe(0)
    const next = /\n {2}(whsec_[A-Za-z0-9+/]+=*)\n/.exec(r.stdout)?.[1]
    expect(next).toBeDefined()
    expect(next).not.toBe(secret)
    expect(r.stdout).toMatch(/Until \S+Z every delivery is signed with the new and the old secret/)
    const after = await stored()
    expect(after).toMatchObject({ webhookSecret: next, previousWebhookSecret: secret })
    const until = Date.parse(String(after.previousWebhookSecretUntil))
    expect(until - Date.now()).toBeGreaterThan(23 * 3600_000)
    expect((await run('list')).stdout).toMatch(new RegExp(`${id}.*own \\(\\+old until \\S+Z\\)`))

    const now = await run('rotate-webhook-secret', id, '--overlap-hours', '0', '--json')
    const j = JSON.parse(now.stdout) as Record<string, unknown>
    expect(j).toMatchObject({
      id,
      webhookSigning: 'own',
      previousWebhookSecretUntil: null,
      webhookSecret: expect.stringMatching(/^whsec_/),
    })
    const last = await stored()
    expect(last.webhookSecret).toBe(j.webhookSecret)
    expect(last.previousWebhookSecret).toBeUndefined()
    expect((await run('rotate-webhook-secret', 'key_AAAAAAAAAAAAAAAA')).code).toBe(1)
  })

  it('an empty store says how to create a key; an unknown id is exit 1', async () => {
    expect((await run('list')).stdout).toContain('No API keys in data dir')
    const r = await run('revoke', 'key_AAAAAAAAAAAAAAAA')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('no API key with id "key_AAAAAAAAAAAAAAAA"')
  })

  it.each([
    [[], 'expected a subcommand'],
    [['create'], '--name NAME is required'],
    [
      ['create', '--name', 'x', '--rate-limit', '0'],
      '--rate-limit must be a whole number, at least 1',
    ],
    [
      ['create', '--name', 'x', '--max-concurrent-jobs=2.5'],
      '--max-concurrent-jobs must be a whole number, at least 0',
    ],
    [['create', '--name', 'x', '--max-concurrent-jobs', '1001'], 'at most 1000'],
    [['create', '--name', 'x', '--credits=1.5'], '--credits must be a whole number, at least 0'],
    [['list', '--credits', '5'], '--credits is only for keys create'],
    [['create', '--name', 'x', 'extra'], 'takes no arguments'],
    [['revoke'], 'takes one key id'],
    [['list', '--name', 'x'], '--name is only for keys create'],
    [['rotate'], 'unknown keys subcommand "rotate"'],
    [['rotate-webhook-secret'], 'takes one key id'],
    [
      ['rotate-webhook-secret', 'key_AAAAAAAAAAAAAAAA', '--overlap-hours=1.5'],
      '--overlap-hours must be a whole number, at least 0',
    ],
    [['list', '--overlap-hours', '1'], '--overlap-hours is only for keys rotate-webhook-secret'],
    [['list', '--nats-url', 'nats://x', '--data-dir', '/tmp'], 'not both'],
    [['list', '--bogus'], 'unknown option --bogus'],
  ])('usage error %j → exit 2: %s', async (argv, msg) => {
    const r = await run(...argv)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(msg)
    expect(r.stderr).toContain("Run 'tailor keys --help'")
  })

  it('--help prints the usage, exit 0', async () => {
    const r = await run('--help')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('tailor keys create --name NAME')
  })
})

describe('tailor keys (data dir) loads no NATS code', () => {
  /** Resolve hook that makes every @nats-io package unresolvable (and says so). */
  const BLOCK_NATS_HOOKS = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@nats-io/')) throw new Error('NATS blocked: ' + specifier)
  return next(specifier, context)
}`
  const BLOCK_NATS = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(BLOCK_NATS_HOOKS)}`)})`
  const MAIN = new URL('../main.ts', import.meta.url).pathname
  /** Runs the real `tailor` entry in a child process where no @nats-io package can be loaded. */
  const runBlocked = (...argv: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          '--import',
          `data:text/javascript,${encodeURIComponent(BLOCK_NATS)}`,
          MAIN,
          'keys',
          ...argv,
        ],
        {
          env: { ...process.env, TAILOR_DATA_DIR: dir, NATS_URL: '' },
        },
        (error, stdout, stderr) => {
          if (error !== null && typeof error.code !== 'number') reject(error)
          else resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
        },
      )
    })

  it('create and list work with every @nats-io package unresolvable', async () => {
    const c = await runBlocked('create', '--name', 'offline')
    expect(c.stderr).toBe('')
    expect(c.code).toBe(0)
    expect(c.stdout).toMatch(/Created API key key_/)
    const l = await runBlocked('list')
    expect(l.code).toBe(0)
    expect(l.stdout).toMatch(/\boffline\b/)
  })

  it('the block is real: with --nats-url the same command needs NATS and fails to load it', async () => {
    const r = await runBlocked('list', '--nats-url', 'nats://127.0.0.1:1')
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('NATS blocked: @nats-io/')
  })
})
