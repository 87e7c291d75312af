/**
 * @tailor/gateway's public surface (package.json `exports` "."): what a composition root outside
 * the package (services/embedded) may use. Key administration without the HTTP server is
 * `@tailor/gateway/keys` (keys.ts). `@tailor/gateway/src/*` is for the repository's tests only
 * (lint refuses it in services/embedded and cli).
 */
export { start } from './start.ts'
export { loadConfig, MIN_API_KEY_LENGTH, type Config } from './config.ts'
export { formatBanner, logsSettled, stdoutLogDestination } from './banner.ts'
export { generateApiKey, newKeyId, sha256Hex } from './access/api-key.ts'
export type { KeyStore } from './access/key-store.ts'
export { openFileKeyStore } from './access/key-store-files.ts'
export { openFileIdempotencyStore } from './idempotency/idempotency-store-files.ts'
export { openFileJobStore } from './jobs/job-store-files.ts'
export { createFileResultReader } from './results/result-reader-files.ts'
export { startFileResultSweeper } from './results/result-sweeper-files.ts'
export { openFileUploadStore } from './uploads/upload-store-files.ts'
export { openFileWebhookQueue } from './webhooks/webhook-queue-files.ts'
export { generateWebhookSecret, parseWebhookSecret } from './webhooks/standard-webhooks.ts'
