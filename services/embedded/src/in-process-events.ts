import type { JobEvent, JobEventAck } from '@tailor/proto'

/**
 * The embedded mode's event stream: inference's JobEventSink calls the gateway's event handler
 * directly, and the gateway's CancelNotifier calls inference's cancel listeners.
 */
export class InProcessEvents {
  #handler: ((e: JobEvent) => Promise<JobEventAck>) | null = null
  readonly #listeners: ((jobId: string) => void)[] = []

  connect(handler: (e: JobEvent) => Promise<JobEventAck>): void {
    this.#handler = handler
  }

  // JobEventSink (inference side)
  async send(e: JobEvent, timeoutMs: number): Promise<JobEventAck> {
    if (this.#handler === null) throw new Error('no gateway connected')
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        this.#handler(e),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`event not applied within ${timeoutMs} ms`)),
            timeoutMs,
          )
        }),
      ])
    } finally {
      clearTimeout(timer)
    }
  }
  onCancel(listener: (jobId: string) => void): void {
    this.#listeners.push(listener)
  }
  async close(): Promise<void> {}

  // CancelNotifier (gateway side)
  cancel(jobId: string): void {
    for (const l of this.#listeners) l(jobId)
  }
}
