import { setTimeout as sleep } from 'node:timers/promises'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { AppError } from '@tailor/proto'
import { compareAndSet } from '../compare-and-set.ts'
import { isApiKeyRecord, KEY_ID_RE, type ApiKeyRecord } from './api-key.ts'
import type { KeyStore } from './key-store.ts'
import { sharedRuns } from './shared-runs.ts'

export const KEYS_BUCKET = 'api_keys'
/** Wait before opening a watch again after it ended. */
const WATCH_RETRY_MS = 500

/**
 * Adapter: JetStream KV bucket `api_keys`, one key per key id, updates compare-and-set. `watch`
 * loads every record, then follows a KV watch of the bucket: a change made by `tailor keys` (or
 * any replica) reaches every watching gateway as soon as NATS delivers it (milliseconds).
 */
export async function openKvKeyStore(nc: NatsConnection): Promise<KeyStore> {
  const kv: KV = await new Kvm(nc).create(KEYS_BUCKET, { history: 1 })
  const get = async (id: string): Promise<{ rec: ApiKeyRecord; revision: number } | null> => {
    const e = await kv.get(id)
    if (e === null || e.operation !== 'PUT' || e.length === 0) return null
    const rec: unknown = e.json()
    return isApiKeyRecord(rec) ? { rec, revision: e.revision } : null
  }
  const list = async (): Promise<ApiKeyRecord[]> => {
    const out: ApiKeyRecord[] = []
    for await (const k of await kv.keys()) {
      const r = await get(k)
      if (r !== null) out.push(r.rec)
    }
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }
  return {
    async create(rec) {
      if (!KEY_ID_RE.test(rec.id)) {
        throw new AppError('invalid_parameter', `bad API key id ${rec.id}`)
      }
      await kv.create(rec.id, JSON.stringify(rec))
    },
    list,
    async update(id, change) {
      if (!KEY_ID_RE.test(id)) return null
      return compareAndSet(
        () => get(id),
        (next, revision) => kv.update(id, JSON.stringify(next), revision),
        change,
        'API key record',
      )
    },
    async watch(onChange, onError) {
      let stopped = false
      let it: Awaited<ReturnType<KV['watch']>> | null = null
      // The bucket's stream sequence the watch has delivered up to, and catchUps waiting for one.
      let applied = 0
      let waiting: { seq: number; done: () => void }[] = []
      const reached = (seq: number): void => {
        applied = Math.max(applied, seq)
        const ready = waiting.filter((w) => w.seq <= applied)
        waiting = waiting.filter((w) => w.seq > applied)
        for (const w of ready) w.done()
      }
      // The watch starts from each key's last value; records are also loaded first so that a
      // gateway knows every key before it answers its first request.
      const open = async (): Promise<void> => {
        const all = new Map<string, ApiKeyRecord>()
        // A stream made anew (NATS restarted without it) counts from 1 again.
        applied = 0
        it = await kv.watch({ key: '>' })
        for (const r of await list()) all.set(r.id, r)
        onChange([...all.values()])
        const current = it
        void (async () => {
          try {
            for await (const e of current) {
              if (stopped) return
              const rec: unknown = e.operation === 'PUT' && e.length > 0 ? e.json() : null
              if (isApiKeyRecord(rec)) all.set(e.key, rec)
              else all.delete(e.key)
              onChange([...all.values()])
              reached(e.revision)
            }
          } catch (err) {
            if (!stopped) onError(err)
          }
          // The watch ended (its stream went away, NATS restarted without it): open it again.
          while (!stopped) {
            await sleep(WATCH_RETRY_MS)
            if (stopped) return
            try {
              await open()
              return
            } catch (err) {
              onError(err)
            }
          }
        })()
      }
      await open()
      return {
        stop() {
          stopped = true
          it?.stop()
          for (const w of waiting.splice(0)) w.done()
        },
        // The bucket's last sequence now, then the watch's delivery of it. With history 1 every
        // subject keeps its last message, so the stream's last one is always delivered.
        catchUp: sharedRuns(async () => {
          const last = (await kv.status()).streamInfo.state.last_seq
          if (stopped || last <= applied) return
          await new Promise<void>((done) => waiting.push({ seq: last, done }))
        }),
      }
    },
    async close() {},
  }
}
