import type { Readable } from 'node:stream'

/** Port: read access to stored results (data dir embedded; JetStream Object Store `results` distributed). */
export interface ResultReader {
  /** Size in bytes, or null when there is no such result. */
  size(key: string): Promise<number | null>
  /** Bytes `start`..`end` inclusive. */
  open(key: string, start: number, end: number): Promise<Readable>
}
