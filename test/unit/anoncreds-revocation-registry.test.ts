import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { G1, G2, R, g2FromString, g2ToString, scalarToString } from '../../lib/anoncreds/bn254';
import { parseObjectId, resourceIdOf } from '../../lib/anoncreds/identifiers';
import { anoncredsPublicOperations, OBJECT_CACHE_CONTROL } from '../../lib/anoncreds/operations';
import { PublicObjects } from '../../lib/anoncreds/public-objects';
import { credDefJobFromOutboxItem, registryKeys } from '../../lib/anoncreds/registry';
import { randomBelow } from '../../lib/anoncreds/bignum';
import {
  parseRevocationPublicKey,
  parseRevocationStatusList,
  revocationKeysMatch,
  signNonRevocation,
} from '../../lib/anoncreds/revocation';
import { RevocationRegistryStore, revRegKeys, TAILS_PER_CHUNK } from '../../lib/anoncreds/revocation-registry';
import { generateTailsFile } from '../../lib/anoncreds/tails';
import { BinaryRepresentation, JsonReply, RawRepresentation } from '../../lib/http/contract';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import { anoncredsTestbed } from '../helpers/anoncreds-registry';
import { holderCheckBatch } from '../helpers/anoncreds-revocation-holder';
import { refusal } from '../helpers/refusal';

/**
 * Revocable credential definitions: the worker's registry (keys, definition, tails, status list, γ
 * sealed), their public reads (only under the issuing DID), index allocation and revocation (both
 * atomic under concurrency), and a holder's check of a credential issued at an allocated index.
 */
