import { afterEach, describe, expect, it } from 'vitest'
import type { JobEvent, JobEventAck } from '@tailor/proto'
import { startJobEventsServer, type JobEventsServer } from '@tailor/gateway/src/events/grpc-server.ts'
import { createLogger as gatewayLogger } from '@tailor/gateway/src/logger.ts'
import { openJobEventStream } from '@tailor/inference/src/events/event-stream.ts'
import type { JobEventSink } from '@tailor/inference/src/events/job-event-sink.ts'
import { createLogger as inferenceLogger } from '@tailor/inference/src/logger.ts'
import { freePort } from '../helpers/nats-server.ts'

// The real gRPC pair (gateway server, inference client) over loopback, without NATS.
const JOB = '5a0c3c52-6c1e-4a8e-9d7c-1b2f3e4d5c6b'
const T = 5_000

let server: JobEventsServer | null = null
let sink: JobEventSink | null = null
afterEach(async () => {
  await sink?.close()
  await server?.stop(1000)
  sink = null
  server = null
})

const until = async (cond: () => boolean, ms = T): Promise<void> => {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('job events over gRPC (proto/inference/v1/job_events.proto)', () => {
  it('carries every event type intact and returns the gateway answer', async () => {
    const got: JobEvent[] = []
    const port = await freePort()
    server = await startJobEventsServer({
      host: '127.0.0.1', port, logger: gatewayLogger('silent'),
      handle: async (e): Promise<JobEventAck> => (got.push(e), { cancelled: e.type === 'progress' && e.framesDone === 13 }),
    })
    sink = await openJobEventStream({ address: `127.0.0.1:${port}`, workerId: 'w1', logger: inferenceLogger('silent') })
    const events: JobEvent[] = [
      { type: 'running', jobId: JOB, attempt: 2 },
      { type: 'progress', jobId: JOB, framesDone: 12, framesTotal: 300 },
      { type: 'completed', jobId: JOB, resultKey: `remove-background/${JOB}.webm`, contentType: 'video/webm', bytes: 3_620_629, frames: 297 },
      { type: 'failed', jobId: JOB, code: 'malformed_video', message: 'not a video' },
    ]
    for (const e of events) expect(await sink.send(e, T)).toEqual({ cancelled: false })
    expect(await sink.send({ type: 'progress', jobId: JOB, framesDone: 13, framesTotal: 300 }, T)).toEqual({ cancelled: true })
    expect(got.slice(0, 4)).toEqual(events)
  })

  it('an event the gateway could not apply (job store unreachable) is resent on a new stream, and later events flow', async () => {
    let failures = 1
    const got: JobEvent[] = []
    const port = await freePort()
    server = await startJobEventsServer({
      host: '127.0.0.1', port, logger: gatewayLogger('silent'),
      handle: async (e): Promise<JobEventAck> => {
        if (e.type === 'progress' && failures-- > 0) {
          await new Promise((r) => setTimeout(r, 300)) // a store call timing out while more events queue behind it
          throw new Error('job store timeout')
        }
        got.push(e)
        return { cancelled: false }
      },
    })
    sink = await openJobEventStream({ address: `127.0.0.1:${port}`, workerId: 'w1', logger: inferenceLogger('silent') })
    const completed: JobEvent = { type: 'completed', jobId: JOB, resultKey: `remove-background/${JOB}.mp4`, contentType: 'video/mp4', bytes: 9, frames: 1 }
    const t0 = Date.now()
    const [progress, done] = await Promise.all([
      sink.send({ type: 'progress', jobId: JOB, framesDone: 1, framesTotal: 2 }, T),
      sink.send(completed, T),
    ])
    expect(progress).toEqual({ cancelled: false }) // dropped on the broken stream (progress is only a hint)
    expect(done).toEqual({ cancelled: false }) // resent on the new stream, not left to time out
    expect(Date.now() - t0).toBeLessThan(T)
    expect(await sink.send({ type: 'running', jobId: JOB, attempt: 2 }, T)).toEqual({ cancelled: false })
    expect(got).toEqual([completed, { type: 'running', jobId: JOB, attempt: 2 }])
  })

  it('pushes cancellations to connected workers', async () => {
    const port = await freePort()
    server = await startJobEventsServer({ host: '127.0.0.1', port, logger: gatewayLogger('silent'), handle: async () => ({ cancelled: false }) })
    sink = await openJobEventStream({ address: `127.0.0.1:${port}`, workerId: 'w1', logger: inferenceLogger('silent') })
    const cancelled: string[] = []
    sink.onCancel((id) => cancelled.push(id))
    await sink.send({ type: 'running', jobId: JOB, attempt: 1 }, T)
    expect(server.connectedWorkers()).toBe(1)
    server.cancel(JOB)
    await until(() => cancelled.length === 1)
    expect(cancelled).toEqual([JOB])
  })

  it('resends an unacknowledged final event after the gateway restarts', async () => {
    const port = await freePort()
    const got: JobEvent[] = []
    const handle = async (e: JobEvent): Promise<JobEventAck> => (got.push(e), { cancelled: false })
    server = await startJobEventsServer({ host: '127.0.0.1', port, logger: gatewayLogger('silent'), handle })
    sink = await openJobEventStream({ address: `127.0.0.1:${port}`, workerId: 'w1', logger: inferenceLogger('silent') })
    await sink.send({ type: 'running', jobId: JOB, attempt: 1 }, T)
    await server.stop(1000)
    server = null
    const completed: JobEvent = { type: 'completed', jobId: JOB, resultKey: `remove-background/${JOB}.mp4`, contentType: 'video/mp4', bytes: 1, frames: 1 }
    const pending = sink.send(completed, 20_000)
    await new Promise((r) => setTimeout(r, 500))
    server = await startJobEventsServer({ host: '127.0.0.1', port, logger: gatewayLogger('silent'), handle })
    expect(await pending).toEqual({ cancelled: false })
    expect(got.at(-1)).toEqual(completed)
  })

  it('rejects after the timeout when no gateway answers', async () => {
    sink = await openJobEventStream({ address: `127.0.0.1:${await freePort()}`, workerId: 'w1', logger: inferenceLogger('silent') })
    await expect(sink.send({ type: 'running', jobId: JOB, attempt: 1 }, 300)).rejects.toMatchObject({ code: 'service_unavailable', retryable: true })
  })
})
