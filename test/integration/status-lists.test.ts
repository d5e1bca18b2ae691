/**
 * STATUS LISTS over HTTP against the local runtime: definitions, entries assigned at issuance, status
 * changes, and the published lists as a verifier that knows nothing of the service reads them —
 * `@sd-jwt/jwt-status-list` for the IETF Token Status List, a decoder written from the W3C text for
 * the Bitstring Status List (test/helpers/w3c-bitstring-status-list.ts), signatures checked with the
 * key from the issuer's DID document. Nobody presses "publish": changes reach the lists by themselves.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getListFromStatusListJWT, getStatusListFromJWT } from '@sd-jwt/jwt-status-list';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { OutboxPublisher } from '../../lib/events/publisher';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { issuableConfiguration, supportedFromItem } from '../../lib/oid4vci/supported';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { tenantScope } from '../../lib/store/keys';
import { resolveIssuerKey } from '../helpers/issued-credentials';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';
import { SpecWallet } from '../helpers/spec-wallet';
import { decodeBitstringStatusList } from '../helpers/w3c-bitstring-status-list';

let api: TestApi;
let ddb: DynamoDBDocumentClient;

interface Issuer {
  key: string;
  walletId: number;
  /** What names the wallet in its lists' URLs (GET /api/v1/wallet). */
  publicRef: string;
  did: string;
  sd: string;
  jwt: string;
}

async function ok<T = any>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await p;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function newIssuer(didBody: Record<string, unknown> = { method: 'key', options: { key_type: 'p256' } }): Promise<Issuer> {
  const w = await api.newWallet();
  const key = w.apiKey;
  await ok(api.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } }), 'accept-taa');
  const d = (await ok(api.call('POST', '/api/v1/create-did', { key, body: didBody }), 'create-did')).did;
  await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(d.did)}`, { key }), 'set-public-did');
  const sd = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', {
      key,
      body: { id: 'Identity_SD', format: 'dc+sd-jwt', vct: 'https://example.com/identity', claims: { given_name: { mandatory: true }, family_name: {} }, sd_list: ['/given_name'] },
    }),
    'sd-jwt configuration',
  );
  const jwt = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/jwt', {
      key,
      body: { id: 'Degree_JWT', type: ['VerifiableCredential', 'UniversityDegreeCredential'], '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { name: {}, degree: {} } },
    }),
    'jwt configuration',
  );
  return { key, walletId: w.walletId, publicRef: w.publicRef, did: d.did, sd: sd.supported_cred_id, jwt: jwt.supported_cred_id };
}

/** Offers a credential and lets an independent wallet take it; returns the exchange id and the credentials. */
async function issue(issuer: Issuer, format: 'sd' | 'jwt', batch = 1): Promise<{ exchangeId: string; credentials: string[] }> {
  const body = format === 'sd' ? { supported_cred_id: issuer.sd, credential_subject: { given_name: 'Erika', family_name: 'Mustermann' } } : { supported_cred_id: issuer.jwt, credential_subject: { name: 'Ada', degree: 'BSc' } };
  const created = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: issuer.key, body }), 'issue');
  const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  const got = await wallet.receive(created.credential_offer_uri, { batch });
  return { exchangeId: created.exchange.exchange_id, credentials: got.credentials };
}

async function fetchList(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

/** The signature of a published list, checked with the key its `kid` resolves to in the issuer's DID document. */
async function verifiedPayload(token: string): Promise<any> {
  const header = decodeProtectedHeader(token);
  const { jwk } = await resolveIssuerKey(api.rt.url, String(header.kid));
  await compactVerify(token, await importJWK(jwk, String(header.alg)));
  return decodeJwt(token);
}

async function ietfStatus(uri: string, idx: number): Promise<number> {
  const res = await fetchList(uri);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/statuslist+jwt');
  await verifiedPayload(res.body);
  return getListFromStatusListJWT(res.body).getStatus(idx);
}

async function w3cStatus(url: string, index: number, statusSize = 1): Promise<number> {
  const res = await fetchList(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/vc+jwt');
  const vc = await verifiedPayload(res.body);
  expect(vc.type).toEqual(['VerifiableCredential', 'BitstringStatusListCredential']);
  return decodeBitstringStatusList(vc.credentialSubject.encodedList, statusSize).status(index);
}

/** Polls until `read` returns `want` (the background publisher's work), and says how long it took. */
async function until(read: () => Promise<number>, want: number, timeoutMs = 20_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    if ((await read()) === want) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`status did not become ${want} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function tableItemsOf(defId: string): Promise<string[]> {
  const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  const found: string[] = [];
  let start: Record<string, any> | undefined;
  do {
    const out = await client.send(new ScanCommand({ TableName: api.rt.tableName, ExclusiveStartKey: start }));
    for (const i of out.Items ?? []) {
      const pk = i.PK?.S ?? '';
      const sk = i.SK?.S ?? '';
      if ((pk.includes(defId) || sk.includes(defId) || i.definition_id?.S === defId) && !sk.startsWith('EVT#')) found.push(`${pk} ${sk}`);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  client.destroy();
  return found;
}

async function eventsOf(walletId: number, type: string): Promise<{ type: string; data: any }[]> {
  const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  const doc = DynamoDBDocumentClient.from(client);
  const out: { type: string; data: any }[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ TableName: api.rt.tableName, KeyConditionExpression: 'PK = :pk AND begins_with(SK, :evt)', ExpressionAttributeValues: { ':pk': `W#${walletId}`, ':evt': 'EVT#' }, ExclusiveStartKey: start }));
    for (const i of page.Items ?? []) if (i.event?.type === type) out.push(i.event);
    start = page.LastEvaluatedKey;
  } while (start);
  client.destroy();
  return out;
}

