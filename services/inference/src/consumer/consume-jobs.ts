import {
  AppError,
  JobEnvelope,
  toAppError,
  type JobEvent,
  type JobKind,
  type JobOutcome,
} from '@tailor/proto'
import type { JobEventSink } from '../events/job-event-sink.ts'
import type { Logger } from '../logger.ts'
import type { JobDelivery, JobSource } from './job-source.ts'

export interface ConsumeOptions {
  source: JobSource
  events: JobEventSink
  run: (
    job: JobEnvelope,
    ctx: { signal: AbortSignal; onProgress: (framesDone: number, framesTotal: number) => void },
  ) => Promise<JobOutcome & { frames?: number }>
  logger: Logger
  /** Jobs run at once: per kind when `kinds` is given (each kind pulls from its own lane), else in all. */
  concurrency: number
  /**
   * The kinds this worker runs, each in its own lane with `concurrency` loops: a try-on never
   * waits behind a video (and the other way round). Absent: `concurrency` loops take any kind.
   */
  kinds?: readonly JobKind[]
  ackWaitMs: number
  maxDeliver: number
  finalEventTimeoutMs: number
  /**
   * Longest one delivery of a job of each kind may run; then it is aborted (ffmpeg killed, work
   * dir removed) and fails with `request_timeout`.
   */
  jobTimeoutMs: Readonly<Record<JobKind, number>>
  /** Progress events are sent at most this often per job. */
  progressIntervalMs?: number
  /** Told how each delivery ended (the worker's tailor_inference_* metrics). */
  metrics?: JobMetrics
}

/** How one delivery ended, as the worker saw it: `retried` was nak'ed, `released` handed back at shutdown. */
export type DeliveryStatus = 'completed' | 'failed' | 'cancelled' | 'retried' | 'released'

/** Port: records how deliveries end (metrics.ts implements it with prom-client). */
export interface JobMetrics {
  jobFinished(o: {
    kind: JobKind
    status: DeliveryStatus
    errorCode: AppError['code'] | null
    seconds: number
    frames?: number
  }): void
}

export interface Consumer {
  /** Stops pulling; waits for in-flight jobs up to `timeoutMs`, then aborts them (they are redelivered). */
  stop(timeoutMs: number): Promise<void>
  inFlight(): number
}

const EVENT_TIMEOUT_MS = 30_000
const NAK_BACKOFF_MS = [1_000, 5_000, 15_000, 30_000]
const backoffMs = (deliveryCount: number): number =>
  NAK_BACKOFF_MS[Math.min(deliveryCount - 1, NAK_BACKOFF_MS.length - 1)]!

/**
 * The JetStream edge of inference: the only place that decides ack / nak / term / working.
 * ack only after the result is stored and the final event is acknowledged by the gateway.
 */
