/** Port: where finished results go (data dir embedded; JetStream Object Store `results` distributed). */
export interface ResultStore {
  /** Stores the file at `path` under `key`, replacing any earlier copy (a redelivered job overwrites). */
  put(key: string, path: string, contentType: string): Promise<{ bytes: number }>
}
