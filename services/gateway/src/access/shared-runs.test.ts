import { describe, expect, it } from 'vitest'
import { sharedRuns } from './shared-runs.ts'

/** A run that ends when the test says so; `started` counts runs, `seen` is what each run saw. */
function gatedRuns() {
  const gates: (() => void)[] = []
  let value = 0
  const seen: number[] = []
  const run = sharedRuns(async () => {
    const v = value
    await new Promise<void>((r) => gates.push(r))
    seen.push(v)
  })
  return {
    run,
    seen,
    set: (v: number) => (value = v),
    runs: () => gates.length,
    release: async () => {
      gates[gates.length - 1]!()
      await new Promise((r) => setImmediate(r))
    },
  }
}

describe('sharedRuns', () => {
  it('callers during a run share one run queued after it, which sees what they saw', async () => {
    const g = gatedRuns()
    const first = g.run()
    g.set(1)
    const later = Array.from({ length: 50 }, () => g.run())
    expect(g.runs()).toBe(1)
    await g.release()
    await first
    expect(g.runs()).toBe(2)
    await g.release()
    await Promise.all(later)
    // Two runs for 51 callers; the second started after the 50 asked, so it read the value they set.
    expect(g.seen).toEqual([0, 1])
    // Idle again: the next call starts a run of its own.
    const next = g.run()
    expect(g.runs()).toBe(3)
    await g.release()
    await next
  })

  it("a run's failure reaches its callers; the queued run still starts", async () => {
    let n = 0
    let fail: (e: Error) => void = () => undefined
    const run = sharedRuns(
      () =>
        new Promise<void>((resolve, reject) => {
          n++
          if (n === 1) fail = reject
          else resolve()
        }),
    )
    const a = run()
    const b = run()
    fail(new Error('store unreachable'))
    await expect(a).rejects.toThrow('store unreachable')
    await expect(b).resolves.toBeUndefined()
    expect(n).toBe(2)
  })
})
