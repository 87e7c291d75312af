/**
 * `@tailor/gateway/keys`: API key administration for tools (`tailor keys`), without the server.
 * Loads no NATS code unless a NATS URL is given (open-key-store.ts imports it on demand).
 */
export {
  creditsRemaining,
  generateApiKey,
  KEY_NAME_MAX,
  keyWebhookSecrets,
  MAX_JOB_CAP,
  rotateWebhookSecret,
  type ApiKeyRecord,
} from './access/api-key.ts'
export { openKeyStoreAt } from './access/open-key-store.ts'
