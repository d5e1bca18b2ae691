// A credential definition's private key (anoncreds-rs `CredentialDefinitionPrivate`: the primary
// key's p', q'), sealed with AES-256-GCM under the wallet's data key — the same KMS envelope as the
// DIDComm connection keys (lib/didcomm/key-vault.ts): KMS GenerateDataKey/Decrypt with encryption
// context {wallet_id}, which a wallet's session may use for its own wallet only. The clear key exists
// only in the worker's memory; the item holds IV ‖ tag ‖ ciphertext, bound (AAD) to the wallet and
// the definition, so a sealed key copied to another definition or wallet does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { WalletDataKeys } from '../didcomm/key-vault';
import type { PrimaryPrivateKey } from './cl';
import { parseRevocationPrivateKey, revocationPrivateKeyToJson, type RevocationPrivateKey } from './revocation';

const SEAL_VERSION = 1;

/**
 * What a sealed item holds: a definition's private key, or a revocation registry's γ. The purpose is
 * in the AAD, so one kind of sealed item cannot be opened as the other.
 */
export type SealPurpose = 'cred-def-private' | 'rev-reg-private';

function aad(walletId: string, objectId: string, purpose: SealPurpose = 'cred-def-private'): Buffer {
  return Buffer.from(`anoncreds-${purpose}/v${SEAL_VERSION}|${walletId}|${objectId}`);
}

/** anoncreds-rs' JSON of a credential definition's private part (`r_key` set when revocable). */
export function privateKeyJson(sk: PrimaryPrivateKey, rKey?: RevocationPrivateKey): string {
  return JSON.stringify({ value: { p_key: { p: sk.p.toString(), q: sk.q.toString() }, r_key: rKey ? revocationPrivateKeyToJson(rKey) : null } });
}

export class CredDefKeySealer {
  constructor(private readonly dataKeys: WalletDataKeys) {}

  /** The sealed private key (base64), made with the wallet's data key (created on first use). */
  async seal(walletId: string, definitionId: string, sk: PrimaryPrivateKey, rKey?: RevocationPrivateKey): Promise<{ v: number; sealed: string }> {
    return this.sealJson(walletId, definitionId, 'cred-def-private', privateKeyJson(sk, rKey));
  }

  /** Seals a private JSON object (anoncreds-rs' shape) bound to the wallet, the object and the purpose. */
  async sealJson(walletId: string, objectId: string, purpose: SealPurpose, json: string): Promise<{ v: number; sealed: string }> {
    const key = await this.dataKeys.get(walletId, true);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(walletId, objectId, purpose));
    const clear = Buffer.from(json, 'utf8');
    const body = Buffer.concat([cipher.update(clear), cipher.final()]);
    clear.fill(0);
    return { v: SEAL_VERSION, sealed: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') };
  }

  /** The private key, in memory only (for signing, later); throws when the item was altered or moved. */
  async open(walletId: string, definitionId: string, sealed: string): Promise<PrimaryPrivateKey> {
    const parsed = (await this.openJson(walletId, definitionId, 'cred-def-private', sealed)) as { value: { p_key: { p: string; q: string } } };
    return { p: BigInt(parsed.value.p_key.p), q: BigInt(parsed.value.p_key.q) };
  }

  /** The definition's revocation private key (`r_key`), or undefined when it is not revocable. */
  async openRevocationKey(walletId: string, definitionId: string, sealed: string): Promise<RevocationPrivateKey | undefined> {
    const parsed = (await this.openJson(walletId, definitionId, 'cred-def-private', sealed)) as { value: { r_key: unknown } };
    return parsed.value.r_key === null ? undefined : parseRevocationPrivateKey(parsed.value.r_key);
  }

  /** A sealed JSON object, in memory only; throws when the item was altered, moved, or sealed for another purpose. */
  async openJson(walletId: string, objectId: string, purpose: SealPurpose, sealed: string): Promise<unknown> {
    const key = await this.dataKeys.get(walletId, false);
    if (!key) throw new Error('a sealed AnonCreds key exists but its wallet has no data key');
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(aad(walletId, objectId, purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    const clear = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    const parsed = JSON.parse(clear.toString('utf8')) as unknown;
    clear.fill(0);
    return parsed;
  }
}
