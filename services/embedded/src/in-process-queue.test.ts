import { describe, expect, it } from 'vitest'
import type { JobEnvelope } from '@tailor/proto'
import { InProcessQueue } from './in-process-queue.ts'

const job = (n: number): JobEnvelope => ({
  id: `00000000-0000-4000-8000-00000000000${n}`,
  kind: 'remove-background',
  params: { video_url: 'http://e.com/v', background_color: '#000000', output_format: 'gif' },
  createdAt: '',
})

describe('InProcessQueue', () => {
  it('delivers in order, de-duplicates by job id, redelivers on nak and drops on ack/term', async () => {
    const q = new InProcessQueue()
    await q.publish(job(1))
    await q.publish(job(1))
    await q.publish(job(2))
    const a = await q.next()
    expect(a).toMatchObject({ data: job(1), deliveryCount: 1 })
    a!.nak(10)
    const b = await q.next()
    expect(b).toMatchObject({ data: job(2), deliveryCount: 1 })
    await b!.ack()
    const again = await q.next()
    expect(again).toMatchObject({ data: job(1), deliveryCount: 2 })
    again!.term('x')
    expect(await q.next()).toBeNull()
    await q.close()
  })
  it('wakes a waiting consumer as soon as a job is published', async () => {
    const q = new InProcessQueue()
    const t0 = Date.now()
    const next = q.next()
    setTimeout(() => void q.publish(job(3)), 20)
    expect(await next).toMatchObject({ data: job(3) })
    expect(Date.now() - t0).toBeLessThan(500)
  })
})
