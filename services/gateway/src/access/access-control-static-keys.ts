import { createHash, timingSafeEqual } from 'node:crypto'
import type { AccessControl, Principal } from './access-control.ts'

/**
 * Adapter: the configured keys (API_KEYS / TAILOR_API_KEY / API_KEY_SHA256, known by their sha256)
 * with no rate limit. The key id is `sha256:` + the first 32 hex digits of the key's hash, as the
 * upload owner fallback (uploads/caller-key-id.ts) records it, so an upload made over HTTP can be
 * used over gRPC with the same key.
 */
export function staticKeyAccessControl(hashes: readonly Buffer[]): AccessControl {
  return {
    async authenticate(presentedKey: string): Promise<Principal | null> {
      const h = createHash('sha256').update(presentedKey, 'utf8').digest()
      let ok = false
      for (const want of hashes) ok = timingSafeEqual(h, want) || ok
      if (!ok) return null
      const keyId = `sha256:${h.toString('hex').slice(0, 32)}`
      return { keyId, name: keyId, rateLimitPerS: Number.POSITIVE_INFINITY, maxConcurrentJobs: Number.POSITIVE_INFINITY }
    },
    async takeRequest() {
      return { allowed: true, limit: Number.POSITIVE_INFINITY, remaining: Number.POSITIVE_INFINITY, resetS: 0, retryAfterS: 0 }
    },
    async close() {},
  }
}
