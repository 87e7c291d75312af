import { pino, type DestinationStream, type Logger } from 'pino'

export type { Logger }

/** JSON lines to stdout (or `destination`, for tests that read the lines). */
export function createLogger(
  level: string,
  name = 'gateway',
  destination?: DestinationStream,
): Logger {
  const options = {
    name,
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'apiKey'], remove: true },
  }
  return destination === undefined ? pino(options) : pino(options, destination)
}
