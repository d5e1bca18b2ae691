import { decodeJwt } from 'jose';
import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { getListFromStatusListJWT, getStatusListFromJWT } from '@sd-jwt/jwt-status-list';
import { slotOf, StatusAllocator } from '../../lib/status-lists/allocation';
import { cleanupDefinition, jobKey, jobsForEvent, republish, republishCoalesced } from '../../lib/status-lists/jobs';
import { MEDIA_TYPES, StatusListPublisher } from '../../lib/status-lists/publication';
import { statusKeys } from '../../lib/status-lists/records';
import { keys } from '../../lib/store/keys';
import { configurationFromItem, draftFromJwt, issuableConfiguration } from '../../lib/oid4vci/supported';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { StatusDefinitionGoneError } from '../../lib/oid4vci/protocol/formats';
import { StatusListService } from '../../lib/status-lists/service';
import { AppError } from '../../lib/http/errors';
import type { WriteOp } from '../../lib/store/port';
import { BASE, ISSUER, oid4vciFixture, REF, scope } from '../helpers/oid4vci-fixture';
import { MemoryStore } from '../helpers/memory-store';
import { SpecWallet } from '../helpers/spec-wallet';
import { failWrites, laggingReads, raceBefore } from '../helpers/store-hooks';

/** Status lists in-process, on the in-memory store: allocation, issuance with entries, publication order, background jobs. */

/** A JWT's payload, unverified (jose's decodeJwt). */
const payload = (jwt: string) => decodeJwt(jwt) as Record<string, unknown>;
const assignsEntry = (ops: readonly WriteOp[]) => ops.some((op) => op.type === 'put' && String(op.item.SK).startsWith('SLE#'));
const storesPublication = (ops: readonly WriteOp[]) => ops.some((op) => op.type === 'put' && op.item.type === 'status_publication');

async function setup(store = new MemoryStore()) {
  const f = await oid4vciFixture({ store, status: true });
  const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs });
  const service = new StatusListService({ store, events: f.publisher, publisher });
  const def = await service.create(scope, { supported_cred_id: f.config.supported_cred_id, issuer_did: f.did.did }, BASE);
  /** Offer, token and one credential request with `batch` proofs; the credentials and the exchange id. */
  const receive = async (batch = 1) => {
    const { code, exchangeId } = await f.offer();
    const t = (await f.token(code)) as { access_token: string; c_nonce: string };
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const proofs = Array.from({ length: batch }, () => wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey() }));
    const body = { credential_configuration_id: 'Pid', proofs: { jwt: proofs } };
    return { exchangeId, accessToken: t.access_token, body, issue: async () => ((await f.credential(t.access_token, body)) as { credentials: { credential: string }[] }).credentials.map((c) => c.credential) };
  };
  return { f, store, publisher, service, def, receive };
}

describe('allocation', () => {
  test('a list is a permutation: every index once, in an order unrelated to issuance; entry n = list_size starts list 1', () => {
    const def = { perm_secret: Buffer.alloc(32, 7).toString('base64url'), list_size: 131072 };
    const seen = new Uint8Array(def.list_size);
    let ascending = 0;
    let previous = -1;
    for (let n = 0; n < def.list_size; n++) {
      const { list, index } = slotOf(def, n);
      expect(list).toBe(0);
      seen[index]! += 1;
      if (index > previous) ascending++;
      previous = index;
    }
    expect(seen.every((v) => v === 1)).toBe(true);
    // A counter in disguise would ascend every time; a random order ascends about half the time.
    expect(ascending / def.list_size).toBeGreaterThan(0.45);
    expect(ascending / def.list_size).toBeLessThan(0.55);
    expect(slotOf(def, def.list_size).list).toBe(1);
    // Another definition's secret gives another order.
    expect(slotOf({ ...def, perm_secret: Buffer.alloc(32, 8).toString('base64url') }, 0).index).not.toBe(slotOf(def, 0).index);
  });

  test("each list of a definition has its own order: entries a list apart do not share an index", () => {
    const def = { perm_secret: Buffer.alloc(32, 7).toString('base64url'), list_size: 131072 };
    const order = (list: number) => Array.from({ length: 64 }, (_, i) => slotOf(def, list * def.list_size + i).index);
    expect(order(1)).not.toEqual(order(0));
    expect(order(2)).not.toEqual(order(1));
    expect(order(0).filter((index, i) => index === order(1)[i]).length).toBeLessThan(2);
  });

  test('a batch that crosses the end of a list continues in the next one; entries are staged with their events, not written', async () => {
    const { store, def, f } = await setup();
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 131071 } }]);
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const config = issuableConfiguration(f.config as never);
    const got = await allocator.allocate(scope, config, 'cx-1', 3, f.did.qualified);
    const uris = got.claims.map((c) => (c!.sdJwt as { status_list: { uri: string; idx: number } }).status_list);
    expect(uris.map((u) => u.uri.split('/').at(-2))).toEqual(['0', '1', '1']);
    expect(new Set(uris.map((u) => `${u.uri}#${u.idx}`)).size).toBe(3);
    expect(await store.get(statusKeys.entry(scope, def.id, 'cx-1'))).toBeUndefined();
    const kinds = got.ops.map((op: WriteOp) => (op.type === 'put' ? String(op.item.SK).slice(0, 4) : op.type));
    expect(kinds).toEqual(['SLE#', 'check', 'EVT#']);
    expect((await store.get(statusKeys.counter(scope, def.id)))!.next).toBe(131074);
  });
});