let a: Issuer;
let b: Issuer;

beforeAll(async () => {
  api = await startTestApi();
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
  [a, b] = await Promise.all([newIssuer(), newIssuer()]);
}, 60_000);
afterAll(async () => {
  ddb?.destroy();
  await api?.rt.stop();
});

describe('status list definitions (contract 4.3)', () => {
  test('bad definitions are 400s naming the field, and change nothing', async () => {
    const before = await ok(api.call('GET', '/api/v1/status-list/defs', { key: a.key }), 'list');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ list_size: 100_000 }, 'list_size', 'validation_failed'],
      [{ list_size: 131_073 * 2 }, 'list_size', 'invalid_list_size'],
      [{ list_size: 2 ** 22 }, 'list_size', 'invalid_list_size'],
      [{ status_size: 3 }, 'status_size', 'validation_failed'],
      [{ status_size: 2 }, 'status_size', 'invalid_status_size'],
      [{ status_purpose: 'message', status_size: 2 }, 'status_message', 'status_message_required'],
      [{ status_purpose: 'message', status_size: 2, status_message: [{ status: '0x0', message: 'a' }, { status: '0x1', message: 'b' }] }, 'status_message', 'invalid_status_message'],
      [{ status_purpose: 'message', status_size: 1, status_message: [{ status: '0x0', message: 'a' }, { status: '0x0', message: 'b' }] }, 'status_message.1.status', 'invalid_status_message'],
      [{ shard_size: 0 }, 'shard_size', 'validation_failed'],
      [{ shard_size: 262_144 }, 'shard_size', 'invalid_shard_size'],
      [{ shard_size: 16 }, 'shard_size', 'invalid_shard_size'],
      [{ status_purpose: 'expiry' }, 'status_purpose', 'validation_failed'],
      [{ supported_cred_id: 'no-such-thing' }, 'supported_cred_id', 'unknown_supported_credential'],
      [{ supported_cred_id: a.sd, list_type: 'w3c' }, 'list_type', 'list_type_mismatch'],
      [{ issuer_did: 'did:key:z6MkNotOurs' }, 'issuer_did', 'unknown_did'],
      [{ unknown_field: 1 }, '', 'validation_failed'],
    ];
    for (const [body, path, code] of cases) {
      const res = await api.call('POST', '/api/v1/status-list/defs', { key: a.key, body });
      expectError(res, 400, code);
      if (path) expect(res.body.details.map((d: any) => d.path)).toContain(path);
    }
    expect(await ok(api.call('GET', '/api/v1/status-list/defs', { key: a.key }), 'list')).toEqual(before);
  });

  test('create, list with filters, read (an array of one, with its lists), delete', async () => {
    const created = await ok(api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { status_purpose: 'suspension' } }), 'create');
    expect(created).toMatchObject({ id: expect.any(String), status_purpose: 'suspension', status_size: 1, list_size: 131072, shard_size: 1024, list_type: 'w3c', issuer_did: a.did, supported_cred_id: null });
    expect(created).not.toHaveProperty('perm_secret');
    const message = await ok(
      api.call('POST', '/api/v1/status-list/defs', {
        key: a.key,
        body: { status_purpose: 'message', status_size: 2, list_size: 262144, status_message: ['0x3', '0x1', '0x2', '0x0'].map((status) => ({ status, message: `m${status}` })) },
      }),
      'create message',
    );
    expect(message.status_message.map((m: any) => m.status)).toEqual(['0x0', '0x1', '0x2', '0x3']);
    const suspensions = await ok(api.call('GET', '/api/v1/status-list/defs?status_purpose=suspension', { key: a.key }), 'filter');
    expect(suspensions.map((d: any) => d.id)).toContain(created.id);
    expect(suspensions.every((d: any) => d.status_purpose === 'suspension')).toBe(true);
    const [detail] = await ok(api.call('GET', `/api/v1/status-list/defs/${created.id}`, { key: a.key }), 'get');
    expect(detail).toMatchObject({ ...created, entries_assigned: 0, status_lists: [`${api.rt.url}/status-lists/${a.publicRef}/${created.id}/0/w3c`] });
    // Another wallet sees none of it.
    expectError(await api.call('GET', `/api/v1/status-list/defs/${created.id}`, { key: b.key }), 404, 'status_list_definition_not_found');
    expectError(await api.call('DELETE', `/api/v1/status-list/defs/${created.id}`, { key: b.key }), 404, 'status_list_definition_not_found');
    expect((await ok(api.call('GET', '/api/v1/status-list/defs', { key: b.key }), 'b list')).map((d: any) => d.id)).not.toContain(created.id);

    const deleted = await ok(api.call('DELETE', `/api/v1/status-list/defs/${created.id}`, { key: a.key }), 'delete');
    expect(deleted).toEqual([created]);
    expectError(await api.call('GET', `/api/v1/status-list/defs/${created.id}`, { key: a.key }), 404, 'status_list_definition_not_found');
    await ok(api.call('DELETE', `/api/v1/status-list/defs/${message.id}`, { key: a.key }), 'delete message');
  });
});

