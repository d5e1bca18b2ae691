import { GenerateMacCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretDeriver, SecretPurpose } from '../secrets/port';

/**
 * KMS adapter: the secret for a purpose is GenerateMac(HMAC_SHA_256) of the purpose label under a
 * KMS HMAC key. Deterministic, so every function derives the same secret, and the HMAC key itself
 * never leaves KMS. Wrap in cachingDeriver: one KMS call per purpose per cold start.
 */
export class KmsSecretDeriver implements SecretDeriver {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async derive(purpose: SecretPurpose): Promise<Uint8Array> {
    const out = await this.kms.send(
      new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: new TextEncoder().encode(purpose) }),
    );
    if (!out.Mac || out.Mac.length !== 32) throw new Error('KMS GenerateMac returned no 32-byte MAC');
    return out.Mac;
  }
}
