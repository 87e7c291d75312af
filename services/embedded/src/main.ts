import { resolve } from 'node:path'
import { pino } from 'pino'
import { formatBanner, logsSettled, stdoutLogDestination } from '@tailor/gateway'
import { describeStartupError, StartupError, type StartupContext } from '@tailor/proto'
import { loadConfig, type Config } from './config.ts'
import { start, type Embedded } from './start.ts'

/** A problem the operator fixes is said in one line each; anything else keeps its stack for the bug report. */
function fail(err: unknown, ctx?: StartupContext): never {
  console.error(
    err instanceof StartupError
      ? `tailor: ${err.message}`
      : (describeStartupError('tailor', err, ctx)?.join('\n') ?? err),
  )
  process.exit(1)
}

let config: Config
try {
  config = loadConfig()
} catch (err) {
  fail(err)
}
let tailor: Embedded
try {
  tailor = await start(config, {
    logger: pino({ name: 'tailor', level: config.logLevel }, stdoutLogDestination),
  })
} catch (err) {
  fail(err, {
    ports: { PORT: config.port, API_GRPC_PORT: Number(config.env.API_GRPC_PORT ?? 50052) },
  })
}
const shutdown = (): void => {
  tailor.stop().then(
    () => process.exit(0),
    (err: unknown) => (console.error(err), process.exit(1)),
  )
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)

await logsSettled()
const dataDirFlag =
  config.dataDir === resolve('./tailor-data') ? '' : ` --data-dir ${config.dataDir}`
process.stdout.write(
  formatBanner({
    mode: 'embedded',
    http: tailor.bound,
    apiGrpc: { address: config.host, port: tailor.apiGrpcPort },
    publicBaseUrl: config.env.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    key:
      tailor.createdApiKey !== null
        ? {
            kind: 'created',
            key: tailor.createdApiKey,
            ...(tailor.createdWebhookSecret === null
              ? {}
              : { webhookSecret: tailor.createdWebhookSecret }),
          }
        : config.apiKeyConfigured
          ? { kind: 'configured', source: 'TAILOR_API_KEY' }
          : {
              kind: 'store',
              count: tailor.keyCount(),
              where: `${config.dataDir}/api-keys.json`,
              createCommand: `pnpm tailor keys create --name NAME${dataDirFlag}`,
            },
    rows: [
      ['Data', config.dataDir],
      [
        'Webhooks',
        `signed with each key's own secret (tailor keys); keys without one (TAILOR_API_KEY, older keys) with ${tailor.webhookSecretFile !== null ? `the secret in ${tailor.webhookSecretFile} (give it to their receivers)` : 'WEBHOOK_SECRET'}`,
      ],
    ],
  }),
)