describe('entries at issuance, revocation, and lists any verifier can read', () => {
  let sdDef: any;
  let jwtDef: any;
  beforeAll(async () => {
    sdDef = await ok(api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { supported_cred_id: a.sd } }), 'sd def');
    jwtDef = await ok(api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { supported_cred_id: a.jwt, status_purpose: 'suspension' } }), 'jwt def');
  });

  test('one status list per SD-JWT configuration: a second definition is a 409', async () => {
    expect(sdDef.list_type).toBe('ietf');
    expect(jwtDef).toMatchObject({ list_type: 'w3c', status_purpose: 'suspension' });
    expectError(await api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { supported_cred_id: a.sd, status_purpose: 'suspension' } }), 409, 'supported_credential_bound');
    expectError(await api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { supported_cred_id: a.jwt, status_purpose: 'suspension' } }), 409, 'supported_credential_bound');
  });

  test('an SD-JWT VC carries status.status_list; PATCH revoke reaches the published IETF list by itself', async () => {
    const { exchangeId, credentials } = await issue(a, 'sd');
    const ref = getStatusListFromJWT(credentials[0]!.split('~')[0]!);
    expect(ref.uri).toBe(`${api.rt.url}/status-lists/${a.publicRef}/${sdDef.id}/0/ietf`);
    const entry = await ok(api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: a.key }), 'entry');
    expect(entry).toMatchObject({ list: 0, index: ref.idx, status: '0', assigned: true, definition_id: sdDef.id });

    const token = (await fetchList(ref.uri)).body;
    const payload = await verifiedPayload(token);
    expect(decodeProtectedHeader(token).typ).toBe('statuslist+jwt');
    expect(payload).toMatchObject({ sub: ref.uri, iat: expect.any(Number), exp: expect.any(Number), ttl: expect.any(Number) });
    expect(await ietfStatus(ref.uri, ref.idx)).toBe(0);

    const revoked = await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key }), 'revoke');
    expect(revoked).toMatchObject({ list: 0, index: ref.idx, status: '1', assigned: true });
    await until(() => ietfStatus(ref.uri, ref.idx), 1);
    // Revocation is final.
    expectError(await api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key, body: { status: '0' } }), 400, 'revocation_final');
    expect((await ok(api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: a.key }), 'entry')).status).toBe('1');
  }, 60_000);

  test('a jwt_vc_json credential carries a BitstringStatusListEntry; suspension is lifted and the W3C list follows', async () => {
    const { exchangeId, credentials } = await issue(a, 'jwt');
    const vc = (decodeJwt(credentials[0]!) as any).vc;
    const status = vc.credentialStatus;
    expect(status).toMatchObject({ type: 'BitstringStatusListEntry', statusPurpose: 'suspension', statusListIndex: expect.stringMatching(/^(0|[1-9][0-9]*)$/) });
    expect(status.id).toBe(`${status.statusListCredential}#${status.statusListIndex}`);
    const index = Number(status.statusListIndex);
    expect(await w3cStatus(status.statusListCredential, index)).toBe(0);

    for (const bad of ['2', '11', 'x', '']) {
      const res = await api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key, body: { status: bad } });
      expectError(res, 400, bad === '' ? 'invalid_status' : 'invalid_status');
    }
    expect((await ok(api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: a.key }), 'entry')).status).toBe('0');

    expect((await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key }), 'suspend')).status).toBe('1');
    await until(() => w3cStatus(status.statusListCredential, index), 1);
    expect((await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key, body: { status: '0' } }), 'reinstate')).status).toBe('0');
    await until(() => w3cStatus(status.statusListCredential, index), 0);
  }, 60_000);

  test('a batch gets one index per credential, all revoked together; other wallets get 404s', async () => {
    const { exchangeId, credentials } = await issue(a, 'sd', 3);
    const refs = credentials.map((c) => getStatusListFromJWT(c.split('~')[0]!));
    expect(new Set(refs.map((r) => r.idx)).size).toBe(3);
    const entry = await ok(api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: a.key }), 'entry');
    expect(entry.indexes.map((i: any) => i.index).sort()).toEqual(refs.map((r) => r.idx).sort());

    expectError(await api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: b.key }), 404, 'exchange_not_found');
    expectError(await api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: b.key }), 404, 'exchange_not_found');
    expectError(await api.call('GET', '/api/v1/status-list/entries/no-such-exchange', { key: a.key }), 404, 'exchange_not_found');

    await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: a.key }), 'revoke');
    for (const r of refs) await until(() => ietfStatus(r.uri, r.idx), 1);
  }, 60_000);

  test('published lists are cacheable: ETag and 304, Cache-Control public; unknown lists are 404s', async () => {
    const url = `${api.rt.url}/status-lists/${a.publicRef}/${sdDef.id}/0/ietf`;
    const first = await fetchList(url);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    const again = await fetchList(url, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    for (const path of [
      `/status-lists/${a.publicRef}/${sdDef.id}/7/ietf`, // beyond the spare
      `/status-lists/${b.publicRef}/${sdDef.id}/0/ietf`, // another wallet's path
      `/status-lists/${a.walletId}/${sdDef.id}/0/ietf`, // the wallet's sequential id names nothing public
      `/status-lists/AAAAAAAAAAAAAAAAAAAAAA/${sdDef.id}/0/ietf`, // no such reference
      `/status-lists/${a.publicRef}/00000000-0000-4000-8000-000000000000/0/w3c`,
    ]) {
      expect((await fetchList(`${api.rt.url}${path}`)).status).toBe(404);
    }
    expect((await fetchList(`${api.rt.url}/status-lists/${a.publicRef}/${sdDef.id}/-1/ietf`)).status).toBe(400);
    expect((await fetchList(`${url}?time=1700000000`)).status).toBe(501);
    expect(first.headers.get('access-control-expose-headers')).toBe('ETag');
  });

  test('PUT publish signs every list now, in the format asked for', async () => {
    const res = await ok(api.call('PUT', `/api/v1/status-list/defs/${sdDef.id}/publish`, { key: a.key, body: { status_type: 'w3c' } }), 'publish');
    expect(res).toEqual({ published: true, error: '', definition_id: sdDef.id, status_lists: [`${api.rt.url}/status-lists/${a.publicRef}/${sdDef.id}/0/w3c`, `${api.rt.url}/status-lists/${a.publicRef}/${sdDef.id}/1/w3c`] });
    const vc = await verifiedPayload((await fetchList(res.status_lists[0])).body);
    expect(vc).toMatchObject({ issuer: a.did, credentialSubject: { type: 'BitstringStatusList', statusPurpose: 'revocation' } });
    expectError(await api.call('PUT', `/api/v1/status-list/defs/${sdDef.id}/publish`, { key: a.key, body: { did: 'did:key:z6MkNotOurs' } }), 400, 'unknown_did');
    expectError(await api.call('PUT', `/api/v1/status-list/defs/${sdDef.id}/publish`, { key: b.key }), 404, 'status_list_definition_not_found');
  });
});

