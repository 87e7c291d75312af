/**
 * How a service authenticates to NATS (user and password from a Secret) and, optionally, verifies
 * it over TLS (a CA bundle; a client certificate and key for mutual TLS). Plain options that
 * @nats-io/transport-node's `connect()` takes; the services own the connect call.
 */
export interface NatsClientEnv {
  NATS_USER?: string | undefined
  NATS_PASSWORD?: string | undefined
  NATS_TLS_CA_FILE?: string | undefined
  NATS_TLS_CERT_FILE?: string | undefined
  NATS_TLS_KEY_FILE?: string | undefined
}

export interface NatsClientOptions {
  user?: string
  pass?: string
  tls?: { caFile?: string; certFile?: string; keyFile?: string }
}

/** Problems with a NATS client configuration (pairs given half), as [variable, message]. */
export function natsClientEnvProblems(env: NatsClientEnv): [keyof NatsClientEnv, string][] {
  const out: [keyof NatsClientEnv, string][] = []
  if ((env.NATS_USER === undefined) !== (env.NATS_PASSWORD === undefined)) {
    out.push([
      env.NATS_USER === undefined ? 'NATS_USER' : 'NATS_PASSWORD',
      'NATS_USER and NATS_PASSWORD go together',
    ])
  }
  if ((env.NATS_TLS_CERT_FILE === undefined) !== (env.NATS_TLS_KEY_FILE === undefined)) {
    out.push([
      env.NATS_TLS_CERT_FILE === undefined ? 'NATS_TLS_CERT_FILE' : 'NATS_TLS_KEY_FILE',
      'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together (mutual TLS)',
    ])
  }
  return out
}

export function natsClientOptions(env: NatsClientEnv): NatsClientOptions {
  const tls = {
    ...(env.NATS_TLS_CA_FILE !== undefined ? { caFile: env.NATS_TLS_CA_FILE } : {}),
    ...(env.NATS_TLS_CERT_FILE !== undefined ? { certFile: env.NATS_TLS_CERT_FILE } : {}),
    ...(env.NATS_TLS_KEY_FILE !== undefined ? { keyFile: env.NATS_TLS_KEY_FILE } : {}),
  }
  return {
    ...(env.NATS_USER !== undefined && env.NATS_PASSWORD !== undefined
      ? { user: env.NATS_USER, pass: env.NATS_PASSWORD }
      : {}),
    ...(Object.keys(tls).length > 0 ? { tls } : {}),
  }
}

/** The NATS connection status events the services follow (a structural view of `nc.status()`). */
export interface NatsStatusEvent {
  type: string
  server?: string
}

/**
 * Follows a NATS connection's status events: `setConnected(false)` on a disconnect and `true` on
 * a reconnect, each logged (warn / info). Ends when the connection closes. One loop for both
 * services' readiness.
 */
export function followNatsStatus(
  statuses: AsyncIterable<NatsStatusEvent>,
  logger: { info(o: object, msg: string): void; warn(o: object, msg: string): void },
  setConnected: (connected: boolean) => void,
): void {
  void (async () => {
    for await (const st of statuses) {
      if (st.type === 'disconnect' || st.type === 'reconnect') {
        const connected = st.type === 'reconnect'
        setConnected(connected)
        logger[connected ? 'info' : 'warn'](
          { server: st.server },
          connected ? 'NATS reconnected' : 'NATS disconnected',
        )
      }
    }
  })()
}
