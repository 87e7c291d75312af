import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { UPLOADS_BUCKET } from '@tailor/proto'
import type { StorageCaps } from './config.ts'
import { TAILOR_STREAMS } from './jetstream-replicas.ts'
import type { Logger } from './logger.ts'
import { RESULTS_BUCKET } from './results/result-reader-object-store.ts'

/** The byte cap of one of Tailor's streams (UPLOADS_MAX_BYTES, RESULTS_MAX_BYTES, else STREAM_MAX_BYTES). */
export function byteCapOf(stream: string, caps: StorageCaps): number {
  if (stream === `OBJ_${UPLOADS_BUCKET}`) return caps.uploadsMaxBytes
  if (stream === `OBJ_${RESULTS_BUCKET}`) return caps.resultsMaxBytes
  return caps.streamMaxBytes
}

/**
 * Gives every Tailor stream and bucket its byte cap (JetStream `max_bytes`) with `discard: new`:
 * a full stream refuses the next write (an upload answers storage_full, a submission
 * service_unavailable) instead of growing until the server's file store is full for every key, or
 * silently dropping its oldest messages. Set at every start from the configuration (raised or
 * lowered); streams are created by the adapters before this runs, one missing is skipped.
 */
export async function ensureByteCaps(
  nc: NatsConnection,
  caps: StorageCaps,
  logger: Logger,
): Promise<void> {
  const jsm = await jetstreamManager(nc)
  for (const name of TAILOR_STREAMS) {
    const info = await jsm.streams.info(name).catch(() => null)
    if (info === null) continue
    const maxBytes = byteCapOf(name, caps)
    if (info.config.max_bytes === maxBytes && info.config.discard === DiscardPolicy.New) continue
    await jsm.streams.update(name, { max_bytes: maxBytes, discard: DiscardPolicy.New })
    logger.info({ stream: name, from: info.config.max_bytes, to: maxBytes }, 'stream byte cap set')
  }
}
