import { createHmac } from 'node:crypto';
import type { SecretDeriver, SecretPurpose } from './port';

/** Local adapter: HMAC-SHA256(master key, purpose), the same construction KMS GenerateMac performs. */
export class LocalSecretDeriver implements SecretDeriver {
  private readonly master: Buffer;

  constructor(masterKeyHex: string) {
    this.master = Buffer.from(masterKeyHex, 'hex');
    if (this.master.length !== 32) throw new Error('local master key must be 32 bytes');
  }

  async derive(purpose: SecretPurpose): Promise<Uint8Array> {
    return createHmac('sha256', this.master).update(purpose).digest();
  }
}
