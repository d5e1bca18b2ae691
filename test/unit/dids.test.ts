import bs58 from 'bs58';
import { memoryPublicDidDidcomm } from '../helpers/didcomm-memory-vault';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { fullLengthJwk, keyDidResolver } from '../helpers/key-did-resolver';
import { importJWK, jwtVerify } from 'jose';
import { didWeb, didJwk, indyIdentifier, multibaseKey } from '../../lib/dids/methods';
import { isDidSyntax, qualify } from '../../lib/dids/records';
import { DidResolver, selfResolve } from '../../lib/resolver/resolver';
import { DidService } from '../../lib/dids/service';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { issuerSigner, signCompactJws } from '../../lib/keys/signer';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope } from '../../lib/store/keys';
import { ConditionFailedError, WriteConflictError } from '../../lib/store/port';
import { TaaService } from '../../lib/taa/service';
import { MemoryStore } from '../helpers/memory-store';

const LIMITS = { maxDids: 100, maxCreationsPerMinute: 1000 };

const jwkOfRaw = (raw: Uint8Array) => ({ kty: 'OKP' as const, crv: 'Ed25519' as const, x: Buffer.from(raw).toString('base64url') });

describe('DID methods', () => {
  test("Indy identifiers: the Indy steward's published pair (seed 000…Steward1)", () => {
    const verkey = 'FYmoFw55GeQH7SRFa37dkx1d2dZ3zUF8ckg7wmL7ofN4';
    expect(indyIdentifier(jwkOfRaw(bs58.decode(verkey)))).toEqual({ nym: 'Th7MpTaRZVRYnPiabds81Y', verkey });
  });

  test('a bare did:sov nym is the base58 of 16 bytes, the short ones too (a key whose first bytes are small)', () => {
    const short = bs58.encode(Buffer.concat([Buffer.of(0, 0, 1), randomBytes(13)]));
    expect(short.length).toBeLessThan(21);
    expect(qualify(short)).toBe(`did:sov:${short}`);
    expect(isDidSyntax(short)).toBe(true);
    expect(qualify('Th7MpTaRZVRYnPiabds81Y')).toBe('did:sov:Th7MpTaRZVRYnPiabds81Y');
    // Short base58 text that is not 16 bytes stays what it is: not a DID.
    const fifteen = bs58.encode(randomBytes(15));
    expect(fifteen.length).toBeLessThanOrEqual(21);
    for (const text of [fifteen.slice(0, 20), 'abc']) {
      expect(qualify(text)).toBe(text);
      expect(isDidSyntax(text)).toBe(false);
    }
  });

  test('did:key agrees with an independent resolver (key-did-resolver) for Ed25519 and P-256, coordinates with a leading zero byte too', async () => {
    const resolver = keyDidResolver();
    // Two fixed P-256 keys whose x, then y, starts with a zero byte (1 key in 128 does): a random key seldom shows it.
    const leadingZero = [
      { kty: 'EC', crv: 'P-256', x: 'AC9yd7PDYscL8FwIAtIfnPCZzflzCwzGkEGV5hSQ6Ec', y: 'SC53B2mLve4yJOsIMmT1var8FzE-NHgjZ6V8u61kKkk' },
      { kty: 'EC', crv: 'P-256', x: 'VKcjDtrQf4ADMTi5y0Yo8flsR4d48W_R5CgTMBd8DEs', y: 'ACOKJxGH9f5nW0rohHFANpLuhtC6CzWIuJdZcbolM2Y' },
    ].map((key) => createPublicKey({ key, format: 'jwk' }));
    for (const publicKey of [generateKeyPairSync('ed25519').publicKey, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey, ...leadingZero]) {
      const jwk = publicKey.export({ format: 'jwk' }) as { kty: 'OKP' | 'EC'; crv: 'Ed25519' | 'P-256'; x: string; y?: string };
      const did = `did:key:${multibaseKey(jwk as never)}`;
      const theirs = (await resolver.resolve(did)).didDocument!.verificationMethod![0]!;
      if (jwk.kty === 'OKP') expect(Buffer.from(bs58.decode(theirs.publicKeyBase58!)).toString('base64url')).toBe(jwk.x);
      else expect(fullLengthJwk(theirs.publicKeyJwk!)).toMatchObject({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y });
      // Our own document for the same DID carries the same key.
      const ours = selfResolve(did)!.verificationMethod;
      expect(ours[0]!.publicKeyJwk).toEqual(jwk.kty === 'OKP' ? { kty: 'OKP', crv: 'Ed25519', x: jwk.x } : { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y });
      expect(ours[0]!.id).toBe(theirs.id);
      // Only the spec's method: a proof naming any other id would not verify with outside resolvers.
      expect(ours.map((m) => m.id)).toEqual([theirs.id]);
    }
  });

  test('did:jwk documents follow the spec: one method #0, keyAgreement unless the JWK says use "sig"', () => {
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const enc = (o: object) => `did:jwk:${Buffer.from(JSON.stringify(o)).toString('base64url')}`;
    const plain = selfResolve(enc(jwk))!;
    expect(plain.verificationMethod).toEqual([{ id: `${enc(jwk)}#0`, type: 'JsonWebKey2020', controller: enc(jwk), publicKeyJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } }]);
    expect(plain).toMatchObject({ assertionMethod: [`${enc(jwk)}#0`], keyAgreement: [`${enc(jwk)}#0`] });
    const sig = selfResolve(enc({ ...jwk, use: 'sig' }))!;
    expect(sig.keyAgreement).toBeUndefined();
    expect(sig.assertionMethod).toHaveLength(1);
    const encOnly = selfResolve(enc({ ...jwk, use: 'enc' }))!;
    expect(encOnly).toMatchObject({ keyAgreement: [expect.any(String)] });
    expect(encOnly.assertionMethod).toBeUndefined();
  });

  test('did:jwk is the base64url JSON of the key; did:web encodes the port and path', () => {
    const jwk = { kty: 'EC' as const, crv: 'P-256' as const, x: 'abc', y: 'def' };
    const did = didJwk(jwk);
    expect(JSON.parse(Buffer.from(did.slice(8), 'base64url').toString())).toEqual(jwk);
    expect(didWeb('http://127.0.0.1:3000', 'Abc')).toBe('did:web:127.0.0.1%3A3000:dids:Abc');
    expect(didWeb('https://api.example.com/prod/', 'Abc')).toBe('did:web:api.example.com:prod:dids:Abc');
  });

  test('self-resolution refuses junk', () => {
    expect(selfResolve('did:key:znotbase58!')).toBeNull();
    expect(selfResolve('did:jwk:bm90LWpzb24')).toBeNull();
    expect(selfResolve('did:example:123')).toBeNull();
    const withPrivate = { kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43), d: 'B'.repeat(43) };
    expect(selfResolve(`did:jwk:${Buffer.from(JSON.stringify(withPrivate)).toString('base64url')}`)).toBeNull();
    expect(selfResolve(`did:jwk:${Buffer.from('null').toString('base64url')}`)).toBeNull();
    // Keys that are no keys: wrong lengths, or a point off the curve.
    for (const bad of [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }, { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'B'.repeat(43) }, { kty: 'OKP', crv: 'Ed25519', x: 'A' }]) {
      expect(selfResolve(`did:jwk:${Buffer.from(JSON.stringify(bad)).toString('base64url')}`)).toBeNull();
    }
    expect(selfResolve(`did:key:z${bs58.encode(Buffer.concat([Buffer.from([0x80, 0x24, 0x02]), Buffer.alloc(32, 0xff)]))}`)).toBeNull();
  });
});

