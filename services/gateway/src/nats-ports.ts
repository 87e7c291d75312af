import { connect } from '@nats-io/transport-node'
import { listenFailure, type JobEvent, type JobEventAck } from '@tailor/proto'
import { followNatsStatus } from '@tailor/proto/net'
import { openKvSlotListStore } from './access/job-slots-kv.ts'
import { openKvKeyStore } from './access/key-store-kv.ts'
import { openKvRateBudget } from './access/rate-budget-kv.ts'
import type { GatewayPorts } from './compose.ts'
import type { Config } from './config.ts'
import { startJobEventsServer } from './events/grpc-server.ts'
import { openKvIdempotencyStore } from './idempotency/idempotency-store-kv.ts'
import { ensureByteCaps } from './jetstream-byte-caps.ts'
import { ensureReplicas } from './jetstream-replicas.ts'
import { openKvJobStore } from './jobs/job-store-kv.ts'
import { openJetStreamPublisher } from './jobs/publisher-jetstream.ts'
import { openJetStreamQueueDepth } from './jobs/queue-depth-jetstream.ts'
import type { Logger } from './logger.ts'
import { openObjectStoreResultReader } from './results/result-reader-object-store.ts'
import { openObjectStoreUploadStore } from './uploads/upload-store-object-store.ts'
import { openJetStreamWebhookQueue } from './webhooks/webhook-queue-jetstream.ts'

/**
 * Adapter (distributed mode): the gateway's ports over NATS — job records, API keys, slots, rate
 * budgets and idempotency claims in KV buckets shared by every replica, jobs and webhooks in
 * JetStream work queues, uploads and results in Object Stores — and the job events gRPC server
 * inference reports to. Streams get their replicas and byte caps before the gateway serves.
 */
export async function openNatsPorts(config: Config, logger: Logger): Promise<GatewayPorts> {
  if (config.natsUrl === undefined) {
    throw new Error('NATS_URL is required to run the gateway on its own (or use the embedded mode)')
  }
  // noAsyncTraces: no Error (with its stack) built up front for every request/publish; errors
  // keep their message and cause. A measurable share of a submission's CPU (`pnpm bench:load`).
  const nc = await connect({
    ...config.natsClient,
    servers: config.natsUrl,
    name: 'tailor-gateway',
    maxReconnectAttempts: -1,
    noAsyncTraces: true,
  })
  let natsConnected = true
  followNatsStatus(nc.status(), logger, (connected) => {
    natsConnected = connected
  })
  const queueDepth = await openJetStreamQueueDepth(nc)
  const webhooks = await openJetStreamWebhookQueue(nc, {
    attemptTimeoutMs: config.webhookTimeoutMs,
    logger,
    slots: { concurrency: config.webhookConcurrency, perKey: config.webhookMaxInFlightPerKey },
  })
  const jobs = await openKvJobStore(nc, { ttlMs: config.jobRetentionS * 1000 })
  const slotLists = await openKvSlotListStore(nc)
  const keys = await openKvKeyStore(nc)
  if (config.jobEventsToken === undefined) {
    throw new Error('JOB_EVENTS_TOKEN is required with NATS_URL')
  }
  // Events wait for the gateway's handler (set by compose before it serves).
  let handle: ((e: JobEvent) => Promise<JobEventAck>) | null = null
  let handlerSet: () => void = () => undefined
  const handlerReady = new Promise<void>((resolve) => (handlerSet = resolve))
  const events = await startJobEventsServer({
    host: config.host,
    port: config.grpcPort,
    logger,
    token: config.jobEventsToken,
    ...(config.jobEventsTls ? { tls: config.jobEventsTls } : {}),
    handle: async (e) => {
      await handlerReady
      return handle!(e)
    },
  }).catch(async (err: unknown) => {
    await nc.close()
    throw listenFailure(err, 'GRPC_PORT', config.host, config.grpcPort)
  })
  const ports: GatewayPorts = {
    jobs,
    publisher: await openJetStreamPublisher(nc),
    cancel: events,
    uploads: await openObjectStoreUploadStore(nc),
    results: await openObjectStoreResultReader(nc, { ttlMs: config.resultRetentionS * 1000 }),
    idempotency: await openKvIdempotencyStore(nc, { ttlMs: config.idempotencyTtlS * 1000 }),
    webhooks,
    keys,
    queueDepth,
    slotLists,
    // Rate limits: the KV bucket rate_limits, shared by every replica.
    rateBudget: await openKvRateBudget(nc),
    transport: {
      mode: 'distributed',
      natsConnected: () => natsConnected && !nc.isClosed(),
      healthy: () => !nc.isClosed(),
      events,
      handleJobEventsWith(h) {
        handle = h
        handlerSet()
      },
      stopEvents: (timeoutMs) => events.stop(timeoutMs),
      close: () => nc.drain(),
    },
  }
  await ensureReplicas(nc, config.natsReplicas, logger)
  await ensureByteCaps(nc, config.storageCaps, logger)
  return ports
}
