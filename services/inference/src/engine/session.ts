/**
 * The session layer: the ONLY module that imports onnxruntime-node (STYLE.md §3.2, §3.7).
 *
 * Callers pass and receive plain typed arrays; every ort.Tensor is created and disposed here, so
 * no tensor outlives a run. Runs are serialised per session (one CUDA stream per session, and
 * `run()` blocks the event loop anyway) and each run is followed by `await setImmediate()` so
 * pipes, timers and aborts get a turn between frames.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import * as ort from 'onnxruntime-node'
import { AppError } from '@tailor/proto'
import { cpuLimit } from './cpu-limit.ts'
import type { ModelSpec } from './manifest.ts'

export type ExecutionProvider = 'cuda' | 'cpu'

/** onnxruntime's log severity: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal. */
export type OrtLogSeverity = 0 | 1 | 2 | 3 | 4

/**
 * ORT's log severity for our LOG_LEVEL (STYLE.md §3.6): ORT's own info and verbose lines only at
 * debug and trace; errors only from info to error (its warnings, e.g. nodes placed on the CPU
 * provider, are not actionable here), fatal only when we log fatal or nothing.
 */
export function ortLogSeverity(
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent',
): OrtLogSeverity {
  switch (level) {
    case 'trace':
      return 0
    case 'debug':
      return 1
    case 'info':
    case 'warn':
    case 'error':
      return 3
    case 'fatal':
    case 'silent':
      return 4
  }
}

export interface SessionOptions {
  /** Tried in order; the provider actually used and the reasons for skipping any are reported. */
  executionProviders?: ExecutionProvider[]
  /** Intra-op threads; defaults to the CPUs this process may use (affinity and cgroup quota, cpu-limit.ts). */
  intraOpThreads?: number
  /**
   * Let ORT's idle threads spin. Off by default: on a CPU machine the cores are shared with the
   * ffmpeg encoder, and spinning threads steal its time.
   */
  allowSpinning?: boolean
  /** ORT log severity: 0 verbose … 4 fatal (set from our log level: ortLogSeverity). */
  logSeverityLevel?: OrtLogSeverity
  /**
   * Told the wall time of every completed run, by model name (the worker's per-model latency
   * histogram). A plain callback, so metrics stay out of the session layer.
   */
  onRun?: (model: string, seconds: number) => void
}

/** Element types the models take and hand out: float32, and uint8 for image bytes (rvm-rgb…). */
export type TensorArray = Float32Array | Uint8Array

export interface TensorData<T extends TensorArray = Float32Array> {
  data: T
  dims: readonly number[]
}

export interface ProviderFallback {
  provider: ExecutionProvider
  reason: string
}

export class ModelSession {
  #tail: Promise<unknown> = Promise.resolve()
  #released = false
  #onRun: SessionOptions['onRun']

  private constructor(
    readonly spec: ModelSpec,
    readonly provider: ExecutionProvider,
    /** Providers that were asked for but could not be used, with why (never a silent fallback). */
    readonly fallbacks: readonly ProviderFallback[],
    readonly intraOpThreads: number,
    private readonly s: ort.InferenceSession,
  ) {}

  /**
   * Opens `spec.path`, checking its size and sha256 against the manifest and its input/output
   * names against the spec. Throws AppError `service_unavailable` when nothing can be opened.
   */
  static async open(spec: ModelSpec, o: SessionOptions = {}): Promise<ModelSession> {
    const bytes = await readFile(spec.path).catch((err: unknown) => {
      throw new AppError(
        'service_unavailable',
        `${spec.name}: cannot read ${spec.path} (run pnpm models)`,
        {
          cause: err,
        },
      )
    })
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    if (bytes.length !== spec.bytes || sha256 !== spec.sha256) {
      throw new AppError(
        'service_unavailable',
        `${spec.name}: ${spec.path} does not match the manifest (bytes ${bytes.length}/${spec.bytes}, sha256 ${sha256.slice(0, 12)}…/${spec.sha256.slice(0, 12)}…)`,
      )
    }
    const providers = o.executionProviders ?? ['cpu']
    const intraOpThreads = o.intraOpThreads ?? cpuLimit()
    const fallbacks: ProviderFallback[] = []
    for (const provider of providers) {
      let s: ort.InferenceSession
      try {
        s = await ort.InferenceSession.create(bytes, {
          executionProviders: [provider],
          intraOpNumThreads: intraOpThreads,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
          enableCpuMemArena: true,
          enableMemPattern: true,
          logSeverityLevel: o.logSeverityLevel ?? 3,
          extra: {
            session: { intra_op: { allow_spinning: o.allowSpinning === true ? '1' : '0' } },
          },
        })
      } catch (err) {
        fallbacks.push({ provider, reason: err instanceof Error ? err.message : String(err) })
        continue
      }
      const missing = spec.inputs.map((i) => i.name).filter((n) => !s.inputNames.includes(n))
      const missingOut = spec.outputs.map((i) => i.name).filter((n) => !s.outputNames.includes(n))
      if (missing.length > 0 || missingOut.length > 0) {
        await s.release()
        throw new AppError(
          'service_unavailable',
          `${spec.name}: the model lacks inputs [${missing.join(', ')}] / outputs [${missingOut.join(', ')}] named in the manifest`,
        )
      }
      const session = new ModelSession(spec, provider, fallbacks, intraOpThreads, s)
      session.#onRun = o.onRun
      return session
    }
    throw new AppError(
      'service_unavailable',
      `${spec.name}: no execution provider could open the model: ${fallbacks.map((f) => `${f.provider}: ${f.reason}`).join('; ')}`,
    )
  }

