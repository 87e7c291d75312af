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
const PRIVATE = list(
  ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'],
  ['fc00::/7'],
)
const RESERVED = list(
  [
    '0.0.0.0/8',
    '192.0.0.0/24',
    '192.0.2.0/24',
    '198.18.0.0/15',
    '198.51.100.0/24',
    '203.0.113.0/24',
    '224.0.0.0/4',
    '240.0.0.0/4',
  ],
  ['::/128', '100::/64', '2001:db8::/32', 'ff00::/8', '2001::/23', 'fec0::/10'],
)

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part allowed), or null. */
function ipv6Groups(addr: string): number[] | null {
  let a = addr
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a)
  if (dotted) {
    const o = dotted.slice(2, 6).map(Number)
    if (o.some((x) => x > 255)) return null
    a = `${dotted[1]}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`
  }
  const halves = a.split('::')
  if (halves.length > 2) return null
  const part = (s: string): string[] => (s === '' ? [] : s.split(':'))
  const head = part(halves[0]!)
  const tail = halves.length === 2 ? part(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null
  const groups = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...tail]
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null
  return groups.map((g) => parseInt(g, 16))
}

const v4 = (a: number, b: number, c: number, d: number): string => `${a}.${b}.${c}.${d}`
const hi = (g: number): number => g >> 8
const lo = (g: number): number => g & 255

/**
 * Every IPv4 address an IPv6 address may carry to an IPv4 host: IPv4-mapped (::ffff:0:0/96),
 * SIIT (::ffff:0:0:0/96), IPv4-compatible (::/96, except :: and ::1), NAT64 well-known
 * (64:ff9b::/96), NAT64 local-use (64:ff9b:1::/48, RFC 8215: the operator picks the prefix
 * length, so each RFC 6052 position a /48 allows: /48, /56, /64, /96, and the strictest class
 * wins) and 6to4 (2002::/16).
 * Empty for any other address.
 */
function embeddedV4s(g: number[]): string[] {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const zeroTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0)
  const last32 = v4(hi(g6), lo(g6), hi(g7), lo(g7))
  if (zeroTo(5) && g5 === 0xffff) return [last32]
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return [last32]
  if (zeroTo(6)) return [last32]
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [last32]
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) {
    // A position holding 0.0.0.0/8 is one this network does not use (no NAT64 reaches 0.x.x.x).
    const all = [
      v4(hi(g3), lo(g3), lo(g4), hi(g5)), // /48 (bits 64–71 are the RFC 6052 u octet)
      v4(lo(g3), lo(g4), hi(g5), lo(g5)), // /56
      v4(lo(g4), hi(g5), lo(g5), hi(g6)), // /64
      last32, // /96
    ]
    const used = all.filter((x) => !x.startsWith('0.'))
    return used.length > 0 ? used : all
  }
  if (g0 === 0x2002) return [v4(hi(g1), lo(g1), hi(g2), lo(g2))]
  return []
}

/** The stricter of two classes: anything refused outright beats loopback, which beats public. */
const SEVERITY: Record<AddressClass, number> = {
  public: 0,
  loopback: 1,
  private: 2,
  'link-local': 2,
  reserved: 2,
}

/** Classifies a literal IP address (v4 or v6, any zone stripped). Non-IPs are 'reserved'. */
export function classifyAddress(address: string): AddressClass {
  const a = address
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase()
  const family = isIP(a)
  if (family === 0) return 'reserved'
  if (family === 6) {
    const g = ipv6Groups(a)
    if (g === null) return 'reserved'
    // :: and ::1 are IPv6's own (unspecified, loopback), not IPv4-compatible addresses.
    const inner = g.slice(0, 7).every((x) => x === 0) && g[7]! <= 1 ? [] : embeddedV4s(g)
    if (inner.length > 0) {
      return inner
        .map((x) => classifyAddress(x))
        .reduce((w, c) => (SEVERITY[c] > SEVERITY[w] ? c : w), 'public')
    }
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

/**
 * The one sentence for every refused destination, whatever refused it (a literal address, a name
 * that resolves to one, a name that does not resolve, the address actually connected to): a
 * tenant learns nothing about which internal names exist or what they resolve to. The logs keep
 * the cause.
 */
export const refusedDestination = (subject = 'The URL'): string =>
  `${subject} does not point at a publicly reachable host; use a publicly accessible URL.`
