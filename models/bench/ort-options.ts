/** ORT session option sets for the benchmark: parsing `k=v,k=v` specs and the `--sweep` preset. */
import type { OrtCpuOptions } from '../src/reference/ort-runner.ts'

/** Preset option sets for `--sweep`: the knobs the issue names, one change at a time from the default. */
export const SWEEP: readonly OrtCpuOptions[] = [
  {},
  { intraOpNumThreads: 1 },
  { intraOpNumThreads: 2 },
  { intraOpNumThreads: 2, graphOptimizationLevel: 'extended' },
  { intraOpNumThreads: 2, graphOptimizationLevel: 'basic' },
  { intraOpNumThreads: 2, enableCpuMemArena: false },
  { intraOpNumThreads: 2, enableMemPattern: false },
  { intraOpNumThreads: 2, executionMode: 'parallel', interOpNumThreads: 2 },
  { intraOpNumThreads: 2, allowSpinning: false },
  { intraOpNumThreads: 2, allowSpinning: false, graphOptimizationLevel: 'extended' },
]

// ---- options ------------------------------------------------------------------------------------
const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'] as const
const EXEC_MODES = ['sequential', 'parallel'] as const

function parseBool(key: string, v: string): boolean {
  if (v === 'true' || v === '1') {
    return true
  }
  if (v === 'false' || v === '0') {
    return false
  }
  throw new Error(`--ort ${key}=${v}: expected true or false`)
}
function parseInt1(key: string, v: string): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`--ort ${key}=${v}: expected a non-negative integer`)
  }
  return n
}

export function parseOrtOptions(spec: string): OrtCpuOptions {
  const o: OrtCpuOptions = {}
  for (const pair of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key = '', value = ''] = pair.split('=').map((s) => s.trim())
    switch (key) {
      case 'intraOpNumThreads':
        o.intraOpNumThreads = parseInt1(key, value)
        break
      case 'interOpNumThreads':
        o.interOpNumThreads = parseInt1(key, value)
        break
      case 'graphOptimizationLevel':
        if (!(OPT_LEVELS as readonly string[]).includes(value)) {
          throw new Error(`--ort ${pair}: expected one of ${OPT_LEVELS.join('|')}`)
        }
        o.graphOptimizationLevel = value as (typeof OPT_LEVELS)[number]
        break
      case 'enableCpuMemArena':
        o.enableCpuMemArena = parseBool(key, value)
        break
      case 'enableMemPattern':
        o.enableMemPattern = parseBool(key, value)
        break
      case 'allowSpinning':
        o.allowSpinning = parseBool(key, value)
        break
      case 'executionMode':
        if (!(EXEC_MODES as readonly string[]).includes(value)) {
          throw new Error(`--ort ${pair}: expected one of ${EXEC_MODES.join('|')}`)
        }
        o.executionMode = value as (typeof EXEC_MODES)[number]
        break
      default:
        throw new Error(`--ort ${pair}: unknown option ${key}`)
    }
  }
  return o
}

export const describeOptions = (o: OrtCpuOptions): string =>
  Object.keys(o).length === 0
    ? 'defaults'
    : Object.entries(o)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(',')
