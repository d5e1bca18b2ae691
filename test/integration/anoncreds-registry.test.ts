import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { RevocationRegistryStore } from '../../lib/anoncreds/revocation-registry';
import { CredDefKeySealer } from '../../lib/anoncreds/sealed-keys';
import { loadConfig } from '../../lib/config';
import { LocalDataKeys, WalletDataKeys } from '../../lib/didcomm/key-vault';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { tenantScope } from '../../lib/store/keys';
import { parseKeyCorrectnessProof, parsePrimaryPublicKey } from '../../lib/anoncreds/objects';
import { resourceIdOf } from '../../lib/anoncreds/identifiers';
import { holderVerifyKeyCorrectness } from '../helpers/anoncreds-cl-holder';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';

/**
 * The AnonCreds registry through the local runtime (docs/anoncreds.md, "Schemas and credential
 * definitions"): a schema and a credential definition made by a wallet with a did:web public DID,
 * the definition's keys made by the anoncreds worker with fresh safe primes (the real thing: no seam
 * here), resolved as the did:web AnonCreds method resolves it — DID document, service endpoint,
 * object — and checked with the holder-side key-correctness check; other wallets and bad input get
 * 4xx and store nothing.
 */
let api: TestApi;
let a: Awaited<ReturnType<typeof walletWithPublicDid>>;
let b: Awaited<ReturnType<typeof walletWithPublicDid>>;

beforeAll(async () => {
  api = await startTestApi();
  [a, b] = await Promise.all([walletWithPublicDid(api, { method: 'web' }), walletWithPublicDid(api, { method: 'web' })]);
});
afterAll(async () => {
  await api?.rt.stop();
});

const SCHEMA = { schema_name: 'degree schema', schema_version: '1.0', attributes: ['name', 'date', 'degree', 'birthdate_dateint'] };

