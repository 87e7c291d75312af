/**
 * `tailor <command> …`: a small dispatcher; each command group is one file in commands/ and has
 * the signature `(argv, io) => Promise<exit code>`. Run as `pnpm tailor …` (tsx) or the `tailor` bin.
 */
import { keysCommand } from './commands/keys.ts'
import { removeBgCommand } from './commands/remove-bg.ts'
import { tryOnCommand } from './commands/try-on.ts'
import {
  DEFAULT_DATA_DIR,
  DEFAULT_URL,
  didYouMean,
  SERVICE_URL_FILE,
  type CliIO,
} from './service.ts'

export type Command = (argv: string[], io: CliIO) => Promise<number>

export const COMMANDS: Record<string, { run: Command; summary: string }> = {
  'try-on': { run: tryOnCommand, summary: 'dress a person photo in a garment photo → JPEG' },
  'remove-bg': {
    run: removeBgCommand,
    summary: 'remove the background of a video (progress bar) → video file',
  },
  keys: { run: keysCommand, summary: 'create, list or revoke API keys (NATS KV or the data dir)' },
}

export const HELP = () => `Usage: tailor <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`)
  .join('\n')}

Run 'tailor <command> --help' for a command's options. Inputs may be local files (uploaded to the
service, kept 1 hour) or http(s) URLs. Service address: --url or TAILOR_URL (the service's start
banner prints the export line); without them, the URL a running embedded service wrote in
${DEFAULT_DATA_DIR}/${SERVICE_URL_FILE}, else ${DEFAULT_URL}. Key: --api-key or TAILOR_API_KEY.
`

async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP())
    return name === undefined ? 2 : 0
  }
  const cmd = COMMANDS[name]
  if (cmd === undefined) {
    const near = didYouMean(name, Object.keys(COMMANDS))
    io.stderr.write(
      `tailor: unknown command ${JSON.stringify(name)}${near !== null ? ` (did you mean ${near}?)` : ''}\n\n${HELP()}`,
    )
    return 2
  }
  return cmd.run(rest, io)
}

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
})
