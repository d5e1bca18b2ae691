import { AppError } from '../http/errors';
import type { TenantScope } from '../store/keys';

/** JOSE algorithms of the issuer keys: EdDSA on Ed25519, ES256 on P-256. */
export type KeyAlg = 'EdDSA' | 'ES256';
export const KEY_ALGS: readonly KeyAlg[] = ['EdDSA', 'ES256'];

/** The KMS key spec and signing algorithm of each: the adapter creates and signs with these, the stack allows only these. */
export const KMS_KEY_SPECS: Readonly<Record<KeyAlg, { readonly keySpec: 'ECC_NIST_EDWARDS25519' | 'ECC_NIST_P256'; readonly signing: 'ED25519_SHA_512' | 'ECDSA_SHA_256' }>> = {
  EdDSA: { keySpec: 'ECC_NIST_EDWARDS25519', signing: 'ED25519_SHA_512' },
  ES256: { keySpec: 'ECC_NIST_P256', signing: 'ECDSA_SHA_256' },
};

export interface PublicJwk {
  readonly kty: 'OKP' | 'EC';
  readonly crv: 'Ed25519' | 'P-256';
  readonly x: string;
  readonly y?: string;
}

export interface CreatedKey {
  /** Where the private key lives: a KMS key ARN, or a local key reference. */
  readonly ref: string;
  readonly publicJwk: PublicJwk;
}

/**
 * The key-manager port. Private keys never leave it: callers get references, public keys and
 * signatures. Signatures are in JOSE form (EdDSA: 64 bytes; ES256: r‖s, 64 bytes).
 */
export interface KeyManager {
  create(scope: TenantScope, alg: KeyAlg): Promise<CreatedKey>;
  sign(scope: TenantScope, ref: string, alg: KeyAlg, data: Uint8Array): Promise<Uint8Array>;
  publicJwk(scope: TenantScope, ref: string, alg: KeyAlg): Promise<PublicJwk>;
  /** The key stops signing now and is destroyed after {@link KEY_DELETION_WINDOW_DAYS} (an operator can still cancel). */
  scheduleDeletion(scope: TenantScope, ref: string): Promise<{ deletion_date: string }>;
}

/** KMS's longest waiting period before a scheduled key is destroyed: the time an operator has to undo a mistake. */
export const KEY_DELETION_WINDOW_DAYS = 30;

/** The key service is throttling or failing: retryable, shown as a 503. */
export class KeyServiceUnavailableError extends AppError {
  constructor(message = 'The key service is temporarily unavailable; retry shortly') {
    super(503, 'key_service_unavailable', message);
  }
}

/** The key exists but is disabled or pending deletion: it cannot sign until an operator restores it. */
export class KeyDisabledError extends AppError {
  constructor() {
    super(409, 'issuer_key_disabled', 'The key of this identity is disabled or pending deletion; an operator must re-enable it');
  }
}

/** The key service refuses new keys (an account quota): not retryable by the caller, an operator's job. */
export class KeyQuotaExceededError extends AppError {
  constructor() {
    super(500, 'key_quota_exceeded', 'The service cannot create more keys at the moment; the operator has been alerted');
  }
}

/** KMS signs at most 4096 bytes of raw message; pure EdDSA cannot be pre-hashed. */
export class MessageTooLargeError extends AppError {
  constructor(limit: number) {
    super(422, 'message_too_large_to_sign', `EdDSA signing input exceeds ${limit} bytes (the KMS limit for raw messages)`);
  }
}