describe('issuance with status entries', () => {
  test('each credential of a batch carries its own index; the entry and its event exist once the credential does', async () => {
    const { receive, f, def, service } = await setup();
    const r = await receive(3);
    const credentials = await r.issue();
    const refs = credentials.map((c) => getStatusListFromJWT(c.split('~')[0]!));
    expect(new Set(refs.map((x) => x.idx)).size).toBe(3);
    expect(refs.every((x) => x.uri === `${BASE}/status-lists/${REF}/${def.id}/0/ietf`)).toBe(true);
    const entry = await service.getEntry(scope, r.exchangeId);
    expect(entry.indexes.map((i) => i.index).sort()).toEqual(refs.map((x) => x.idx).sort());
    expect(f.events('status_list.entry.assigned').map((e) => e.data.credential_exchange_id)).toEqual([r.exchangeId]);
  });

  test('a definition deleted while a credential was being signed: nothing is spent, the same request then succeeds without an entry', async () => {
    const { receive, store, def, service, f } = await setup();
    const r = await receive();
    const raced = raceBefore(store, assignsEntry, async () => void (await service.delete(scope, def.id, true)));
    await expect(r.issue()).rejects.toEqual(expect.objectContaining({ status: 503, code: 'server_error' }));
    expect(raced()).toBe(true);
    expect((await f.exchange(r.exchangeId)).state).toBe('redeemed');
    const [credential] = await r.issue();
    expect(payload(credential!.split('~')[0]!).status).toBeUndefined();
    await expect(r.issue()).rejects.toEqual(expect.objectContaining({ code: 'invalid_nonce' }));
  });

  test('a definition deleted and the c_nonce spent, both while signing: the wallet is told the nonce is spent (final), not to send the request again', async () => {
    const { receive, store, def, service, f } = await setup();
    const r = await receive();
    const nonce = payload(r.body.proofs.jwt[0]!).nonce as string;
    const raced = raceBefore(store, assignsEntry, async (write) => {
      await service.delete(scope, def.id, true);
      await write([{ type: 'put', item: { ...oid4vciKeys.used(scope, 'nonce', nonce), ttl: 1 } }]);
    });
    await expect(r.issue()).rejects.toEqual(expect.objectContaining({ status: 400, code: 'invalid_nonce' }));
    expect(raced()).toBe(true);
    expect((await f.exchange(r.exchangeId)).state).toBe('redeemed');
  });

  test("an SD-JWT configuration's offers come from its status list's signer: verifiers check the list with the issuer's key", async () => {
    const { f, service, def } = await setup();
    const other = await f.dids.create(scope, { method: 'key', baseUrl: BASE });
    await expect(f.exchanges.issue(scope, { supported_cred_id: f.config.supported_cred_id, credential_subject: { given_name: 'E' }, did: other.did }, BASE)).rejects.toEqual(
      expect.objectContaining({ status: 400, code: 'status_list_issuer_mismatch' }),
    );
    // An offer made before the definition existed is denied at the credential endpoint, not issued with a list verifiers would reject.
    await service.delete(scope, def.id, true);
    const early = await f.exchanges.issue(scope, { supported_cred_id: f.config.supported_cred_id, credential_subject: { given_name: 'E' }, did: other.did }, BASE);
    await service.create(scope, { supported_cred_id: f.config.supported_cred_id, issuer_did: f.did.did }, BASE);
    const t = (await f.token(early.offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'])) as { access_token: string; c_nonce: string };
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    await expect(f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey() })] } })).rejects.toEqual(
      expect.objectContaining({ code: 'credential_request_denied' }),
    );
    expect((await f.exchange(early.exchange.exchange_id)).failure_reason).toBe('status_list_issuer_mismatch');
  });

  test('a definition cannot be deleted without recursive_delete once an issuance took an entry, even one racing the delete', async () => {
    const { store, service, def, f } = await setup();
    const raced = raceBefore(
      store,
      (ops) => ops.some((op) => op.type === 'delete' && String(op.key.SK).startsWith('SLD#')),
      async () => void (await new StatusAllocator({ store, events: f.publisher, refs: f.refs }).allocate(scope, issuableConfiguration(f.config as never), 'cx-race', 1, f.did.qualified)),
    );
    await expect(service.delete(scope, def.id, false)).rejects.toEqual(expect.objectContaining({ status: 409, code: 'definition_in_use' }));
    expect(raced()).toBe(true);
    expect((await service.get(scope, def.id)).entries_assigned).toBe(1);
  });

  test('a credential stays revocable after its exchange record is deleted', async () => {
    const { receive, f, service } = await setup();
    const r = await receive();
    await r.issue();
    await f.exchanges.delete(scope, r.exchangeId);
    expect((await service.setStatus(scope, r.exchangeId, undefined, undefined)).status).toBe('1');
  });
});

