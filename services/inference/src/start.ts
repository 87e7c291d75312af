import { compose, type ComposeOptions, type Inference, type InferencePorts } from './compose.ts'
import type { Config } from './config.ts'
import { openNatsPorts } from './nats-ports.ts'

export { StartupError, type Inference, type InferencePorts } from './compose.ts'

/** The ports services/embedded hands in: its in-process queue and files, no connection. */
export type InProcessPorts = Omit<InferencePorts, 'connection'>

const inProcessPorts = (p: InProcessPorts): InferencePorts => ({
  ...p,
  connection: {
    mode: 'embedded',
    connected: () => null,
    healthy: () => true,
    drain: async () => undefined,
    close: async () => undefined,
  },
})

/**
 * Starts inference: the embedded mode's ports (`ports`, from services/embedded), else NATS
 * (openNatsPorts), composed over by compose.ts (one path for both modes).
 */
export async function start(
  config: Config,
  opts: ComposeOptions & { ports?: InProcessPorts } = {},
): Promise<Inference> {
  const { ports, ...rest } = opts
  return compose(
    config,
    ports !== undefined
      ? async () => inProcessPorts(ports)
      : (logger) => openNatsPorts(config, logger),
    rest,
  )
}
