import { BlockList, isIP } from 'node:net'

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved'

function list(v4: string[], v6: string[]): BlockList {
  const b = new BlockList()
  for (const c of v4) {
    const [net = '', len = '32'] = c.split('/')
    b.addSubnet(net, Number(len), 'ipv4')
  }
  for (const c of v6) {
    const [net = '', len = '128'] = c.split('/')
    b.addSubnet(net, Number(len), 'ipv6')
  }
  return b
}

const LOOPBACK = list(['127.0.0.0/8'], ['::1/128'])
// Link-local includes the cloud metadata address 169.254.169.254 (and fd00:ec2::254 is in fc00::/7).
const LINK_LOCAL = list(['169.254.0.0/16'], ['fe80::/10'])
const PRIVATE = list(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ['fc00::/7'])
const RESERVED = list(
  ['0.0.0.0/8', '192.0.0.0/24', '192.0.2.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'],
  ['::/128', '100::/64', '2001:db8::/32', 'ff00::/8', '2001::/23', 'fec0::/10'],
)

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) or IPv4-compatible IPv6 address. */
function embeddedV4(addr: string): string | null {
  const m = /^(?:::ffff:(?:0:)?|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/i.exec(addr)
  if (m?.[1]) return m[1]
  const h = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(addr)
  if (h?.[1] && h[2]) {
    const hi = parseInt(h[1], 16)
    const lo = parseInt(h[2], 16)
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  }
  return null
}

/** Classifies a literal IP address (v4 or v6, any zone stripped). Non-IPs are 'reserved'. */
export function classifyAddress(address: string): AddressClass {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase()
  const family = isIP(a)
  if (family === 0) return 'reserved'
  if (family === 6) {
    const v4 = embeddedV4(a)
    if (v4 !== null) return classifyAddress(v4)
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (LOOPBACK.check(a, type)) return 'loopback'
  if (LINK_LOCAL.check(a, type)) return 'link-local'
  if (PRIVATE.check(a, type)) return 'private'
  if (RESERVED.check(a, type)) return 'reserved'
  return 'public'
}

/** Whether a connection to `address` is allowed: public always; loopback only when allowed. */
export function isAllowedAddress(address: string, opts: { allowLoopback: boolean }): boolean {
  const c = classifyAddress(address)
  return c === 'public' || (c === 'loopback' && opts.allowLoopback)
}
