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
  it('lanes: next(kind) takes only that kind, so a try-on is taken while videos wait, and wakes only its own waiter', async () => {
    const q = new InProcessQueue()
    const tryOn: JobEnvelope = {
      id: '00000000-0000-4000-8000-000000000009',
      kind: 'try-on',
      createdAt: '',
      params: {
        person_image_url: 'http://e.com/p',
        garment_image_url: 'http://e.com/g',
        garment_mode: 'auto',
        preprocess_garment: true,
        remove_background: false,
      } as Extract<JobEnvelope, { kind: 'try-on' }>['params'],
    }
    await q.publish(job(1))
    await q.publish(job(2))
    const videoLane = q.next('remove-background')
    expect(await videoLane).toMatchObject({ data: job(1) })
    const tryOnLane = q.next('try-on')
    setTimeout(() => void q.publish(tryOn), 20)
    expect(await tryOnLane).toMatchObject({ data: tryOn })
    expect(await q.next('try-on')).toBeNull()
    expect(await q.next('remove-background')).toMatchObject({ data: job(2) })
    await q.close()
  })
})
