import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLogger } from '../logger.ts'
import { openFileWebhookQueue } from './webhook-queue-files.ts'
import type { AttemptOutcome, WebhookDelivery, WebhookQueue } from './webhook-queue.ts'

const log = createLogger('silent')
const SETTLE_MS = 2_000
let dir: string
const open: WebhookQueue[] = []
const delivery = (n: number): WebhookDelivery => ({
  webhookId: `msg_job${n}_completed`,
  url: 'https://hooks.example.com/',
  jobId: `job${n}`,
  kind: 'remove-background',
  status: 'completed',
  finishedAt: '2026-11-23T12:00:00.000Z',
})
const until = async (cond: () => boolean): Promise<void> => {
  const end = Date.now() + SETTLE_MS
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}
const openQueue = async (slots?: { concurrency: number; perKey: number }) => {
  const q = await openFileWebhookQueue(dir, { logger: log, ...(slots ? { slots } : {}) })
  open.push(q)
  return q
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-hooks-'))
})
afterEach(async () => {
  for (const q of open.splice(0)) await q.close()
  await rm(dir, { recursive: true, force: true })
})

describe('file webhook queue (embedded)', () => {
  it('delivers, retries after the given delay, and queues each webhook-id once', async () => {
    const q = await openQueue()
    const seen: [string, number, number][] = []
    const answers: AttemptOutcome[] = [{ done: false, retryInMs: 150 }, { done: true }]
    q.start(async (d, attempt) => {
      seen.push([d.webhookId, attempt, Date.now()])
      return answers.shift() ?? { done: true }
    })
    await q.enqueue(delivery(1))
    await q.enqueue(delivery(1))
    await until(() => seen.length === 2)
    expect(seen.map(([id, n]) => [id, n])).toEqual([
      ['msg_job1_completed', 1],
      ['msg_job1_completed', 2],
    ])
    expect(seen[1]![2] - seen[0]![2]).toBeGreaterThanOrEqual(140)
    await q.enqueue(delivery(1)) // done already: ignored
    await new Promise((r) => setTimeout(r, 100))
    expect(seen).toHaveLength(2)
  })

  it('pending deliveries and their attempt counts survive a restart', async () => {
    const q1 = await openQueue()
    const first: number[] = []
    q1.start(async (_d, attempt) => {
      first.push(attempt)
      return { done: false, retryInMs: 60_000 } // far in the future: still pending when we stop
    })
    await q1.enqueue(delivery(2))
    await until(() => first.length === 1)
    await q1.close()
    expect((await readdir(dir)).filter((n) => n.endsWith('.json'))).toEqual([
      'msg_job2_completed.json',
    ])

    // The next process: the entry is due in a minute, so its handler sees attempt 2 only then;
    // a new queue with the same dir must hold it (and de-duplicate a re-enqueue).
    const q2 = await openQueue()
    const second: number[] = []
    q2.start(async (_d, attempt) => {
      second.push(attempt)
      return { done: true }
    })
    await q2.enqueue(delivery(2))
    await new Promise((r) => setTimeout(r, 200))
    expect(second).toEqual([])
    await q2.close()
  })

  it('a delivery queued before a stop is attempted after the restart', async () => {
    const q1 = await openQueue()
    await q1.enqueue(delivery(3)) // never started: the process stopped first
    await q1.close()
    const q2 = await openQueue()
    const seen: number[] = []
    q2.start(async (_d, attempt) => {
      seen.push(attempt)
      return { done: true }
    })
    await until(() => seen.length === 1)
    expect(seen).toEqual([1])
  })

  it("slots are shared: a key's deliveries hold at most perKey of them; another key's is attempted while they hang", async () => {
    const q = await openQueue({ concurrency: 3, perKey: 2 })
    const release: (() => void)[] = []
    const started: string[] = []
    let open = 0
    let maxOpen = 0
    q.start(async (d) => {
      started.push(d.ownerKeyId ?? '')
      if (d.ownerKeyId === 'key_slow') {
        open++
        maxOpen = Math.max(maxOpen, open)
        await new Promise<void>((r) => release.push(r))
        open--
      }
      return { done: true }
    })
    try {
      for (let n = 10; n < 15; n++) await q.enqueue({ ...delivery(n), ownerKeyId: 'key_slow' })
      await q.enqueue({ ...delivery(20), ownerKeyId: 'key_other' })
      await until(() => started.includes('key_other'))
      expect(started.filter((k) => k === 'key_slow')).toHaveLength(2)
      // Releasing one lets exactly the next of the same key in.
      release.shift()!()
      await until(() => started.filter((k) => k === 'key_slow').length === 3)
      while (started.filter((k) => k === 'key_slow').length < 5 || release.length > 0) {
        release.shift()?.()
        await new Promise((r) => setTimeout(r, 5))
      }
      expect(maxOpen).toBe(2)
    } finally {
      for (const r of release.splice(0)) r() // nothing left hanging for close()
    }
  })
})
