import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import canonicalize from 'canonicalize';
import { canonicalJson, objectId, parseObjectId, resourceIdOf } from '../../lib/anoncreds/identifiers';
import { type KeyGenerator } from '../../lib/anoncreds/cred-def-worker';
import { parseKeyCorrectnessProof, parsePrimaryPublicKey } from '../../lib/anoncreds/objects';
import { PublicObjects } from '../../lib/anoncreds/public-objects';
import { anoncredsPublicOperations, OBJECT_CACHE_CONTROL } from '../../lib/anoncreds/operations';
import { JsonReply, RawRepresentation } from '../../lib/http/contract';
import { credDefJobFromOutboxItem, registryKeys, REGISTRY_LIMITS } from '../../lib/anoncreds/registry';
import { DidResolver } from '../../lib/resolver/resolver';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import { holderVerifyKeyCorrectness } from '../helpers/anoncreds-cl-holder';
import { anoncredsTestbed, precomputedPrimesGenerator, VECTOR_SAFE_PRIMES } from '../helpers/anoncreds-registry';
import { refusal } from '../helpers/refusal';

/**
 * The AnonCreds registry: did:web AnonCreds method identifiers, schema and credential-definition
 * requests (each bad input a 400 with its code and nothing stored; duplicates 409; another wallet's
 * schema 404), the worker (keys made once, the private key sealed, the object published and its event
 * staged; a failure frees the tag), and public resolution (only under the issuing DID).
 */
const BASE = 'https://agent.example.test/prod';
const A = tenantScope('1');
const B = tenantScope('2');

function setup(generate: KeyGenerator = precomputedPrimesGenerator()) {
  const { store, dids, registry, sealer, worker } = anoncredsTestbed({ generate });
  const publicWeb = async (s: TenantScope) => {
    const d = await dids.create(s, { method: 'web', baseUrl: BASE });
    await dids.setPublic(s, d.did);
    return d.qualified;
  };
  const snapshot = () => JSON.stringify([...store.items.entries()].sort());
  const eventTypes = () => [...store.items.values()].filter((i) => i.type === 'event').map((i) => (i.event as { type: string }).type);
  const jobOf = (s: TenantScope, id: string) => credDefJobFromOutboxItem([...store.items.values()].find((i) => i.PK === keys.walletPartition(s) && i.SK === `JOBQ#ACCD#${id}`)!)!;
  return { store, dids, registry, sealer, worker, publicWeb, snapshot, eventTypes, jobOf };
}

const SCHEMA = { schema_name: 'degree schema', schema_version: '1.0', attributes: ['name', 'date', 'degree', 'birthdate_dateint', 'First Name'] };


describe('identifiers (did:web AnonCreds method)', () => {
  test("the method's example: its canonical form, and the resource id as Credo's registry checks it (canonicalize, SHA-256, base58)", () => {
    const schema = { issuerId: 'did:web:api.anoncreds.idlab.app:acme', name: 'idlab_demo', version: '0.0.1', attrNames: ['id', 'name'] };
    expect(canonicalJson(schema)).toBe('{"attrNames":["id","name"],"issuerId":"did:web:api.anoncreds.idlab.app:acme","name":"idlab_demo","version":"0.0.1"}');
    // Credo's DidWebAnonCredsRegistry (calculateResourceId): the canonicalize package, SHA-256, base58.
    const credo = bs58.encode(createHash('sha256').update((canonicalize as unknown as (v: unknown) => string)(schema)).digest());
    expect(resourceIdOf(schema)).toBe(credo);
    // The specification's example shows the hash in hex and its base58 form (its hex is not the digest of
    // the string it shows, so only the encoding step is checked against it).
    expect(bs58.encode(Buffer.from('3cfdec646be07e4834a64eae2f9038e079585ce7536bf73e6e71a0899c673ba0', 'hex'))).toBe('5762v4VZxFMLB5n9X4Upr3gXaCKTa8PztDDCnroauSsR');
  });

  test('canonical JSON agrees with the canonicalize package (RFC 8785) on keys, escapes and non-ASCII', () => {
    const samples = [
      { b: 'é', a: ['\u2028', 'x"y\\z', '\u0001'], '\u00e9': { z: 1, y: [true, null, 1.5e-7] } },
      { 'a b': 'c', A: 'd', a: 'e', '😀': '\ud83d\ude00', '\uffff': '' },
    ];
    for (const s of samples) expect(canonicalJson(s)).toBe((canonicalize as unknown as (v: unknown) => string)(s));
  });

  test('object ids parse back, and anything else is not an id of ours', () => {
    const did = 'did:web:agent.example.test:prod:dids:abcdefghijkmnopqrstuvw';
    const id = objectId(did, 'schema', '5762v4VZxFMLB5n9X4Upr3gXaCKTa8PztDDCnroauSsR');
    expect(id).toBe(`${did}?service=anoncreds&relativeRef=/schema/5762v4VZxFMLB5n9X4Upr3gXaCKTa8PztDDCnroauSsR`);
    expect(parseObjectId(id, 'schema')).toEqual({ did, resourceId: '5762v4VZxFMLB5n9X4Upr3gXaCKTa8PztDDCnroauSsR' });
    expect(parseObjectId(id, 'credDef')).toBeNull();
    for (const bad of [`${id}x0`, id.replace('service=anoncreds', 'service=other'), id.replace('did:web:', 'did:key:'), `${id}&x=1`, 'Th7MpTaRZVRYnPiabds81Y:2:degree:1.0']) {
      expect(parseObjectId(bad, 'schema')).toBeNull();
    }
  });
});

