import { allows, FUNCTION_NAMES } from '../../lib/service/access';
import { ROUTES } from '../../lib/service/routes';
import { keys, tenantScope } from '../../lib/store/keys';
import type { ItemKey } from '../../lib/store/port';
import { newPublicRef, PUBLIC_REF, PublicRefs } from '../../lib/tenancy/public-refs';
import { MemoryStore } from '../helpers/memory-store';

/** The reference ↔ wallet mapping: what a public request is resolved with, what it costs, what it caches. */

const REF = 'Aa0_Bb1-Cc2Dd3Ee4Ff5Gg';

async function setup(opts: ConstructorParameters<typeof PublicRefs>[1] = {}) {
  const store = new MemoryStore();
  const reads: string[] = [];
  const get = store.get.bind(store);
  store.get = async (key: ItemKey) => {
    reads.push(key.PK);
    return get(key);
  };
  await store.write([
    { type: 'put', item: { ...keys.wallet(tenantScope('1')), wallet_id: '1', public_ref: REF } },
    { type: 'put', item: { ...keys.publicRef(REF), wallet_id: '1' } },
  ]);
  return { store, reads, refs: new PublicRefs(store, opts) };
}

test('a new reference is 128 random bits, base64url: 22 URL-safe characters, never a wallet id', () => {
  const made = Array.from({ length: 1000 }, newPublicRef);
  expect(made.every((r) => PUBLIC_REF.test(r))).toBe(true);
  expect(new Set(made).size).toBe(1000);
  expect(PUBLIC_REF.test('1')).toBe(false);
  expect(PUBLIC_REF.test('1234567890123456')).toBe(false);
});

test('a known reference names its wallet, read once: later requests are answered from memory', async () => {
  const { refs, reads } = await setup();
  expect(await refs.resolve(REF)).toEqual(tenantScope('1'));
  expect(await refs.resolve(REF)).toEqual(tenantScope('1'));
  expect(reads).toEqual([`SYS#PUBREF#${REF}`]);
  // The other direction comes with it: building the wallet's URLs reads nothing more.
  expect(await refs.of(tenantScope('1'))).toBe(REF);
  expect(reads).toHaveLength(1);
});

test('an old sequential id is answered like an unknown reference — even if an item were stored under it, it is never read', async () => {
  const { refs, reads, store } = await setup();
  // Planted: were the value looked up as it came, wallet 1 would be found.
  await store.write([{ type: 'put', item: { ...keys.publicRef('1'), wallet_id: '1' } }]);
  expect(await refs.resolve('1')).toBeNull();
  expect(await refs.resolve('Zz9_Yy8-Xx7Ww6Vv5Uu4Tt')).toBeNull();
  // The same work for both: one read of a lookup item, the malformed one under a key nothing is issued as.
  expect(reads).toEqual(['SYS#PUBREF#~', 'SYS#PUBREF#Zz9_Yy8-Xx7Ww6Vv5Uu4Tt']);
  for (const junk of ['', '../1', 'W#1', `${REF}x`, 'a'.repeat(5000)]) expect(await refs.resolve(junk)).toBeNull();
});

test('misses are remembered briefly and in bounded number: a wallet created meanwhile is found, probes cannot fill memory', async () => {
  let now = 0;
  const { refs, reads, store } = await setup({ missTtlMs: 5000, maxMisses: 3, now: () => now });
  const later = 'Later0later1Later2late';
  expect(await refs.resolve(later)).toBeNull();
  expect(await refs.resolve(later)).toBeNull();
  expect(reads).toHaveLength(1);
  await store.write([{ type: 'put', item: { ...keys.publicRef(later), wallet_id: '2' } }]);
  now = 5001;
  expect(await refs.resolve(later)).toEqual(tenantScope('2'));
  // Four distinct misses with room for three: the oldest is forgotten (read again), the newest is not.
  const probes = ['Probe0probe0probe0prob', 'Probe1probe1probe1prob', 'Probe2probe2probe2prob', 'Probe3probe3probe3prob'];
  for (const p of probes) await refs.resolve(p);
  reads.length = 0;
  await refs.resolve(probes[3]!);
  expect(reads).toEqual([]);
  await refs.resolve(probes[0]!);
  expect(reads).toEqual([`SYS#PUBREF#${probes[0]}`]);
});

