// A credential definition's private key (anoncreds-rs `CredentialDefinitionPrivate`: the primary
// key's p', q', and r_key when revocable) and a revocation registry's γ, sealed with AES-256-GCM under
// the wallet's AnonCreds data key: KMS GenerateDataKey/Decrypt under the stack's DIDComm KMS key with
// encryption context {wallet_id, purpose: anoncreds}, which a wallet's session may use for its own
// wallet only, and only in the functions that declare the anoncreds purpose (lib/service/access.ts) —
// not the DIDComm functions, whose data key is the didcomm one. The clear key exists only in the
// memory of the function that seals or opens it; the item holds IV ‖ tag ‖ ciphertext, bound (AAD) to
// the wallet, the object and the purpose, so a sealed key copied to another object or wallet does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { WalletDataKeys } from '../didcomm/key-vault';
import type { PrimaryPrivateKey } from './cl';
import { parseRevocationPrivateKey, revocationPrivateKeyToJson, type RevocationPrivateKey } from './revocation';

/**
 * 2: sealed under the wallet's AnonCreds data key. Version 1 items were sealed under the wallet's one
 * data key, now its DIDComm data key, which no AnonCreds function may open: they are refused
 * ({@link SealedKeyVersionError}); docs/anoncreds.md "The private key" says why and what to do.
 */
const SEAL_VERSION = 2;

/**
 * What a sealed item holds: a definition's private key, or a revocation registry's γ. The purpose is
 * in the AAD, so one kind of sealed item cannot be opened as the other.
 */
export type SealPurpose = 'cred-def-private' | 'rev-reg-private';

/** A stored sealed item: its seal version `v` and `sealed`, the base64 IV ‖ tag ‖ ciphertext. */
export type SealedItem = Readonly<Record<string, unknown>>;

/** A sealed item of a version this code does not open (sealed under the wallet's DIDComm data key). */
export class SealedKeyVersionError extends Error {
  constructor(
    readonly objectId: string,
    readonly version: unknown,
  ) {
    super(
      `the private key of AnonCreds object ${objectId} was sealed by an earlier version of the service (seal v${String(version)}, under the wallet's DIDComm data key), which AnonCreds functions may not open: create the credential definition again`,
    );
    this.name = 'SealedKeyVersionError';
  }
}

function aad(walletId: string, objectId: string, purpose: SealPurpose): Buffer {
  return Buffer.from(`anoncreds-${purpose}/v${SEAL_VERSION}|${walletId}|${objectId}`);
}

/** anoncreds-rs' JSON of a credential definition's private part (`r_key` set when revocable). */
export function privateKeyJson(sk: PrimaryPrivateKey, rKey?: RevocationPrivateKey): string {
  return JSON.stringify({ value: { p_key: { p: sk.p.toString(), q: sk.q.toString() }, r_key: rKey ? revocationPrivateKeyToJson(rKey) : null } });
}

export class CredDefKeySealer {
  constructor(private readonly dataKeys: WalletDataKeys) {
    // The DIDComm data key would work as a cipher key; refusing it keeps the AnonCreds keys out of DIDComm functions' reach.
    if (dataKeys.purpose !== 'anoncreds') throw new Error(`AnonCreds private keys are sealed with the anoncreds data key, not the ${dataKeys.purpose} one`);
  }

  /** The sealed private key (base64), made with the wallet's AnonCreds data key (created on first use). */
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

  /** The private key, in memory only (for signing); throws when the item was altered or moved. */
  async open(walletId: string, definitionId: string, item: SealedItem): Promise<PrimaryPrivateKey> {
    const parsed = (await this.openJson(walletId, definitionId, 'cred-def-private', item)) as { value: { p_key: { p: string; q: string } } };
    return { p: BigInt(parsed.value.p_key.p), q: BigInt(parsed.value.p_key.q) };
  }

  /** The definition's revocation private key (`r_key`), or undefined when it is not revocable. */
  async openRevocationKey(walletId: string, definitionId: string, item: SealedItem): Promise<RevocationPrivateKey | undefined> {
    const parsed = (await this.openJson(walletId, definitionId, 'cred-def-private', item)) as { value: { r_key: unknown } };
    return parsed.value.r_key === null ? undefined : parseRevocationPrivateKey(parsed.value.r_key);
  }

  /**
   * A sealed JSON object, in memory only; throws {@link SealedKeyVersionError} for an item of another
   * seal version, and an error when the item was altered, moved, or sealed for another purpose.
   */
  async openJson(walletId: string, objectId: string, purpose: SealPurpose, item: SealedItem): Promise<unknown> {
    if (item.v !== SEAL_VERSION) throw new SealedKeyVersionError(objectId, item.v);
    if (typeof item.sealed !== 'string') throw new Error(`the sealed item of AnonCreds object ${objectId} holds no ciphertext`);
    const key = await this.dataKeys.get(walletId, false);
    if (!key) throw new Error('a sealed AnonCreds key exists but its wallet has no AnonCreds data key');
    const raw = Buffer.from(item.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(aad(walletId, objectId, purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    const clear = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    const parsed = JSON.parse(clear.toString('utf8')) as unknown;
    clear.fill(0);
    return parsed;
  }
}
