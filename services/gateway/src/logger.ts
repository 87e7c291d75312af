import { pino, type Logger } from 'pino'

export type { Logger }

export function createLogger(level: string, name = 'gateway'): Logger {
  return pino({ name, level, redact: { paths: ['req.headers["x-api-key"]', 'apiKey'], remove: true } })
}
