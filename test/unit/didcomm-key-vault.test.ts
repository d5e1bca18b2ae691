import { DecryptCommand, GenerateDataKeyCommand, KMSClient, KMSInternalException } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { guardDataKeys } from '../../lib/adapters/access-guard';
import { KmsDataKeys } from '../../lib/adapters/kms-data-keys';
import { packMessage, unpackMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { LocalDataKeys, OutdatedDataKeyError, SealedKeyVault, vaultKeys, WalletDataKeys, type DataKeyService } from '../../lib/didcomm/key-vault';
import { KeyServiceUnavailableError } from '../../lib/keys/port';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { AccessDeniedError } from '../../lib/service/access';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { MemoryStore } from '../helpers/memory-store';

const MASTER = 'ab'.repeat(32);

/** Counts calls, so caching is visible. */
function counting(inner: DataKeyService) {
  const calls = { generate: 0, decrypt: 0 };
  const service: DataKeyService = {
    generate: (w, p) => (calls.generate++, inner.generate(w, p)),
    decrypt: (w, p, s) => (calls.decrypt++, inner.decrypt(w, p, s)),
  };
  return { service, calls };
}

describe('SealedKeyVault with the local data keys', () => {
  test('creates a key that is stored only sealed, in the wallet partition, and unseals it to a working pair', async () => {
    const store = new MemoryStore();
    const vault = new SealedKeyVault(store, new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    const { verkey } = await vault.createKey('7');
    const pair = (await vault.keyPair('7', verkey))!;
    expect(verkeyFromPublicKey(pair.publicKey)).toBe(verkey);
    // The pair packs and unpacks real envelopes.
    expect(unpackMessage(packMessage({ hi: 1 }, [verkey]), pair).message).toEqual({ hi: 1 });

    expect(vaultKeys.sealedKey('7', verkey)).toEqual({ PK: 'W#7', SK: `DCKEY#${verkey}` });
    const stored = JSON.stringify([...store.items.values()]);
    expect(stored).not.toContain(Buffer.from(pair.seed).toString('base64'));
    expect(stored).not.toContain(Buffer.from(pair.seed).toString('hex'));
    expect([...store.items.values()].map((i) => `${i.PK} ${i.SK}`).sort()).toEqual(['W#7 DCDATAKEY', `W#7 DCKEY#${verkey}`]);
  });

  test('another wallet, an unknown or malformed verkey: no key', async () => {
    const vault = new SealedKeyVault(new MemoryStore(), new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    const { verkey } = await vault.createKey('7');
    expect(await vault.keyPair('8', verkey)).toBeUndefined();
    expect(await vault.keyPair('7', verkeyFromPublicKey(randomBytes(32)))).toBeUndefined();
    expect(await vault.keyPair('7', 'not-a-verkey')).toBeUndefined();
  });

  test('a sealed key copied into another wallet does not unseal there (AAD binds wallet and verkey)', async () => {
    const store = new MemoryStore();
    const vault = new SealedKeyVault(store, new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    const { verkey } = await vault.createKey('7');
    await vault.createKey('8');
    const sealed = [...store.items.values()].find((i) => i.SK === `DCKEY#${verkey}`)!;
    await store.write([{ type: 'put', item: { ...sealed, PK: 'W#8' } }]);
    await expect(vault.keyPair('8', verkey)).rejects.toThrow();
    // Nor does wallet 7's sealed data key under wallet 8's context.
    const local = new LocalDataKeys(new LocalSecretDeriver(MASTER));
    const { sealed: dk } = await local.generate('7', 'didcomm');
    await expect(local.decrypt('8', 'didcomm', dk)).rejects.toThrow();
  });

  test('one data key per wallet, decrypted once per instance while cached; the cache is bounded and expires', async () => {
    const store = new MemoryStore();
    const { service, calls } = counting(new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    let now = 0;
    const writer = new SealedKeyVault(store, service, { now: () => now });
    const a = await writer.createKey('7');
    const b = await writer.createKey('7');
    expect(calls).toEqual({ generate: 1, decrypt: 0 });

    const reader = new SealedKeyVault(store, service, { maxCachedDataKeys: 1, dataKeyTtlMs: 1000, now: () => now });
    await reader.keyPair('7', a.verkey);
    await reader.keyPair('7', b.verkey);
    expect(calls.decrypt).toBe(1);
    now += 1001;
    await reader.keyPair('7', a.verkey);
    expect(calls.decrypt).toBe(2);
    await writer.createKey('8');
    await reader.keyPair('8', (await writer.createKey('8')).verkey); // evicts wallet 7
    await reader.keyPair('7', a.verkey);
    expect(calls.decrypt).toBe(4);
  });

  test('two instances racing to make a wallet’s first data key end up with one', async () => {
    const store = new MemoryStore();
    const keysService = new LocalDataKeys(new LocalSecretDeriver(MASTER));
    const [x, y] = [new SealedKeyVault(store, keysService), new SealedKeyVault(store, keysService)];
    const [kx, ky] = await Promise.all([x.createKey('7'), y.createKey('7')]);
    const fresh = new SealedKeyVault(store, keysService);
    expect(await fresh.keyPair('7', kx.verkey)).toBeDefined();
    expect(await fresh.keyPair('7', ky.verkey)).toBeDefined();
  });
});

describe('KMS data keys', () => {
  const kms = mockClient(KMSClient);
  const kmsKey = randomBytes(32);
  beforeEach(() => {
    kms.reset();
    // A stand-in for KMS: the blob is AES-GCM under its own key with the encryption context as AAD, as KMS binds it.
    const aadOf = (ctx: Record<string, string> | undefined) => Buffer.from(JSON.stringify(ctx ?? {}));
    kms.on(GenerateDataKeyCommand).callsFake((input) => {
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', kmsKey, iv).setAAD(aadOf(input.EncryptionContext));
      const ct = Buffer.concat([c.update(plaintext), c.final()]);
      return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(Buffer.concat([iv, c.getAuthTag(), ct])), KeyId: input.KeyId };
    });
    kms.on(DecryptCommand).callsFake((input) => {
      const blob = Buffer.from(input.CiphertextBlob);
      const d = createDecipheriv('aes-256-gcm', kmsKey, blob.subarray(0, 12)).setAAD(aadOf(input.EncryptionContext));
      d.setAuthTag(blob.subarray(12, 28));
      try {
        return { Plaintext: new Uint8Array(Buffer.concat([d.update(blob.subarray(28)), d.final()])), KeyId: input.KeyId };
      } catch {
        throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
      }
    });
  });

  test('GenerateDataKey and Decrypt carry the key id, AES_256 and the wallet’s encryption context', async () => {
    const dataKeys = new KmsDataKeys(new KMSClient({ region: 'eu-west-1' }), 'arn:aws:kms:eu-west-1:1:key/dc');
    const vault = new SealedKeyVault(new MemoryStore(), dataKeys);
    const { verkey } = await vault.createKey('7');
    const other = new SealedKeyVault((vault as unknown as { store: MemoryStore }).store, dataKeys);
    expect(verkeyFromPublicKey((await other.keyPair('7', verkey))!.publicKey)).toBe(verkey);
    // Written out, not derived from dataKeyContext(): these are the names the IAM conditions read.
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toEqual({ KeyId: 'arn:aws:kms:eu-west-1:1:key/dc', KeySpec: 'AES_256', EncryptionContext: { wallet_id: '7', purpose: 'didcomm' } });
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input).toMatchObject({ KeyId: 'arn:aws:kms:eu-west-1:1:key/dc', EncryptionContext: { wallet_id: '7', purpose: 'didcomm' } });
    // Wallet 7's blob under wallet 8's context, or under its own other purpose, is refused by "KMS".
    const { sealed } = await dataKeys.generate('7', 'didcomm');
    await expect(dataKeys.decrypt('8', 'didcomm', sealed)).rejects.toThrow('InvalidCiphertextException');
    await expect(dataKeys.decrypt('7', 'anoncreds', sealed)).rejects.toThrow('InvalidCiphertextException');
    await expect(dataKeys.decrypt('7', 'didcomm', sealed)).resolves.toHaveLength(32);
    const anon = new WalletDataKeys(new MemoryStore(), dataKeys, 'anoncreds');
    await anon.get('7', true);
    expect(kms.commandCalls(GenerateDataKeyCommand).at(-1)!.args[0].input.EncryptionContext).toEqual({ wallet_id: '7', purpose: 'anoncreds' });
  });

  test('KMS throttling or an internal error is a retryable 503', async () => {
    kms.on(GenerateDataKeyCommand).rejects(new KMSInternalException({ message: 'boom', $metadata: {} }));
    await expect(new KmsDataKeys(new KMSClient({ region: 'eu-west-1' }), 'k').generate('7', 'didcomm')).rejects.toBeInstanceOf(KeyServiceUnavailableError);
  });
});

describe('local access guard on data keys', () => {
  test('a function that declares no data keys is refused, in and out of a session', async () => {
    const guarded = guardDataKeys(new LocalDataKeys(new LocalSecretDeriver(MASTER)), 'status-lists');
    await expect(guarded.generate('7', 'didcomm')).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(inSession(tenantScope('7'), () => guarded.generate('7', 'didcomm'))).rejects.toBeInstanceOf(AccessDeniedError);
  });

  test("a DIDComm function's key vault works in its wallet's session; its AnonCreds data key is refused to it there", async () => {
    const store = new MemoryStore();
    const local = new LocalDataKeys(new LocalSecretDeriver(MASTER));
    const w = tenantScope('7');
    // The AnonCreds key exists (the definition worker made it).
    await inSession(w, () => new WalletDataKeys(store, guardDataKeys(local, 'anoncreds-worker'), 'anoncreds').get('7', true));
    const vault = new SealedKeyVault(store, guardDataKeys(local, 'didcomm-worker'));
    const { verkey } = await inSession(w, () => vault.createKey('7'));
    expect(await inSession(w, () => vault.keyPair('7', verkey))).toBeDefined();
    // The same function asking for the wallet's AnonCreds key, in its own wallet's session: refused before any decryption.
    const { service, calls } = counting(local);
    const stolen = new WalletDataKeys(store, guardDataKeys(service, 'didcomm-worker'), 'anoncreds');
    await expect(inSession(w, () => stolen.get('7', false))).rejects.toThrow('didcomm-worker (session of wallet 7) is not authorized to perform kms:Decrypt of the anoncreds data key of wallet 7');
    expect(calls.decrypt).toBe(0);
  });
});

describe('one data key per wallet and purpose', () => {
  test('the DIDComm and AnonCreds data keys are two keys in two items, each sealed under its own context', async () => {
    const store = new MemoryStore();
    const { service, calls } = counting(new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    const didcomm = await new WalletDataKeys(store, service, 'didcomm').get('7', true);
    const anoncreds = await new WalletDataKeys(store, service, 'anoncreds').get('7', true);
    expect(calls.generate).toBe(2);
    expect(Buffer.compare(didcomm, anoncreds)).not.toBe(0);
    expect(vaultKeys.dataKey('7', 'didcomm')).toEqual({ PK: 'W#7', SK: 'DCDATAKEY' });
    expect(vaultKeys.dataKey('7', 'anoncreds')).toEqual({ PK: 'W#7', SK: 'ACDATAKEY' });
    const items = [...store.items.values()].map((i) => ({ SK: i.SK, purpose: i.purpose, type: i.type })).sort((a, b) => String(a.SK).localeCompare(String(b.SK)));
    expect(items).toEqual([
      { SK: 'ACDATAKEY', purpose: 'anoncreds', type: 'anoncreds_data_key' },
      { SK: 'DCDATAKEY', purpose: 'didcomm', type: 'didcomm_data_key' },
    ]);
    // Each decrypts again (a cold instance) to the same key.
    expect(await new WalletDataKeys(store, service, 'didcomm').get('7', false)).toEqual(didcomm);
    expect(await new WalletDataKeys(store, service, 'anoncreds').get('7', false)).toEqual(anoncreds);
  });

  test("the DIDComm data key's sealed copy put in the AnonCreds item does not decrypt: the local KMS stand-in binds the purpose", async () => {
    const store = new MemoryStore();
    const local = new LocalDataKeys(new LocalSecretDeriver(MASTER));
    await new WalletDataKeys(store, local, 'didcomm').get('7', true);
    const dc = (await store.get(vaultKeys.dataKey('7', 'didcomm')))!;
    await store.write([{ type: 'put', item: { ...dc, ...vaultKeys.dataKey('7', 'anoncreds'), purpose: 'anoncreds' } }]);
    await expect(new WalletDataKeys(store, local, 'anoncreds').get('7', false)).rejects.toThrow(/unable to authenticate/);
    // And directly: a blob made with one context opens with that context only.
    const { sealed } = await local.generate('7', 'anoncreds');
    await expect(local.decrypt('7', 'didcomm', sealed)).rejects.toThrow();
    await expect(local.decrypt('8', 'anoncreds', sealed)).rejects.toThrow();
    await expect(local.decrypt('7', 'anoncreds', sealed)).resolves.toHaveLength(32);
  });

  test('a data key made before keys had a purpose (no purpose on DCDATAKEY) is refused by name, without asking KMS', async () => {
    const store = new MemoryStore();
    const { service, calls } = counting(new LocalDataKeys(new LocalSecretDeriver(MASTER)));
    await store.write([{ type: 'put', item: { ...vaultKeys.dataKey('7', 'didcomm'), type: 'didcomm_data_key', sealed: Buffer.alloc(60).toString('base64') } }]);
    const vault = new SealedKeyVault(store, service);
    await expect(vault.createKey('7')).rejects.toBeInstanceOf(OutdatedDataKeyError);
    await expect(vault.createKey('7')).rejects.toThrow("wallet 7's didcomm data key was made before data keys had a purpose");
    expect(calls).toEqual({ generate: 0, decrypt: 0 });
    // The item is left as it was: nothing overwritten.
    expect((await store.get(vaultKeys.dataKey('7', 'didcomm')))!.purpose).toBeUndefined();
  });

  test('the DIDComm key vault takes only the didcomm data key', () => {
    const store = new MemoryStore();
    const local = new LocalDataKeys(new LocalSecretDeriver(MASTER));
    expect(() => new SealedKeyVault(store, new WalletDataKeys(store, local, 'anoncreds'))).toThrow('the DIDComm key vault seals with the didcomm data key, not the anoncreds one');
    expect(() => new SealedKeyVault(store, new WalletDataKeys(store, local, 'didcomm'))).not.toThrow();
  });
});
