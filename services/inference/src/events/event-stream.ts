import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { AppError, JOB_EVENTS_PROTO_INCLUDE_DIR, JOB_EVENTS_PROTO_PATH, type JobEvent, type JobEventAck } from '@tailor/proto'
import type { Logger } from '../logger.ts'
import type { JobEventSink } from './job-event-sink.ts'

type WireEvent = { seq: number; jobId: string; workerId: string } & (
  | { running: { attempt: number } }
  | { progress: { framesDone: number; framesTotal: number } }
  | { completed: { resultKey: string; contentType: string; bytes: number; frames: number } }
  | { failed: { errorCode: string; message: string } }
)
interface WireGatewayMessage {
  message?: 'ack' | 'cancel'
  ack?: { seq: number; cancelled: boolean }
  cancel?: { jobId: string }
}

const RECONNECT_MIN_MS = 200
const RECONNECT_MAX_MS = 5_000

function toWire(e: JobEvent, seq: number, workerId: string): WireEvent {
  const head = { seq, jobId: e.jobId, workerId }
  switch (e.type) {
    case 'running':
      return { ...head, running: { attempt: e.attempt } }
    case 'progress':
      return { ...head, progress: { framesDone: e.framesDone, framesTotal: e.framesTotal } }
    case 'completed':
      return { ...head, completed: { resultKey: e.resultKey, contentType: e.contentType, bytes: e.bytes, frames: e.frames } }
    case 'failed':
      return { ...head, failed: { errorCode: e.code, message: e.message } }
  }
}

interface Pending {
  wire: WireEvent
  resolve: (a: JobEventAck) => void
  reject: (e: Error) => void
  timer: NodeJS.Timeout
}

/**
 * gRPC edge on the inference side (the only @grpc/* user here): one bidirectional stream to the
 * gateway, reopened with backoff whenever it breaks; unacknowledged events are resent on the new
 * stream (the gateway applies them idempotently), progress events are dropped instead.
 */
export async function openJobEventStream(opts: { address: string; workerId: string; logger: Logger }): Promise<JobEventSink> {
  const def = await protoLoader.load(JOB_EVENTS_PROTO_PATH, {
    keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [JOB_EVENTS_PROTO_INCLUDE_DIR],
  })
  const pkg = grpc.loadPackageDefinition(def) as unknown as { inference: { v1: { JobEvents: grpc.ServiceClientConstructor } } }
  const client = new pkg.inference.v1.JobEvents(opts.address, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
  })
  const log = opts.logger.child({ component: 'event-stream', gateway: opts.address })
  const pending = new Map<number, Pending>()
  const cancelListeners: ((jobId: string) => void)[] = []
  let seq = 0
  let call: grpc.ClientDuplexStream<WireEvent, WireGatewayMessage> | null = null
  let closed = false
  let backoff = RECONNECT_MIN_MS
  let reconnectTimer: NodeJS.Timeout | null = null

  const open = (): void => {
    if (closed) return
    const stream = (client as unknown as { Connect: () => grpc.ClientDuplexStream<WireEvent, WireGatewayMessage> }).Connect()
    call = stream
    stream.on('data', (m: WireGatewayMessage) => {
      backoff = RECONNECT_MIN_MS
      if (m.ack !== undefined && m.message === 'ack') {
        const p = pending.get(m.ack.seq)
        if (p !== undefined) {
          pending.delete(m.ack.seq)
          clearTimeout(p.timer)
          p.resolve({ cancelled: m.ack.cancelled })
        }
      } else if (m.cancel !== undefined) {
        for (const l of cancelListeners) l(m.cancel.jobId)
      }
    })
    const broken = (err?: Error): void => {
      if (call !== stream) return
      call = null
      if (closed) return
      log.warn({ err: err?.message, pending: pending.size }, 'job event stream broken; reconnecting')
      // Progress is only a hint: drop it rather than replay it late.
      for (const [s, p] of pending) {
        if ('progress' in p.wire) {
          pending.delete(s)
          clearTimeout(p.timer)
          p.resolve({ cancelled: false })
        }
      }
      reconnectTimer = setTimeout(() => {
        reconnectTimer = null
        open()
        for (const p of pending.values()) call?.write(p.wire)
      }, backoff)
      backoff = Math.min(backoff * 2, RECONNECT_MAX_MS)
    }
    stream.on('error', broken)
    stream.on('end', () => broken())
  }
  open()
  log.info('job event stream opened')

  return {
    send(e, timeoutMs) {
      return new Promise<JobEventAck>((resolve, reject) => {
        const s = ++seq
        const wire = toWire(e, s, opts.workerId)
        const timer = setTimeout(() => {
          pending.delete(s)
          reject(new AppError('service_unavailable', `the gateway did not acknowledge a ${e.type} event within ${timeoutMs} ms`, { retryable: true }))
        }, timeoutMs)
        pending.set(s, { wire, resolve, reject, timer })
        call?.write(wire)
      })
    },
    onCancel(l) {
      cancelListeners.push(l)
    },
    async close() {
      closed = true
      if (reconnectTimer) clearTimeout(reconnectTimer)
      for (const p of pending.values()) {
        clearTimeout(p.timer)
        p.reject(new AppError('service_unavailable', 'event stream closed', { retryable: true }))
      }
      pending.clear()
      call?.end()
      call = null
      client.close()
    },
  }
}