describe('a burst of revocations', () => {
  test('concurrent changes in the same shards lose none, and reach the list with fewer signatures than changes (did:web issuer)', async () => {
    const issuer = await newIssuer({ method: 'web' });
    // 8 shards of 16,384 entries: 24 random indexes share shards, so their writes contend.
    const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: issuer.key, body: { supported_cred_id: issuer.sd, shard_size: 16384 } }), 'def');
    const issued = [];
    for (let i = 0; i < 24; i++) issued.push(await issue(issuer, 'sd'));
    const refs = issued.map((x) => getStatusListFromJWT(x.credentials[0]!.split('~')[0]!));
    const uri = refs[0]!.uri;
    expect(await ietfStatus(uri, refs[0]!.idx)).toBe(0); // published once before the burst
    const signatures = async () => (await eventsOf(issuer.walletId, 'status_list.published')).filter((e) => e.data.definition_id === def.id && e.data.list === 0 && e.data.format === 'ietf').length;
    const before = await signatures();

    const answers = await Promise.all(issued.map((x) => api.call('PATCH', `/api/v1/status-list/entries/revoke/${x.exchangeId}`, { key: issuer.key })));
    expect(answers.map((r) => r.status)).toEqual(issued.map(() => 200));
    const readAll = async () => {
      const res = await fetchList(uri);
      await verifiedPayload(res.body); // signed by the did:web key, resolved from its published document
      const list = getListFromStatusListJWT(res.body);
      return refs.filter((r) => list.getStatus(r.idx) === 1).length;
    };
    await until(readAll, refs.length);
    const spent = (await signatures()) - before;
    expect(spent).toBeGreaterThanOrEqual(1);
    // One builder per list: the changes of a burst are signed once (twice if some land during the build).
    expect(spent).toBeLessThanOrEqual(2);
  }, 120_000);
});

