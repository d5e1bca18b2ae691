// A credential definition's private key (anoncreds-rs `CredentialDefinitionPrivate`: the primary
// key's p', q'), sealed with AES-256-GCM under the wallet's data key — the same KMS envelope as the
// DIDComm connection keys (lib/didcomm/key-vault.ts): KMS GenerateDataKey/Decrypt with encryption
// context {wallet_id}, which a wallet's session may use for its own wallet only. The clear key exists
// only in the worker's memory; the item holds IV ‖ tag ‖ ciphertext, bound (AAD) to the wallet and
// the definition, so a sealed key copied to another definition or wallet does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { WalletDataKeys } from '../didcomm/key-vault';
import type { PrimaryPrivateKey } from './cl';

const SEAL_VERSION = 1;

function aad(walletId: string, definitionId: string): Buffer {
  return Buffer.from(`anoncreds-cred-def-private/v${SEAL_VERSION}|${walletId}|${definitionId}`);
}

/** anoncreds-rs' JSON of a credential definition's private part (no revocation key yet). */
export function privateKeyJson(sk: PrimaryPrivateKey): string {
  return JSON.stringify({ value: { p_key: { p: sk.p.toString(), q: sk.q.toString() }, r_key: null } });
}

export class CredDefKeySealer {
  constructor(private readonly dataKeys: WalletDataKeys) {}

  /** The sealed private key (base64), made with the wallet's data key (created on first use). */
  async seal(walletId: string, definitionId: string, sk: PrimaryPrivateKey): Promise<{ v: number; sealed: string }> {
    const key = await this.dataKeys.get(walletId, true);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(walletId, definitionId));
    const clear = Buffer.from(privateKeyJson(sk), 'utf8');
    const body = Buffer.concat([cipher.update(clear), cipher.final()]);
    clear.fill(0);
    return { v: SEAL_VERSION, sealed: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') };
  }

  /** The private key, in memory only (for signing, later); throws when the item was altered or moved. */
  async open(walletId: string, definitionId: string, sealed: string): Promise<PrimaryPrivateKey> {
    const key = await this.dataKeys.get(walletId, false);
    if (!key) throw new Error('a sealed credential definition key exists but its wallet has no data key');
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(aad(walletId, definitionId));
    decipher.setAuthTag(raw.subarray(12, 28));
    const clear = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    const parsed = JSON.parse(clear.toString('utf8')) as { value: { p_key: { p: string; q: string } } };
    clear.fill(0);
    return { p: BigInt(parsed.value.p_key.p), q: BigInt(parsed.value.p_key.q) };
  }
}