describe('publication', () => {
  test('a suspension list in IETF form writes "suspended" (0x02), which an IETF reader sees as such', async () => {
    const { receive, service, publisher } = await setup();
    // An SD-JWT configuration takes one definition (here: revocation), so the same list is published as if it were a suspension list.
    const r = await receive();
    await r.issue();
    const entry = await service.getEntry(scope, r.exchangeId);
    await service.setStatus(scope, r.exchangeId, entry.definition_id, '1');
    const def = (await publisher.definition(scope, entry.definition_id))!;
    const asSuspension = { ...def, status_purpose: 'suspension' as const };
    const { publication } = await publisher.publish(scope, asSuspension, 0, 'ietf', { force: true });
    const list = getListFromStatusListJWT(publication.token);
    expect(list.getBitsPerStatus()).toBe(2);
    expect(list.getStatus(entry.index)).toBe(2);
    // And the revocation definition itself says 1 (invalid) in one bit.
    const revocation = await publisher.publish(scope, def, 0, 'ietf', { force: true });
    expect(getListFromStatusListJWT(revocation.publication.token).getStatus(entry.index)).toBe(1);
  });

  test('an older build never replaces a newer publication', async () => {
    const { publisher, def, receive, service } = await setup();
    const r = await receive();
    await r.issue();
    await service.setStatus(scope, r.exchangeId, undefined, undefined);
    const full = (await publisher.definition(scope, def.id))!;
    const newer = await publisher.publish(scope, full, 0, 'ietf');
    expect(newer.signed).toBe(true);
    // A slow publisher that read the list before the change (version 0) comes back now.
    const readBefore = publisher.read.bind(publisher);
    publisher.read = async () => ({ entries: [], version: 0 });
    const older = await publisher.publish(scope, full, 0, 'ietf', { force: true });
    publisher.read = readBefore;
    expect(older.signed).toBe(false);
    expect((await publisher.stored(scope, def.id, 0, 'ietf'))!.token).toBe(newer.publication.token);
  });

  test('re-publishing an unchanged list signs nothing; a change signs once however many jobs ask', async () => {
    const { publisher, def, receive, service, f } = await setup();
    const signs = jest.spyOn(f.keyManager, 'sign');
    expect(await republish(publisher, scope, def.id, 0)).toBe(2); // first publication, and the spare's
    expect(await publisher.stored(scope, def.id, 1, 'ietf')).not.toBeNull();
    expect(await republish(publisher, scope, def.id, 0)).toBe(0);
    const r = await receive();
    await r.issue();
    await service.setStatus(scope, r.exchangeId, undefined, undefined);
    signs.mockClear();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await republish(publisher, scope, def.id, 0));
    expect(results).toEqual([1, 0, 0, 0, 0]);
    expect(signs).toHaveBeenCalledTimes(1);
  });
});

describe('a signer that is gone', () => {
  test('a deactivated signer: publish says so, jobs drop the work, fetches keep the valid publication', async () => {
    const { publisher, def, service, f } = await setup();
    const first = await publisher.serve(scope, def.id, 0, 'ietf');
    await f.dids.deactivate(scope, f.did.did);
    expect(await service.publish(scope, def.id, {})).toEqual({ published: false, error: expect.stringContaining('deactivated'), definition_id: def.id, status_lists: [] });
    const skipped: string[] = [];
    // List 0 is unchanged (nothing to sign); its spare, never signed, cannot be now.
    expect(await republish(publisher, scope, def.id, 0, (r) => skipped.push(r))).toBe(0);
    expect(skipped).toEqual([expect.stringContaining('deactivated')]);
    skipped.length = 0;
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).token).toBe(first.token);
    await expect(publisher.serve(scope, def.id, 0, 'w3c')).rejects.toEqual(expect.objectContaining({ status: 503, code: 'status_list_unavailable' }));
    await expect(publisher.publish(scope, (await publisher.definition(scope, def.id))!, 0, 'w3c')).rejects.toEqual(expect.objectContaining({ code: 'status_list_signer_unavailable' }));
    // A change that cannot be signed: the job is dropped (not retried into the DLQ), and says why.
    const { store } = f;
    await store.write([{ type: 'update', key: statusKeys.shard(scope, def.id, 0, 0), set: { s5: 1 }, add: { version: 1 } }]);
    expect(await republish(publisher, scope, def.id, 0, (r) => skipped.push(r))).toBe(0);
    expect(skipped).toEqual([expect.stringContaining('deactivated')]);
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).token).toBe(first.token);
    // Another signer cannot take over an SD-JWT configuration's list: its credentials name their issuer.
    const other = await f.dids.create(scope, { method: 'key', baseUrl: BASE });
    await expect(service.publish(scope, def.id, { did: other.did })).rejects.toEqual(expect.objectContaining({ status: 400, code: 'status_list_issuer_fixed' }));
    // A list not bound to SD-JWT credentials may change signer, and is published again.
    const free = await service.create(scope, { status_purpose: 'suspension', issuer_did: other.did }, BASE);
    await f.dids.deactivate(scope, other.did);
    expect((await service.publish(scope, free.id, {})).published).toBe(false);
    const third = await f.dids.create(scope, { method: 'key', baseUrl: BASE });
    expect(await service.publish(scope, free.id, { did: third.did })).toMatchObject({ published: true, error: '' });
  });
});

