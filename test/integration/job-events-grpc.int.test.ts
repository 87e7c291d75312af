import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { JobEvent, JobEventAck } from '@tailor/proto'
import {
  startJobEventsServer,
  type JobEventsServer,
} from '@tailor/gateway/src/events/grpc-server.ts'
import { createLogger as gatewayLogger } from '@tailor/gateway/src/logger.ts'
import { openJobEventStream } from '@tailor/inference/src/events/event-stream.ts'
import type { JobEventSink } from '@tailor/inference/src/events/job-event-sink.ts'
import { createLogger as inferenceLogger } from '@tailor/inference/src/logger.ts'
import { freePort } from '../helpers/nats-server.ts'

// The real gRPC pair (gateway server, inference client) over loopback, without NATS.
const JOB = '5a0c3c52-6c1e-4a8e-9d7c-1b2f3e4d5c6b'
const T = 5_000
const TOKEN = 'job-events-token-0123456789abcdef0123'

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
      host: '127.0.0.1',
      port,
      logger: gatewayLogger('silent'),
      token: TOKEN,
      handle: async (e): Promise<JobEventAck> => (
        got.push(e),
        { cancelled: e.type === 'progress' && e.framesDone === 13 }
      ),
    })
    sink = await openJobEventStream({
      address: `127.0.0.1:${port}`,
      workerId: 'w1',
      logger: inferenceLogger('silent'),
      token: TOKEN,
    })
    const events: JobEvent[] = [
      { type: 'running', jobId: JOB, attempt: 2 },
      { type: 'progress', jobId: JOB, framesDone: 12, framesTotal: 300, attempt: 1 },
      {
        type: 'completed',
        jobId: JOB,
        resultKey: `remove-background/${JOB}.webm`,
        contentType: 'video/webm',
        bytes: 3_620_629,
        frames: 297,
      },
      { type: 'failed', jobId: JOB, code: 'malformed_video', message: 'not a video' },
    ]
    for (const e of events) expect(await sink.send(e, T)).toEqual({ cancelled: false })
    expect(
      await sink.send(
        { type: 'progress', jobId: JOB, framesDone: 13, framesTotal: 300, attempt: 1 },
        T,
      ),
    ).toEqual({ cancelled: true })
    expect(got.slice(0, 4)).toEqual(events)
  })

  it('an event the gateway could not apply (job store unreachable) is resent on a new stream, and later events flow', async () => {
    let failures = 1
    const got: JobEvent[] = []
    const port = await freePort()
    server = await startJobEventsServer({
      host: '127.0.0.1',
      port,
      logger: gatewayLogger('silent'),
      token: TOKEN,
      handle: async (e): Promise<JobEventAck> => {
        if (e.type === 'progress' && failures-- > 0) {
          await new Promise((r) => setTimeout(r, 300)) // a store call timing out while more events queue behind it
          throw new Error('job store timeout')
        }
        got.push(e)
        return { cancelled: false }
      },
    })
    sink = await openJobEventStream({
      address: `127.0.0.1:${port}`,
      workerId: 'w1',
      logger: inferenceLogger('silent'),
      token: TOKEN,
    })
    const completed: JobEvent = {
      type: 'completed',
      jobId: JOB,
      resultKey: `remove-background/${JOB}.mp4`,
      contentType: 'video/mp4',
      bytes: 9,
      frames: 1,
    }
    const t0 = Date.now()
    const [progress, done] = await Promise.all([
      sink.send({ type: 'progress', jobId: JOB, framesDone: 1, framesTotal: 2, attempt: 1 }, T),
      sink.send(completed, T),
    ])
    expect(progress).toEqual({ cancelled: false }) // dropped on the broken stream (progress is only a hint)
    expect(done).toEqual({ cancelled: false }) // resent on the new stream, not left to time out
    expect(Date.now() - t0).toBeLessThan(T)
    expect(await sink.send({ type: 'running', jobId: JOB, attempt: 2 }, T)).toEqual({
      cancelled: false,
    })
    expect(got).toEqual([completed, { type: 'running', jobId: JOB, attempt: 2 }])
  })

  it('pushes cancellations to connected workers', async () => {
    const port = await freePort()
    server = await startJobEventsServer({
      host: '127.0.0.1',
      port,
      logger: gatewayLogger('silent'),
      token: TOKEN,
      handle: async () => ({ cancelled: false }),
    })
    sink = await openJobEventStream({
      address: `127.0.0.1:${port}`,
      workerId: 'w1',
      logger: inferenceLogger('silent'),
      token: TOKEN,
    })
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
    server = await startJobEventsServer({
      host: '127.0.0.1',
      port,
      logger: gatewayLogger('silent'),
      token: TOKEN,
      handle,
    })
    sink = await openJobEventStream({
      address: `127.0.0.1:${port}`,
      workerId: 'w1',
      logger: inferenceLogger('silent'),
      token: TOKEN,
    })
    await sink.send({ type: 'running', jobId: JOB, attempt: 1 }, T)
    await server.stop(1000)
    server = null
    const completed: JobEvent = {
      type: 'completed',
      jobId: JOB,
      resultKey: `remove-background/${JOB}.mp4`,
      contentType: 'video/mp4',
      bytes: 1,
      frames: 1,
    }
    const pending = sink.send(completed, 20_000)
    await new Promise((r) => setTimeout(r, 500))
    server = await startJobEventsServer({
      host: '127.0.0.1',
      port,
      logger: gatewayLogger('silent'),
      token: TOKEN,
      handle,
    })
    expect(await pending).toEqual({ cancelled: false })
    expect(got.at(-1)).toEqual(completed)
  })

  it('rejects after the timeout when no gateway answers', async () => {
    sink = await openJobEventStream({
      address: `127.0.0.1:${await freePort()}`,
      workerId: 'w1',
      logger: inferenceLogger('silent'),
      token: TOKEN,
    })
    await expect(sink.send({ type: 'running', jobId: JOB, attempt: 1 }, 300)).rejects.toMatchObject(
      { code: 'service_unavailable', retryable: true },
    )
  })

  describe('the port authenticates its caller (JOB_EVENTS_TOKEN)', () => {
    const completedB: JobEvent = {
      type: 'completed',
      jobId: JOB,
      resultKey: `remove-background/${JOB}.webm`,
      contentType: 'video/webm',
      bytes: 1,
      frames: 1,
    }
    for (const [name, token] of [
      ['a wrong token', 'not-the-token-0123456789abcdef012345'],
      ['no token', ''],
    ] as const) {
      it(`${name}: no event is applied, no cancel is received, the sender gets no ack`, async () => {
        const got: JobEvent[] = []
        const port = await freePort()
        server = await startJobEventsServer({
          host: '127.0.0.1',
          port,
          logger: gatewayLogger('silent'),
          token: TOKEN,
          handle: async (e) => (got.push(e), { cancelled: false }),
        })
        const intruder = await openJobEventStream({
          address: `127.0.0.1:${port}`,
          workerId: 'intruder',
          logger: inferenceLogger('silent'),
          token,
        })
        const cancelled: string[] = []
        intruder.onCancel((id) => cancelled.push(id))
        try {
          await expect(intruder.send(completedB, 1500)).rejects.toMatchObject({
            code: 'service_unavailable',
          })
          expect(server.connectedWorkers()).toBe(0)
          server.cancel(JOB)
          // A worker holding the token, on the same port, still works and gets the cancel.
          sink = await openJobEventStream({
            address: `127.0.0.1:${port}`,
            workerId: 'w1',
            logger: inferenceLogger('silent'),
            token: TOKEN,
          })
          const ok: string[] = []
          sink.onCancel((id) => ok.push(id))
          expect(await sink.send({ type: 'running', jobId: JOB, attempt: 1 }, T)).toEqual({
            cancelled: false,
          })
          server.cancel(JOB)
          await until(() => ok.length === 1)
          expect(cancelled).toEqual([])
          expect(got).toEqual([{ type: 'running', jobId: JOB, attempt: 1 }])
        } finally {
          await intruder.close()
        }
      })
    }
  })

  it('mTLS (JOB_EVENTS_TLS_*): a worker with a client certificate from the CA streams events; plaintext and a certificate from another CA are refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'job-events-tls-'))
    try {
      const ssl = (...args: string[]): void =>
        void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
      ssl(
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '1',
        '-subj',
        '/CN=tailor-test-ca',
      )
      for (const [name, cn] of [
        ['server', 'localhost'],
        ['client', 'worker'],
      ]) {
        ssl(
          'req',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.csr`,
          '-subj',
          `/CN=${cn}`,
        )
        const ext = join(dir, `${name}.ext`)
        execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:localhost\n' > ${ext}`])
        ssl(
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-CAcreateserial',
          '-out',
          `${name}.pem`,
          '-days',
          '1',
          '-extfile',
          ext,
        )
      }
      const got: JobEvent[] = []
      const port = await freePort()
      server = await startJobEventsServer({
        host: '127.0.0.1',
        port,
        logger: gatewayLogger('silent'),
        token: TOKEN,
        handle: async (e) => (got.push(e), { cancelled: false }),
        tls: {
          certFile: join(dir, 'server.pem'),
          keyFile: join(dir, 'server.key'),
          caFile: join(dir, 'ca.pem'),
        },
      })
      // A plaintext caller, and a caller whose certificate another CA signed (token and gateway CA right): refused.
      ssl(
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'rogue.key',
        '-out',
        'rogue.pem',
        '-days',
        '1',
        '-subj',
        '/CN=rogue',
      )
      for (const tls of [
        undefined,
        {
          certFile: join(dir, 'rogue.pem'),
          keyFile: join(dir, 'rogue.key'),
          caFile: join(dir, 'ca.pem'),
        },
      ]) {
        const rogue = await openJobEventStream({
          address: `localhost:${port}`,
          workerId: 'rogue',
          logger: inferenceLogger('silent'),
          token: TOKEN,
          ...(tls ? { tls } : {}),
        })
        try {
          await expect(
            rogue.send({ type: 'running', jobId: JOB, attempt: 9 }, 1500),
          ).rejects.toMatchObject({ code: 'service_unavailable' })
        } finally {
          await rogue.close()
        }
      }
      sink = await openJobEventStream({
        address: `localhost:${port}`,
        workerId: 'w1',
        logger: inferenceLogger('silent'),
        token: TOKEN,
        tls: {
          certFile: join(dir, 'client.pem'),
          keyFile: join(dir, 'client.key'),
          caFile: join(dir, 'ca.pem'),
        },
      })
      expect(await sink.send({ type: 'running', jobId: JOB, attempt: 1 }, T)).toEqual({
        cancelled: false,
      })
      expect(got).toEqual([{ type: 'running', jobId: JOB, attempt: 1 }])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