export function consumeJobs(o: ConsumeOptions): Consumer {
  const active = new Map<string, AbortController>()
  let stopping = false
  o.events.onCancel((jobId) => {
    const ac = active.get(jobId)
    if (ac !== undefined) {
      o.logger.info({ job_id: jobId }, 'cancel requested')
      ac.abort(new Error('cancelled'))
    }
  })

  const handle = async (d: JobDelivery): Promise<void> => {
    const parsed = JobEnvelope.safeParse(d.data)
    if (!parsed.success) {
      o.logger.error(
        { issues: parsed.error.issues.slice(0, 5) },
        'malformed job message; terminating it',
      )
      d.term('invalid_parameter')
      return
    }
    const job = parsed.data
    // Every log line about a job carries its job_id.
    const log = o.logger.child({ job_id: job.id, kind: job.kind, attempt: d.deliveryCount })
    const ac = new AbortController()
    active.set(job.id, ac)
    const beat = setInterval(() => d.working(), Math.max(Math.floor(o.ackWaitMs / 3), 250))
    const final = (e: JobEvent) => o.events.send(e, o.finalEventTimeoutMs)
    const fail = async (e: { code: AppError['code']; message: string }): Promise<void> => {
      await final({ type: 'failed', jobId: job.id, code: e.code, message: e.message })
    }
    const t0 = performance.now()
    const record = (
      status: DeliveryStatus,
      errorCode: AppError['code'] | null = null,
      frames?: number,
    ): void =>
      o.metrics?.jobFinished({
        kind: job.kind,
        status,
        errorCode,
        seconds: (performance.now() - t0) / 1000,
        ...(frames !== undefined ? { frames } : {}),
      })
    let timeout: NodeJS.Timeout | undefined
    try {
      if (d.deliveryCount > o.maxDeliver) {
        // Every earlier delivery ended without an ack, nak or term of ours: its worker died
        // (crash, OOM kill, SIGKILL) or hung past the ack wait. Running it again would loop.
        log.error({ maxDeliver: o.maxDeliver }, 'job gave up after too many deliveries')
        await fail({
          code: 'worker_crashed',
          message: `The job was delivered ${d.deliveryCount - 1} times and never finished: its worker stopped each time (crashed or was killed); giving up.`,
        })
        d.term('max_deliver')
        record('failed', 'worker_crashed')
        return
      }
      const started = await o.events.send(
        { type: 'running', jobId: job.id, attempt: d.deliveryCount },
        EVENT_TIMEOUT_MS,
      )
      if (started.cancelled) {
        log.info('job no longer wanted; dropping it')
        await d.ack()
        record('cancelled')
        return
      }
      log.info('job started') // kind and attempt are on the job's child logger
      const limitMs = o.jobTimeoutMs[job.kind]
      timeout = setTimeout(() => {
        log.warn({ limitMs }, 'job timed out; aborting it')
        ac.abort(
          new AppError(
            'request_timeout',
            `The job ran longer than ${limitMs / 1000} s, the limit for ${job.kind} jobs, and was stopped.`,
          ),
        )
      }, limitMs)
      let lastProgress = 0
      const onProgress = (framesDone: number, framesTotal: number): void => {
        const now = performance.now()
        if (now - lastProgress < (o.progressIntervalMs ?? 500) && framesDone < framesTotal) return
        lastProgress = now
        o.events
          .send(
            { type: 'progress', jobId: job.id, framesDone, framesTotal, attempt: d.deliveryCount },
            EVENT_TIMEOUT_MS,
          )
          .then(
            (a) => {
              if (a.cancelled) ac.abort(new Error('cancelled'))
            },
            (err: unknown) => log.debug({ err }, 'progress event not delivered'),
          )
      }
      const outcome = await o.run(job, { signal: ac.signal, onProgress })
      const ms = Math.round(performance.now() - t0)
      if (outcome.status === 'succeeded') {
        await final({
          type: 'completed',
          jobId: job.id,
          resultKey: outcome.resultKey,
          contentType: outcome.contentType,
          bytes: outcome.bytes,
          frames: outcome.frames ?? 0,
        })
        await d.ack()
        log.info({ ms, frames: outcome.frames, bytes: outcome.bytes }, 'job completed')
        record('completed', null, outcome.frames)
      } else if (outcome.code === 'job_cancelled') {
        if (stopping) {
          d.nak(0) // shutting down, not cancelled by the client: let another worker take it
          log.info('job interrupted by shutdown; released for redelivery')
          record('released')
          return
        }
        await fail(outcome).catch(() => undefined) // the gateway already knows
        await d.ack()
        log.info({ ms }, 'job cancelled')
        record('cancelled')
      } else {
        await fail(outcome)
        d.term(outcome.code)
        log.info({ ms, code: outcome.code }, 'job failed')
        record('failed', outcome.code)
      }
    } catch (err) {
      const e = toAppError(err)
      if (e.retryable && d.deliveryCount < o.maxDeliver) {
        log.warn({ err: e, code: e.code }, 'job failed; will retry')
        d.nak(backoffMs(d.deliveryCount))
        record('retried', e.code)
      } else {
        log.error({ err: e, code: e.code }, 'job failed')
        try {
          await fail({
            code: e.code,
            message: e.code === 'unexpected_error' ? 'The job failed unexpectedly.' : e.message,
          })
        } finally {
          d.term(e.code)
          record('failed', e.code)
        }
      }
    } finally {
      clearInterval(beat)
      clearTimeout(timeout)
      active.delete(job.id)
    }
  }

  const loops: Promise<void>[] = []
  const lanes: (JobKind | undefined)[] = o.kinds === undefined ? [undefined] : [...o.kinds]
  const slots = lanes.flatMap((lane) => Array.from({ length: o.concurrency }, () => lane))
  for (const lane of slots) {
    loops.push(
      (async () => {
        while (!stopping) {
          let d: JobDelivery | null
          try {
            d = await o.source.next(lane)
          } catch (err) {
            if (stopping) return
            o.logger.warn({ err }, 'pulling a job failed; retrying')
            await new Promise((r) => setTimeout(r, 1000))
            continue
          }
          if (d === null) continue
          if (stopping) {
            d.nak(0)
            return
          }
          await handle(d).catch((err: unknown) => o.logger.error({ err }, 'job handling crashed'))
        }
      })(),
    )
  }

  return {
    inFlight: () => active.size,
    async stop(timeoutMs) {
      stopping = true
      const timer = setTimeout(() => {
        for (const ac of active.values()) ac.abort(new Error('shutdown'))
      }, timeoutMs)
      await Promise.all(loops)
      clearTimeout(timer)
    },
  }
}
