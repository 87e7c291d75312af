import { describeStartupError, type StartupContext } from '@tailor/proto'
import { loadConfig, type Config } from './config.ts'
import { start, StartupError, type Inference } from './start.ts'

/** A refusal the operator fixes is one line each; anything else keeps its stack for the bug report. */
function fail(err: unknown, ctx?: StartupContext): never {
  console.error(
    err instanceof StartupError
      ? `inference: ${err.message}`
      : (describeStartupError('inference', err, ctx)?.join('\n') ?? err),
  )
  process.exit(1)
}

let config: Config
try {
  config = loadConfig()
} catch (err) {
  fail(err)
}
let inference: Inference
try {
  inference = await start(config)
} catch (err) {
  fail(err, { natsUrl: config.NATS_URL, ports: { HEALTH_PORT: config.HEALTH_PORT } })
}
const shutdown = (): void => {
  inference.stop().then(
    () => process.exit(0),
    (err: unknown) => (console.error(err), process.exit(1)),
  )
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
