import { describe, expect, it } from 'vitest'
import { createMemoryRateBudget, withdrawFrom, type RateBudgetStore } from './rate-budget.ts'
import { RateLimiter } from './rate-limiter.ts'

/** A shared budget that counts its withdrawals (how many round trips a replica would make). */
function countingBudget(): RateBudgetStore & { calls: number } {
  const inner = createMemoryRateBudget()
  const b = {
    calls: 0,
    withdraw(keyId: string, want: number, limit: number, nowMs: number) {
      b.calls += 1
      return inner.withdraw(keyId, want, limit, nowMs)
    },
    close: () => inner.close(),
  }
  return b
}

describe('token bucket arithmetic', () => {
  it('starts full, refills at the rate, never above the limit', () => {
    const a = withdrawFrom(null, 3, 5, 1000)
    expect(a).toMatchObject({ granted: 3, next: { tokens: 2 } })
    const b = withdrawFrom(a.next, 10, 5, 1200) // +1 token in 200 ms
    expect(b.granted).toBe(3)
    expect(withdrawFrom(b.next, 10, 5, 60_000).granted).toBe(5)
  })
})

describe('RateLimiter', () => {
  it('admits a burst of the limit, then refuses with Retry-After and headers, and refills', async () => {
    let now = 1_000_000
    const rl = new RateLimiter(createMemoryRateBudget(), { now: () => now })
    const ds = []
    for (let i = 0; i < 7; i++) ds.push(await rl.take('k', 5))
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false])
    expect(ds[0]).toMatchObject({ limit: 5, remaining: 4, retryAfterS: 0 })
    expect(ds[4]).toMatchObject({ remaining: 0, resetS: 1 })
    expect(ds[5]).toMatchObject({ allowed: false, limit: 5, remaining: 0, retryAfterS: 1 })
    now += 200 // one token back
    expect((await rl.take('k', 5)).allowed).toBe(true)
    expect((await rl.take('k', 5)).allowed).toBe(false)
    now += 1000
    expect(rl.peek('k', 5)).toMatchObject({ allowed: true, remaining: 5, resetS: 0 })
  })

  it('keys have separate budgets', async () => {
    const rl = new RateLimiter(createMemoryRateBudget(), { now: () => 5_000 })
    for (let i = 0; i < 2; i++) expect((await rl.take('a', 2)).allowed).toBe(true)
    expect((await rl.take('a', 2)).allowed).toBe(false)
    expect((await rl.take('b', 2)).allowed).toBe(true)
  })

  it('replicas sharing one budget admit at most the limit between them, and a spent key costs no round trips', async () => {
    let now = 2_000_000
    const budget = countingBudget()
    const replicas = [
      new RateLimiter(budget, { now: () => now }),
      new RateLimiter(budget, { now: () => now }),
    ]
    let allowed = 0
    for (let i = 0; i < 40; i++) if ((await replicas[i % 2]!.take('k', 10)).allowed) allowed += 1
    expect(allowed).toBe(10)
    const calls = budget.calls
    for (let i = 0; i < 100; i++) expect((await replicas[i % 2]!.take('k', 10)).allowed).toBe(false)
    expect(budget.calls).toBe(calls) // refused locally until the bucket can hold a token again
    now += 1000
    allowed = 0
    for (let i = 0; i < 40; i++) if ((await replicas[i % 2]!.take('k', 10)).allowed) allowed += 1
    expect(allowed).toBe(10)
  })

  it('a high limit is served from local leases: one withdrawal per 50 ms worth of the rate', async () => {
    const budget = countingBudget()
    const rl = new RateLimiter(budget, { now: () => 3_000_000 })
    const ds = await Promise.all(Array.from({ length: 2000 }, () => rl.take('k', 100_000)))
    expect(ds.every((d) => d.allowed)).toBe(true)
    expect(budget.calls).toBeLessThanOrEqual(1)
  })

  it('concurrent requests beyond a lease wait for the next one instead of being refused', async () => {
    const rl = new RateLimiter(createMemoryRateBudget(), { now: () => 4_000_000 })
    const ds = await Promise.all(Array.from({ length: 30 }, () => rl.take('k', 20)))
    expect(ds.filter((d) => d.allowed)).toHaveLength(20)
  })

  it('unspent leased tokens lapse after the lease TTL (the documented tolerance: refusal, never excess)', async () => {
    let now = 5_000_000
    const budget = createMemoryRateBudget()
    const a = new RateLimiter(budget, { now: () => now, leaseMs: 500 })
    const b = new RateLimiter(budget, { now: () => now, leaseMs: 500 })
    expect((await a.take('k', 10)).allowed).toBe(true) // a leases 5 tokens, spends 1
    let bAllowed = 0
    for (let i = 0; i < 10; i++) if ((await b.take('k', 10)).allowed) bAllowed += 1
    expect(bAllowed).toBe(5) // a holds 4 unspent: b sees only what is left
    now += 1500 // a's lease lapsed; the bucket is full again
    let aAllowed = 0
    for (let i = 0; i < 20; i++) if ((await a.take('k', 10)).allowed) aAllowed += 1
    expect(aAllowed).toBe(10)
  })
})
