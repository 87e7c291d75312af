import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import { nanos, type NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import { compareAndSet } from '../compare-and-set.ts'
import type { JobRecord, JobStore } from './job-store.ts'
import type { JobWatcher } from './job-watch.ts'

export const JOBS_BUCKET = 'jobs'
const ID_RE = /^[0-9a-f-]{36}$/

/** NATS down or timing out is the client's 503 (retry shortly), not a 500. */
async function storeCall<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f()
  } catch (err) {
    if (err instanceof AppError) throw err
    throw new AppError('service_unavailable', 'the job store is unavailable; try again shortly', {
      cause: err,
      retryable: true,
    })
  }
}

/**
 * Sets a JetStream stream's max_age (a bucket's TTL) when it differs: `create` leaves an existing
 * bucket's settings alone, so a bucket made before retention existed, or with another value, is
 * brought to the configured one. The duplicate window may not exceed max_age.
 */
export async function ensureStreamMaxAge(
  nc: NatsConnection,
  stream: string,
  maxAgeMs: number,
): Promise<void> {
  const jsm = await jetstreamManager(nc)
  const info = await jsm.streams.info(stream)
  const maxAge = nanos(maxAgeMs)
  if (info.config.max_age === maxAge) return
  await jsm.streams.update(stream, {
    max_age: maxAge,
    duplicate_window: Math.min(info.config.duplicate_window, maxAge),
  })
}

/**
 * Adapter: JetStream KV bucket `jobs`, one key per job id; updates are compare-and-set. With
 * `ttlMs` (JOB_RETENTION_S) a record is removed that long after its last change. `watch` reads the
 * key's subject in the bucket's stream (its last value, then every revision), so it sees the
 * changes made by any gateway replica.
 */
export async function openKvJobStore(
  nc: NatsConnection,
  opts: { ttlMs?: number } = {},
): Promise<JobStore & JobWatcher> {
  const js = jetstream(nc)
  const kv: KV = await new Kvm(nc).create(JOBS_BUCKET, {
    history: 1,
    ...(opts.ttlMs ? { ttl: opts.ttlMs } : {}),
  })
  if (opts.ttlMs) await ensureStreamMaxAge(nc, `KV_${JOBS_BUCKET}`, opts.ttlMs)
  const get = async (id: string): Promise<{ rec: JobRecord; revision: number } | null> => {
    const e = await storeCall(() => kv.get(id))
    if (e === null || e.operation !== 'PUT' || e.length === 0) return null
    return { rec: e.json<JobRecord>(), revision: e.revision }
  }
  return {
    async create(rec) {
      await storeCall(() => kv.create(rec.id, JSON.stringify(rec)))
    },
    async get(id) {
      if (!ID_RE.test(id)) return null
      return (await get(id))?.rec ?? null
    },
    async update(id, change) {
      return compareAndSet(
        () => get(id),
        (next, revision) => kv.update(id, JSON.stringify(next), revision),
        change,
        'job record',
      )
    },
    async listUnfinished() {
      const out: JobRecord[] = []
      for await (const k of await kv.keys()) {
        const r = await get(k)
        if (r !== null && (r.rec.status === 'pending' || r.rec.status === 'running')) {
          out.push(r.rec)
        }
      }
      return out
    },
    async *watch(id, signal) {
      if (!ID_RE.test(id) || signal.aborted) return
      // An ordered consumer on the key's subject, as a KV watch is, but deleted when the watch ends:
      // kv.watch() leaves its consumer for the server to reap after 5 idle minutes.
      const consumer = await js.consumers.get(`KV_${JOBS_BUCKET}`, {
        filter_subjects: `$KV.${JOBS_BUCKET}.${id}`,
        deliver_policy: DeliverPolicy.LastPerSubject,
      })
      const messages = await consumer.consume()
      const stop = (): void => void messages.stop()
      signal.addEventListener('abort', stop)
      try {
        for await (const m of messages) {
          if (signal.aborted) return
          const op = m.headers?.get('KV-Operation')
          yield op === 'DEL' || op === 'PURGE' || m.data.length === 0 ? null : m.json<JobRecord>()
        }
      } finally {
        signal.removeEventListener('abort', stop)
        void messages.stop()
        await consumer.delete().catch(() => false) // gone already (connection closing): the server reaps it
      }
    },
    async close() {},
  }
}