describe('concurrent workers on one list', () => {
  test('one builds, the others only mark the lease; a change made during the build is published by a second build; one signature', async () => {
    const { publisher, def, receive, service, store, f } = await setup();
    await republish(publisher, scope, def.id, 0); // the list and its spare, signed before
    const rs = [await receive(), await receive()];
    for (const r of rs) await r.issue();
    await service.setStatus(scope, rs[0]!.exchangeId, undefined, undefined);
    const signs = jest.spyOn(f.keyManager, 'sign');
    // The second revocation lands just after the first build read the shards.
    const read = publisher.read.bind(publisher);
    let builds = 0;
    publisher.read = async (...args) => {
      const out = await read(...args);
      if (builds++ === 0) await service.setStatus(scope, rs[1]!.exchangeId, undefined, undefined);
      return out;
    };
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => republishCoalesced(store, publisher, scope, def.id, 0)));
    publisher.read = read;
    const builders = outcomes.filter((o) => !o.coalesced);
    expect(builders).toHaveLength(1);
    expect(builders[0]!.builds).toBe(2);
    expect(outcomes.reduce((n, o) => n + o.signed, 0)).toBe(2);
    expect(signs).toHaveBeenCalledTimes(2); // one per build that found new content: the burst's two changes, never six
    const list = getListFromStatusListJWT((await publisher.stored(scope, def.id, 0, 'ietf'))!.token);
    for (const r of rs) expect(list.getStatus((await service.getEntry(scope, r.exchangeId)).index)).toBe(1);
    expect(await store.get(statusKeys.publishLease(scope, def.id, 0))).toBeUndefined();
  });

  test('a build that fails lets go of the lease at once: the next job builds instead of only marking it', async () => {
    const { publisher, def, store } = await setup();
    const read = publisher.read.bind(publisher);
    publisher.read = async () => {
      throw new Error('DynamoDB unavailable');
    };
    await expect(republishCoalesced(store, publisher, scope, def.id, 0)).rejects.toThrow('DynamoDB unavailable');
    publisher.read = read;
    expect(await republishCoalesced(store, publisher, scope, def.id, 0)).toMatchObject({ coalesced: false, builds: 1, signed: 2 });
  });

  test('a holder kept busy past its deadline hands the list to a new job and lets go', async () => {
    const { publisher, def, store, receive } = await setup();
    const r = await receive();
    await r.issue();
    const read = publisher.read.bind(publisher);
    publisher.read = async (...args) => {
      const out = await read(...args);
      // Another job marks the lease while we build.
      await store.write([{ type: 'update', key: statusKeys.publishLease(scope, def.id, 0), set: { dirty: true } }]);
      return out;
    };
    let requeued = 0;
    const out = await republishCoalesced(store, publisher, scope, def.id, 0, { deadline: Date.now() - 1, requeue: async () => void requeued++ });
    publisher.read = read;
    expect(out).toMatchObject({ builds: 1, requeued: true });
    expect(requeued).toBe(1);
    expect(await store.get(statusKeys.publishLease(scope, def.id, 0))).toBeUndefined();
  });

  test('a lease left by a crashed worker expires and the next job takes the list over', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z');
    const { publisher, def, store } = await setup();
    await store.write([{ type: 'put', item: { ...statusKeys.publishLease(scope, def.id, 0), owner: 'crashed', until: Math.floor(clock / 1000) + 90, dirty: false } }]);
    const now = () => new Date(clock);
    expect((await republishCoalesced(store, publisher, scope, def.id, 0, { now })).coalesced).toBe(true);
    clock += 91_000;
    expect(await republishCoalesced(store, publisher, scope, def.id, 0, { now })).toMatchObject({ coalesced: false, builds: 1 });
  });
});

