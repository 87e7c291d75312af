import { loadConfig, type Config } from './config.ts'
import { start, StartupError, type Inference } from './start.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
let inference: Inference
try {
  inference = await start(config)
} catch (err) {
  // A refusal the operator fixes is one line; anything else keeps its stack for the bug report.
  console.error(err instanceof StartupError ? `inference: ${err.message}` : err)
  process.exit(1)
}
const shutdown = (): void => {
  inference.stop().then(() => process.exit(0), (err: unknown) => (console.error(err), process.exit(1)))
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