const BASE = 'https://agent.example.test/prod';
const A = tenantScope('1');
const B = tenantScope('2');
const SCHEMA = { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree'] };
const HOLDER_TIMEOUT_MS = 240_000;

function setup() {
  let clock = Date.parse('2026-11-26T09:00:00Z');
  const now = () => new Date(clock);
  const { store, dids, registry, sealer, worker } = anoncredsTestbed({ now });
  const regs = new RevocationRegistryStore(store, now);
  const tick = (seconds: number) => (clock += seconds * 1000);
  const publicWeb = async (s: TenantScope) => {
    const d = await dids.create(s, { method: 'web', baseUrl: BASE });
    await dids.setPublic(s, d.did);
    return d.qualified;
  };
  const snapshot = () => JSON.stringify([...store.items.entries()].sort());
  const jobOf = (s: TenantScope, id: string) => credDefJobFromOutboxItem([...store.items.values()].find((i) => i.PK === keys.walletPartition(s) && i.SK === `JOBQ#ACCD#${id}`)!)!;
  /** A finished revocable definition of `size` credentials. */
  const revocable = async (s: TenantScope, size: number) => {
    const did = await publicWeb(s);
    const schema = await registry.createSchema(s, BASE, SCHEMA);
    const r = await registry.requestCredDef(s, BASE, { schema_id: schema.schema_id, tag: 'rev', support_revocation: true, revocation_registry_size: size });
    expect(await worker.run(s, jobOf(s, r.id), 1)).toBe('finished');
    const cd = (await registry.getCredDef(s, BASE, r.id)) as any;
    const rid = parseObjectId(cd.revocation_registry.revocation_registry_id, 'revRegDef')!.resourceId;
    return { did, didId: did.split(':').pop()!, cd, rid, record: r };
  };
  return { store, registry, sealer, worker, regs, tick, now, publicWeb, snapshot, revocable };
}


describe('the worker, revocable definitions', () => {
  test('publishes the revocation key, one registry with its tails and status list; the secrets only sealed', async () => {
    const t = setup();
    const { did, didId, cd, rid, record } = await t.revocable(A, 10);
    expect(record).toMatchObject({ support_revocation: true, revocation_registry_size: 10, revocation_registry: null });
    const value = cd.credential_definition.value;
    // anoncreds-rs' field order in value.revocation.
    expect(Object.keys(value.revocation)).toEqual(['g', 'g_dash', 'h', 'h0', 'h1', 'h2', 'htilde', 'h_cap', 'u', 'pk', 'y']);
    expect(resourceIdOf(cd.credential_definition)).toBe(parseObjectId(cd.credential_definition_id, 'credDef')!.resourceId);

    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    const def = JSON.parse(reg.document as string);
    expect(resourceIdOf(def)).toBe(rid);
    expect(def).toMatchObject({ issuerId: did, revocDefType: 'CL_ACCUM', tag: '0', credDefId: cd.credential_definition_id, value: { maxCredNum: 10 } });
    const endpoint = `${BASE}/dids/${didId}/anoncreds`;
    expect(cd.revocation_registry).toEqual({
      revocation_registry_id: `${did}?service=anoncreds&relativeRef=/revRegDef/${rid}`,
      url: `${endpoint}/revRegDef/${rid}`,
      status_list_url: `${endpoint}/revStatus/${rid}`,
      tails_location: `${endpoint}/tails/${def.value.tailsHash}`,
      tails_hash: def.value.tailsHash,
    });
    expect(def.value.tailsLocation).toBe(cd.revocation_registry.tails_location);

    // The private parts: r_key sealed with the definition's key, γ sealed on its own; neither in clear.
    const keyItem = (await t.store.get(registryKeys.credDefKey(A, record.id)))!;
    const rKey = (await t.sealer.openRevocationKey('1', record.id, keyItem))!;
    const pub = parseRevocationPublicKey(value.revocation);
    expect(revocationKeysMatch(pub, rKey)).toBe(true);
    const gammaItem = (await t.store.get(revRegKeys.gamma(A, rid)))!;
    const gammaHex = ((await t.sealer.openJson('1', rid, 'rev-reg-private', gammaItem)) as { value: { gamma: string } }).value.gamma;
    const all = t.snapshot();
    for (const secret of [scalarToString(rKey.x), scalarToString(rKey.sk), gammaHex]) expect(all).not.toContain(secret);
    // Sealed for its purpose: γ's item does not open as a definition key, nor under another registry.
    await expect(t.sealer.openJson('1', rid, 'cred-def-private', gammaItem)).rejects.toThrow();
    await expect(t.sealer.openJson('1', record.id, 'rev-reg-private', gammaItem)).rejects.toThrow();

    // The stored tails are the file of γ, and the initial list is issuance by default.
    const file = generateTailsFile(pub.g_dash, BigInt(`0x${gammaHex}`) % R, 10);
    expect(bs58.encode(createHash('sha256').update(file).digest())).toBe(def.value.tailsHash);
    expect((await t.regs.tails(A, def.value.tailsHash, 9))!.file.equals(file)).toBe(true);
    const list = JSON.parse(reg.status_list as string);
    expect(list).toMatchObject({ revRegDefId: cd.revocation_registry.revocation_registry_id, issuerId: did, revocationList: new Array(10).fill(0), timestamp: Date.parse('2026-11-26T09:00:00Z') / 1000 });
  });

  test('a tails file over one chunk is stored in several and read back whole', async () => {
    const t = setup();
    const { rid } = await t.revocable(A, 600); // 1,201 tails: two chunks
    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    expect(reg.tails_chunks).toBe(Math.ceil(1201 / TAILS_PER_CHUNK));
    const got = (await t.regs.tails(A, reg.tails_hash as string, 9))!;
    expect(got.file.length).toBe(2 + 128 * 1201);
    expect(bs58.encode(createHash('sha256').update(got.file).digest())).toBe(reg.tails_hash);
  }, 60_000);

  test('revocation_registry_size defaults to 1,000 when revocable and is not kept otherwise', async () => {
    const t = setup();
    await t.publicWeb(A);
    const schema = await t.registry.createSchema(A, BASE, SCHEMA);
    expect(await t.registry.requestCredDef(A, BASE, { schema_id: schema.schema_id, tag: 'a', support_revocation: true })).toMatchObject({ revocation_registry_size: 1000 });
    expect(await t.registry.requestCredDef(A, BASE, { schema_id: schema.schema_id, tag: 'b', support_revocation: false, revocation_registry_size: 50 })).toMatchObject({
      support_revocation: false,
      revocation_registry_size: null,
    });
  });
});

describe('index allocation and revocation', () => {
  test('indices 1 … L−1, each once even when allocated concurrently; then revocation_registry_full, nothing changed', async () => {
    const t = setup();
    const { rid } = await t.revocable(A, 10);
    const got = await Promise.all(Array.from({ length: 9 }, () => t.regs.allocateIndex(A, rid)));
    expect([...got].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const before = t.snapshot();
    expect(await refusal(t.regs.allocateIndex(A, rid))).toEqual({ status: 409, code: 'revocation_registry_full' });
    expect(t.snapshot()).toBe(before);
    // Another wallet cannot allocate in it (nor is a counter created there).
    expect(await refusal(t.regs.allocateIndex(B, rid))).toEqual({ status: 404, code: 'rev_reg_not_found' });
    expect(t.snapshot()).toBe(before);
  });

  test('revoking updates the accumulator and a new list version; twice says already revoked; concurrent revocations both land', async () => {
    const t = setup();
    const { rid, cd } = await t.revocable(A, 10);
    for (let n = 0; n < 4; n++) await t.regs.allocateIndex(A, rid);
    const initial = JSON.parse((await t.store.get(revRegKeys.registry(A, rid)))!.status_list as string);
    t.tick(5);
    const first = await t.regs.revoke(A, t.sealer, rid, [2]);
    expect(first).toMatchObject({ revoked: [2], alreadyRevoked: [] });
    expect(first.statusList.revocationList[2]).toBe(1);
    expect(first.statusList.currentAccumulator).not.toBe(initial.currentAccumulator);
    const before = t.snapshot();
    expect(await t.regs.revoke(A, t.sealer, rid, [2])).toMatchObject({ revoked: [], alreadyRevoked: [2] });
    expect(t.snapshot()).toBe(before);
    // Not allocated, out of range, another wallet: refused, nothing changed.
    expect(await refusal(t.regs.revoke(A, t.sealer, rid, [5]))).toEqual({ status: 404, code: 'rev_index_not_found' });
    expect(await refusal(t.regs.revoke(A, t.sealer, rid, [0]))).toEqual({ status: 404, code: 'rev_index_not_found' });
    expect(await refusal(t.regs.revoke(B, t.sealer, rid, [1]))).toEqual({ status: 404, code: 'rev_reg_not_found' });
    expect(t.snapshot()).toBe(before);

    t.tick(5);
    await Promise.all([t.regs.revoke(A, t.sealer, rid, [1]), t.regs.revoke(A, t.sealer, rid, [3])]);
    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    const list = parseRevocationStatusList(JSON.parse(reg.status_list as string));
    expect(list.revoked.map((r, i) => (r ? i : 0)).filter(Boolean)).toEqual([1, 2, 3]);
    expect(reg.version).toBe(4);
    // The accumulator is the initial one minus the three revoked tails: compare with a fresh computation.
    const gammaItem = (await t.store.get(revRegKeys.gamma(A, rid)))!;
    const gamma = BigInt(`0x${((await t.sealer.openJson('1', rid, 'rev-reg-private', gammaItem)) as { value: { gamma: string } }).value.gamma}`);
    const gDash = g2FromString(cd.credential_definition.value.revocation.g_dash);
    let sum = 0n;
    for (let i = 1; i <= 10; i++) if (![1, 2, 3].includes(i)) sum += gamma ** BigInt(11 - i) % R;
    expect(g2ToString(list.accumulator)).toBe(g2ToString(G2.mul(gDash, sum % R)));
  });

  test('the status list at a timestamp: the version in force then, with its neighbours', async () => {
    const t = setup();
    const { rid } = await t.revocable(A, 10);
    const t0 = Date.parse('2026-11-26T09:00:00Z') / 1000;
    await t.regs.allocateIndex(A, rid);
    await t.regs.allocateIndex(A, rid);
    t.tick(100);
    await t.regs.revoke(A, t.sealer, rid, [1]);
    t.tick(100);
    await t.regs.revoke(A, t.sealer, rid, [2]);
    const at = async (ts: number) => {
      const f = await t.regs.statusListAt(A, rid, ts);
      return f && { list: JSON.parse(f.document).revocationList.slice(0, 3), previous: f.previous, next: f.next };
    };
    expect(await at(t0 - 1)).toBeUndefined();
    expect(await at(t0)).toEqual({ list: [0, 0, 0], previous: '', next: String(t0 + 100) });
    expect(await at(t0 + 150)).toEqual({ list: [0, 1, 0], previous: String(t0), next: String(t0 + 200) });
    expect(await at(t0 + 10_000)).toEqual({ list: [0, 1, 1], previous: String(t0 + 100), next: '' });
  });
});

describe('public reads of the registry', () => {
  test('definition (with its status list endpoint), status list and tails bytes, only under the issuing DID', async () => {
    const t = setup();
    const a = await t.revocable(A, 10);
    const b = await t.revocable(B, 10);
    const ops = anoncredsPublicOperations(new PublicObjects(t.store));
    const req = (headers: Record<string, string> = {}) => ({ method: 'GET', url: '', headers });
    const def = (await ops.getRevocationRegistryResource({ params: { id: a.didId, resource_id: a.rid }, baseUrl: BASE, request: req() } as never)) as unknown as RawRepresentation;
    const body = JSON.parse(def.body);
    expect(resourceIdOf(body.resource)).toBe(a.rid);
    expect(body.resourceMetadata).toEqual({ revocationStatusListEndpoint: a.cd.revocation_registry.status_list_url, statusListEndpoint: a.cd.revocation_registry.status_list_url });
    expect(def.headers).toMatchObject({ etag: `"${a.rid}"`, 'cache-control': OBJECT_CACHE_CONTROL });

    await t.regs.allocateIndex(A, a.rid);
    t.tick(10);
    await t.regs.revoke(A, t.sealer, a.rid, [1]);
    const now = Math.floor(t.now().getTime() / 1000);
    const sl = (await ops.getRevocationStatusListResource({ params: { id: a.didId, resource_id: a.rid, timestamp: now }, baseUrl: BASE, request: req() } as never)) as unknown as RawRepresentation;
    const slBody = JSON.parse(sl.body);
    expect(slBody.resource.revocationList[1]).toBe(1);
    expect(slBody.resourceMetadata).toEqual({ previousVersionId: String(now - 10), nextVersionId: '' });

    const hash = body.resource.value.tailsHash;
    const tails = (await ops.getTailsFile({ params: { id: a.didId, tails_hash: hash }, baseUrl: BASE, request: req() } as never)) as unknown as BinaryRepresentation;
    expect(tails).toBeInstanceOf(BinaryRepresentation);
    expect(tails.mediaType).toBe('application/octet-stream');
    expect(bs58.encode(createHash('sha256').update(Buffer.from(tails.body, 'base64')).digest())).toBe(hash);
    const cached = (await ops.getTailsFile({ params: { id: a.didId, tails_hash: hash }, baseUrl: BASE, request: req({ 'if-none-match': `"${hash}"` }) } as never)) as unknown as JsonReply;
    expect(cached.opts.status).toBe(304);

    // A's objects under B's DID (and the reverse), or an unknown id: 404 anoncreds_object_not_found.
    const notFound = { status: 404, code: 'anoncreds_object_not_found' };
    await expect(ops.getRevocationRegistryResource({ params: { id: b.didId, resource_id: a.rid }, baseUrl: BASE, request: req() } as never)).rejects.toMatchObject(notFound);
    await expect(ops.getRevocationStatusListResource({ params: { id: b.didId, resource_id: a.rid, timestamp: now }, baseUrl: BASE, request: req() } as never)).rejects.toMatchObject(notFound);
    await expect(ops.getTailsFile({ params: { id: b.didId, tails_hash: hash }, baseUrl: BASE, request: req() } as never)).rejects.toMatchObject(notFound);
    await expect(ops.getCredentialDefinitionResource({ params: { id: a.didId, resource_id: a.rid }, baseUrl: BASE, request: req() } as never)).rejects.toMatchObject(notFound);
    await expect(ops.getTailsFile({ params: { id: a.didId, tails_hash: '../x' }, baseUrl: BASE, request: req() } as never)).rejects.toMatchObject(notFound);
  });
});

describe('a credential issued at an allocated index, checked by the holder', () => {
  test('accepted with the stored keys; refused once revoked through the registry', async () => {
    const t = setup();
    const { rid, cd, record } = await t.revocable(A, 10);
    const pub = parseRevocationPublicKey(cd.credential_definition.value.revocation);
    const keyItem = (await t.store.get(registryKeys.credDefKey(A, record.id)))!;
    const privateKey = (await t.sealer.openRevocationKey('1', record.id, keyItem))!;
    const gammaItem = (await t.store.get(revRegKeys.gamma(A, rid)))!;
    const gamma = BigInt(`0x${((await t.sealer.openJson('1', rid, 'rev-reg-private', gammaItem)) as { value: { gamma: string } }).value.gamma}`);
    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    const revRegDef = JSON.parse(reg.document as string);
    const tailsFile = (await t.regs.tails(A, reg.tails_hash as string, 9))!.file;
    await t.regs.allocateIndex(A, rid);
    const index = await t.regs.allocateIndex(A, rid);
    const vrPrime = randomBelow(R - 1n) + 1n;
    const m2 = randomBelow(R);
    const issued = signNonRevocation({
      revIdx: index,
      credentialContext: m2,
      ur: G1.mul(pub.h2, vrPrime),
      publicKey: pub,
      privateKey,
      gamma,
      statusList: parseRevocationStatusList(JSON.parse(reg.status_list as string)),
    });
    const inputs = (statusList: unknown) => ({
      revocationKey: cd.credential_definition.value.revocation,
      revRegDef,
      statusList: statusList as { revocationList: number[]; currentAccumulator: string },
      tailsFile,
      rCredential: issued.r_credential,
      primaryM2: m2.toString(),
      vrPrime: scalarToString(vrPrime),
    });
    const before = JSON.parse(reg.status_list as string);
    t.tick(1);
    const other = await t.regs.revoke(A, t.sealer, rid, [1]);
    t.tick(1);
    const after = await t.regs.revoke(A, t.sealer, rid, [index]);
    expect(holderCheckBatch([{ ...inputs(before), issuedWitness: issued.witness.omega }, inputs(other.statusList), inputs(after.statusList)])).toEqual([null, null, 'accumulator']);
  }, HOLDER_TIMEOUT_MS);
});
