import { hostname } from 'node:os'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { followNatsStatus, natsClientOptions } from '@tailor/proto/net'
import type { InferencePorts } from './compose.ts'
import type { Config } from './config.ts'
import { openJetStreamJobSource } from './consumer/job-source-jetstream.ts'
import { openJobEventStream } from './events/event-stream.ts'
import type { Logger } from './logger.ts'
import { openObjectStoreResultStore } from './results/result-store-object-store.ts'
import { openObjectStoreUploadSource } from './uploads/upload-source-object-store.ts'

/**
 * Distributed mode's ports: jobs from the JetStream consumer of this worker's kinds, job events to
 * the gateway over gRPC, results to and uploads from the Object Stores. Nothing is left open when
 * opening fails.
 */
export async function openNatsPorts(config: Config, logger: Logger): Promise<InferencePorts> {
  const kinds = config.JOB_KINDS
  let nc: NatsConnection | null = null
  let natsConnected = true
  try {
    if (
      config.NATS_URL === undefined ||
      config.GATEWAY_GRPC_ADDR === undefined ||
      config.JOB_EVENTS_TOKEN === undefined
    ) {
      throw new Error(
        'NATS_URL, GATEWAY_GRPC_ADDR and JOB_EVENTS_TOKEN are required to run inference on its own (or use the embedded mode)',
      )
    }
    nc = await connect({
      ...natsClientOptions(config),
      servers: config.NATS_URL,
      name: 'tailor-inference',
      maxReconnectAttempts: -1,
    })
    followNatsStatus(nc.status(), logger, (connected) => {
      natsConnected = connected
    })
    const conn: NatsConnection = nc
    return {
      source: await openJetStreamJobSource(nc, {
        kinds,
        ackWaitMs: config.ACK_WAIT_MS,
        maxAckPending: config.JOBS_MAX_ACK_PENDING,
        logger,
      }),
      events: await openJobEventStream({
        address: config.GATEWAY_GRPC_ADDR,
        workerId: config.WORKER_ID ?? `${hostname()}-${process.pid}`,
        logger,
        token: config.JOB_EVENTS_TOKEN,
        ...(config.JOB_EVENTS_TLS_CERT !== undefined &&
        config.JOB_EVENTS_TLS_KEY !== undefined &&
        config.JOB_EVENTS_TLS_CA !== undefined
          ? {
              tls: {
                certFile: config.JOB_EVENTS_TLS_CERT,
                keyFile: config.JOB_EVENTS_TLS_KEY,
                caFile: config.JOB_EVENTS_TLS_CA,
              },
            }
          : {}),
      }),
      results: await openObjectStoreResultStore(nc, { maxResultBytes: config.RESULT_MAX_BYTES }),
      uploads: await openObjectStoreUploadSource(nc),
      connection: {
        mode: 'distributed',
        connected: () => natsConnected && !conn.isClosed(),
        healthy: () => !conn.isClosed(),
        drain: () => conn.drain(),
        close: () => conn.close(),
      },
    }
  } catch (err) {
    await nc?.close()
    throw err
  }
}
