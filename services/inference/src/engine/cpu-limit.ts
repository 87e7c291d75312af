import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/**
 * CPUs a cgroup CPU quota allows, from cgroup v2 `cpu.max` ("max 100000" or "400000 100000") or
 * cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 = no quota). null when there is no quota.
 * Rounded up: a 2.5-CPU limit gets 3 threads, a 0.5-CPU limit 1.
 */
export function quotaCpus(files: {
  cpuMax?: string | null
  cfsQuotaUs?: string | null
  cfsPeriodUs?: string | null
}): number | null {
  if (files.cpuMax != null) {
    const [quota, period] = files.cpuMax.trim().split(/\s+/)
    if (quota === undefined || quota === 'max') return null
    const q = Number(quota)
    const p = Number(period ?? '100000')
    return Number.isFinite(q) && q > 0 && Number.isFinite(p) && p > 0
      ? Math.max(1, Math.ceil(q / p))
      : null
  }
  if (files.cfsQuotaUs != null && files.cfsPeriodUs != null) {
    const q = Number(files.cfsQuotaUs.trim())
    const p = Number(files.cfsPeriodUs.trim())
    return Number.isFinite(q) && q > 0 && Number.isFinite(p) && p > 0
      ? Math.max(1, Math.ceil(q / p))
      : null
  }
  return null
}

const readOrNull = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/**
 * CPUs this process may use: the affinity mask (`availableParallelism()`, which in Node 20 ignores
 * the cgroup quota) capped by the container's CPU quota (a Kubernetes CPU limit). onnxruntime's
 * intra-op pool sized from the host's cores under a 4-CPU limit is throttled, and slower.
 */
export function cpuLimit(root = '/sys/fs/cgroup'): number {
  const quota = quotaCpus({
    cpuMax: readOrNull(`${root}/cpu.max`),
    cfsQuotaUs:
      readOrNull(`${root}/cpu/cpu.cfs_quota_us`) ?? readOrNull(`${root}/cpu.cfs_quota_us`),
    cfsPeriodUs:
      readOrNull(`${root}/cpu/cpu.cfs_period_us`) ?? readOrNull(`${root}/cpu.cfs_period_us`),
  })
  const cores = availableParallelism()
  return quota === null ? cores : Math.min(cores, quota)
}
