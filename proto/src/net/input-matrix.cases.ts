/**
 * Input and SSRF matrix, layer 1: the outbound-fetch guard (`safeFetchToFile`, address policy).
 * Run by `input-matrix.test.ts` beside this file; the table in docs/input-matrix.md is generated
 * from this list (`pnpm docs:input-matrix`), and a test fails when the two differ.
 *
 * Safety rule: only loopback is ever connected to. `{loopback}` is the test's own server on
 * 127.0.0.1; `*.test` names answer from a resolver stub (`STUB_DNS`); every other address must be
 * refused before a connection is attempted (`connects: 'none'`), or after the loopback hop only.
 */
import type { ErrorCode } from '../errors.ts'
import { refusedDestination } from './address-policy.ts'

export interface NetCase {
  id: string
  case: string
  /** The URL fetched; `{loopback}` = `http://127.0.0.1:<port>` of the test's server. */
  input: string
  expected: ErrorCode
  /** The error message must match this. */
  message: string
  /** Which connections may be attempted: none at all, or only to the loopback server. */
  connects: 'none' | 'loopback'
  /** Fetch options other than the defaults (loopback allowed, 1 MiB cap). */
  options?: { allowLoopback?: boolean; maxBytes?: number; timeoutMs?: number }
}

/** What the resolver stub answers; anything else is ENOTFOUND. Never consulted by the system resolver. */
export const STUB_DNS: Readonly<Record<string, readonly string[]>> = {
  'private.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'ula.test': ['fd12:3456::1'],
  'rebind.test': ['127.0.0.1', '10.0.0.1'],
  'localhost.test': ['127.0.0.1'],
  'zero.test': ['0.0.0.0'],
  'sixtofour.test': ['2002:7f00:1::'],
}

export const NET_MATRIX_FILE = 'proto/src/net/input-matrix.test.ts'
export const NET_MATRIX_LAYER = '@tailor/proto/net safeFetchToFile (address check, resolver stub)'

/**
 * Every refused destination answers this one sentence, whatever refused it (issue 11 §6): the
 * message never tells a tenant what an internal name resolves to, or whether it resolves at all.
 */
