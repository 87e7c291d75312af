import type { NetworkInterfaceInfo } from 'node:os'
import { describe, expect, it } from 'vitest'
import { bannerUrls, formatBanner } from './banner.ts'

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo =>
  ({
    address,
    family,
    internal,
    netmask: '',
    mac: '',
    cidr: null,
    ...(family === 'IPv6' ? { scopeid: 0 } : {}),
  }) as NetworkInterfaceInfo
const interfaces = {
  lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
  eth0: [iface('10.1.2.3', 'IPv4'), iface('fe80::1', 'IPv6')],
}

describe('start-up banner', () => {
  it('names the address actually bound, never "localhost"', () => {
    expect(bannerUrls({ address: '127.0.0.1', port: 8081 }, interfaces)).toEqual({
      local: 'http://127.0.0.1:8081',
      others: [],
    })
    expect(bannerUrls({ address: '192.168.7.9', port: 9000 }, interfaces)).toEqual({
      local: 'http://192.168.7.9:9000',
      others: [],
    })
    expect(bannerUrls({ address: '::1', port: 8080 }, interfaces)).toEqual({
      local: 'http://[::1]:8080',
      others: [],
    })
    // Every interface: loopback from here, and the machine's addresses from elsewhere.
    expect(bannerUrls({ address: '0.0.0.0', port: 8080 }, interfaces)).toEqual({
      local: 'http://127.0.0.1:8080',
      others: ['http://10.1.2.3:8080'],
    })
  })

  it('is one block: URL, playground, /docs, gRPC port, the key on first start, export TAILOR_URL', () => {
    const b = formatBanner({
      mode: 'embedded',
      http: { address: '127.0.0.1', port: 8123 },
      apiGrpc: { address: '127.0.0.1', port: 50999 },
      key: { kind: 'created', key: 'tk_abc', webhookSecret: 'whsec_c2VjcmV0' },
      rows: [['Data', '/srv/tailor-data']],
      interfaces,
    })
    expect(b).toContain('Tailor is running at http://127.0.0.1:8123  (embedded mode)')
    expect(b).toContain('bound to 127.0.0.1:8123: this machine only; HOST=0.0.0.0 exposes it')
    expect(b).toMatch(/Playground +http:\/\/127\.0\.0\.1:8123\/\n/)
    expect(b).toMatch(/API docs +http:\/\/127\.0\.0\.1:8123\/docs /)
    expect(b).toMatch(/gRPC API +127\.0\.0\.1:50999 /)
    expect(b).toContain('  X-API-KEY: tk_abc\n')
    expect(b).toContain(
      "Its webhooks are signed (Standard Webhooks) with the key's own secret, also shown only this once:\n\n  whsec_c2VjcmV0\n",
    )
    expect(b).toContain('export TAILOR_URL=http://127.0.0.1:8123 TAILOR_API_KEY=tk_abc')
    expect(b).not.toContain('localhost')
    expect(b.trim().split('\n')[0]).toMatch(/^─+$/)
    expect(b.trim().split('\n').at(-1)).toMatch(/^─+$/)
  })

  it('distributed, no key yet: the hint names --nats-url; PUBLIC_BASE_URL is what clients use', () => {
    const b = formatBanner({
      mode: 'distributed',
      http: { address: '0.0.0.0', port: 8080 },
      apiGrpc: { address: '0.0.0.0', port: 50052 },
      publicBaseUrl: 'https://tailor.example.com',
      key: {
        kind: 'store',
        count: 0,
        where: 'the KV bucket api_keys of nats://127.0.0.1:4222',
        createCommand: 'pnpm tailor keys create --name NAME --nats-url nats://127.0.0.1:4222',
      },
      interfaces,
    })
    expect(b).toContain('(distributed mode)')
    expect(b).toContain('http://10.1.2.3:8080   (from other machines)')
    expect(b).toContain(
      'No API key yet (the KV bucket api_keys of nats://127.0.0.1:4222). Create one with:\n\n  pnpm tailor keys create --name NAME --nats-url nats://127.0.0.1:4222\n',
    )
    expect(b).toMatch(/Playground +https:\/\/tailor\.example\.com\/\n/)
    expect(b).toContain('export TAILOR_URL=https://tailor.example.com TAILOR_API_KEY=<your key>')
    expect(b).toMatch(/gRPC API +127\.0\.0\.1:50052 /)
  })
})
