/** What an Idempotency-Key is bound to: the job it created and the request body that created it. */
export interface IdempotencyClaim {
  jobId: string
  /** sha256 of the canonical request (kind + validated body). */
  fingerprint: string
  createdAt: string
}

export interface StoredClaim extends IdempotencyClaim {
  /** Store revision, for compare-and-set in `replace`. */
  revision: number
}

/**
 * Port: Idempotency-Key claims, kept for IDEMPOTENCY_TTL_S (JetStream KV bucket `idempotency`
 * distributed; files in the data dir embedded). Keys are opaque digests of (API key id, header).
 */
export interface IdempotencyStore {
  /**
   * Stores `claim` under `key` unless a live claim is there. Returns null when this call stored
   * it, else the claim found. Atomic across gateway replicas: of two concurrent calls one wins.
   */
  claim(key: string, claim: IdempotencyClaim): Promise<StoredClaim | null>
  /** Replaces `found` by `next` only if it is unchanged since it was read; false otherwise. */
  replace(key: string, found: StoredClaim, next: IdempotencyClaim): Promise<boolean>
  /** Removes the claim if it still names `jobId` (its submission failed, so a retry may try again). */
  release(key: string, jobId: string): Promise<void>
  close(): Promise<void>
}