describe('background jobs', () => {
  test('events become jobs: a status change re-publishes each list it touched; a deleted definition is cleaned up', async () => {
    const { receive, service, def, f } = await setup();
    const r = await receive();
    await r.issue();
    await service.setStatus(scope, r.exchangeId, undefined, undefined);
    const [changed] = f.events('status_list.entry.status_changed');
    expect(jobsForEvent(changed!)).toEqual([{ kind: 'publish', wallet_id: '7', definition_id: def.id, list: 0 }]);
    expect(jobsForEvent(f.events('status_list.entry.assigned')[0]!)).toEqual([]);
    await service.delete(scope, def.id, true);
    const [deleted] = f.events('status_list.definition.deleted');
    const jobs = jobsForEvent(deleted!);
    expect(jobs).toEqual([{ kind: 'cleanup', wallet_id: '7', definition_id: def.id, list_size: 131072, shard_size: 1024, lists: 2 }]);
    expect(jobKey(jobs[0]!)).not.toBe(jobKey(jobsForEvent(changed!)[0]!));
  });

  test('cleanup removes entries, shards, publications and the counter, and a second run finds nothing', async () => {
    const { receive, service, def, store, publisher } = await setup();
    for (let i = 0; i < 3; i++) {
      const r = await receive(2);
      await r.issue();
      await service.setStatus(scope, r.exchangeId, undefined, undefined);
    }
    await republish(publisher, scope, def.id, 0);
    const ofDef = () => [...store.items.values()].filter((i) => (String(i.PK).includes(def.id) || String(i.SK).includes(def.id) || i.definition_id === def.id) && !String(i.SK).startsWith('EVT#'));
    expect(ofDef().length).toBeGreaterThan(5);
    const [deleted] = (await service.delete(scope, def.id, true)).map((d) => d.id);
    expect(deleted).toBe(def.id);
    const job = { kind: 'cleanup' as const, wallet_id: '7', definition_id: def.id, list_size: 131072, shard_size: 1024, lists: 2 };
    // Out of time before anything: not done, nothing lost (the worker queues the job again).
    expect(await cleanupDefinition(store, scope, job, Date.now() - 1)).toEqual({ removed: 0, done: false, next: job });
    expect((await cleanupDefinition(store, scope, job)).removed).toBeGreaterThan(0);
    expect(ofDef()).toEqual([]);
    expect(await cleanupDefinition(store, scope, job)).toEqual({ removed: 0, done: true, next: job });
  });

  test('a continuation starts at the list it stopped at', async () => {
    const { def, store } = await setup();
    const shard = (list: number) => statusKeys.shard(scope, def.id, list, 3);
    await store.write([0, 1].map((list) => ({ type: 'put', item: { ...shard(list), s1: 1, version: 1 } }) as WriteOp));
    const job = { kind: 'cleanup' as const, wallet_id: '7', definition_id: def.id, list_size: 131072, shard_size: 1024, lists: 2, from_list: 1 };
    await cleanupDefinition(store, scope, job);
    expect(await store.get(shard(0))).toBeDefined(); // before from_list: left to the run that got that far
    expect(await store.get(shard(1))).toBeUndefined();
  });
});

