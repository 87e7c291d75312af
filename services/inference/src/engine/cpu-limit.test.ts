import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cpuLimit, quotaCpus } from './cpu-limit.ts'

describe('CPU quota (cgroup) → onnxruntime intra-op threads', () => {
  it('reads cgroup v2 cpu.max and v1 cfs quota/period, rounding up; no quota → null', () => {
    expect(quotaCpus({ cpuMax: 'max 100000\n' })).toBeNull()
    expect(quotaCpus({ cpuMax: '400000 100000\n' })).toBe(4)
    expect(quotaCpus({ cpuMax: '250000 100000' })).toBe(3)
    expect(quotaCpus({ cpuMax: '50000 100000' })).toBe(1)
    expect(quotaCpus({ cfsQuotaUs: '-1\n', cfsPeriodUs: '100000\n' })).toBeNull()
    expect(quotaCpus({ cfsQuotaUs: '200000\n', cfsPeriodUs: '100000\n' })).toBe(2)
    expect(quotaCpus({})).toBeNull()
  })

  it('caps the cores this process may use by the quota found in a cgroup directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tailor-cgroup-'))
    try {
      expect(cpuLimit(dir)).toBe(availableParallelism()) // no quota files: the affinity mask
      await writeFile(join(dir, 'cpu.max'), '100000 100000\n')
      expect(cpuLimit(dir)).toBe(1)
      await writeFile(join(dir, 'cpu.max'), `${(availableParallelism() + 8) * 100000} 100000\n`)
      expect(cpuLimit(dir)).toBe(availableParallelism()) // never more than the cores it may run on
      await rm(join(dir, 'cpu.max'))
      await mkdir(join(dir, 'cpu'))
      await writeFile(join(dir, 'cpu', 'cpu.cfs_quota_us'), '100000\n')
      await writeFile(join(dir, 'cpu', 'cpu.cfs_period_us'), '100000\n')
      expect(cpuLimit(dir)).toBe(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
