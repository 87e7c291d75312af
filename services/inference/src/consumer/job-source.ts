import type { JobKind } from '@tailor/proto'

/** One delivery of a job message. The consumer loop is the only caller of ack/nak/term/working. */
export interface JobDelivery {
  /** The message body, parsed as JSON when possible. */
  readonly data: unknown
  /** 1 on the first delivery. */
  readonly deliveryCount: number
  ack(): Promise<void>
  nak(delayMs: number): void
  term(reason: string): void
  working(): void
}

/** Port: where jobs come from (JetStream durable pull consumers distributed; in-process embedded). */
export interface JobSource {
  /**
   * The next job (of `kind` only, when given: its own lane, so a job of one kind never waits
   * behind jobs of another), or null when none arrived within a short wait (the caller loops).
   */
  next(kind?: JobKind): Promise<JobDelivery | null>
  close(): Promise<void>
}
