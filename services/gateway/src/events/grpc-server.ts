import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { ERROR_CODES, JOB_EVENTS_PROTO_INCLUDE_DIR, JOB_EVENTS_PROTO_PATH, type ErrorCode, type JobEvent, type JobEventAck } from '@tailor/proto'
import type { CancelNotifier } from '../jobs/publisher.ts'
import type { Logger } from '../logger.ts'

/** Wire shapes of proto/inference/v1/job_events.proto as proto-loader decodes them (camelCase, oneof names). */
interface WireJobEvent {
  seq: number
  jobId: string
  workerId: string
  event?: 'running' | 'progress' | 'completed' | 'failed'
  running?: { attempt: number }
  progress?: { framesDone: number; framesTotal: number }
  completed?: { resultKey: string; contentType: string; bytes: number; frames: number }
  failed?: { errorCode: string; message: string }
}
type WireGatewayMessage = { ack: { seq: number; cancelled: boolean } } | { cancel: { jobId: string } }

export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [JOB_EVENTS_PROTO_INCLUDE_DIR],
}

function fromWire(w: WireJobEvent): JobEvent | null {
  switch (w.event) {
    case 'running':
      return { type: 'running', jobId: w.jobId, attempt: w.running?.attempt ?? 1 }
    case 'progress':
      return { type: 'progress', jobId: w.jobId, framesDone: w.progress?.framesDone ?? 0, framesTotal: w.progress?.framesTotal ?? 0 }
    case 'completed': {
      const c = w.completed
      if (c === undefined) return null
      return { type: 'completed', jobId: w.jobId, resultKey: c.resultKey, contentType: c.contentType, bytes: c.bytes, frames: c.frames }
    }
    case 'failed': {
      const code = (ERROR_CODES as string[]).includes(w.failed?.errorCode ?? '') ? (w.failed!.errorCode as ErrorCode) : 'unexpected_error'
      return { type: 'failed', jobId: w.jobId, code, message: w.failed?.message ?? '' }
    }
    case undefined:
      return null
  }
}

export interface JobEventsServer extends CancelNotifier {
  port: number
  connectedWorkers(): number
  stop(timeoutMs: number): Promise<void>
}

/** gRPC edge (the only @grpc/* user in the gateway): receives JobEvents, acks them, pushes cancels. */
export async function startJobEventsServer(opts: {
  host: string
  port: number
  handle: (e: JobEvent) => Promise<JobEventAck>
  logger: Logger
}): Promise<JobEventsServer> {
  const def = await protoLoader.load(JOB_EVENTS_PROTO_PATH, PROTO_LOADER_OPTIONS)
  const pkg = grpc.loadPackageDefinition(def) as unknown as { inference: { v1: { JobEvents: grpc.ServiceClientConstructor } } }
  const calls = new Set<grpc.ServerDuplexStream<WireJobEvent, WireGatewayMessage>>()
  const server = new grpc.Server()
  server.addService(pkg.inference.v1.JobEvents.service, {
    Connect(call: grpc.ServerDuplexStream<WireJobEvent, WireGatewayMessage>) {
      calls.add(call)
      let tail: Promise<unknown> = Promise.resolve()
      let worker = ''
      call.on('data', (w: WireJobEvent) => {
        worker = w.workerId
        tail = tail.then(async () => {
          const e = fromWire(w)
          if (e === null) {
            opts.logger.warn({ seq: w.seq, worker }, 'malformed job event')
            call.write({ ack: { seq: w.seq, cancelled: false } })
            return
          }
          try {
            const ack = await opts.handle(e)
            call.write({ ack: { seq: w.seq, cancelled: ack.cancelled } })
          } catch (err) {
            // Not acknowledged: the worker resends on a new stream.
            opts.logger.warn({ err, jobId: e.jobId, worker }, 'job event not applied')
            call.destroy(err instanceof Error ? err : new Error(String(err)))
          }
        })
      })
      const done = (): void => {
        calls.delete(call)
      }
      call.on('end', () => {
        done()
        call.end()
      })
      call.on('error', done)
      call.on('cancelled', done)
      call.on('close', done)
    },
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)))
  })
  opts.logger.info({ port }, 'job events gRPC server listening')
  return {
    port,
    connectedWorkers: () => calls.size,
    cancel(jobId) {
      for (const call of calls) call.write({ cancel: { jobId } })
    },
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        for (const call of calls) call.end()
        const t = setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, timeoutMs)
        server.tryShutdown(() => {
          clearTimeout(t)
          resolve()
        })
      }),
  }
}
