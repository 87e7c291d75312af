import { loadConfig, type Config } from './config.ts'
import { start } from './start.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
const inference = await start(config)
const shutdown = (): void => {
  inference.stop().then(() => process.exit(0), (err: unknown) => (console.error(err), process.exit(1)))
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
