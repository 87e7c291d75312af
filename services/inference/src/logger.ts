import { pino, type Logger } from 'pino'

export type { Logger }

export function createLogger(level: string, name = 'inference'): Logger {
  return pino({ name, level })
}