describe('schemas', () => {
  test('created under the public did:web DID: the id is the hash of the object, served at the DID’s AnonCreds endpoint', async () => {
    const t = setup();
    const did = await t.publicWeb(A);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const schema = { issuerId: did, name: 'degree schema', version: '1.0', attrNames: SCHEMA.attributes };
    expect(s.schema).toEqual(schema);
    expect(s.schema_id).toBe(`${did}?service=anoncreds&relativeRef=/schema/${resourceIdOf(schema)}`);
    const didId = did.split(':').pop();
    expect(s.url).toBe(`${BASE}/dids/${didId}/anoncreds/schema/${resourceIdOf(schema)}`);
    expect(await t.registry.getSchema(A, BASE, s.schema_id)).toEqual(s);
    expect(await t.registry.getSchema(A, BASE, resourceIdOf(schema))).toEqual(s);
    expect((await t.registry.listSchemas(A, BASE, { limit: 10, cursor: undefined })).items).toEqual([s]);
    // The DID document names the endpoint the schema's id resolves through.
    const doc = (await new DidResolver(t.store).resolve(did, BASE))!.document as unknown as { service: unknown[] };
    expect(doc.service).toContainEqual({ id: `${did}#anoncreds`, type: 'AnonCredsRegistry', serviceEndpoint: `${BASE}/dids/${didId}/anoncreds` });
  });

  test.each([
    [{ schema_name: '' }, 'invalid_schema_name'],
    [{ schema_name: ' padded' }, 'invalid_schema_name'],
    [{ schema_name: 'a\nb' }, 'invalid_schema_name'],
    [{ schema_name: 'x'.repeat(REGISTRY_LIMITS.maxNameLength + 1) }, 'invalid_schema_name'],
    [{ schema_version: '' }, 'invalid_schema_version'],
    [{ schema_version: '1.0-beta' }, 'invalid_schema_version'],
    [{ schema_version: '1..0' }, 'invalid_schema_version'],
    [{ attributes: [] }, 'invalid_attributes'],
    [{ attributes: Array.from({ length: REGISTRY_LIMITS.maxAttributes + 1 }, (_, i) => `a${i}`) }, 'invalid_attributes'],
    [{ attributes: ['name', '   '] }, 'invalid_attributes'],
    [{ attributes: ['name', 'x'.repeat(REGISTRY_LIMITS.maxAttributeLength + 1)] }, 'invalid_attributes'],
    [{ attributes: ['name', 'tab\there'] }, 'invalid_attributes'],
    [{ attributes: ['First Name', 'firstname'] }, 'duplicate_attribute'],
    [{ attributes: ['name', 'name'] }, 'duplicate_attribute'],
    [{ attributes: ['name', 'Master_Secret'] }, 'reserved_attribute'],
    [{ attributes: ['name', 'master_secret'] }, 'reserved_attribute'],
    [{ attributes: ['__proto__'] }, 'reserved_attribute'],
  ])('%j is refused (%s) and nothing is stored', async (change, code) => {
    const t = setup();
    await t.publicWeb(A);
    const before = t.snapshot();
    expect(await refusal(t.registry.createSchema(A, BASE, { ...SCHEMA, ...change }))).toEqual({ status: 400, code });
    expect(t.snapshot()).toBe(before);
  });

  test('125 attributes are accepted; the same name and version again is a 409, whatever the attributes', async () => {
    const t = setup();
    await t.publicWeb(A);
    await t.registry.createSchema(A, BASE, { ...SCHEMA, attributes: Array.from({ length: 125 }, (_, i) => `attr ${i}`) });
    const before = t.snapshot();
    expect(await refusal(t.registry.createSchema(A, BASE, { ...SCHEMA, attributes: ['other'] }))).toEqual({ status: 409, code: 'schema_exists' });
    expect(await refusal(t.registry.createSchema(A, BASE, { ...SCHEMA, attributes: Array.from({ length: 125 }, (_, i) => `attr ${i}`) }))).toEqual({ status: 409, code: 'schema_exists' });
    expect(t.snapshot()).toBe(before);
    // Another wallet may use the same name and version: its own DID, its own schema.
    await t.publicWeb(B);
    await expect(t.registry.createSchema(B, BASE, SCHEMA)).resolves.toMatchObject({ schema: { name: SCHEMA.schema_name } });
  });

  test('no public DID, or a public DID that is not did:web: refused, nothing stored', async () => {
    const t = setup();
    let before = t.snapshot();
    expect(await refusal(t.registry.createSchema(A, BASE, SCHEMA))).toEqual({ status: 400, code: 'public_did_required' });
    expect(t.snapshot()).toBe(before);
    const d = await t.dids.create(A, { method: 'key', baseUrl: BASE });
    await t.dids.setPublic(A, d.did);
    before = t.snapshot();
    expect(await refusal(t.registry.createSchema(A, BASE, SCHEMA))).toEqual({ status: 400, code: 'public_did_not_web' });
    expect(t.snapshot()).toBe(before);
  });

  test('the quota: the 1,000th schema is stored, the 1,001st refused', async () => {
    const t = setup();
    await t.publicWeb(A);
    await t.store.write([{ type: 'put', item: { ...registryKeys.schemaQuota(A), type: 'quota', count: REGISTRY_LIMITS.schemasPerWallet - 1 } }]);
    await t.registry.createSchema(A, BASE, SCHEMA);
    const before = t.snapshot();
    expect(await refusal(t.registry.createSchema(A, BASE, { ...SCHEMA, schema_version: '2.0' }))).toEqual({ status: 409, code: 'schema_quota_exceeded' });
    expect(t.snapshot()).toBe(before);
  });

  test("another wallet's schema is not found, by id or resource id", async () => {
    const t = setup();
    await t.publicWeb(A);
    await t.publicWeb(B);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    expect(await refusal(t.registry.getSchema(B, BASE, s.schema_id))).toEqual({ status: 404, code: 'schema_not_found' });
    expect(await refusal(t.registry.getSchema(B, BASE, parseObjectId(s.schema_id, 'schema')!.resourceId))).toEqual({ status: 404, code: 'schema_not_found' });
    expect((await t.registry.listSchemas(B, BASE, { limit: 100, cursor: undefined })).items).toEqual([]);
  });
});

