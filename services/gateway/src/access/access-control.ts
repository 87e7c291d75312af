/**
 * Port: who is calling and how much they may do. One implementation serves every edge (HTTP
 * middleware, the internal gRPC API), so a key, its revocation and its limits mean the same
 * everywhere. Adapters: JetStream KV (distributed: shared by every gateway replica) and the data
 * directory (embedded).
 */
export interface Principal {
  /** Stable id of the API key (never the key or its hash); job records carry it as their owner. */
  keyId: string
  name: string
  /** Requests per second allowed for this key. */
  rateLimitPerS: number
  /** Jobs of this key that may be pending or running at once. */
  maxConcurrentJobs: number
  /** Credits left (one per completed job); null: unlimited (no budget, or a key from the environment). */
  creditsRemaining: number | null
  /** The key has its own webhook signing secret (else its deliveries use WEBHOOK_SECRET, if set). */
  ownWebhookSecret?: boolean
}

/** Outcome of taking one request from a key's budget (feeds RateLimit-* / Retry-After headers). */
export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the budget is full again. */
  resetS: number
  /** Seconds to wait before retrying (0 when allowed). */
  retryAfterS: number
}

export interface AccessControl {
  /** The key's principal, or null when the key is unknown or revoked. Compares hashes in constant time. */
  authenticate(presentedKey: string): Promise<Principal | null>
  /** Takes one request token for the key; enforced across gateway replicas. */
  takeRequest(p: Principal): Promise<RateDecision>
  /** The key's budget as this replica sees it, taking nothing (RateLimit-* headers of requests that do not count). */
  peekRequest?(p: Principal): RateDecision
  close(): Promise<void>
}
