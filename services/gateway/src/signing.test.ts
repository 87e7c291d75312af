import { describe, expect, it } from 'vitest'
import { resultUrl, signResult, verifyResultSignature } from './signing.ts'

const S = 'k'.repeat(32)
const KEY = 'remove-background/00000000-0000-4000-8000-000000000000.mp4'

describe('result URL signing', () => {
  it('round-trips and expires', () => {
    const u = new URL(resultUrl('http://h', S, KEY, 1000, 3600))
    expect(u.searchParams.get('expires')).toBe('4600')
    const sig = u.searchParams.get('sig') ?? undefined
    expect(verifyResultSignature(S, KEY, '4600', sig, 4600)).toBe('ok')
    expect(verifyResultSignature(S, KEY, '4600', sig, 4601)).toBe('expired')
  })
  it('rejects tampering with key, expiry, signature or secret', () => {
    const sig = signResult(S, KEY, 5000)
    expect(verifyResultSignature(S, KEY.replace('.mp4', '.gif'), '5000', sig, 0)).toBe('invalid')
    expect(verifyResultSignature(S, KEY, '5001', sig, 0)).toBe('invalid')
    expect(verifyResultSignature(S, KEY, '5000', sig.slice(1), 0)).toBe('invalid')
    expect(verifyResultSignature('x'.repeat(32), KEY, '5000', sig, 0)).toBe('invalid')
    expect(verifyResultSignature(S, KEY, undefined, sig, 0)).toBe('invalid')
    expect(verifyResultSignature(S, KEY, '5e3', sig, 0)).toBe('invalid')
  })
})
