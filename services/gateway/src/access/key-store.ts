import type { ApiKeyRecord } from './api-key.ts'

/**
 * Port: where API key records live (JetStream KV bucket `api_keys` distributed; a file in the
 * data directory embedded). Used by `tailor keys` (create, list, revoke) and by the gateway, which
 * keeps every record in memory and follows changes through `watch`.
 */
export interface KeyStore {
  /** Adds a record; fails if its id exists. */
  create(rec: ApiKeyRecord): Promise<void>
  list(): Promise<ApiKeyRecord[]>
  /** Compare-and-set: `change` returns the new record, or null for "no change". Null when the id is unknown. */
  update(
    id: string,
    change: (cur: ApiKeyRecord) => ApiKeyRecord | null,
  ): Promise<ApiKeyRecord | null>
  /**
   * Calls `onChange` with the full set of records now, then again whenever any record changes (a
   * revoke made by any process reaches every watcher within a second).
   */
  watch(onChange: (all: ApiKeyRecord[]) => void, onError: (err: unknown) => void): Promise<KeyWatch>
  close(): Promise<void>
}

/** A running `KeyStore.watch`. */
export interface KeyWatch {
  stop(): void
  /**
   * Resolves once every change made to the store before the call has been passed to `onChange`
   * (read-your-writes: a key created a moment ago by `tailor keys` or another replica is known
   * after it). Rejects when the store cannot be reached.
   */
  catchUp(): Promise<void>
}