const REFUSED = refusedDestination()
export const NET_CASES = [
  {
    id: 'N01',
    case: 'RFC 1918 10.0.0.0/8',
    input: 'http://10.0.0.1/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N02',
    case: 'RFC 1918 172.16.0.0/12',
    input: 'http://172.16.0.5/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N03',
    case: 'RFC 1918 192.168.0.0/16',
    input: 'http://192.168.1.1/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N04',
    case: 'carrier-grade NAT 100.64.0.0/10',
    input: 'http://100.64.0.1/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N05',
    case: 'cloud metadata 169.254.169.254',
    input: 'http://169.254.169.254/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N06',
    case: 'metadata address in hex',
    input: 'http://0xa9fea9fe/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N07',
    case: 'metadata address as IPv4-mapped IPv6',
    input: 'http://[::ffff:169.254.169.254]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N08',
    case: 'IPv4 link-local',
    input: 'http://169.254.1.1/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N09',
    case: 'IPv6 link-local',
    input: 'http://[fe80::1]/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N10',
    case: 'IPv6 unique-local (the AWS IPv6 metadata address)',
    input: 'http://[fd00:ec2::254]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N11',
    case: 'IPv6 unique-local fc00::/7',
    input: 'http://[fc00::1]/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N12',
    case: '0.0.0.0 (reaches local services on Linux), even with loopback allowed',
    input: 'http://0.0.0.0:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N13',
    case: 'DNS name resolving to a private address',
    input: 'http://private.test/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N14',
    case: 'DNS name resolving to the metadata address',
    input: 'http://metadata.test/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N15',
    case: 'DNS name resolving to an IPv6 unique-local address',
    input: 'http://ula.test/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N16',
    case: 'DNS name with an allowed and a private answer (rebinding)',
    input: 'http://rebind.test:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N17',
    case: 'DNS name resolving to loopback when loopback is not allowed',
    input: 'http://localhost.test:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
    options: { allowLoopback: false },
  },
  {
    id: 'N18',
    case: 'DNS name resolving to 0.0.0.0',
    input: 'http://zero.test:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N19',
    case: 'unresolvable DNS name (the same sentence as a refused one)',
    input: 'http://nowhere.test/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N20',
    case: 'redirect to a private address',
    input: '{loopback}/redirect?to=http://192.168.0.1/x',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'loopback',
  },
  {
    id: 'N21',
    case: 'redirect to a DNS name resolving to the metadata address',
    input: '{loopback}/redirect?to=http://metadata.test/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'loopback',
  },
  {
    id: 'N22',
    case: 'redirect to the metadata address in decimal',
    input: '{loopback}/redirect?to=http://2852039166/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'loopback',
  },
  {
    id: 'N23',
    case: 'redirect to a file: URL',
    input: '{loopback}/redirect?to=file:///etc/passwd',
    expected: 'input_fetch_failed',
    message: 'http or https',
    connects: 'loopback',
  },
  {
    id: 'N24',
    case: 'endless redirects',
    input: '{loopback}/loop',
    expected: 'input_fetch_failed',
    message: 'redirected more than 3 times',
    connects: 'loopback',
  },
  {
    id: 'N25',
    case: 'file: scheme',
    input: 'file:///etc/passwd',
    expected: 'input_fetch_failed',
    message: 'http or https, not file',
    connects: 'none',
  },
  {
    id: 'N26',
    case: 'gopher: scheme (request smuggling to a local service)',
    input: 'gopher://127.0.0.1:{port}/_GET%20/video.mp4',
    expected: 'input_fetch_failed',
    message: 'http or https, not gopher',
    connects: 'none',
  },
  {
    id: 'N27',
    case: 'ftp: scheme',
    input: 'ftp://127.0.0.1:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: 'http or https, not ftp',
    connects: 'none',
  },
  {
    id: 'N28',
    case: 'data: scheme',
    input: 'data:video/mp4;base64,AAAAIGZ0eXBpc29t',
    expected: 'input_fetch_failed',
    message: 'http or https, not data',
    connects: 'none',
  },
  {
    id: 'N29',
    case: 'credentials in the URL',
    input: 'http://user:secret@127.0.0.1:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: 'must not carry credentials',
    connects: 'none',
  },
  {
    id: 'N30',
    case: 'a user name alone in the URL',
    input: 'http://admin@127.0.0.1:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: 'must not carry credentials',
    connects: 'none',
  },
  {
    id: 'N31',
    case: 'huge Content-Length (1 PB declared)',
    input: '{loopback}/huge-length',
    expected: 'file_size_too_large',
    message: 'larger than the 1 MB limit',
    connects: 'loopback',
  },
  {
    id: 'N32',
    case: 'endless chunked body',
    input: '{loopback}/endless',
    expected: 'file_size_too_large',
    message: 'larger than the 1 MB limit',
    connects: 'loopback',
  },
  {
    id: 'N33',
    case: 'body that trickles (1 byte every 50 ms)',
    input: '{loopback}/trickle',
    expected: 'input_fetch_failed',
    message: 'took longer than 2 s',
    connects: 'loopback',
    options: { timeoutMs: 1500 },
  },
  {
    id: 'N34',
    case: 'server that never sends its headers',
    input: '{loopback}/silent',
    expected: 'input_fetch_failed',
    message: 'took longer than 2 s',
    connects: 'loopback',
    options: { timeoutMs: 1500 },
  },
  // IPv4 carried inside IPv6 is classified by that IPv4 before connecting (issue 11 §6).
  {
    id: 'N35',
    case: 'loopback as IPv4-compatible IPv6 [::127.0.0.1] (::/96), loopback not allowed',
    input: 'http://[::127.0.0.1]:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
    options: { allowLoopback: false },
  },
  {
    id: 'N36',
    case: 'metadata address as IPv4-compatible IPv6 (::/96)',
    input: 'http://[::169.254.169.254]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N37',
    case: 'metadata address in NAT64 local-use 64:ff9b:1::/48 (/96 position)',
    input: 'http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N38',
    case: 'metadata address in NAT64 local-use 64:ff9b:1::/48 (/56 position, RFC 6052)',
    input: 'http://[64:ff9b:1:a9:fe:a9fe::]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N39',
    case: 'private address in NAT64 well-known 64:ff9b::/96',
    input: 'http://[64:ff9b::10.0.0.1]/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N40',
    case: 'metadata address in 6to4 2002::/16',
    input: 'http://[2002:a9fe:a9fe::1]/latest/meta-data/',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N41',
    case: 'RFC 1918 address in 6to4 2002::/16',
    input: 'http://[2002:c0a8:101::]/v.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
  },
  {
    id: 'N42',
    case: 'DNS name resolving to 127.0.0.1 inside 6to4 (2002:7f00:1::), loopback not allowed',
    input: 'http://sixtofour.test:{port}/video.mp4',
    expected: 'input_fetch_failed',
    message: REFUSED,
    connects: 'none',
    options: { allowLoopback: false },
  },
] as const satisfies readonly NetCase[]