describe('allocation and publication, at their edges', () => {

  test('a jwt_vc_json configuration gets one W3C entry per bound purpose (a single one as an object), with its status message', async () => {
    const { f, store, service } = await setup();
    const config = await f.supported.create(scope, draftFromJwt({ id: 'Member', type: ['VerifiableCredential', 'Member'], '@context': ['https://www.w3.org/ns/credentials/v2'], credentialSubject: { name: { value_type: 'string' } } }));
    const revocation = await service.create(scope, { supported_cred_id: config.supported_cred_id, issuer_did: f.did.did }, BASE);
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const configOf = async () => configurationFromItem((await store.get(oid4vciKeys.supported(scope, config.supported_cred_id)))!);
    const one = await allocator.allocate(scope, await configOf(), 'cx-1', 1, f.did.qualified);
    const single = one.claims[0]!.w3c as Record<string, unknown>;
    expect(single).toMatchObject({ type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListCredential: `${BASE}/status-lists/${REF}/${revocation.id}/0/w3c` });
    const messages = [
      { status: '0x0', message: 'valid' },
      { status: '0x1', message: 'on hold' },
    ];
    const suspension = await service.create(scope, { supported_cred_id: config.supported_cred_id, issuer_did: f.did.did, status_purpose: 'suspension', status_message: messages }, BASE);
    const two = await allocator.allocate(scope, await configOf(), 'cx-2', 2, f.did.qualified);
    for (const claim of two.claims) {
      const entries = claim!.w3c as Record<string, unknown>[];
      expect(entries.map((e) => [e.statusPurpose, String(e.statusListCredential).split('/').at(-3)]).sort()).toEqual([
        ['revocation', revocation.id],
        ['suspension', suspension.id],
      ].sort());
      expect(entries.find((e) => e.statusPurpose === 'suspension')!.statusMessage).toEqual(messages);
      expect(entries.find((e) => e.statusPurpose === 'revocation')!.statusMessage).toBeUndefined();
    }
    // Two credentials of one request: two indexes in each list.
    const indexes = (purpose: string) => two.claims.map((c) => (c!.w3c as Record<string, unknown>[]).find((e) => e.statusPurpose === purpose)!.statusListIndex);
    expect(new Set(indexes('revocation')).size).toBe(2);
    expect(new Set(indexes('suspension')).size).toBe(2);
    // The entries staged: one per definition, with every index and list of the batch, status 0.
    const entries = two.ops.filter((op: WriteOp) => op.type === 'put' && String(op.item.SK).startsWith('SLE#')).map((op) => (op as { item: Record<string, unknown> }).item);
    expect(entries.map((e) => e.definition_id).sort()).toEqual([revocation.id, suspension.id].sort());
    for (const e of entries) {
      const def = e.definition_id === revocation.id ? revocation : suspension;
      expect(e).toMatchObject({ exchange_id: 'cx-2', list: 0, lists: [0, 0], status: 0, status_purpose: def.status_purpose, status_size: 1 });
      expect((e.indexes as number[]).map(String)).toEqual(indexes(def.status_purpose).map(String));
    }
  });

  test('a definition whose counter is gone when allocating (deleted meanwhile) is named, and nothing is allocated', async () => {
    const { f, store, def } = await setup();
    await store.write([{ type: 'delete', key: statusKeys.counter(scope, def.id) }]);
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    await expect(allocator.allocate(scope, issuableConfiguration(f.config as never), 'cx-1', 1, f.did.qualified)).rejects.toEqual(new StatusDefinitionGoneError(def.id));
    expect(await store.get(statusKeys.counter(scope, def.id))).toBeUndefined();
  });

  test('a configuration bound to a definition of another DID: allocation refuses and names both', async () => {
    const { f, store, def } = await setup();
    const other = await f.dids.create(scope, { method: 'key', baseUrl: BASE });
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const config = issuableConfiguration(f.config as never);
    await expect(allocator.allocate(scope, config, 'cx-1', 1, other.qualified)).rejects.toThrow(`status list definition ${def.id}, signed by ${f.did.qualified}`);
    expect(await allocator.issuerConflict(scope, config, f.did.qualified)).toBeNull();
    expect((await store.get(statusKeys.counter(scope, def.id)))!.next).toBe(0);
  });

  test('every shard of a list is read, past the first hundred, each status at its own index', async () => {
    const { publisher, def, store } = await setup();
    const set = [
      [0, 0, 1],
      [0, 1023, 1],
      [99, 7, 1],
      [100, 0, 1],
      [127, 1023, 1],
    ] as const;
    for (const [shard, at] of set) await store.write([{ type: 'update', key: statusKeys.shard(scope, def.id, 0, shard), set: { [`s${at}`]: 1, s9: 0 }, add: { version: 1 } }]);
    const full = (await publisher.definition(scope, def.id))!;
    const read = await publisher.read(scope, full, 0);
    expect(read.version).toBe(5);
    expect(read.entries.sort((a, b) => a[0] - b[0])).toEqual(set.map(([shard, at, v]) => [shard * 1024 + at, v]));
    const list = getListFromStatusListJWT((await publisher.publish(scope, full, 0, 'ietf')).publication.token);
    for (const [shard, at] of set) expect(list.getStatus(shard * 1024 + at)).toBe(1);
    expect(list.getStatus(9)).toBe(0);
  });

  test('a publication: valid 24 h, cached 60 s, its etag the token hash; signed again from half its validity on', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z');
    const { store, f, def } = await setup();
    const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs, now: () => new Date(clock) });
    const full = (await publisher.definition(scope, def.id))!;
    const first = await publisher.serve(scope, def.id, 0, 'ietf');
    expect(first.expires_at - first.issued_at).toBe(24 * 3600);
    expect(first.issued_at).toBe(clock / 1000);
    expect(payload(first.token)).toMatchObject({ iat: clock / 1000, exp: clock / 1000 + 24 * 3600, ttl: 60 });
    expect(first.etag).toBe(`"${createHash('sha256').update(first.token).digest('base64url').slice(0, 32)}"`);
    expect(f.events('status_list.published').at(-1)!.data).toEqual({
      definition_id: def.id,
      list: 0,
      format: 'ietf',
      url: first.url,
      published_at: new Date(clock).toISOString(),
      expires_at: new Date(clock + 24 * 3600_000).toISOString(),
    });
    clock += 12 * 3600_000;
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).token).toBe(first.token);
    expect((await publisher.publish(scope, full, 0, 'ietf')).signed).toBe(false);
    clock += 1000;
    const second = await publisher.serve(scope, def.id, 0, 'ietf');
    expect(second.issued_at).toBe(clock / 1000);
    expect((await publisher.stored(scope, def.id, 0, 'ietf'))!.token).toBe(second.token);
  });

  test('which lists are served: those in use and the spare after them', async () => {
    const { publisher, def, store } = await setup();
    await expect(publisher.serve(scope, def.id, 1, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 404, code: 'status_list_not_found', message: 'No such status list' }));
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).url).toContain(`/${def.id}/0/ietf`);
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 1 } }]);
    expect((await publisher.serve(scope, def.id, 1, 'ietf')).url).toContain(`/${def.id}/1/ietf`);
    await expect(publisher.serve(scope, def.id, 2, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 404 }));
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 131072 } }]);
    expect(await publisher.listsInUse(scope, (await publisher.definition(scope, def.id))!)).toBe(1);
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 131073 } }]);
    expect((await publisher.serve(scope, def.id, 2, 'ietf')).url).toContain(`/${def.id}/2/ietf`);
    await expect(publisher.serve(scope, 'no-such-definition', 0, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 404, code: 'status_list_not_found', message: 'No such status list' }));
  });

  test('publishing for a definition deleted meanwhile stores nothing; a store failure is not taken for a lost race', async () => {
    const { publisher, def, store } = await setup();
    const full = (await publisher.definition(scope, def.id))!;
    await store.write([{ type: 'delete', key: statusKeys.definition(scope, def.id) }]);
    await expect(publisher.publish(scope, full, 0, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 404, code: 'status_list_not_found', message: 'No such status list' }));
    expect(await publisher.stored(scope, def.id, 0, 'ietf')).toBeNull();

    const other = await setup();
    const otherDef = (await other.publisher.definition(scope, other.def.id))!;
    failWrites(other.store, storesPublication, new Error('DynamoDB unavailable'));
    await expect(other.publisher.publish(scope, otherDef, 0, 'ietf')).rejects.toThrow('DynamoDB unavailable');
  });

  test('a signer deleted from the wallet: publish says which, and a fetch answers 503 while nothing valid is stored', async () => {
    const { publisher, def, store, f } = await setup();
    await store.write([{ type: 'delete', key: keys.did(scope, f.did.did) }]);
    const full = (await publisher.definition(scope, def.id))!;
    await expect(publisher.publish(scope, full, 0, 'ietf')).rejects.toEqual(
      expect.objectContaining({ status: 503, code: 'status_list_signer_unavailable', message: `The signer ${def.issuer_did} of status list definition ${def.id} is no longer a DID of this wallet: publish with another did` }),
    );
    await expect(publisher.serve(scope, def.id, 0, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 503, code: 'status_list_unavailable' }));
  });
});

