import { generateApiKey, type KeyStore, newKeyId } from '@tailor/gateway'

export const DEFAULT_KEY_NAME = 'default'

/**
 * The embedded mode's first start: when the key store holds no key at all (revoked ones count:
 * revoking every key does not bring a new default back), a key named "default" is created and
 * returned once, to be printed; only its hash is stored. A key an earlier version generated
 * (`api-key.sha256`) is imported under that name instead, so it keeps working.
 */
export async function ensureDefaultKey(
  keys: KeyStore,
  legacyHash: string | null,
  now = new Date(),
): Promise<string | null> {
  if ((await keys.list()).length > 0) return null
  if (legacyHash !== null) {
    await keys.create({
      id: newKeyId(),
      name: DEFAULT_KEY_NAME,
      sha256: legacyHash,
      createdAt: now.toISOString(),
    })
    return null
  }
  const { key, record } = generateApiKey({ name: DEFAULT_KEY_NAME, now })
  await keys.create(record)
  return key
}
