import { describe, expect, it } from 'vitest'
import { limitStream } from './limit-stream.ts'

/** A body of `chunks` chunks of `size` bytes that records how much was read and whether it was cancelled. */
const source = (chunks: number, size: number) => {
  const s = { pulled: 0, cancelled: false }
  const stream = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (s.pulled >= chunks) return ctrl.close()
      s.pulled++
      ctrl.enqueue(new Uint8Array(size))
    },
    cancel() {
      s.cancelled = true
    },
  })
  return { stream, s }
}
const consume = async (st: ReadableStream<Uint8Array>): Promise<number> => {
  let n = 0
  for await (const c of st as unknown as AsyncIterable<Uint8Array>) n += c.byteLength
  return n
}
const settle = () => new Promise((r) => setTimeout(r, 20))

describe('limitStream', () => {
  it('passes a body within the limit through and counts it', async () => {
    const { stream } = source(4, 100)
    const l = limitStream(stream, 400)
    expect(await consume(l.stream)).toBe(400)
    expect(l.bytes()).toBe(400)
  })
  it('past the limit: errors file_size_too_large and drains the rest (a client still sending gets the answer)', async () => {
    const { stream, s } = source(10, 100)
    const l = limitStream(stream, 250, 1000)
    await expect(consume(l.stream)).rejects.toMatchObject({ code: 'file_size_too_large' })
    await settle()
    expect(s.pulled).toBe(10)
    expect(s.cancelled).toBe(false)
  })
  it('beyond the drain allowance the body is cancelled', async () => {
    const { stream, s } = source(1000, 100)
    const l = limitStream(stream, 250, 500)
    await expect(consume(l.stream)).rejects.toMatchObject({ code: 'file_size_too_large' })
    await settle()
    expect(s.cancelled).toBe(true)
    expect(s.pulled).toBeLessThan(20)
  })
  it('a body that breaks off is invalid_request_body', async () => {
    let i = 0
    const broken = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (i++ > 1) ctrl.error(new Error('socket hang up'))
        else ctrl.enqueue(new Uint8Array(10))
      },
    })
    await expect(consume(limitStream(broken, 1000).stream)).rejects.toMatchObject({
      code: 'invalid_request_body',
    })
  })
})