  /**
   * Runs the model (serialised with every other run of this session). Returns each requested
   * output's data (float32; `runMixed` also takes uint8 outputs); the tensors themselves are
   * disposed before this resolves.
   */
  async run(
    feeds: Record<string, TensorData<TensorArray>>,
    outputs: readonly string[],
  ): Promise<Record<string, TensorData>> {
    return (await this.runMixed(feeds, outputs, [])).floats
  }

  /** `run` for outputs of any type: those the manifest declares uint8 come back as bytes. */
  async runAny(
    feeds: Record<string, TensorData<TensorArray>>,
    outputs: readonly string[],
  ): Promise<Record<string, TensorData<TensorArray>>> {
    const bytes = new Set(this.spec.outputs.filter((o) => o.dtype === 'uint8').map((o) => o.name))
    const r = await this.runMixed(
      feeds,
      outputs.filter((n) => !bytes.has(n)),
      outputs.filter((n) => bytes.has(n)),
    )
    return { ...r.floats, ...r.bytes }
  }

  /** `run` with some outputs handed out as bytes (uint8), e.g. rvm-rgb's composited frame. */
  runMixed(
    feeds: Record<string, TensorData<TensorArray>>,
    floatOutputs: readonly string[],
    byteOutputs: readonly string[],
  ): Promise<{
    floats: Record<string, TensorData>
    bytes: Record<string, TensorData<Uint8Array>>
  }> {
    const next = this.#tail.then(async () => {
      if (this.#released) {
        throw new AppError('service_unavailable', `${this.spec.name}: session released`)
      }
      const inputs: Record<string, ort.Tensor> = {}
      let results: ort.InferenceSession.OnnxValueMapType | undefined
      try {
        for (const [name, t] of Object.entries(feeds)) {
          inputs[name] =
            t.data instanceof Uint8Array
              ? new ort.Tensor('uint8', t.data, t.dims)
              : new ort.Tensor('float32', t.data, t.dims)
        }
        const t0 = performance.now()
        results = await this.s.run(inputs, [...floatOutputs, ...byteOutputs])
        this.#onRun?.(this.spec.name, (performance.now() - t0) / 1000)
        const floats: Record<string, TensorData> = {}
        const bytes: Record<string, TensorData<Uint8Array>> = {}
        for (const name of floatOutputs) {
          const r = results[name]
          if (r === undefined || !(r.data instanceof Float32Array)) {
            throw new AppError(
              'unexpected_error',
              `${this.spec.name}: output ${name} missing or not float32`,
            )
          }
          floats[name] = { data: r.data, dims: r.dims }
        }
        for (const name of byteOutputs) {
          const r = results[name]
          if (r === undefined || r.type !== 'uint8' || !(r.data instanceof Uint8Array)) {
            throw new AppError(
              'unexpected_error',
              `${this.spec.name}: output ${name} missing or not uint8`,
            )
          }
          bytes[name] = { data: r.data, dims: r.dims }
        }
        return { floats, bytes }
      } finally {
        for (const t of Object.values(inputs)) {
          t.dispose()
        }
        for (const t of Object.values(results ?? {})) {
          t.dispose()
        }
        await yieldToLoop()
      }
    })
    this.#tail = next.catch(() => undefined)
    return next
  }

  /** Waits for queued runs, then frees the native session. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) {
      return
    }
    this.#released = true
    await this.#tail
    await this.s.release()
  }
}
