import { openFileKeyStore } from './key-store-files.ts'
import type { KeyStore } from './key-store.ts'
import type { NatsClientOptions } from '@tailor/proto/net'

const NATS_CONNECT_TIMEOUT_MS = 5_000

/**
 * The key store a tool (`tailor keys`) works on: the KV bucket `api_keys` on the NATS server at
 * `natsUrl` (distributed mode), else the data directory's api-keys.json (embedded mode).
 * `close` disconnects from NATS. The NATS client is imported only when a NATS URL is given, so
 * `tailor keys` against a data dir loads no NATS code (cli/src/commands/keys.test.ts checks it).
 */
export async function openKeyStoreAt(o: {
  natsUrl?: string
  dataDir: string
  natsClient?: NatsClientOptions
}): Promise<{ store: KeyStore; where: string; close(): Promise<void> }> {
  if (o.natsUrl === undefined) {
    const store = openFileKeyStore(o.dataDir)
    return { store, where: `data dir ${o.dataDir}`, close: () => store.close() }
  }
  const [{ connect }, { openKvKeyStore }] = await Promise.all([
    import('@nats-io/transport-node'),
    import('./key-store-kv.ts'),
  ])
  const nc = await connect({
    ...o.natsClient,
    servers: o.natsUrl,
    name: 'tailor-keys',
    timeout: NATS_CONNECT_TIMEOUT_MS,
    maxReconnectAttempts: 0,
  })
  try {
    const store = await openKvKeyStore(nc)
    return { store, where: `NATS ${o.natsUrl} (KV bucket api_keys)`, close: () => nc.close() }
  } catch (err) {
    await nc.close()
    throw err
  }
}
