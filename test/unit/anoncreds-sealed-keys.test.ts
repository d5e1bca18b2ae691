import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { guardDataKeys } from '../../lib/adapters/access-guard';
import { CredDefKeySealer, SealedKeyVersionError } from '../../lib/anoncreds/sealed-keys';
import { LocalDataKeys, vaultKeys, WalletDataKeys } from '../../lib/didcomm/key-vault';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { AccessDeniedError } from '../../lib/service/access';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { MemoryStore } from '../helpers/memory-store';

const local = () => new LocalDataKeys(new LocalSecretDeriver('ab'.repeat(32)));
const SK = { p: 1_000_000_007n, q: 998_244_353n };
const DEF = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** AES-256-GCM of the sealer's item layout (IV ‖ tag ‖ body) under a given key and AAD: what another key or version would have written. */
function sealWith(key: Buffer, aad: string, clear: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad));
  const body = Buffer.concat([c.update(clear, 'utf8'), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
}

describe('AnonCreds private keys: sealed under their own data key (purpose anoncreds)', () => {
  test('sealed with the AnonCreds data key, not the DIDComm one: only the AnonCreds key deciphers the item', async () => {
    const store = new MemoryStore();
    const keys = local();
    const sealer = new CredDefKeySealer(new WalletDataKeys(store, keys, 'anoncreds'));
    const item = await sealer.seal('7', DEF, SK);
    expect(item.v).toBe(2);
    await expect(sealer.open('7', DEF, item)).resolves.toEqual(SK);
    expect((await store.get(vaultKeys.dataKey('7', 'anoncreds')))!.purpose).toBe('anoncreds');
    expect(await store.get(vaultKeys.dataKey('7', 'didcomm'))).toBeUndefined();

    // Decipher the item by hand (the sealer's own layout and AAD) with each clear data key: the DIDComm one fails.
    const raw = Buffer.from(item.sealed, 'base64');
    const decipherWith = (key: Buffer) => {
      const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(Buffer.from(`anoncreds-cred-def-private/v2|7|${DEF}`));
      d.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
    };
    const anoncredsKey = await new WalletDataKeys(store, keys, 'anoncreds').get('7', false);
    const didcommKey = await new WalletDataKeys(store, keys, 'didcomm').get('7', true);
    expect(JSON.parse(decipherWith(anoncredsKey!)).value.p_key).toEqual({ p: String(SK.p), q: String(SK.q) });
    expect(() => decipherWith(didcommKey)).toThrow(/unable to authenticate/);
  });

  test('and the reverse: an item sealed with the DIDComm data key (in the current layout) does not open', async () => {
    const store = new MemoryStore();
    const keys = local();
    const didcommKey = await new WalletDataKeys(store, keys, 'didcomm').get('7', true);
    const sealer = new CredDefKeySealer(new WalletDataKeys(store, keys, 'anoncreds'));
    await sealer.seal('7', 'other', SK); // the wallet's AnonCreds data key exists
    const forged = sealWith(didcommKey, `anoncreds-cred-def-private/v2|7|${DEF}`, JSON.stringify({ value: { p_key: { p: '3', q: '5' }, r_key: null } }));
    await expect(sealer.open('7', DEF, { v: 2, sealed: forged })).rejects.toThrow(/unable to authenticate/);
  });

  test('the sealer takes only the anoncreds data key', () => {
    const store = new MemoryStore();
    expect(() => new CredDefKeySealer(new WalletDataKeys(store, local(), 'didcomm'))).toThrow('AnonCreds private keys are sealed with the anoncreds data key, not the didcomm one');
  });

  test('a version-1 item (sealed under the wallet’s one data key, now its DIDComm key) is refused by name before any key is asked for', async () => {
    const store = new MemoryStore();
    const keys = local();
    const didcommKey = await new WalletDataKeys(store, keys, 'didcomm').get('7', true);
    const v1 = { v: 1, sealed: sealWith(didcommKey, `anoncreds-cred-def-private/v1|7|${DEF}`, JSON.stringify({ value: { p_key: { p: '3', q: '5' }, r_key: null } })) };
    let asked = 0;
    const counting = { generate: (w: string, p: 'didcomm' | 'anoncreds') => (asked++, keys.generate(w, p)), decrypt: (w: string, p: 'didcomm' | 'anoncreds', s: Uint8Array) => (asked++, keys.decrypt(w, p, s)) };
    const sealer = new CredDefKeySealer(new WalletDataKeys(store, counting, 'anoncreds'));
    await expect(sealer.open('7', DEF, v1)).rejects.toBeInstanceOf(SealedKeyVersionError);
    await expect(sealer.openJson('7', 'rid', 'rev-reg-private', { sealed: v1.sealed })).rejects.toThrow(
      "the private key of AnonCreds object rid was sealed by an earlier version of the service (seal vundefined, under the wallet's DIDComm data key)",
    );
    expect(asked).toBe(0);
    // A current-version item without its ciphertext (a stored item altered by hand) is refused before any key, too.
    await expect(sealer.openJson('7', 'rid', 'rev-reg-private', { v: 2, sealed: 42 } as never)).rejects.toThrow('the sealed item of AnonCreds object rid holds no ciphertext');
    expect(asked).toBe(0);
  });

  test('locally, a function not granted the AnonCreds key cannot open a sealed definition key in its own wallet’s session; the issuing worker can', async () => {
    const store = new MemoryStore();
    const keys = local();
    const w = tenantScope('7');
    const item = await inSession(w, () => new CredDefKeySealer(new WalletDataKeys(store, guardDataKeys(keys, 'anoncreds-worker'), 'anoncreds')).seal('7', DEF, SK));
    for (const fn of ['didcomm-outbound', 'didcomm-worker', 'jsonld', 'dids', 'didcomm'] as const) {
      const sealer = new CredDefKeySealer(new WalletDataKeys(store, guardDataKeys(keys, fn), 'anoncreds'));
      await expect(inSession(w, () => sealer.open('7', DEF, item))).rejects.toBeInstanceOf(AccessDeniedError);
    }
    const issuer = new CredDefKeySealer(new WalletDataKeys(store, guardDataKeys(keys, 'credential-issuer'), 'anoncreds'));
    await expect(inSession(w, () => issuer.open('7', DEF, item))).resolves.toEqual(SK);
    // Never outside a session, and never another wallet's (fresh instances: a warm one keeps the clear key it opened).
    const cold = new CredDefKeySealer(new WalletDataKeys(store, guardDataKeys(keys, 'credential-issuer'), 'anoncreds'));
    await expect(cold.open('7', DEF, item)).rejects.toBeInstanceOf(AccessDeniedError);
    const other = new CredDefKeySealer(new WalletDataKeys(store, guardDataKeys(keys, 'credential-issuer'), 'anoncreds'));
    await expect(inSession(tenantScope('8'), () => other.open('7', DEF, item))).rejects.toBeInstanceOf(AccessDeniedError);
  });
});
