import type { Config } from './config.ts'
import { compose, type ComposeOptions, type Gateway } from './compose.ts'
import { inProcessPorts, type InProcessPorts } from './in-process-ports.ts'
import { routeGrpcLogs } from './events/grpc-server.ts'
import { createLogger } from './logger.ts'
import { openNatsPorts } from './nats-ports.ts'

export type { Gateway } from './compose.ts'

/**
 * Starts the gateway: opens its ports — the embedded mode's (`ports`, from services/embedded),
 * else NATS (openNatsPorts) — and composes it over them (compose.ts, one path for both modes).
 */
export async function start(
  config: Config,
  opts: ComposeOptions & { ports?: InProcessPorts } = {},
): Promise<Gateway> {
  const { ports, ...rest } = opts
  const logger = rest.logger ?? createLogger(config.logLevel)
  routeGrpcLogs(logger) // before any gRPC server binds (openNatsPorts' job events server)
  return compose(
    config,
    ports !== undefined ? await inProcessPorts(ports) : await openNatsPorts(config, logger),
    { ...rest, logger },
  )
}
