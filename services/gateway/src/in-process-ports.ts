import { createMemorySlotListStore } from './access/job-slots.ts'
import { createMemoryRateBudget } from './access/rate-budget.ts'
import type { GatewayPorts, GatewayTransport } from './compose.ts'

/** What the embedded mode opens for the gateway (services/embedded: the data dir's files, in-process queues). */
export type InProcessPorts = Omit<GatewayPorts, 'slotLists' | 'rateBudget' | 'transport'>

/** No NATS, no gRPC: inference's events are function calls (Gateway.handleJobEvent). */
const IN_PROCESS_TRANSPORT: GatewayTransport = {
  mode: 'embedded',
  natsConnected: () => null,
  healthy: () => true,
  events: null,
  handleJobEventsWith: () => undefined,
  stopEvents: async () => undefined,
  close: async () => undefined,
}

/**
 * Adapter (embedded mode): completes the embedded ports with what lives in memory in one
 * process — the per-key slot lists, rebuilt from the unfinished records at start, and the rate
 * budgets.
 */
export async function inProcessPorts(ports: InProcessPorts): Promise<GatewayPorts> {
  const held = new Map<string, string[]>()
  for (const r of await ports.jobs.listUnfinished()) {
    if (r.ownerKeyId !== undefined) {
      held.set(r.ownerKeyId, [...(held.get(r.ownerKeyId) ?? []), r.id])
    }
  }
  return {
    ...ports,
    slotLists: createMemorySlotListStore(held),
    rateBudget: createMemoryRateBudget(),
    transport: IN_PROCESS_TRANSPORT,
  }
}
