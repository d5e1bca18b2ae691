import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { isRetryable } from './kms-errors';
import type { DataKeyService } from '../didcomm/key-vault';
import { KeyServiceUnavailableError } from '../keys/port';
import { dataKeyContext, type DataKeyPurpose } from '../service/access';

/**
 * A wallet's data key for one purpose with KMS envelope encryption: GenerateDataKey (AES_256) and
 * Decrypt under the stack's DIDComm key, with encryption context {wallet_id, purpose}. The client
 * comes from a getter: the one of the wallet session under way, whose role may use the key only with
 * its own wallet's context (`kms:EncryptionContext:wallet_id` = the session's `wallet_id` tag) and a
 * purpose its function declares (`kms:EncryptionContext:purpose`).
 */
export class KmsDataKeys implements DataKeyService {
  private readonly client: () => KMSClient;

  constructor(
    kms: KMSClient | (() => KMSClient),
    private readonly keyId: string,
  ) {
    this.client = typeof kms === 'function' ? kms : () => kms;
  }

  async generate(walletId: string, purpose: DataKeyPurpose) {
    const out = await this.call(() => this.client().send(new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: dataKeyContext(walletId, purpose) })));
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
    return { plaintext: out.Plaintext, sealed: out.CiphertextBlob };
  }

  async decrypt(walletId: string, purpose: DataKeyPurpose, sealed: Uint8Array) {
    // KeyId pinned: a blob sealed under another key is refused rather than decrypted with it.
    const out = await this.call(() => this.client().send(new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: sealed, EncryptionContext: dataKeyContext(walletId, purpose) })));
    if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
    return out.Plaintext;
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isRetryable(err)) throw new KeyServiceUnavailableError();
      throw err;
    }
  }
}
