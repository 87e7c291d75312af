import { describe, expect, it } from 'vitest'
import { classifyAddress, isAllowedAddress } from './address-policy.ts'

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['ff02::1', 'reserved'],
    ['not-an-ip', 'reserved'],
    // IPv4 carried in IPv6 is classified by that IPv4 (issue 11 §6): IPv4-compatible ::/96,
    // NAT64 local-use 64:ff9b:1::/48 (every RFC 6052 position a /48 allows), 6to4 2002::/16.
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['[::127.0.0.1]', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['::169.254.169.254', 'link-local'],
    ['::8.8.8.8', 'public'],
    ['::2', 'reserved'],
    ['64:ff9b:1::127.0.0.1', 'loopback'],
    ['64:ff9b:1::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::808:808', 'public'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'link-local'],
    ['64:ff9b:1:a9:fe:a9fe::', 'link-local'],
    ['64:ff9b:1:0:a9:fea9:fe00:0', 'link-local'],
    ['64:ff9b:1:a00:1:100:808:808', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:c0a8:101::', 'private'],
    ['2002:808:808::1', 'public'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (addr, cls) => {
    expect(classifyAddress(addr)).toBe(cls)
  })

  it('allows loopback only when asked, and nothing else private', () => {
    expect(isAllowedAddress('127.0.0.1', { allowLoopback: false })).toBe(false)
    expect(isAllowedAddress('127.0.0.1', { allowLoopback: true })).toBe(true)
    expect(isAllowedAddress('::1', { allowLoopback: true })).toBe(true)
    for (const a of [
      '10.0.0.1',
      '169.254.169.254',
      '0.0.0.0',
      'fe80::1',
      '192.168.0.1',
      '::a9fe:a9fe',
      '64:ff9b:1::a00:1',
      '2002:a00:1::',
    ]) {
      expect(isAllowedAddress(a, { allowLoopback: true })).toBe(false)
    }
    expect(isAllowedAddress('93.184.216.34', { allowLoopback: false })).toBe(true)
  })
})
