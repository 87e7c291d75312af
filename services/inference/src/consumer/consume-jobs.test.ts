import { afterEach, describe, expect, it } from 'vitest'
import {
  AppError,
  type JobEnvelope,
  type JobEvent,
  type JobEventAck,
  type JobOutcome,
} from '@tailor/proto'
import type { JobEventSink } from '../events/job-event-sink.ts'
import { createLogger } from '../logger.ts'
import { abortedOutcome } from '../jobs/run-job.ts'
import { consumeJobs, type Consumer } from './consume-jobs.ts'
import type { JobDelivery, JobSource } from './job-source.ts'

// Hand-written fakes of our own ports (STYLE 3.8): a one-shot source, a recording event sink.
const JOB: JobEnvelope = {
  id: '7d3b8f0e-4a4c-4c8e-9a59-0d4b7f0c2a11',
  kind: 'remove-background',
  params: {
    video_url: 'http://example.com/v.mp4',
    background_color: '#000000',
    output_format: 'mp4_h264',
  },
  createdAt: '2026-01-01T00:00:00.000Z',
}

interface Calls {
  log: string[]
  events: JobEvent[]
}

function fakeDelivery(calls: Calls, data: unknown, deliveryCount = 1): JobDelivery {
  return {
    data,
    deliveryCount,
    ack: async () => void calls.log.push('ack'),
    nak: (ms) => void calls.log.push(`nak:${ms}`),
    term: (r) => void calls.log.push(`term:${r}`),
    working: () => void calls.log.push('working'),
  }
}

function fakeSource(deliveries: JobDelivery[]): JobSource {
  return {
    next: async () => deliveries.shift() ?? (await new Promise((r) => setTimeout(r, 20)), null),
    close: async () => undefined,
  }
}

function fakeSink(
  calls: Calls,
  answer: (e: JobEvent) => JobEventAck | Error = () => ({ cancelled: false }),
): JobEventSink & { cancel(id: string): void } {
  const listeners: ((id: string) => void)[] = []
  return {
    async send(e) {
      calls.events.push(e)
      calls.log.push(`event:${e.type}`)
      const a = answer(e)
      if (a instanceof Error) throw a
      return a
    },
    onCancel: (l) => void listeners.push(l),
    close: async () => undefined,
    cancel: (id) => listeners.forEach((l) => l(id)),
  }
}

let consumer: Consumer | null = null
afterEach(async () => {
  await consumer?.stop(1000)
  consumer = null
})

async function runOne(o: {
  data?: unknown
  deliveryCount?: number
  run: (
    job: JobEnvelope,
    ctx: { signal: AbortSignal; onProgress: (a: number, b: number) => void },
  ) => Promise<JobOutcome & { frames?: number }>
  answer?: (e: JobEvent) => JobEventAck | Error
  ackWaitMs?: number
  jobTimeoutMs?: number
  onSink?: (sink: ReturnType<typeof fakeSink>) => void
  until: (c: Calls) => boolean
}): Promise<Calls> {
  const calls: Calls = { log: [], events: [] }
  const sink = fakeSink(calls, o.answer)
  o.onSink?.(sink)
  consumer = consumeJobs({
    source: fakeSource([fakeDelivery(calls, o.data ?? JOB, o.deliveryCount ?? 1)]),
    events: sink,
    run: o.run,
    logger: createLogger('silent'),
    concurrency: 1,
    ackWaitMs: o.ackWaitMs ?? 60_000,
    maxDeliver: 3,
    finalEventTimeoutMs: 1000,
    jobTimeoutMs: {
      'remove-background': o.jobTimeoutMs ?? 60_000,
      'try-on': o.jobTimeoutMs ?? 60_000,
    },
    progressIntervalMs: 0,
  })
  const deadline = Date.now() + 5000
  while (!o.until(calls)) {
    if (Date.now() > deadline) throw new Error(`timed out: ${calls.log.join(' ')}`)
    await new Promise((r) => setTimeout(r, 10))
  }
  return calls
}

const done = (c: Calls): boolean =>
  c.log.some((l) => l === 'ack' || l.startsWith('nak') || l.startsWith('term'))
const succeeded: JobOutcome & { frames: number } = {
  status: 'succeeded',
  resultKey: `remove-background/${JOB.id}.mp4`,
  contentType: 'video/mp4',
  bytes: 10,
  frames: 3,
}