describe('credential definitions', () => {
  test('requested in state wait with its job; the worker makes the keys once, seals the private key and publishes the object', async () => {
    const t = setup();
    const did = await t.publicWeb(A);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const requested = await t.registry.requestCredDef(A, BASE, { schema_id: s.schema_id, tag: 'default', support_revocation: false });
    expect(requested).toMatchObject({ state: 'wait', credential_definition_id: null, url: null, schema_id: s.schema_id, issuer_id: did, tag: 'default', error_msg: null });
    const job = t.jobOf(A, requested.id);
    expect(job).toEqual({ v: 1, wallet_id: '1', definition_id: requested.id });

    expect(await t.worker.run(A, job, 1)).toBe('finished');
    const got = (await t.registry.getCredDef(A, BASE, requested.id)) as any;
    const rid = parseObjectId(got.credential_definition_id, 'credDef')!.resourceId;
    expect(got).toMatchObject({ state: 'finished', url: `${BASE}/dids/${did.split(':').pop()}/anoncreds/credDef/${rid}` });
    expect(got.credential_definition).toMatchObject({ issuerId: did, schemaId: s.schema_id, type: 'CL', tag: 'default' });
    expect(resourceIdOf(got.credential_definition)).toBe(rid);
    // anoncreds-rs names the key's bases by the attributes' common view, plus master_secret.
    expect(Object.keys(got.credential_definition.value.primary.r).sort()).toEqual(['birthdate_dateint', 'date', 'degree', 'firstname', 'master_secret', 'name']);
    const pk = parsePrimaryPublicKey(got.credential_definition.value.primary);
    expect(pk.n).toBe(VECTOR_SAFE_PRIMES[0] * VECTOR_SAFE_PRIMES[1]);
    expect(holderVerifyKeyCorrectness(pk, parseKeyCorrectnessProof(got.key_correctness_proof))).toBe(true);
    expect(await t.registry.getCredDef(A, BASE, got.credential_definition_id)).toEqual(got);

    // The private key is stored only sealed: p' and q' appear nowhere in clear; the sealer opens it to them.
    const p = (VECTOR_SAFE_PRIMES[0] - 1n) / 2n;
    const q = (VECTOR_SAFE_PRIMES[1] - 1n) / 2n;
    const all = t.snapshot();
    expect(all).not.toContain(p.toString());
    expect(all).not.toContain(q.toString());
    const sealed = (await t.store.get(registryKeys.credDefKey(A, requested.id)))!;
    await expect(t.sealer.open('1', requested.id, sealed)).resolves.toEqual({ p, q });
    // Bound to its definition and wallet: moved elsewhere it does not open.
    await expect(t.sealer.open('1', '01ARZ3NDEKTSV4RRFFQ69G5FAV', sealed)).rejects.toThrow();
    expect(t.eventTypes()).toEqual(['anoncreds.credential_definition.finished']);

    // A redelivered job changes nothing.
    const before = t.snapshot();
    expect(await t.worker.run(A, job, 2)).toBe('already_done');
    expect(t.snapshot()).toBe(before);
    expect((await t.registry.listCredDefs(A, BASE, { limit: 100, cursor: undefined })).items).toEqual([expect.objectContaining({ id: requested.id, state: 'finished' })]);
  });

  test.each([
    [{ tag: '' }, 400, 'invalid_tag'],
    [{ tag: 'has space' }, 400, 'invalid_tag'],
    [{ tag: 'x'.repeat(65) }, 400, 'invalid_tag'],
    [{ revocation_registry_size: 3 }, 400, 'invalid_registry_size'],
    [{ revocation_registry_size: REGISTRY_LIMITS.maxRegistrySize + 1, support_revocation: true }, 400, 'invalid_registry_size'],
    [{ revocation_registry_size: 10.5, support_revocation: true }, 400, 'invalid_registry_size'],
    [{ schema_id: 'did:web:elsewhere.example:dids:x?service=anoncreds&relativeRef=/schema/5762v4VZxFMLB5n9X4Upr3gXaCKTa8PztDDCnroauSsR' }, 404, 'schema_not_found'],
    [{ schema_id: 'no such schema' }, 404, 'schema_not_found'],
  ])('%j is refused (%s %s) and nothing is stored', async (change, status, code) => {
    const t = setup();
    await t.publicWeb(A);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const before = t.snapshot();
    expect(await refusal(t.registry.requestCredDef(A, BASE, { schema_id: s.schema_id, tag: 'default', support_revocation: false, ...change }))).toEqual({ status, code });
    expect(t.snapshot()).toBe(before);
  });

  test("another wallet's schema is a 404; the same tag twice on one schema a 409; another tag or schema is fine", async () => {
    const t = setup();
    await t.publicWeb(A);
    await t.publicWeb(B);
    const a = await t.registry.createSchema(A, BASE, SCHEMA);
    let before = t.snapshot();
    expect(await refusal(t.registry.requestCredDef(B, BASE, { schema_id: a.schema_id, tag: 'default', support_revocation: false }))).toEqual({ status: 404, code: 'schema_not_found' });
    expect(t.snapshot()).toBe(before);
    const first = await t.registry.requestCredDef(A, BASE, { schema_id: a.schema_id, tag: 'default', support_revocation: false });
    before = t.snapshot();
    expect(await refusal(t.registry.requestCredDef(A, BASE, { schema_id: a.schema_id, tag: 'default', support_revocation: false }))).toEqual({ status: 409, code: 'cred_def_tag_exists' });
    expect(t.snapshot()).toBe(before);
    await t.registry.requestCredDef(A, BASE, { schema_id: a.schema_id, tag: 'v2', support_revocation: false });
    // B cannot read A's definition by either id.
    expect(await refusal(t.registry.getCredDef(B, BASE, first.id))).toEqual({ status: 404, code: 'cred_def_not_found' });
  });

  test('a generation that fails on every receive ends failed with its event; the tag and quota place are free again', async () => {
    const t = setup(async () => {
      throw new Error('no primes today');
    });
    await t.publicWeb(A);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const r = await t.registry.requestCredDef(A, BASE, { schema_id: s.schema_id, tag: 'default', support_revocation: false });
    const job = t.jobOf(A, r.id);
    await expect(t.worker.run(A, job, 1)).rejects.toThrow('no primes today');
    expect((await t.registry.getCredDef(A, BASE, r.id)).state).toBe('wait');
    expect(await t.worker.run(A, job, 3)).toBe('failed');
    expect(await t.registry.getCredDef(A, BASE, r.id)).toMatchObject({ state: 'failed', error_msg: expect.stringContaining('tag is free again'), credential_definition_id: null });
    expect(t.eventTypes()).toEqual(['anoncreds.credential_definition.failed']);
    expect((await t.store.get(registryKeys.credDefQuota(A)))!.count).toBe(0);
    await expect(t.registry.requestCredDef(A, BASE, { schema_id: s.schema_id, tag: 'default', support_revocation: false })).resolves.toMatchObject({ state: 'wait' });
  });
});