describe('DidService', () => {
  const setup = (taa = { text: 'Agreement', version: '2.0', aml: { click: 'clicked accept' }, amlVersion: '1.0' } as const) => {
    const store = new MemoryStore();
    const keyManager = new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32)));
    const taaService = new TaaService(store, taa);
    const dids = new DidService({ didcomm: memoryPublicDidDidcomm(store), store, keyManager, taa: taaService, indyNamespace: 'test', limits: LIMITS });
    return { store, keyManager, taaService, dids, resolver: new DidResolver(store) };
  };
  const scope = tenantScope('9');

  test('a JWS signed with a DID key verifies against the key its resolved document names by kid', async () => {
    const s = setup();
    for (const [method, keyType] of [['sov', 'ed25519'], ['web', 'p256'], ['key', 'ed25519'], ['jwk', 'p256'], ['indy', 'ed25519']] as const) {
      const d = await s.dids.create(scope, { method, keyType, baseUrl: 'https://issuer.example/prod' });
      await s.taaService.accept(scope, { mechanism: 'click' });
      await s.dids.setPublic(scope, d.did);
      const jws = await signCompactJws(issuerSigner(s.keyManager, scope, { ref: d.key_ref, alg: d.alg }, d.kid), { typ: 'JWT' }, { iss: d.qualified });
      // A verifier: resolve the kid's DID, find the method by id, verify with its JWK.
      const [didPart] = d.kid.split('#');
      const doc = (await s.resolver.resolve(didPart!))!.document;
      const vm = (doc.verificationMethod as { id: string; publicKeyJwk?: object }[]).find((m) => m.id === d.kid)!;
      await expect(jwtVerify(jws, await importJWK(vm.publicKeyJwk as never, d.alg))).resolves.toBeDefined();
    }
  });

  test('set-public-did needs the current agreement accepted; a new version needs a new acceptance', async () => {
    const s = setup();
    const d = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    await expect(s.dids.setPublic(scope, d.did)).rejects.toMatchObject({ status: 409, code: 'taa_not_accepted' });
    expect(await s.resolver.resolve(d.did)).toBeNull();
    await s.taaService.accept(scope, { mechanism: 'click', version: '2.0' });
    await expect(s.dids.setPublic(scope, d.did)).resolves.toMatchObject({ posture: 'public' });
    const next = new DidService({ didcomm: memoryPublicDidDidcomm(s.store), store: s.store, keyManager: s.keyManager, taa: new TaaService(s.store, { text: 'Agreement v3', version: '3.0', aml: { click: 'c' }, amlVersion: '1.0' }), indyNamespace: 'test', limits: LIMITS });
    const d2 = await next.create(scope, { method: 'sov', baseUrl: 'https://x' });
    await expect(next.setPublic(scope, d2.did)).rejects.toMatchObject({ code: 'taa_not_accepted', message: expect.stringContaining('3.0') });
  });

  test('a new public DID leaves the previous one resolvable (posted)', async () => {
    const s = setup();
    await s.taaService.accept(scope, { mechanism: 'click' });
    const a = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const b = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    await s.dids.setPublic(scope, a.did);
    await s.dids.setPublic(scope, b.did);
    expect((await s.dids.get(scope, a.did)).posture).toBe('posted');
    expect((await s.dids.publicDid(scope))!.did).toBe(b.did);
    expect(await s.resolver.resolve(`did:sov:${a.did}`)).not.toBeNull();
  });

  test('two set-public-did calls at once both succeed: the loser re-reads the pointer and goes again', async () => {
    const s = setup();
    await s.taaService.accept(scope, { mechanism: 'click' });
    const a = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const b = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    const writes = s.store.write.bind(s.store);
    let conditionFailures = 0;
    s.store.write = async (ops) => writes(ops).catch((err: unknown) => {
      if (err instanceof ConditionFailedError) conditionFailures++;
      throw err;
    });
    await Promise.all([s.dids.setPublic(scope, a.did), s.dids.setPublic(scope, b.did)]);
    expect(conditionFailures).toBe(1); // the race really happened
    const winner = (await s.dids.publicDid(scope))!;
    const loser = winner.did === a.did ? b : a;
    expect((await s.dids.get(scope, loser.did)).posture).toBe('posted');
    expect(winner.posture).toBe('public');
  });

  test('a write conflict is retried; a race that never settles is a 409 public_did_changed, not a 500', async () => {
    const s = setup();
    await s.taaService.accept(scope, { mechanism: 'click' });
    const a = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const writes = s.store.write.bind(s.store);
    let calls = 0;
    s.store.write = async (ops) => {
      if (calls++ === 0) throw new WriteConflictError();
      return writes(ops);
    };
    await expect(s.dids.setPublic(scope, a.did)).resolves.toMatchObject({ posture: 'public' });
    const b = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    s.store.write = async () => {
      throw new ConditionFailedError([1]);
    };
    await expect(s.dids.setPublic(scope, b.did)).rejects.toMatchObject({ status: 409, code: 'public_did_changed' });
  });

  test('an acceptance by a mechanism dropped from the AML no longer counts', async () => {
    const s = setup({ text: 'Agreement', version: '2.0', aml: { click: 'clicked accept', wallet: 'in wallet' }, amlVersion: '1.0' } as never);
    await s.taaService.accept(scope, { mechanism: 'wallet' });
    const d = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const narrowed = new DidService({ didcomm: memoryPublicDidDidcomm(s.store), store: s.store, keyManager: s.keyManager, taa: new TaaService(s.store, { text: 'Agreement', version: '2.0', aml: { click: 'c' }, amlVersion: '1.1' }), indyNamespace: 'test', limits: LIMITS });
    await expect(narrowed.setPublic(scope, d.did)).rejects.toMatchObject({ status: 409, code: 'taa_not_accepted', message: expect.stringContaining('wallet') });
  });

  test('an acceptance replaced between the check and the write is read again, and a valid one publishes', async () => {
    const s = setup({ text: 'Agreement', version: '2.0', aml: { click: 'clicked accept', wallet: 'in wallet' }, amlVersion: '1.0' } as never);
    await s.taaService.accept(scope, { mechanism: 'click' });
    const d = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const writes = s.store.write.bind(s.store);
    let once = true;
    s.store.write = async (ops) => {
      if (once) {
        once = false;
        await s.taaService.accept(scope, { mechanism: 'wallet' }); // re-accepted by another mechanism
      }
      return writes(ops);
    };
    await expect(s.dids.setPublic(scope, d.did)).resolves.toMatchObject({ posture: 'public' });
  });

  test('an acceptance outdated between the check and the write stops the publication', async () => {
    const s = setup();
    await s.taaService.accept(scope, { mechanism: 'click' });
    const d = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    const writes = s.store.write.bind(s.store);
    s.store.write = async (ops) => {
      // Another request rewrites the acceptance (as an older deployment's agreement) just before our write.
      await writes([{ type: 'update', key: keys.taaAcceptance(scope), set: { digest: 'older' } }]);
      return writes(ops);
    };
    await expect(s.dids.setPublic(scope, d.did)).rejects.toMatchObject({ status: 409, code: 'taa_not_accepted' });
    s.store.write = writes;
    expect((await s.dids.get(scope, d.did)).posture).toBe('wallet_only');
  });

  test('without a configured agreement, publishing needs no acceptance and accepting is a 409', async () => {
    const s = setup(undefined as never);
    const plain = new DidService({ didcomm: memoryPublicDidDidcomm(s.store), store: s.store, keyManager: s.keyManager, taa: new TaaService(s.store, undefined), indyNamespace: 't', limits: LIMITS });
    const d = await plain.create(scope, { method: 'sov', baseUrl: 'https://x' });
    await expect(plain.setPublic(scope, d.did)).resolves.toMatchObject({ posture: 'public' });
    await expect(new TaaService(s.store, undefined).accept(scope, { mechanism: 'x' })).rejects.toMatchObject({ status: 409, code: 'taa_not_configured' });
  });
});