describe('publication on DynamoDB', () => {
  test('a publisher that read the list before a change cannot put its older list over the newer one (the version condition, as DynamoDB evaluates it)', async () => {
    const issuer = await newIssuer();
    await ok(api.call('POST', '/api/v1/status-list/defs', { key: issuer.key, body: { supported_cred_id: issuer.sd } }), 'def');
    const { exchangeId, credentials } = await issue(issuer, 'sd');
    const ref = getStatusListFromJWT(credentials[0]!.split('~')[0]!);
    await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: issuer.key }), 'revoke');
    await until(() => ietfStatus(ref.uri, ref.idx), 1);

    const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
    const store = new DynamoDbStore(() => client, api.rt.tableName);
    const scope = tenantScope(String(issuer.walletId));
    const [defId, list] = ref.uri.split('/').slice(-3, -1) as [string, string];
    // The slow publisher: it read the list before the revocation (content version 0). Its signature is
    // never checked here (the write must be refused first), so any signer does.
    const keyManager = { sign: async () => new Uint8Array(64) } as unknown as ConstructorParameters<typeof StatusListPublisher>[0]['keyManager'];
    const slow = new StatusListPublisher({ store, keyManager, events: new OutboxPublisher(store), refs: new PublicRefs(store) });
    slow.read = async () => ({ entries: [], version: 0 });
    const stored = await slow.stored(scope, defId, Number(list), 'ietf');
    expect(stored!.content_version).toBeGreaterThan(0);
    const out = await slow.publish(scope, (await slow.definition(scope, defId))!, Number(list), 'ietf', { force: true });
    client.destroy();
    expect(out).toEqual({ publication: stored, signed: false });
    expect(await ietfStatus(ref.uri, ref.idx)).toBe(1);
  }, 60_000);
});

