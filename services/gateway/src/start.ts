import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import type { JobEvent, JobEventAck } from '@tailor/proto'
import { createApp } from './app.ts'
import type { Config } from './config.ts'
import { startJobEventsServer, type JobEventsServer } from './events/grpc-server.ts'
import { createJobEventHandler } from './jobs/job-events.ts'
import { openKvJobStore } from './jobs/job-store-kv.ts'
import type { JobStore } from './jobs/job-store.ts'
import { openJetStreamPublisher } from './jobs/publisher-jetstream.ts'
import type { CancelNotifier, JobPublisher } from './jobs/publisher.ts'
import { createLogger, type Logger } from './logger.ts'
import { openObjectStoreResultReader } from './results/result-reader-object-store.ts'
import type { ResultReader } from './results/result-reader.ts'
import { openObjectStoreUploadStore } from './uploads/upload-store-object-store.ts'
import type { UploadStore } from './uploads/upload-store.ts'

/** In-process ports for the embedded mode; without them the gateway uses NATS + gRPC. */
export interface GatewayPorts {
  jobs: JobStore
  publisher: JobPublisher
  cancel: CancelNotifier
  results: ResultReader
  uploads: UploadStore
}

export interface Gateway {
  url: string
  port: number
  /** gRPC port for inference job events (distributed mode), else null. */
  grpcPort: number | null
  /** Applies an inference event to the job records (the embedded mode calls it directly). */
  handleJobEvent: (e: JobEvent) => Promise<JobEventAck>
  jobs: JobStore
  stop(): Promise<void>
}

/** The only composition root of the gateway. */
export async function start(config: Config, opts: { ports?: GatewayPorts; logger?: Logger } = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.logLevel)
  let nc: NatsConnection | null = null
  let grpcServer: JobEventsServer | null = null
  let ports: GatewayPorts
  let handleJobEvent: (e: JobEvent) => Promise<JobEventAck>
  if (opts.ports !== undefined) {
    ports = opts.ports
    handleJobEvent = createJobEventHandler(ports.jobs, logger)
  } else {
    if (config.natsUrl === undefined) throw new Error('NATS_URL is required to run the gateway on its own (or use the embedded mode)')
    nc = await connect({ servers: config.natsUrl, name: 'tailor-gateway', maxReconnectAttempts: -1 })
    const jobs = await openKvJobStore(nc, { ttlMs: config.jobRetentionS * 1000 })
    handleJobEvent = createJobEventHandler(jobs, logger)
    grpcServer = await startJobEventsServer({ host: config.host, port: config.grpcPort, handle: handleJobEvent, logger })
    ports = { jobs, publisher: await openJetStreamPublisher(nc), cancel: grpcServer, uploads: await openObjectStoreUploadStore(nc), results: await openObjectStoreResultReader(nc, { ttlMs: config.resultRetentionS * 1000 }) }
  }
  const conn = nc
  const grpcSrv = grpcServer
  const app = createApp({
    config,
    logger,
    ...ports,
    health: () => ({
      ok: conn === null || !conn.isClosed(),
      mode: conn === null ? 'embedded' : 'distributed',
      ...(grpcSrv ? { workers_connected: grpcSrv.connectedWorkers() } : {}),
    }),
  })
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s))
  })
  const port = (server.address() as AddressInfo).port
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host
  const url = `http://${shownHost}:${port}`
  logger.info({ port, grpcPort: grpcServer?.port, mode: nc ? 'distributed' : 'embedded', keys: config.apiKeyHashes.length }, 'gateway listening')
  return {
    url,
    port,
    grpcPort: grpcServer?.port ?? null,
    handleJobEvent,
    jobs: ports.jobs,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Long downloads must not hold shutdown forever.
        setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections()
        }, config.shutdownTimeoutMs).unref()
      })
      await grpcSrv?.stop(config.shutdownTimeoutMs)
      await ports.jobs.close()
      await ports.uploads.close()
      if (conn !== null) await conn.drain()
      logger.info('gateway stopped')
    },
  }
}