describe('per-wallet DID limits and deactivation', () => {
  const scope = tenantScope('11');
  const setup = (limits = { maxDids: 2, maxCreationsPerMinute: 100 }) => {
    let now = Date.parse('2026-11-23T10:00:30Z');
    const store = new MemoryStore();
    const keyManager = new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32)));
    const taa = new TaaService(store, undefined);
    const dids = new DidService({ didcomm: memoryPublicDidDidcomm(store), store, keyManager, taa, indyNamespace: 't', limits, now: () => new Date(now) });
    return { store, keyManager, dids, resolver: new DidResolver(store), advance: (ms: number) => (now += ms) };
  };
  const localKeys = (store: MemoryStore) => [...store.items.values()].filter((i) => String(i.SK).startsWith('LKEY#'));

  test('the quota counts active DIDs exactly; the key made for a refused DID is scheduled for deletion; deactivation frees a slot', async () => {
    const s = setup();
    const first = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    await expect(s.dids.create(scope, { method: 'key', baseUrl: 'https://x' })).rejects.toMatchObject({ status: 409, code: 'did_quota_exceeded' });
    await s.dids.deactivate(scope, first.did);
    await expect(s.dids.create(scope, { method: 'key', baseUrl: 'https://x' })).resolves.toMatchObject({ posture: 'wallet_only' });
    await expect(s.dids.create(scope, { method: 'key', baseUrl: 'https://x' })).rejects.toMatchObject({ code: 'did_quota_exceeded' });
    expect((await s.store.get(keys.didQuota(scope)))!.active).toBe(2);
    // Two other wallets are counted on their own.
    await expect(s.dids.create(tenantScope('12'), { method: 'key', baseUrl: 'https://x' })).resolves.toBeDefined();
  });

  test('a create that loses the race for the last slot gives its new key up (no orphan key keeps costing)', async () => {
    const s = setup({ maxDids: 1, maxCreationsPerMinute: 100 });
    const writes = s.store.write.bind(s.store);
    let raced = false;
    s.store.write = async (ops) => {
      if (!raced && ops.some((o) => o.type === 'put' && String(o.item.SK).startsWith('DID#'))) {
        raced = true; // another request takes the last slot between our check and our write
        await writes([{ type: 'update', key: keys.didQuota(scope), set: {}, add: { active: 1 } }]);
      }
      return writes(ops);
    };
    await expect(s.dids.create(scope, { method: 'key', baseUrl: 'https://x' })).rejects.toMatchObject({ code: 'did_quota_exceeded' });
    expect(localKeys(s.store).map((k) => typeof k.deletion_date)).toEqual(['string']);
    expect(await s.dids.list(scope)).toEqual([]);
  });

  test('creations per minute: past the limit a 429 says when to retry; the next minute is open again', async () => {
    const s = setup({ maxDids: 100, maxCreationsPerMinute: 2 });
    await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    const refused = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' }).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', headers: { 'retry-after': '30' } });
    expect(localKeys(s.store)).toHaveLength(2); // refused before any key was made
    s.advance(30_000);
    await expect(s.dids.create(scope, { method: 'key', baseUrl: 'https://x' })).resolves.toBeDefined();
  });

  test('deactivation: the public DID must be replaced first; a deactivated DID resolves as such, cannot go public, and repeating is harmless', async () => {
    const s = setup();
    const d = await s.dids.create(scope, { method: 'sov', baseUrl: 'https://x' });
    await s.dids.setPublic(scope, d.did);
    await expect(s.dids.deactivate(scope, d.did)).rejects.toMatchObject({ status: 409, code: 'did_is_public' });
    const other = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    await s.dids.setPublic(scope, other.did);
    const done = await s.dids.deactivate(scope, d.did);
    expect(done).toMatchObject({ posture: 'posted', deactivated_at: expect.any(String), key_deletion_date: expect.any(String) });
    expect(await s.resolver.resolve(d.did)).toMatchObject({ deactivatedAt: done.deactivated_at });
    await expect(s.dids.setPublic(scope, d.did)).rejects.toMatchObject({ status: 409, code: 'did_deactivated' });
    await expect(s.keyManager.publicJwk(scope, d.key_ref, d.alg)).rejects.toMatchObject({ code: 'issuer_key_disabled' });
    expect(await s.dids.deactivate(scope, d.did)).toEqual(done);
    expect((await s.store.get(keys.didQuota(scope)))!.active).toBe(1);
  });

  test('a deactivation whose key scheduling failed is finished by the next attempt', async () => {
    const s = setup();
    const d = await s.dids.create(scope, { method: 'key', baseUrl: 'https://x' });
    const schedule = s.keyManager.scheduleDeletion.bind(s.keyManager);
    s.keyManager.scheduleDeletion = async () => {
      throw Object.assign(new Error('key service down'), { name: 'KMSInternalException' });
    };
    await expect(s.dids.deactivate(scope, d.did)).rejects.toThrow('key service down');
    expect(await s.dids.get(scope, d.did)).toMatchObject({ deactivated_at: expect.any(String) });
    expect((await s.dids.get(scope, d.did)).key_deletion_date).toBeUndefined();
    s.keyManager.scheduleDeletion = schedule;
    await expect(s.dids.deactivate(scope, d.did)).resolves.toMatchObject({ key_deletion_date: expect.any(String) });
    expect((await s.store.get(keys.didQuota(scope)))!.active).toBe(0); // counted once
  });
});

test('a DID from before the quota existed frees no slot when deactivated (the count never goes below what it counted)', async () => {
  const store = new MemoryStore();
  const keyManager = new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32)));
  const dids = new DidService({ didcomm: memoryPublicDidDidcomm(store), store, keyManager, taa: new TaaService(store, undefined), indyNamespace: 't', limits: { maxDids: 1, maxCreationsPerMinute: 100 } });
  const scope = tenantScope('21');
  const old = await dids.create(scope, { method: 'key', baseUrl: 'https://x' });
  // As an older version stored it: no quota mark, and a counter that never counted it.
  await store.write([{ type: 'update', key: keys.did(scope, old.qualified), set: {}, remove: ['quota_counted'] }]);
  await store.write([{ type: 'update', key: keys.didQuota(scope), set: { active: 0 } }]);
  await dids.create(scope, { method: 'key', baseUrl: 'https://x' }); // takes the one slot
  await dids.deactivate(scope, old.did);
  expect((await store.get(keys.didQuota(scope)))!.active).toBe(1);
  await expect(dids.create(scope, { method: 'key', baseUrl: 'https://x' })).rejects.toMatchObject({ code: 'did_quota_exceeded' });
});
