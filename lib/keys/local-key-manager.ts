import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { SecretDeriver } from '../secrets/port';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { keyObjectToJwk } from './jwk';
import { KEY_DELETION_WINDOW_DAYS, KeyDisabledError, type CreatedKey, type KeyAlg, type KeyManager, type PublicJwk } from './port';

const REF = /^local:[0-9a-f-]{36}$/;

/**
 * Local adapter (npm start, tests): software keys whose PKCS#8 private part is stored only
 * encrypted, with AES-256-GCM under a key-encryption key derived from the local master key, and
 * bound to its wallet and reference (AAD), so a ciphertext moved to another item does not decrypt.
 */
export class LocalKeyManager implements KeyManager {
  private readonly cache = new Map<string, KeyObject>();

  constructor(
    private readonly store: ItemStore,
    private readonly secrets: SecretDeriver,
  ) {}

  private async kek(): Promise<Buffer> {
    return Buffer.from(await this.secrets.derive('local-key-encryption/v1'));
  }

  private aad(scope: TenantScope, ref: string): Buffer {
    return Buffer.from(`${scope.walletId}|${ref}`);
  }

  async create(scope: TenantScope, alg: KeyAlg): Promise<CreatedKey> {
    const { privateKey, publicKey } = alg === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ref = `local:${randomUUID()}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.kek(), iv);
    cipher.setAAD(this.aad(scope, ref));
    const sealed = Buffer.concat([cipher.update(privateKey.export({ format: 'der', type: 'pkcs8' })), cipher.final()]);
    const publicJwk = keyObjectToJwk(publicKey);
    await this.store.write([
      {
        type: 'put',
        condition: 'not_exists',
        item: {
          ...keys.localKey(scope, ref),
          type: 'local_key',
          alg,
          public_jwk: publicJwk,
          sealed: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'),
        },
      },
    ]);
    this.cache.set(`${scope.walletId}|${ref}`, privateKey);
    return { ref, publicJwk };
  }

  private async privateKey(scope: TenantScope, ref: string, alg: KeyAlg): Promise<KeyObject> {
    const cacheKey = `${scope.walletId}|${ref}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    if (!REF.test(ref)) throw new Error('not a local key reference');
    const item = await this.store.get(keys.localKey(scope, ref));
    if (!item || item.alg !== alg) throw new Error(`no local ${alg} key ${ref} in wallet ${scope.walletId}`);
    if (item.deletion_date) throw new KeyDisabledError();
    const blob = Buffer.from(item.sealed as string, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', await this.kek(), blob.subarray(0, 12));
    decipher.setAAD(this.aad(scope, ref));
    decipher.setAuthTag(blob.subarray(12, 28));
    const der = Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
    const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    if (this.cache.size >= 1000) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, key);
    return key;
  }

  async sign(scope: TenantScope, ref: string, alg: KeyAlg, data: Uint8Array): Promise<Uint8Array> {
    const key = await this.privateKey(scope, ref, alg);
    return alg === 'EdDSA' ? sign(null, data, key) : sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
  }

  async publicJwk(scope: TenantScope, ref: string, alg: KeyAlg): Promise<PublicJwk> {
    return keyObjectToJwk(createPublicKey(await this.privateKey(scope, ref, alg)));
  }

  /** Like KMS: the key is unusable at once; the sealed copy is removed by the table's TTL after the window. */
  async scheduleDeletion(scope: TenantScope, ref: string): Promise<{ deletion_date: string }> {
    if (!REF.test(ref)) throw new Error('not a local key reference');
    const at = new Date(Date.now() + KEY_DELETION_WINDOW_DAYS * 86400_000);
    await this.store.write([
      { type: 'update', key: keys.localKey(scope, ref), condition: 'exists', set: { deletion_date: at.toISOString(), ttl: Math.floor(at.getTime() / 1000) } },
    ]);
    this.cache.delete(`${scope.walletId}|${ref}`);
    return { deletion_date: at.toISOString() };
  }
}
