/**
 * Job ids are UUIDv7 (RFC 9562): the first 48 bits are the creation time in Unix milliseconds, so
 * an id whose record has expired can be told from one that was never issued, and ids sort by
 * creation time. Browser-safe (Web Crypto's getRandomValues only).
 */

const HEX = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A larger step back is taken as meant (an explicit time), not as clock jitter. */
const MAX_CLOCK_STEP_BACK_MS = 10_000
let lastMs = -1
let lastSeq = 0

/**
 * Random bytes are drawn from Web Crypto in blocks of POOL_BYTES and handed out 16 at a time,
 * never twice: one getRandomValues call per 256 ids instead of one per id (a measurable share of
 * a submission's CPU under load, `pnpm bench:load`).
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolOffset = POOL_BYTES
const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))

function randomBytes16(): Uint8Array {
  if (poolOffset + 16 > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    poolOffset = 0
  }
  const bytes = pool.slice(poolOffset, poolOffset + 16)
  poolOffset += 16
  return bytes
}

/**
 * A new UUIDv7. Within one millisecond the 12-bit `rand_a` field is a counter seeded at random
 * (RFC 9562 §6.2 method 1), so ids made by one process are strictly increasing (across small clock steps back too).
 */
export function newJobId(nowMs: number = Date.now()): string {
  const bytes = randomBytes16()
  let ms = Math.floor(nowMs)
  if (ms < lastMs && lastMs - ms < MAX_CLOCK_STEP_BACK_MS) ms = lastMs // a small clock step back keeps ids increasing
  let seq: number
  if (ms === lastMs) {
    seq = lastSeq + 1
    if (seq > 0xfff) {
      ms += 1 // counter exhausted: borrow the next millisecond (stays monotonic)
      seq = bytes[6]! & 0x07
    }
  } else {
    seq = ((bytes[6]! & 0x07) << 8) | bytes[7]! // leave headroom for the counter
  }
  lastMs = ms
  lastSeq = seq
  // 48-bit big-endian timestamp.
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff
  bytes[2] = (ms >>> 24) & 0xff
  bytes[3] = (ms >>> 16) & 0xff
  bytes[4] = (ms >>> 8) & 0xff
  bytes[5] = ms & 0xff
  bytes[6] = 0x70 | ((seq >>> 8) & 0x0f) // version 7
  bytes[7] = seq & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f) // variant 10
  let h = ''
  for (let i = 0; i < 16; i++) {
    h += (i === 4 || i === 6 || i === 8 || i === 10 ? '-' : '') + HEX_BYTE[bytes[i]!]!
  }
  return h
}

/** The creation time (Unix ms) of a UUIDv7 job id, or null for anything else (older random v4 ids too). */
export function jobIdTimeMs(id: string): number | null {
  if (!HEX.test(id)) return null
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
}
