import {
  describeStartupError,
  StartupError,
  withoutCredentials,
  type StartupContext,
} from '@tailor/proto'
import { formatBanner, logsSettled, stdoutLogDestination } from './banner.ts'
import { loadConfig, type Config } from './config.ts'
import { createLogger } from './logger.ts'
import { keyCreateCommand, type Gateway } from './compose.ts'
import { start } from './start.ts'

/** A problem the operator fixes is said in one line each; anything else keeps its stack for the bug report. */
function fail(err: unknown, ctx?: StartupContext): never {
  console.error(
    err instanceof StartupError
      ? `gateway: ${err.message}`
      : (describeStartupError('gateway', err, ctx)?.join('\n') ?? err),
  )
  process.exit(1)
}

let config: Config
try {
  config = loadConfig()
} catch (err) {
  fail(err)
}
let gateway: Gateway
try {
  gateway = await start(config, {
    logger: createLogger(config.logLevel, 'gateway', stdoutLogDestination),
  })
} catch (err) {
  fail(err, {
    natsUrl: config.natsUrl,
    ports: {
      PORT: config.port,
      GRPC_PORT: config.grpcPort,
      API_GRPC_PORT: config.apiGrpcPort,
      METRICS_PORT: config.metricsPort,
    },
  })
}
const shutdown = (): void => {
  gateway.stop().then(
    () => process.exit(0),
    (err: unknown) => (console.error(err), process.exit(1)),
  )
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)

await logsSettled()
const nats = config.natsUrl === undefined ? null : withoutCredentials(config.natsUrl)
process.stdout.write(
  formatBanner({
    mode: nats === null ? 'embedded' : 'distributed',
    http: gateway.bound,
    apiGrpc: { address: config.host, port: gateway.apiGrpcPort },
    publicBaseUrl: config.publicBaseUrl,
    key: {
      kind: 'store',
      count: gateway.keyCount(),
      where:
        nats === null
          ? 'the environment (API_KEYS, API_KEY_SHA256)'
          : `the KV bucket api_keys of ${nats}`,
      createCommand: keyCreateCommand(config),
    },
    rows: [
      ...(nats === null ? [] : [['NATS', nats] as const]),
      ...(gateway.grpcPort === null
        ? []
        : [
            [
              'Job events',
              `gRPC port ${gateway.grpcPort}: workers set GATEWAY_GRPC_ADDR=<this host>:${gateway.grpcPort} and the same JOB_EVENTS_TOKEN`,
            ] as const,
          ]),
    ],
  }),
)