describe('public resolution', () => {
  test('an object is served only under the DID that issued it, while that DID is published and active', async () => {
    const t = setup();
    const didA = await t.publicWeb(A);
    const didB = await t.publicWeb(B);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const r = await t.registry.requestCredDef(A, BASE, { schema_id: s.schema_id, tag: 'default', support_revocation: false });
    await t.worker.run(A, t.jobOf(A, r.id), 1);
    const cd = (await t.registry.getCredDef(A, BASE, r.id)) as any;
    const objects = new PublicObjects(t.store);
    const idA = didA.split(':').pop()!;
    const idB = didB.split(':').pop()!;
    const sRid = parseObjectId(s.schema_id, 'schema')!.resourceId;
    const cRid = parseObjectId(cd.credential_definition_id, 'credDef')!.resourceId;
    expect(JSON.parse((await objects.get(BASE, idA, 'schema', sRid))!.document)).toEqual(s.schema);
    const served = JSON.parse((await objects.get(BASE, idA, 'credDef', cRid))!.document);
    expect(served).toEqual(cd.credential_definition);
    expect(JSON.stringify(served)).not.toMatch(/p_key|"p"|"q"/);
    // Under another wallet's DID, as the other type, an unknown DID or a malformed id: nothing.
    expect(await objects.get(BASE, idB, 'schema', sRid)).toBeUndefined();
    expect(await objects.get(BASE, idA, 'credDef', sRid)).toBeUndefined();
    expect(await objects.get(BASE, 'zzzzzzzzzzzzzzzzzzzzzz', 'schema', sRid)).toBeUndefined();
    expect(await objects.get(BASE, idA, 'schema', '../x')).toBeUndefined();
    // A DID of the same wallet that did not issue it: nothing either.
    const other = await t.dids.create(A, { method: 'web', baseUrl: BASE });
    await t.dids.setPublic(A, other.did);
    expect(await objects.get(BASE, other.qualified.split(':').pop()!, 'schema', sRid)).toBeUndefined();
    expect(await objects.get(BASE, idA, 'schema', sRid)).toBeDefined();
    await t.dids.deactivate(A, didA);
    expect(await objects.get(BASE, idA, 'schema', sRid)).toBeUndefined();
  });
});