async function finished(key: string, id: string, timeoutMs = 180_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await ok(api.call('GET', `/api/v1/credential-definitions/${id}`, { key }), 'get cred def');
    if (res.state !== 'wait') return res;
    if (Date.now() > until) throw new Error(`credential definition ${id} still waiting after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('schema, then credential definition (wait → finished by the worker), resolved as the did:web AnonCreds method resolves it', async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: a.key, body: SCHEMA }), 'schema');
  expect(schema.schema).toEqual({ issuerId: a.did, name: SCHEMA.schema_name, version: SCHEMA.schema_version, attrNames: SCHEMA.attributes });
  expect(schema.schema_id).toBe(`${a.did}?service=anoncreds&relativeRef=/schema/${resourceIdOf(schema.schema)}`);
  expect(await ok(api.call('GET', `/api/v1/schemas/${encodeURIComponent(schema.schema_id)}`, { key: a.key }), 'get schema')).toEqual(schema);

  const requested = await api.call('POST', '/api/v1/credential-definitions', { key: a.key, body: { schema_id: schema.schema_id, tag: 'default' } });
  expect(requested.status).toBe(202);
  expect(requested.body).toMatchObject({ state: 'wait', credential_definition_id: null, url: null, schema_id: schema.schema_id, issuer_id: a.did, tag: 'default', support_revocation: false });
  const done = await finished(a.key, requested.body.id);
  expect(done).toMatchObject({ state: 'finished', error_msg: null });
  expect(done.credential_definition).toMatchObject({ issuerId: a.did, schemaId: schema.schema_id, type: 'CL', tag: 'default' });
  expect(done.credential_definition_id).toBe(`${a.did}?service=anoncreds&relativeRef=/credDef/${resourceIdOf(done.credential_definition)}`);
  // Listed, and found by its AnonCreds id too.
  const list = await api.call('GET', '/api/v1/credential-definitions', { key: a.key });
  expect(list.body).toEqual([expect.objectContaining({ id: requested.body.id, state: 'finished', credential_definition_id: done.credential_definition_id })]);
  expect(await ok(api.call('GET', `/api/v1/credential-definitions/${encodeURIComponent(done.credential_definition_id)}`, { key: a.key }), 'by id')).toEqual(done);

  // Resolution as Credo's did:web registry does it: the DID document's `#anoncreds` service, then
  // <serviceEndpoint><relativeRef>, then the hash of the resource must be the id's last segment.
  const didId = a.did.split(':').pop()!;
  const doc = await ok(api.call('GET', `/dids/${didId}/did.json`), 'did document');
  const service = doc.service.find((s: { id: string }) => s.id === `${a.did}#anoncreds`);
  for (const [id, expected] of [
    [schema.schema_id, schema.schema],
    [done.credential_definition_id, done.credential_definition],
  ] as const) {
    const relativeRef = new URLSearchParams(id.slice(id.indexOf('?'))).get('relativeRef')!;
    const res = await fetch(`${service.serviceEndpoint}${relativeRef}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await res.json()) as { resource: unknown; resourceMetadata: unknown };
    expect(body).toEqual({ resource: expected, resourceMetadata: {} });
    expect(resourceIdOf(body.resource)).toBe(relativeRef.split('/').pop());
    const etag = res.headers.get('etag')!;
    expect((await fetch(`${service.serviceEndpoint}${relativeRef}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  }
  expect(`${service.serviceEndpoint}/credDef/${resourceIdOf(done.credential_definition)}`).toBe(done.url);

  // The published key is a CL key whose correctness proof the holder-side check accepts; nothing private is in it.
  const served = (await (await fetch(done.url)).json()) as { resource: { value: { primary: unknown } } };
  const pk = parsePrimaryPublicKey(served.resource.value.primary);
  expect(Object.keys(pk.r).sort()).toEqual(['birthdate_dateint', 'date', 'degree', 'master_secret', 'name']);
  expect(pk.n.toString(2).length).toBeGreaterThanOrEqual(2049);
  expect(holderVerifyKeyCorrectness(pk, parseKeyCorrectnessProof(done.key_correctness_proof))).toBe(true);
  const tampered = parseKeyCorrectnessProof(done.key_correctness_proof);
  expect(holderVerifyKeyCorrectness({ ...pk, z: pk.z + 1n }, tampered)).toBe(false);
  expect(JSON.stringify(served)).not.toMatch(/p_key|r_key|"p"|"q"|sealed|master_secret_blinding/);
  expect(JSON.stringify(done)).not.toMatch(/p_key|"p"|"q"|sealed/);
}, 240_000);

test('a revocable definition (L = 10): registry definition, status list and tails resolved publicly, the tails bytes hashing to tailsHash; indices allocated and revoked through the registry show in the published list', async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: a.key, body: { ...SCHEMA, schema_version: '1.5' } }), 'schema');
  const requested = await api.call('POST', '/api/v1/credential-definitions', { key: a.key, body: { schema_id: schema.schema_id, tag: 'revocable', support_revocation: true, revocation_registry_size: 10 } });
  expect(requested.status).toBe(202);
  expect(requested.body).toMatchObject({ state: 'wait', support_revocation: true, revocation_registry_size: 10, revocation_registry: null });
  const done = await finished(a.key, requested.body.id);
  expect(done).toMatchObject({ state: 'finished', support_revocation: true });
  expect(Object.keys(done.credential_definition.value.revocation)).toEqual(['g', 'g_dash', 'h', 'h0', 'h1', 'h2', 'htilde', 'h_cap', 'u', 'pk', 'y']);
  const reg = done.revocation_registry;

  // As Credo's did:web registry resolves it: <serviceEndpoint><relativeRef>, the hash is the id.
  const didId = a.did.split(':').pop()!;
  const doc = await ok(api.call('GET', `/dids/${didId}/did.json`), 'did document');
  const service = doc.service.find((s: { id: string }) => s.id === `${a.did}#anoncreds`);
  const relativeRef = new URLSearchParams(reg.revocation_registry_id.slice(reg.revocation_registry_id.indexOf('?'))).get('relativeRef')!;
  expect(`${service.serviceEndpoint}${relativeRef}`).toBe(reg.url);
  const res = await fetch(reg.url);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { resource: any; resourceMetadata: any };
  expect(resourceIdOf(body.resource)).toBe(relativeRef.split('/').pop());
  expect(body.resource).toMatchObject({ issuerId: a.did, revocDefType: 'CL_ACCUM', credDefId: done.credential_definition_id, value: { maxCredNum: 10, tailsHash: reg.tails_hash, tailsLocation: reg.tails_location } });
  expect(body.resourceMetadata.statusListEndpoint).toBe(reg.status_list_url);

  // The status list in force now (and none before the registry existed).
  const now = Math.floor(Date.now() / 1000) + 1;
  const list = await fetch(`${body.resourceMetadata.statusListEndpoint}/${now}`);
  expect(list.status).toBe(200);
  const listBody = (await list.json()) as { resource: any; resourceMetadata: any };
  expect(listBody.resource).toMatchObject({ revRegDefId: reg.revocation_registry_id, issuerId: a.did, revocationList: new Array(10).fill(0) });
  expect(listBody.resourceMetadata).toEqual({ previousVersionId: '', nextVersionId: '' });
  expect((await fetch(`${reg.status_list_url}/1000`)).status).toBe(404);

  // The tails file: bytes, whose base58 SHA-256 is the definition's tailsHash.
  const tails = await fetch(body.resource.value.tailsLocation);
  expect(tails.status).toBe(200);
  expect(tails.headers.get('content-type')).toBe('application/octet-stream');
  const bytes = Buffer.from(await tails.arrayBuffer());
  expect(bytes.length).toBe(2 + 128 * 21);
  expect(bs58.encode(createHash('sha256').update(bytes).digest())).toBe(reg.tails_hash);
  // Not under another wallet's DID.
  expect((await fetch(`${api.rt.url}/dids/${b.did.split(':').pop()}/anoncreds/tails/${reg.tails_hash}`)).status).toBe(404);
  expect((await fetch(`${api.rt.url}/dids/${b.did.split(':').pop()}/anoncreds/revRegDef/${relativeRef.split('/').pop()}`)).status).toBe(404);
  expect(JSON.stringify(done)).not.toMatch(/r_key|gamma|sealed/);

  // Issuance (not built yet) will allocate indices and revoke through the registry: done here on the
  // runtime's DynamoDB with the runtime's own data keys, then seen through the public status list.
  const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  const store = new DynamoDbStore(() => client, api.rt.tableName);
  const scope = tenantScope(String(a.walletId));
  const rid = relativeRef.split('/').pop()!;
  const regs = new RevocationRegistryStore(store);
  const config = loadConfig();
  if (config.keyBackend !== 'local') throw new Error('the local runtime uses local keys');
  const sealer = new CredDefKeySealer(new WalletDataKeys(store, new LocalDataKeys(new LocalSecretDeriver(config.localMasterKey)), 'anoncreds'));
  const indices = await Promise.all([regs.allocateIndex(scope, rid), regs.allocateIndex(scope, rid), regs.allocateIndex(scope, rid)]);
  expect([...indices].sort()).toEqual([1, 2, 3]);
  // A later second than the initial list's, so both versions stay addressable by time.
  await new Promise((r) => setTimeout(r, 1100));
  const [one, three] = await Promise.all([regs.revoke(scope, sealer, rid, [1]), regs.revoke(scope, sealer, rid, [3])]);
  expect([one.revoked, three.revoked]).toEqual([[1], [3]]);
  expect(await regs.revoke(scope, sealer, rid, [3])).toMatchObject({ revoked: [], alreadyRevoked: [3] });
  const later = (await (await fetch(`${reg.status_list_url}/${Math.floor(Date.now() / 1000) + 1}`)).json()) as { resource: any; resourceMetadata: any };
  expect(later.resource.revocationList).toEqual([0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
  expect(later.resource.currentAccumulator).not.toBe(listBody.resource.currentAccumulator);
  const before = (await (await fetch(`${reg.status_list_url}/${listBody.resource.timestamp}`)).json()) as { resource: any; resourceMetadata: any };
  expect(before.resource).toEqual(listBody.resource);
  expect(before.resourceMetadata.nextVersionId).not.toBe('');
}, 240_000);

