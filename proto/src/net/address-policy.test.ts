import { describe, expect, it } from 'vitest'
import { classifyAddress, isAllowedAddress } from './address-policy.ts'

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.1.2', 'loopback'], ['::1', 'loopback'], ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['64:ff9b::127.0.0.1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'], ['fc00::1', 'private'], ['fd00:ec2::254', 'private'], ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'], ['169.254.0.1', 'link-local'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['0.0.0.0', 'reserved'], ['::', 'reserved'], ['224.0.0.1', 'reserved'], ['255.255.255.255', 'reserved'], ['ff02::1', 'reserved'],
    ['not-an-ip', 'reserved'],
    ['8.8.8.8', 'public'], ['172.32.0.1', 'public'], ['1.1.1.1', 'public'], ['2606:4700:4700::1111', 'public'], ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (addr, cls) => {
    expect(classifyAddress(addr)).toBe(cls)
  })

  it('allows loopback only when asked, and nothing else private', () => {
    expect(isAllowedAddress('127.0.0.1', { allowLoopback: false })).toBe(false)
    expect(isAllowedAddress('127.0.0.1', { allowLoopback: true })).toBe(true)
    expect(isAllowedAddress('::1', { allowLoopback: true })).toBe(true)
    for (const a of ['10.0.0.1', '169.254.169.254', '0.0.0.0', 'fe80::1', '192.168.0.1']) {
      expect(isAllowedAddress(a, { allowLoopback: true })).toBe(false)
    }
    expect(isAllowedAddress('93.184.216.34', { allowLoopback: false })).toBe(true)
  })
})
