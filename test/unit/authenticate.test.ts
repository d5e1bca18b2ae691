import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { gsi1 } from '../../lib/store/keys';
import type { Item, ItemStore } from '../../lib/store/port';
import { generateApiKey, macApiKey } from '../../lib/tenancy/api-key-format';
import { Authenticator } from '../../lib/tenancy/authenticate';
import { SubwalletTokens } from '../../lib/tenancy/subwallet-token';

const secrets = new LocalSecretDeriver('33'.repeat(32));

function storeWith(items: Item[]) {
  const calls: string[] = [];
  const lookups: { pk: string; index: string | undefined; limit: number | undefined }[] = [];
  const store: ItemStore = {
    get: async () => undefined,
    getMany: async (keys) => keys.map(() => undefined),
    query: async (pk, opts) => {
      calls.push(pk);
      lookups.push({ pk, index: opts?.index, limit: opts?.limit });
      return items.filter((i) => i.GSI1PK === pk);
    },
    write: async () => undefined,
    increment: async () => 1,
    queryPage: async () => ({ items: [] }),
  };
  return { store, calls, lookups };
}

async function keyItem(apiKey: string, extra: Record<string, unknown> = {}): Promise<Item> {
  const mac = macApiKey(await secrets.derive('api-key-mac/v1'), apiKey);
  return { PK: 'W#5', SK: 'KEY#k1', ...gsi1.apiKeyByMac(mac), type: 'api_key', wallet_id: '5', key_id: 'k1', roles: ['admin'], mac, status: 'active', created_at: '2026-01-01T00:00:00Z', ...extra };
}

describe('Authenticator', () => {
  test('malformed values are refused without touching the store', async () => {
    const { store, calls } = storeWith([]);
    const auth = new Authenticator(store, secrets);
    for (const v of [undefined, '', 'abc', 'cisk_short', `cisk_${'0'.repeat(49)}`, 'a b'.repeat(20)]) {
      expect(await auth.authenticate(v)).toBeNull();
    }
    expect(calls).toEqual([]);
  });

  test('an active key is its wallet; revoked or expired keys are refused', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const active = generateApiKey();
    const revoked = generateApiKey();
    const expired = generateApiKey();
    const future = generateApiKey();
    const { store } = storeWith([
      await keyItem(active),
      await keyItem(revoked, { status: 'revoked' }),
      await keyItem(expired, { expires_at: '2026-05-31T23:59:59Z' }),
      await keyItem(future, { expires_at: '2026-06-01T00:00:01Z' }),
    ]);
    const auth = new Authenticator(store, secrets, () => now);
    expect(await auth.authenticate(active)).toEqual({ kind: 'wallet', walletId: '5', keyId: 'k1', via: 'api_key', roles: ['admin'], expiresAt: null });
    expect(await auth.authenticate(revoked)).toBeNull();
    expect(await auth.authenticate(expired)).toBeNull();
    // The expiry travels with the decision, so the functions refuse the key at that moment even from a cached decision.
    expect(await auth.authenticate(future)).toMatchObject({ walletId: '5', expiresAt: '2026-06-01T00:00:01Z' });
    expect(await auth.authenticate(generateApiKey())).toBeNull();
  });

  test('the base key is the super-admin', async () => {
    const base = generateApiKey();
    const item = await keyItem(base, { PK: 'SYS#ADMIN', SK: 'BASEKEY', type: 'base_key', key_id: 'base' });
    const auth = new Authenticator(storeWith([item]).store, secrets);
    expect(await auth.authenticate(base)).toEqual({ kind: 'superadmin', keyId: 'base' });
  });

  test('the value is trimmed; a stored record must carry the same MAC and be an API key', async () => {
    const key = generateApiKey();
    const item = await keyItem(key);
    const s = storeWith([item]);
    expect(await new Authenticator(s.store, secrets).authenticate(` ${key}\n`)).toMatchObject({ kind: 'wallet', walletId: '5' });
    // One item, through the MAC index.
    expect(s.lookups).toEqual([{ pk: item.GSI1PK, index: 'GSI1', limit: 1 }]);
    // A store that answers with another record than the MAC names (an index mix-up) is not believed.
    const answering = (found: Item) => ({ ...storeWith([]).store, query: async () => [found] });
    const other = await keyItem(generateApiKey());
    expect(await new Authenticator(answering(other), secrets).authenticate(key)).toBeNull();
    expect(await new Authenticator(answering({ ...item, mac: undefined }), secrets).authenticate(key)).toBeNull();
    expect(await new Authenticator(answering({ ...item, mac: 42 }), secrets).authenticate(key)).toBeNull();
    for (const type of ['wallet', 'api_key_revoked', undefined]) {
      expect(await new Authenticator(answering({ ...item, type }), secrets).authenticate(key)).toBeNull();
    }
  });

  test('a subwallet token is its wallet as admin until it expires; a forged one is refused without a lookup', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const { store, calls } = storeWith([]);
    const auth = new Authenticator(store, secrets, () => now);
    const token = await new SubwalletTokens(secrets, () => now).mint('9');
    expect(await auth.authenticate(token)).toEqual({ kind: 'wallet', walletId: '9', keyId: null, via: 'token', roles: ['admin'], expiresAt: expect.any(String) });
    const forged = await new SubwalletTokens(new LocalSecretDeriver('44'.repeat(32)), () => now).mint('9');
    expect(await auth.authenticate(forged)).toBeNull();
    expect(calls).toEqual([]);
  });
});