test("other wallets: A's schema and definition are 404 to B; B cannot build on A's schema; public reads only under the issuing DID", async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: a.key, body: { ...SCHEMA, schema_version: '2.0' } }), 'schema');
  const def = await api.call('POST', '/api/v1/credential-definitions', { key: a.key, body: { schema_id: schema.schema_id, tag: 'other' } });
  expect(def.status).toBe(202);
  expectError(await api.call('GET', `/api/v1/schemas/${encodeURIComponent(schema.schema_id)}`, { key: b.key }), 404, 'schema_not_found');
  expectError(await api.call('GET', `/api/v1/credential-definitions/${def.body.id}`, { key: b.key }), 404, 'cred_def_not_found');
  expectError(await api.call('POST', '/api/v1/credential-definitions', { key: b.key, body: { schema_id: schema.schema_id } }), 404, 'schema_not_found');
  expect((await api.call('GET', '/api/v1/schemas', { key: b.key })).body).toEqual([]);
  expect((await api.call('GET', '/api/v1/credential-definitions', { key: b.key })).body).toEqual([]);
  // A's schema under B's DID: not found.
  const rid = schema.schema_id.split('/').pop();
  expect((await fetch(`${api.rt.url}/dids/${b.did.split(':').pop()}/anoncreds/schema/${rid}`)).status).toBe(404);
  expect((await fetch(`${api.rt.url}/dids/${a.did.split(':').pop()}/anoncreds/schema/${rid}`)).status).toBe(200);
  expect((await fetch(`${api.rt.url}/dids/${a.did.split(':').pop()}/anoncreds/credDef/${rid}`)).status).toBe(404);
});