describe('allocation', () => {
  test('2,000 concurrent allocations get 2,000 distinct indexes, and the counter lost no update', async () => {
    const issuer = await newIssuer();
    const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: issuer.key, body: { supported_cred_id: issuer.jwt } }), 'def');
    const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb, maxAttempts: 10 });
    const store = new DynamoDbStore(() => client, api.rt.tableName);
    const scope = tenantScope(String(issuer.walletId));
    const config = issuableConfiguration(supportedFromItem((await store.get(oid4vciKeys.supported(scope, issuer.jwt)))!));
    const allocator = new StatusAllocator({ store, events: new OutboxPublisher(store), refs: new PublicRefs(store) });
    const indexes: number[] = [];
    const N = 2000;
    let next = 0;
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < N) {
          const i = next++;
          const got = await allocator.allocate(scope, config, `x-${i}`, 1, issuer.did);
          indexes.push(Number((got.claims[0]!.w3c as any).statusListIndex));
        }
      }),
    );
    client.destroy();
    expect(indexes).toHaveLength(N);
    expect(new Set(indexes).size).toBe(N);
    // Not issuance order: the indexes are spread over the list.
    expect(Math.max(...indexes) - Math.min(...indexes)).toBeGreaterThan(131072 / 2);
    const [detail] = await ok(api.call('GET', `/api/v1/status-list/defs/${def.id}`, { key: issuer.key }), 'get');
    expect(detail.entries_assigned).toBe(N);
  }, 120_000);

  test('a full list rolls over to the next (the spare), and a recursive delete leaves nothing behind', async () => {
    const issuer = await newIssuer();
    const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: issuer.key, body: { supported_cred_id: issuer.sd } }), 'def');
    // The list is nearly full: its counter stands one entry before the end.
    await ddb.send(new UpdateCommand({ TableName: api.rt.tableName, Key: { PK: `W#${issuer.walletId}#SLA#${def.id}`, SK: 'N' }, UpdateExpression: 'SET #n = :n', ExpressionAttributeNames: { '#n': 'next' }, ExpressionAttributeValues: { ':n': 131071 } }));
    const { exchangeId, credentials } = await issue(issuer, 'sd', 2);
    const lists = credentials.map((c) => getStatusListFromJWT(c.split('~')[0]!).uri.split('/').at(-2));
    expect(lists).toEqual(['0', '1']);
    const [detail] = await ok(api.call('GET', `/api/v1/status-list/defs/${def.id}`, { key: issuer.key }), 'get');
    expect(detail.status_lists.map((u: string) => u.split('/').at(-2))).toEqual(['0', '1', '2']);
    await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: issuer.key }), 'revoke');
    for (const c of credentials) {
      const ref = getStatusListFromJWT(c.split('~')[0]!);
      await until(() => ietfStatus(ref.uri, ref.idx), 1);
    }

    expectError(await api.call('DELETE', `/api/v1/status-list/defs/${def.id}`, { key: issuer.key }), 409, 'definition_in_use');
    expect(await tableItemsOf(def.id)).not.toEqual([]);
    await ok(api.call('DELETE', `/api/v1/status-list/defs/${def.id}`, { key: issuer.key, body: { recursive_delete: true } }), 'recursive delete');
    // The lists stop at once; the rest goes in the background.
    expect((await fetchList(getStatusListFromJWT(credentials[0]!.split('~')[0]!).uri)).status).toBe(404);
    const start = Date.now();
    while ((await tableItemsOf(def.id)).length > 0) {
      if (Date.now() - start > 20_000) throw new Error(`left behind: ${(await tableItemsOf(def.id)).join(', ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expectError(await api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: issuer.key }), 404, 'status_entry_not_found');
  }, 60_000);
});
