import { describe, expect, it } from 'vitest'
import {
  canonicalJson,
  idempotencyStorageKey,
  parseIdempotencyKey,
  requestFingerprint,
} from './idempotency-key.ts'

describe('Idempotency-Key header', () => {
  it('accepts 1–255 visible ASCII characters, absent is null', () => {
    expect(parseIdempotencyKey(undefined)).toBeNull()
    expect(parseIdempotencyKey('a')).toBe('a')
    expect(parseIdempotencyKey('0190b2c4-7e1f-7a55-9c3e-2f1d0c9b8a77')).toBe(
      '0190b2c4-7e1f-7a55-9c3e-2f1d0c9b8a77',
    )
    expect(parseIdempotencyKey('x'.repeat(255))).toHaveLength(255)
  })
  it.each([[''], ['x'.repeat(256)], ['has space'], ['tab\there'], ['é-accent']])(
    'refuses %j with invalid_parameter',
    (v) => {
      expect(() => parseIdempotencyKey(v)).toThrow(
        expect.objectContaining({ code: 'invalid_parameter' }),
      )
    },
  )
})

describe('request fingerprint', () => {
  it('ignores key order, differs on any value or operation', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    )
    expect(requestFingerprint('try-on', { a: 1, b: 2 })).toBe(
      requestFingerprint('try-on', { b: 2, a: 1 }),
    )
    expect(requestFingerprint('try-on', { a: 1 })).not.toBe(requestFingerprint('try-on', { a: 2 }))
    expect(requestFingerprint('try-on', { a: 1 })).not.toBe(
      requestFingerprint('remove-background', { a: 1 }),
    )
  })
  it('storage keys are scoped digests', () => {
    expect(idempotencyStorageKey('k1', 'abc')).toMatch(/^[0-9a-f]{64}$/)
    expect(idempotencyStorageKey('k1', 'abc')).not.toBe(idempotencyStorageKey('k2', 'abc'))
  })
})