describe('public operations', () => {
  test('the resolution body, a strong ETag (the resource id), a day of caching, 304 on a match; 404 otherwise', async () => {
    const t = setup();
    const did = await t.publicWeb(A);
    const s = await t.registry.createSchema(A, BASE, SCHEMA);
    const ops = anoncredsPublicOperations(new PublicObjects(t.store));
    const rid = parseObjectId(s.schema_id, 'schema')!.resourceId;
    const input = (headers: Record<string, string> = {}) => ({ params: { id: did.split(':').pop()!, resource_id: rid }, baseUrl: BASE, request: { method: 'GET', url: '', headers } }) as never;
    const reply = (await ops.getSchemaResource(input())) as unknown as RawRepresentation;
    expect(reply).toBeInstanceOf(RawRepresentation);
    expect(JSON.parse(reply.body)).toEqual({ resource: s.schema, resourceMetadata: {} });
    expect(reply.headers).toMatchObject({ etag: `"${rid}"`, 'cache-control': OBJECT_CACHE_CONTROL });
    const again = (await ops.getSchemaResource(input({ 'if-none-match': `"${rid}"` }))) as unknown as JsonReply;
    expect(again.opts.status).toBe(304);
    await expect(ops.getCredentialDefinitionResource(input())).rejects.toMatchObject({ status: 404, code: 'anoncreds_object_not_found' });
  });
});