test('known mappings are bounded too: least recently used out, read again when needed', async () => {
  const { refs, reads, store } = await setup({ maxEntries: 2 });
  const other = ['Other0other0other0othe', 'Other1other1other1othe'];
  await store.write(other.map((r, i) => ({ type: 'put' as const, item: { ...keys.publicRef(r), wallet_id: String(i + 2) } })));
  await refs.resolve(REF);
  await refs.resolve(other[0]!);
  await refs.resolve(REF); // used again: the other one is now the oldest
  await refs.resolve(other[1]!);
  reads.length = 0;
  await refs.resolve(REF);
  expect(reads).toEqual([]);
  await refs.resolve(other[0]!);
  expect(reads).toEqual([`SYS#PUBREF#${other[0]}`]);
});

test("a wallet's own reference comes from its record; a record without one is an error, never a made-up URL", async () => {
  const { refs, reads, store } = await setup();
  expect(await refs.of(tenantScope('1'))).toBe(REF);
  expect(await refs.of(tenantScope('1'))).toBe(REF);
  expect(reads).toEqual(['W#1']);
  await store.write([{ type: 'put', item: { ...keys.wallet(tenantScope('3')), wallet_id: '3' } }]);
  await expect(refs.of(tenantScope('3'))).rejects.toThrow('wallet 3 has no public reference');
  await expect(refs.of(tenantScope('4'))).rejects.toThrow('wallet 4 has no public reference');
});

test('declared access: the public functions read lookup items only, with their own role; only the tenancy registry session writes them, creating a wallet', () => {
  const lookup = 'SYS#PUBREF#Aa0_Bb1-Cc2Dd3Ee4Ff5Gg';
  const get = (partition: string) => ({ service: 'dynamodb' as const, action: 'GetItem' as const, on: 'table' as const, partition });
  for (const fn of ['oid4vci-issuer', 'status-lists-public', 'oid4vp-verifier', 'jsonld-public'] as const) {
    expect(allows({ fn, wallet: null }, get(lookup))).toBe(true);
    // Not the counter (whose value would say how many tenants there are), not any wallet's data, no writes.
    for (const other of ['SYS#COUNTER', 'SYS#WNAME#acme', 'W#1', 'SYS#ADMIN']) expect(allows({ fn, wallet: null }, get(other))).toBe(false);
    expect(allows({ fn, wallet: null }, { ...get(lookup), action: 'PutItem' })).toBe(false);
    expect(allows({ fn, wallet: '1' }, get(lookup))).toBe(false);
  }
  // No own role and no wallet session writes them: only tenancy's registry session, which wallet creation enters.
  const writers = FUNCTION_NAMES.filter((fn) => [null, '1'].some((wallet) => allows({ fn, wallet }, { ...get(lookup), action: 'PutItem' })));
  expect(writers).toEqual([]);
  const registryWriters = FUNCTION_NAMES.filter((fn) => allows({ fn, wallet: '1', registry: true }, { ...get(lookup), action: 'PutItem' }));
  expect(registryWriters).toEqual(['tenancy']);
});

test('no public route takes a wallet id: a public path names a wallet only by {public_ref}', () => {
  const publicRoutes = ROUTES.filter((r) => r.auth === 'public');
  expect(publicRoutes.filter((r) => /\{wallet/.test(r.path)).map((r) => r.path)).toEqual([]);
  // The groups that serve a wallet's protocol endpoints name it in every one of their paths.
  for (const group of ['oid4vci-issuer', 'status-lists-public', 'oid4vp-verifier']) {
    expect(publicRoutes.filter((r) => r.group === group && !r.path.includes('{public_ref}')).map((r) => r.path)).toEqual([]);
  }
});
