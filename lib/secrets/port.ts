import { memo } from '../memo';

/**
 * Derives purpose-bound secrets (API-key HMAC, subwallet-token signing) from a master key that never
 * leaves its home: a KMS HMAC key in AWS, a local key-encryption key for `npm start`. The derived
 * secret exists only in the memory of a running function; nothing stores it.
 */
export interface SecretDeriver {
  derive(purpose: SecretPurpose): Promise<Uint8Array>;
}

/**
 * Versioned so a purpose's secret can be rotated by deriving a new version. Webhook signing secrets
 * are per wallet and generation: `webhook-signing/v1/<wallet_id>/<generation>`.
 */
export type SecretPurpose =
  | 'api-key-mac/v1'
  | 'subwallet-token/v1'
  | 'local-key-encryption/v1'
  | `webhook-signing/v1/${string}/${number}`
  /** The root of the wallets' OID4VCI issuer secrets (access-token keys, c_nonce MACs; HKDF per wallet). */
  | 'oid4vci/v1';

/**
 * Caches derivations (one KMS call per purpose per cold start); failures are not cached. Bounded,
 * oldest first out, because per-wallet purposes grow with the number of tenants a function serves.
 */
export function cachingDeriver(inner: SecretDeriver, maxEntries = 2000): SecretDeriver {
  return { derive: memo((purpose: SecretPurpose) => inner.derive(purpose), maxEntries) };
}
