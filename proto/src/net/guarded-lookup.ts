import type http from 'node:http'
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupFunction, Socket } from 'node:net'
import { classifyAddress, isAllowedAddress } from './address-policy.ts'

/**
 * The SSRF guard shared by every outbound request (safe-fetch: input URLs; safe-post: webhooks),
 * so a fix reaches both: the DNS lookup the socket uses, and the check of the address actually
 * connected to. Each caller words its own refusal (its error code and sentence); `detail` says
 * what was refused, for the error's cause.
 */

export interface ResolvedAddress {
  address: string
  family: number
}
/** Resolves a host name to every address (the default is the system resolver, dns.lookup all). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = async (host) =>
  dnsLookup(host, { all: true, verbatim: true })

export interface LookupGuard {
  allowLoopback: boolean
  /** The error for a refused address. */
  refuse(detail: string, cause?: unknown): Error
  /**
   * The error for a name that does not resolve (`cause`: the resolver's error, if any). Absent:
   * ENOTFOUND, or the resolver's own error.
   */
  unresolved?(hostname: string, cause?: unknown): Error
}

/**
 * The lookup that every connection uses: resolves, refuses if ANY address is not allowed (no
 * mixed public/private answers to rebind through), and hands the socket the checked address.
 */
export function guardedLookup(resolver: Resolver, guard: LookupGuard): LookupFunction {
  const unresolved = (hostname: string, cause?: unknown): Error =>
    guard.unresolved?.(hostname, cause) ??
    (cause === undefined
      ? Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' })
      : (cause as Error))
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (all) => {
        const bad = all.find(
          (a) => !isAllowedAddress(a.address, { allowLoopback: guard.allowLoopback }),
        )
        if (all.length === 0) {
          callback(unresolved(hostname), '', 0)
        } else if (bad !== undefined) {
          callback(
            guard.refuse(
              `${hostname} resolves to ${bad.address}, a ${classifyAddress(bad.address)} address`,
            ),
            '',
            0,
          )
        } else if (options.all === true) {
          ;(callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, all)
        } else {
          const first = all[0]!
          callback(null, first.address, first.family)
        }
      },
      (err: unknown) => callback(unresolved(hostname, err), '', 0),
    )
  }
}

/**
 * Checks the address the request's socket actually connected to (the final word, whatever the
 * resolver said) and destroys the request with `guard.refuse` when it is not allowed.
 * `onConnected` runs first, once the socket is connected.
 */
export function guardConnectedAddress(
  req: http.ClientRequest,
  guard: LookupGuard,
  onConnected?: () => void,
): void {
  req.on('socket', (socket: Socket) => {
    const check = (): void => {
      onConnected?.()
      const remote = socket.remoteAddress
      if (
        remote === undefined ||
        !isAllowedAddress(remote, { allowLoopback: guard.allowLoopback })
      ) {
        req.destroy(
          guard.refuse(
            `connected to ${remote ?? 'an unknown address'}${remote === undefined ? '' : `, a ${classifyAddress(remote)} address`}`,
          ),
        )
      }
    }
    if (socket.connecting) socket.once('connect', check)
    else check()
  })
}
