import { describe, expect, it } from 'vitest'
import { createJobSlots, createMemorySlotListStore, type SlotListStore } from './job-slots.ts'

/** A store whose compare-and-set loses `conflicts` times first (another replica wrote in between). */
function flakyStore(inner: SlotListStore, conflicts: number): SlotListStore & { writes: number } {
  const s = {
    writes: 0,
    read: (k: string) => inner.read(k),
    async write(k: string, ids: string[], rev: number | null) {
      s.writes += 1
      if (conflicts-- > 0) return false
      return inner.write(k, ids, rev)
    },
    close: () => inner.close(),
  }
  return s
}

const active = (ids: Set<string>) => (id: string) => Promise.resolve(ids.has(id))

describe('JobSlots', () => {
  it('admits up to the cap, refuses beyond it, admits again after a release', async () => {
    const live = new Set<string>()
    const slots = createJobSlots(createMemorySlotListStore(), active(live))
    for (const id of ['j1', 'j2']) {
      live.add(id)
      expect(await slots.acquire('k', id, 2)).toEqual({ admitted: true, active: live.size })
    }
    expect(await slots.acquire('k', 'j3', 2)).toMatchObject({ admitted: false, active: 2 })
    expect(await slots.acquire('other', 'x1', 2)).toMatchObject({ admitted: true })
    await slots.release('k', 'j1')
    live.delete('j1')
    expect((await slots.acquire('k', 'j3', 2)).admitted).toBe(true)
  })

  it('0 means no cap and records nothing', async () => {
    const store = createMemorySlotListStore()
    const slots = createJobSlots(store, active(new Set()))
    for (let i = 0; i < 50; i++) expect((await slots.acquire('k', `j${i}`, 0)).admitted).toBe(true)
    expect((await store.read('k')).ids).toEqual([])
  })

  it('never leaks: a slot whose job is gone or final is reclaimed when the key is at its cap', async () => {
    const live = new Set(['a', 'b'])
    const slots = createJobSlots(createMemorySlotListStore(), active(live))
    await slots.acquire('k', 'a', 2)
    await slots.acquire('k', 'b', 2)
    live.delete('a') // its record became final (or expired) and the release was lost (replica died)
    expect(await slots.acquire('k', 'c', 2)).toMatchObject({ admitted: true, active: 2 })
  })

  it('replicas share the lists: compare-and-set conflicts are retried on a fresh read', async () => {
    const shared = createMemorySlotListStore()
    const live = new Set<string>()
    const a = createJobSlots(flakyStore(shared, 3), active(live))
    const b = createJobSlots(shared, active(live))
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        live.add(`j${i}`)
        return (i % 2 === 0 ? a : b).acquire('k', `j${i}`, 4)
      }),
    )
    expect(results.filter((r) => r.admitted)).toHaveLength(4)
    expect((await shared.read('k')).ids).toHaveLength(4)
    // A release made on one replica is seen by the other even though its own copy is stale.
    const held = (await shared.read('k')).ids
    for (const id of held) await b.release('k', id)
    expect((await shared.read('k')).ids).toEqual([])
    expect((await a.acquire('k', 'late', 4)).admitted).toBe(true)
  })

  it('batches: many acquires for one key in flight together cost few writes', async () => {
    const store = flakyStore(createMemorySlotListStore(), 0)
    const slots = createJobSlots(store, active(new Set()))
    const rs = await Promise.all(
      Array.from({ length: 100 }, (_, i) => slots.acquire('k', `j${i}`, 1000)),
    )
    expect(rs.every((r) => r.admitted)).toBe(true)
    expect(store.writes).toBeLessThanOrEqual(2)
  })

  it('starts from the slots held at start (embedded restart)', async () => {
    const slots = createJobSlots(
      createMemorySlotListStore(new Map([['k', ['old']]])),
      active(new Set(['old'])),
    )
    expect((await slots.acquire('k', 'new', 1)).admitted).toBe(false)
  })
})