describe('consumeJobs', () => {
  it('acks only after the completion event is acknowledged', async () => {
    const c = await runOne({
      run: async (_j, ctx) => {
        ctx.onProgress(1, 2)
        ctx.onProgress(2, 2)
        return succeeded
      },
      until: done,
    })
    expect(c.log.filter((l) => l !== 'working')).toEqual([
      'event:running',
      'event:progress',
      'event:progress',
      'event:completed',
      'ack',
    ])
    expect(c.events.at(-1)).toEqual({
      type: 'completed',
      jobId: JOB.id,
      resultKey: succeeded.resultKey,
      contentType: 'video/mp4',
      bytes: 10,
      frames: 3,
    })
  })

  it('records an expected failure, then terms the message with its code', async () => {
    const c = await runOne({
      run: async () => ({ status: 'failed', code: 'malformed_video', message: 'not a video' }),
      until: done,
    })
    expect(c.log).toEqual(['event:running', 'event:failed', 'term:malformed_video'])
    expect(c.events[1]).toMatchObject({ code: 'malformed_video', message: 'not a video' })
  })

  it('naks a retryable error with backoff while deliveries remain, without a final event', async () => {
    const c = await runOne({
      run: async () =>
        Promise.reject(new AppError('service_unavailable', 'store down', { retryable: true })),
      until: done,
    })
    expect(c.log).toEqual(['event:running', 'nak:1000'])
  })

  it('gives up on the last delivery: failed event, then term', async () => {
    const c = await runOne({
      deliveryCount: 3,
      run: async () => Promise.reject(new Error('boom')),
      until: done,
    })
    expect(c.log).toEqual(['event:running', 'event:failed', 'term:unexpected_error'])
    expect(c.events[1]).toMatchObject({
      code: 'unexpected_error',
      message: 'The job failed unexpectedly.',
    })
  })

  it('terms a delivery beyond MAX_DELIVER without running it', async () => {
    let ran = false
    const c = await runOne({
      deliveryCount: 4,
      run: async () => ((ran = true), succeeded),
      until: done,
    })
    expect(ran).toBe(false)
    expect(c.log).toEqual(['event:failed', 'term:max_deliver'])
    expect(c.events[0]).toMatchObject({
      type: 'failed',
      code: 'worker_crashed',
      message: expect.stringMatching(/delivered 3 times/),
    })
  })

  it("aborts a job that runs past its kind's time limit: failed request_timeout, then term", async () => {
    let abortedAfterMs = -1
    const c = await runOne({
      jobTimeoutMs: 200,
      run: (_j, ctx) =>
        new Promise((resolve) => {
          const t0 = Date.now()
          ctx.signal.addEventListener('abort', () => {
            abortedAfterMs = Date.now() - t0
            resolve(abortedOutcome(ctx.signal))
          })
        }),
      until: done,
    })
    expect(abortedAfterMs).toBeGreaterThanOrEqual(150)
    expect(abortedAfterMs).toBeLessThan(2000)
    expect(c.log).toEqual(['event:running', 'event:failed', 'term:request_timeout'])
    expect(c.events[1]).toMatchObject({
      code: 'request_timeout',
      message: expect.stringMatching(/longer than 0.2 s/),
    })
  })

  it('a job that ends in time is not aborted afterwards (the limit is per job, cleared at its end)', async () => {
    let signal: AbortSignal | null = null
    const c = await runOne({
      jobTimeoutMs: 150,
      run: async (_j, ctx) => ((signal = ctx.signal), succeeded),
      until: done,
    })
    await new Promise((r) => setTimeout(r, 300))
    expect(signal!.aborted).toBe(false)
    expect(c.log.at(-1)).toBe('ack')
  })

  it('drops a job the gateway no longer wants (cancelled before it started)', async () => {
    let ran = false
    const c = await runOne({
      run: async () => ((ran = true), succeeded),
      answer: () => ({ cancelled: true }),
      until: done,
    })
    expect(ran).toBe(false)
    expect(c.log).toEqual(['event:running', 'ack'])
  })

  it('aborts the running job when the gateway cancels it, and acks', async () => {
    let sink: ReturnType<typeof fakeSink> | null = null
    let abortedAfterMs = -1
    const c = await runOne({
      onSink: (s) => (sink = s),
      run: (_j, ctx) =>
        new Promise((resolve) => {
          const t0 = Date.now()
          setTimeout(() => sink!.cancel(JOB.id), 50)
          ctx.signal.addEventListener('abort', () => {
            abortedAfterMs = Date.now() - t0
            resolve({ status: 'failed', code: 'job_cancelled', message: 'cancelled' })
          })
        }),
      until: done,
    })
    expect(abortedAfterMs).toBeLessThan(500)
    expect(c.log).toEqual(['event:running', 'event:failed', 'ack'])
  })

  it('naks (does not ack) when the completion event is not acknowledged', async () => {
    const c = await runOne({
      run: async () => succeeded,
      answer: (e) =>
        e.type === 'completed'
          ? new AppError('service_unavailable', 'gateway away', { retryable: true })
          : { cancelled: false },
      until: done,
    })
    expect(c.log).toEqual(['event:running', 'event:completed', 'nak:1000'])
  })

  it('terms a malformed message', async () => {
    const c = await runOne({ data: { hello: 'world' }, run: async () => succeeded, until: done })
    expect(c.log).toEqual(['term:invalid_parameter'])
  })

  it('heartbeats with working() during a long job', async () => {
    const c = await runOne({
      ackWaitMs: 900,
      run: () => new Promise((r) => setTimeout(() => r(succeeded), 1000)),
      until: done,
    })
    expect(c.log.filter((l) => l === 'working').length).toBeGreaterThanOrEqual(2)
    expect(c.log.at(-1)).toBe('ack')
  })
})
