/**
 * Test support (`@tailor/proto/net/testing`): a connection tripwire for tests of the outbound-fetch
 * guard. Never imported by product code.
 *
 * The test machine may send traffic only to loopback. Tests of private, link-local and metadata
 * destinations therefore answer through a resolver stub and must be refused before any connection
 * is attempted. `watchConnections()` records every connection attempt of every client socket in
 * the process (Node's `net.client.socket` diagnostics channel and the socket's `connectionAttempt`
 * event) and, as a fail-safe should the guard ever be broken, destroys any socket whose resolved
 * address is not loopback before it connects (recorded in `blocked`, which a test asserts empty).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import { BlockList, isIPv4 } from 'node:net'

export interface ConnectionLog {
  /** Every address a client socket tried to connect to, in order. */
  readonly attempts: string[]
  /** Non-loopback addresses a socket was about to connect to (the tripwire destroyed it first). */
  readonly blocked: string[]
  /** Forgets what was recorded so far. */
  clear(): void
  stop(): void
}

const CHANNEL = 'net.client.socket'

/**
 * Addresses this host itself answers on: 127/8, ::1 and 127/8 mapped into IPv6. Not the policy's
 * wider 'loopback' class (which also counts 127/8 inside NAT64 or 6to4 addresses, going elsewhere).
 */
const HOST_LOOPBACK = new BlockList()
HOST_LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
HOST_LOOPBACK.addAddress('::1', 'ipv6')
const isHostLoopback = (address: string): boolean => {
  const a = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  return HOST_LOOPBACK.check(a, isIPv4(a) ? 'ipv4' : 'ipv6')
}

export function watchConnections(): ConnectionLog {
  const attempts: string[] = []
  const blocked: string[] = []
  const trip = (socket: Socket, address: string): boolean => {
    if (isHostLoopback(address)) return false
    blocked.push(address)
    socket.destroy()
    return true
  }
  const onSocket = (message: unknown): void => {
    const socket = (message as { socket: Socket }).socket
    socket.on('lookup', (err: Error | null, address: string | undefined) => {
      if (err === null && typeof address === 'string') trip(socket, address)
    })
    socket.on('connectionAttempt', (address: string) => {
      attempts.push(address)
      if (trip(socket, address)) {
        throw new Error(`tripwire: a connection to ${address} was attempted`)
      }
    })
  }
  subscribe(CHANNEL, onSocket)
  return {
    attempts,
    blocked,
    clear() {
      attempts.length = 0
      blocked.length = 0
    },
    stop: () => void unsubscribe(CHANNEL, onSocket),
  }
}

/** The name of an input-matrix case's test (every layer names its tests so; docs/input-matrix.md too). */
export const matrixTitle = (c: { id: string; case: string; expected: string }): string =>
  `${c.id}: ${c.case} → ${c.expected}`