describe('allocation and publication: what a store, a clock or a signer can change', () => {

  /** The binding, shard and counter items lag on a read that says `consistent: false` (test/helpers/store-hooks.ts). */
  const lagging = (memory: MemoryStore) => laggingReads(memory, (key) => /#SL[SA]#/.test(String(key.PK)) || String(key.SK ?? '').startsWith('SLB#'), { adapterDefault: true });

  test('reads that must see the latest write are strongly consistent: a binding, a status, a counter just written', async () => {
    const { f, store, publisher, def } = await setup();
    lagging(store);
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const got = await allocator.allocate(scope, issuableConfiguration(f.config as never), 'cx-1', 1, f.did.qualified);
    expect(got.claims[0]!.sdJwt).toMatchObject({ status_list: { uri: expect.stringContaining(`/${def.id}/0/ietf`) } });
    await store.write([{ type: 'update', key: statusKeys.shard(scope, def.id, 0, 3), set: { s5: 1 }, add: { version: 1 } }]);
    const full = (await publisher.definition(scope, def.id))!;
    expect(await publisher.read(scope, full, 0)).toEqual({ entries: [[3 * 1024 + 5, 1]], version: 1 });
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 1 } }]);
    expect(await publisher.listsInUse(scope, full)).toBe(1);
    expect((await publisher.serve(scope, def.id, 1, 'ietf')).url).toContain(`/${def.id}/1/ietf`);
  });

  test('the credential endpoint when allocation fails: a definition gone meanwhile is a 503 to send again, a store failure is thrown as it is; nothing moves either way', async () => {
    const { f, store, def, receive } = await setup();
    const r = await receive();
    const counter = (await store.get(statusKeys.counter(scope, def.id)))!;
    await store.write([{ type: 'delete', key: statusKeys.counter(scope, def.id) }]);
    await expect(r.issue()).rejects.toEqual(expect.objectContaining({ status: 503, code: 'server_error', message: 'A status list of this credential changed during issuance; send the request again' }));
    expect((await f.exchange(r.exchangeId)).state).toBe('redeemed');
    await store.write([{ type: 'put', item: counter }]);
    const down = jest.spyOn(store, 'increment').mockRejectedValue(new Error('DynamoDB unavailable'));
    await expect(r.issue()).rejects.toThrow('DynamoDB unavailable');
    expect((await f.exchange(r.exchangeId)).state).toBe('redeemed');
    down.mockRestore();
    expect(await r.issue()).toHaveLength(1);
  });

  test('a configuration never bound to a status list costs no query at issuance', async () => {
    const { f, store } = await setup();
    const query = jest.spyOn(store, 'query');
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const config = { ...issuableConfiguration(f.config as never), statusListsBound: false };
    expect(await allocator.allocate(scope, config, 'cx-1', 2, f.did.qualified)).toEqual({ claims: [null, null], ops: [] });
    expect(await allocator.issuerConflict(scope, config, 'did:example:other')).toBeNull();
    expect(query).not.toHaveBeenCalled();
  });

  test('a store failure on the counter is thrown as it is, not taken for a deleted definition', async () => {
    const { f, store } = await setup();
    store.increment = async () => Promise.reject(new Error('DynamoDB unavailable'));
    const allocator = new StatusAllocator({ store, events: f.publisher, refs: f.refs });
    const refused = allocator.allocate(scope, issuableConfiguration(f.config as never), 'cx-1', 1, f.did.qualified);
    await expect(refused).rejects.toThrow('DynamoDB unavailable');
    await expect(refused).rejects.not.toBeInstanceOf(StatusDefinitionGoneError);
  });

  test('refresh and message lists have no IETF form: publishing one as ietf is a 400 that says so, w3c signs', async () => {
    const { f, service, publisher } = await setup();
    const messages = [
      { status: '0x0', message: 'none' },
      { status: '0x1', message: 'see the issuer' },
    ];
    for (const purpose of ['refresh', 'message'] as const) {
      const def = await service.create(scope, { status_purpose: purpose, issuer_did: f.did.did, ...(purpose === 'message' ? { status_message: messages } : {}) }, BASE);
      const full = (await publisher.definition(scope, def.id))!;
      await expect(publisher.publish(scope, full, 0, 'ietf')).rejects.toEqual(
        expect.objectContaining({
          status: 400,
          code: 'unsupported_status_type',
          message: `A ${purpose} list has no IETF Token Status List form (its values mean valid, invalid, suspended)`,
          details: [{ path: 'status_type', message: 'w3c only for this purpose' }],
        }),
      );
      expect((await publisher.publish(scope, full, 0, 'w3c')).signed).toBe(true);
    }
  });

  test("a W3C list carries its definition's status messages", async () => {
    const { f, service, publisher } = await setup();
    const messages = [
      { status: '0x0', message: 'valid' },
      { status: '0x1', message: 'on hold' },
    ];
    const def = await service.create(scope, { status_purpose: 'suspension', issuer_did: f.did.did, status_message: messages }, BASE);
    const subject = payload((await publisher.serve(scope, def.id, 0, 'w3c')).token).credentialSubject as Record<string, unknown>;
    expect(subject).toMatchObject({ statusPurpose: 'suspension', statusMessage: messages });
  });

  test("the media type a list is served with is the one its token's typ names (application/<typ>)", async () => {
    const { publisher, def } = await setup();
    for (const format of ['ietf', 'w3c'] as const) {
      const { token } = await publisher.serve(scope, def.id, 0, format);
      const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { typ: string };
      expect(MEDIA_TYPES[format]).toBe(`application/${header.typ}`);
    }
  });

  test('PUT publish (force) signs an unchanged, fresh list again', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z');
    const { store, f, def } = await setup();
    const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs, now: () => new Date(clock) });
    const full = (await publisher.definition(scope, def.id))!;
    const first = await publisher.publish(scope, full, 0, 'ietf');
    clock += 1000;
    expect((await publisher.publish(scope, full, 0, 'ietf')).signed).toBe(false);
    const forced = await publisher.publish(scope, full, 0, 'ietf', { force: true });
    expect(forced.signed).toBe(true);
    expect(forced.publication.issued_at).toBe(first.publication.issued_at + 1);
    expect((await publisher.stored(scope, def.id, 0, 'ietf'))!.token).toBe(forced.publication.token);
  });

  test("a store failure reading the signer's DID is thrown as it is, not taken for a signer gone", async () => {
    const { f, store, publisher, def } = await setup();
    const get = store.get.bind(store);
    const didKey = keys.did(scope, f.did.did);
    store.get = async (key) => (key.PK === didKey.PK && key.SK === didKey.SK ? Promise.reject(new Error('DynamoDB unavailable')) : get(key));
    const full = (await publisher.definition(scope, def.id))!;
    await expect(publisher.publish(scope, full, 0, 'ietf')).rejects.toThrow('DynamoDB unavailable');
    await expect(publisher.publish(scope, full, 0, 'ietf')).rejects.not.toBeInstanceOf(AppError);
  });

  test('a fresh publication made under another URL is not served: the list is signed again under its own', async () => {
    const { publisher, def, store } = await setup();
    const first = await publisher.serve(scope, def.id, 0, 'ietf');
    await store.write([{ type: 'update', key: statusKeys.publication(scope, def.id, 0, 'ietf'), set: { url: 'https://old.example/status-lists/x/0/ietf' } }]);
    const served = await publisher.serve(scope, def.id, 0, 'ietf');
    expect(served.url).toBe(first.url);
    expect(payload(served.token).sub).toBe(first.url);
    expect((await publisher.stored(scope, def.id, 0, 'ietf'))!.url).toBe(first.url);
  });

  test('a signer gone: an aging publication is served while valid, a 503 from its expiry on', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z');
    const { store, f, def } = await setup();
    const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs, now: () => new Date(clock) });
    const first = await publisher.serve(scope, def.id, 0, 'ietf');
    await f.dids.deactivate(scope, f.did.did);
    clock += 12 * 3600_000 + 1000;
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).token).toBe(first.token);
    clock = first.expires_at * 1000 - 1000;
    expect((await publisher.serve(scope, def.id, 0, 'ietf')).token).toBe(first.token);
    clock = first.expires_at * 1000;
    await expect(publisher.serve(scope, def.id, 0, 'ietf')).rejects.toEqual(expect.objectContaining({ status: 503, code: 'status_list_unavailable', message: 'This status list cannot be signed at the moment' }));
  });

  test('a fetch whose signing fails for another reason passes that error on, not "cannot be signed"', async () => {
    const { publisher, def, store } = await setup();
    failWrites(store, storesPublication, new Error('DynamoDB unavailable'));
    await expect(publisher.serve(scope, def.id, 0, 'ietf')).rejects.toThrow('DynamoDB unavailable');
    await expect(publisher.serve(scope, def.id, 0, 'ietf')).rejects.not.toBeInstanceOf(AppError);
  });
});