test('bad input: each a 4xx with its code, and nothing stored', async () => {
  const w = await walletWithPublicDid(api, { method: 'web' });
  const schemas = () => api.call('GET', '/api/v1/schemas', { key: w.key }).then((r) => r.body);
  const defs = () => api.call('GET', '/api/v1/credential-definitions', { key: w.key }).then((r) => r.body);
  for (const [body, code] of [
    [{ ...SCHEMA, attributes: ['Name', 'name'] }, 'duplicate_attribute'],
    [{ ...SCHEMA, attributes: ['master_secret'] }, 'reserved_attribute'],
    [{ ...SCHEMA, attributes: [] }, 'invalid_attributes'],
    [{ ...SCHEMA, schema_version: 'v1' }, 'invalid_schema_version'],
    [{ ...SCHEMA, schema_name: '' }, 'invalid_schema_name'],
    [{ ...SCHEMA, extra: 1 }, 'validation_failed'],
    [{ schema_name: 'x' }, 'validation_failed'],
  ] as const) {
    expectError(await api.call('POST', '/api/v1/schemas', { key: w.key, body }), 400, code);
  }
  expect(await schemas()).toEqual([]);
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: w.key, body: SCHEMA }), 'schema');
  expectError(await api.call('POST', '/api/v1/schemas', { key: w.key, body: SCHEMA }), 409, 'schema_exists');
  for (const [body, status, code] of [
    [{ schema_id: schema.schema_id, support_revocation: true, revocation_registry_size: 4097 }, 400, 'invalid_registry_size'],
    [{ schema_id: schema.schema_id, tag: 'a b' }, 400, 'invalid_tag'],
    [{ schema_id: schema.schema_id, revocation_registry_size: 1 }, 400, 'invalid_registry_size'],
    [{ schema_id: `${schema.schema_id.slice(0, -3)}abc` }, 404, 'schema_not_found'],
    [{ schema_id: schema.schema_id, tag: 7 }, 400, 'validation_failed'],
  ] as const) {
    expectError(await api.call('POST', '/api/v1/credential-definitions', { key: w.key, body }), status, code);
  }
  expect(await defs()).toEqual([]);
  expect(await schemas()).toHaveLength(1);
  // A wallet without a public DID, or with a did:key one.
  const none = await api.newWallet();
  expectError(await api.call('POST', '/api/v1/schemas', { key: none.apiKey, body: SCHEMA }), 400, 'public_did_required');
  const keyDid = await walletWithPublicDid(api, { method: 'key' });
  expectError(await api.call('POST', '/api/v1/schemas', { key: keyDid.key, body: SCHEMA }), 400, 'public_did_not_web');
  expectError(await api.call('GET', '/api/v1/credential-definitions/01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: w.key }), 404, 'cred_def_not_found');
  expect((await fetch(`${api.rt.url}/dids/${w.did.split(':').pop()}/anoncreds/schema/not-a-resource-id`)).status).toBe(404);
});
