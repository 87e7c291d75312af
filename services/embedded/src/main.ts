import { loadConfig, type Config } from './config.ts'
import { start } from './start.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
const tailor = await start(config)
process.stdout.write(
  `\nTailor is running at ${tailor.url}  (data: ${config.dataDir})\n` +
    (tailor.createdApiKey !== null
      ? `Created an API key named "default" (shown only this once; only its hash is stored):\n\n  X-API-KEY: ${tailor.createdApiKey}\n\n` +
        'Manage keys with `pnpm tailor keys create|list|revoke` (same data dir).\n\n'
      : config.apiKeyConfigured
        ? 'Accepting the API key from TAILOR_API_KEY.\n\n'
        : `Accepting the API keys in ${config.dataDir}/api-keys.json (pnpm tailor keys list|create|revoke).\n\n`) +
    (tailor.webhookSecretFile !== null
      ? `Webhooks are signed (Standard Webhooks) with the secret in ${tailor.webhookSecretFile}; give it to your receivers.\n\n`
      : 'Webhooks are signed with the secret from WEBHOOK_SECRET.\n\n'),
)
const shutdown = (): void => {
  tailor.stop().then(() => process.exit(0), (err: unknown) => (console.error(err), process.exit(1)))
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
