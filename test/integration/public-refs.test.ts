import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { upgradeExistingWallets } from '../../infra/local/runtime';
import type { GuardDecision } from '../../lib/adapters/access-guard';
import type { FunctionName } from '../../lib/service/access';
import { routesOf, type Route, type RouteGroup } from '../../lib/service/routes';
import { newPublicRef } from '../../lib/tenancy/public-refs';
import { observedTestApi, ok, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { SpecWallet } from '../helpers/spec-wallet';
import { answerDcql, parseAuthorizationRequestUri, resolveAuthorizationRequest } from '../helpers/spec-vp-wallet';

/**
 * Public URLs name a wallet by its public reference, never by its sequential id. For every public
 * route: the request acts in the session of exactly the wallet its reference names (the local access
 * guard sees every data and key call, with the principal IAM would see), and a sequential id — of an
 * existing wallet or not — or an unknown reference is a 404 with the same body, after no more than
 * one read of a lookup item and never in any wallet's session.
 */

const observed = observedTestApi();
const { decisions } = observed;
let api: TestApi;
/** Operations driven per group: every public route of the table must be among them. */
const driven = new Map<RouteGroup, Set<string>>();

beforeAll(() => {
  api = observed.api();
});

interface Call {
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

interface Answer {
  readonly status: number;
  readonly text: string;
  /** The guard's decisions for the route's function while the request ran. */
  readonly seen: GuardDecision[];
}

function routeOf(group: RouteGroup, operationId: string): Route {
  const route = routesOf(group).find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no ${operationId} in ${group}`);
  return route;
}

function matches(route: Route, path: string): boolean {
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${source}$`).test(path.split('?')[0]!);
}

/** One request to a public route of `group`; the guard's decisions for the group's function are collected meanwhile. */
async function send(group: RouteGroup, operationId: string, call: Call): Promise<Answer> {
  const route = routeOf(group, operationId);
  if (route.method !== call.method || !matches(route, call.path)) throw new Error(`${call.method} ${call.path} is not ${route.method} ${route.path}`);
  (driven.get(group) ?? driven.set(group, new Set()).get(group)!).add(operationId);
  decisions.length = 0;
  const res = await fetch(`${api.rt.url}${call.path}`, { method: call.method, headers: call.headers ?? {}, ...(call.body !== undefined ? { body: call.body } : {}) });
  const text = await res.text();
  return { status: res.status, text, seen: decisions.filter((d) => d.principal.fn === (group as FunctionName)) };
}

const describeDecision = (d: GuardDecision) => `${d.principal.wallet ?? 'own role'}: ${JSON.stringify(d.request)}`;

/**
 * Every call in the session of `walletId` and no other, at least one; with the function's own role only
 * the lookup of `ref`, MAC derivations (the wallet's issuer secrets) and what `ownAlso` allows.
 */
function expectActsFor(a: Answer, walletId: number, ref: string, ownAlso: (d: GuardDecision) => boolean = () => false, minInSession = 1): void {
  const inSessions = a.seen.filter((d) => d.principal.wallet !== null);
  expect(inSessions.length).toBeGreaterThanOrEqual(minInSession);
  expect(inSessions.filter((d) => d.principal.wallet !== String(walletId)).map(describeDecision)).toEqual([]);
  const own = a.seen.filter((d) => d.principal.wallet === null);
  const lookupOrMac = (d: GuardDecision) =>
    d.request.service === 'kms-mac' || (d.request.service === 'dynamodb' && d.request.action === 'GetItem' && d.request.partition === `SYS#PUBREF#${ref}`) || ownAlso(d);
  expect(own.filter((d) => !lookupOrMac(d)).map(describeDecision)).toEqual([]);
  expect(a.seen.filter((d) => !d.allowed).map(describeDecision)).toEqual([]);
}

/**
 * The enumeration refusal: the same request under the wallet's sequential id, an id no wallet has and
 * a well-formed reference nobody was given. Each is a 404 with the same body (an unknown presentation
 * in the right wallet, where given, too), and none enters any session or reads more than one lookup item.
 */
async function expectRefused(group: RouteGroup, operationId: string, build: (ref: string) => Call, walletId: number, alsoSame?: Call): Promise<void> {
  const answers: Answer[] = [];
  for (const ref of [String(walletId), '999999', newPublicRef()]) answers.push(await send(group, operationId, build(ref)));
  if (alsoSame) answers.push(await send(group, operationId, alsoSame));
  for (const a of answers) expect(a.status).toBe(404);
  expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  for (const a of answers.slice(0, 3)) {
    expect(a.seen.filter((d) => d.principal.wallet !== null).map(describeDecision)).toEqual([]);
    const reads = a.seen.filter((d) => d.request.service === 'dynamodb');
    expect(reads.length).toBeLessThanOrEqual(1);
    for (const r of reads) expect(r.request).toEqual({ service: 'dynamodb', action: 'GetItem', on: 'table', partition: expect.stringMatching(/^SYS#PUBREF#/) });
    // An old id is never looked up as itself.
    expect(reads.map((r) => (r.request as { partition: string }).partition)).not.toContain(`SYS#PUBREF#${walletId}`);
  }
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const SD_JWT = { id: 'Pid', format: 'dc+sd-jwt', vct: 'urn:pid', claims: { given_name: { value_type: 'string' } }, sd_list: ['/given_name'] };

/** A wallet with a public did:key, an SD-JWT configuration bound to a revocation list, and its reference. */
async function issuerWallet() {
  const w = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'p256' } });
  const sd = await ok(api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: w.key, body: SD_JWT }), 'sd-jwt configuration');
  const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: w.key, body: { supported_cred_id: sd.supported_cred_id } }), 'status list definition');
  const offer = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: w.key, body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'Ada' } } }), 'offer');
  return { ...w, sd, def, offer };
}

let a: Awaited<ReturnType<typeof issuerWallet>>;
let b: Awaited<ReturnType<typeof issuerWallet>>;
let credential: string;
let holder: SpecWallet;

beforeAll(async () => {
  [a, b] = [await issuerWallet(), await issuerWallet()];
  expect(a.publicRef).not.toBe(b.publicRef);
});

test("what the admin API hands out names the wallet by its reference: offers, list URLs, request URIs", async () => {
  const issuer = `${api.rt.url}/oid4vci/${a.publicRef}`;
  expect(a.offer.offer.credential_issuer).toBe(issuer);
  expect(decodeURIComponent(a.offer.credential_offer_uri)).toContain(`${issuer}/offers/`);
  const [listed] = await ok(api.call('GET', `/api/v1/status-list/defs/${a.def.id}`, { key: a.key }), 'definition');
  expect(listed.status_lists).toEqual([`${api.rt.url}/status-lists/${a.publicRef}/${a.def.id}/0/ietf`]);
  const request = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: a.key, body: { dcql_query: DCQL, vp_formats: VP_FORMATS } }), 'request');
  expect(parseAuthorizationRequestUri(request.request_uri).requestUri).toBe(`${api.rt.url}/oid4vp/${a.publicRef}/request/${request.presentation.presentation_id}`);
  // Nothing public carries the sequential id.
  for (const url of [a.offer.offer.credential_issuer, listed.status_lists[0], parseAuthorizationRequestUri(request.request_uri).requestUri!]) {
    expect(new URL(url).pathname.split('/')).not.toContain(String(a.walletId));
  }
});

describe('OID4VCI issuer: each route acts for the wallet its reference names', () => {
  test('metadata (both locations), offer, token, nonce, credential and notification', async () => {
    const G: RouteGroup = 'oid4vci-issuer';
    const ref = a.publicRef;
    const issuer = a.offer.offer.credential_issuer as string;
    const offerId = decodeURIComponent(a.offer.credential_offer_uri).split('/offers/')[1]!;
    const get = (path: string): Call => ({ method: 'GET', path });
    const gets: [string, (r: string) => string][] = [
      ['getCredentialIssuerMetadata', (r) => `/.well-known/openid-credential-issuer/oid4vci/${r}`],
      ['getCredentialIssuerMetadataAppended', (r) => `/oid4vci/${r}/.well-known/openid-credential-issuer`],
      ['getAuthorizationServerMetadata', (r) => `/.well-known/oauth-authorization-server/oid4vci/${r}`],
      ['getAuthorizationServerMetadataAppended', (r) => `/oid4vci/${r}/.well-known/oauth-authorization-server`],
      ['getCredentialOffer', (r) => `/oid4vci/${r}/offers/${offerId}`],
    ];
    for (const [op, path] of gets) {
      await expectRefused(G, op, (r) => get(path(r)), a.walletId);
      const real = await send(G, op, get(path(ref)));
      expect(real.status).toBe(200);
      expectActsFor(real, a.walletId, ref);
      if (op.startsWith('getCredentialIssuerMetadata')) expect(JSON.parse(real.text).credential_issuer).toBe(issuer);
    }
    // The other wallet's reference is the other wallet's issuer: its own metadata, not A's offer.
    const theirs = await send(G, 'getCredentialIssuerMetadata', get(`/.well-known/openid-credential-issuer/oid4vci/${b.publicRef}`));
    expect(JSON.parse(theirs.text).credential_issuer).toBe(`${api.rt.url}/oid4vci/${b.publicRef}`);
    expectActsFor(theirs, b.walletId, b.publicRef);
    expect((await send(G, 'getCredentialOffer', get(`/oid4vci/${b.publicRef}/offers/${offerId}`))).status).toBe(404);

    // The refusals spend nothing: the code still redeems afterwards.
    const code = a.offer.offer.grants[GRANT]['pre-authorized_code'];
    const tokenCall = (r: string): Call => ({ method: 'POST', path: `/oid4vci/${r}/token`, headers: FORM, body: new URLSearchParams({ grant_type: GRANT, 'pre-authorized_code': code }).toString() });
    await expectRefused(G, 'token', tokenCall, a.walletId);
    const token = await send(G, 'token', tokenCall(ref));
    expect(token.status).toBe(200);
    expectActsFor(token, a.walletId, ref);
    const { access_token: accessToken } = JSON.parse(token.text);

    const nonceCall = (r: string): Call => ({ method: 'POST', path: `/oid4vci/${r}/nonce` });
    await expectRefused(G, 'nonce', nonceCall, a.walletId);
    const nonce = await send(G, 'nonce', nonceCall(ref));
    expect(nonce.status).toBe(200);
    // Minting reads nothing (the nonce is MACed with A's derived key): that it is A's shows below, where A's credential endpoint takes it.
    expectActsFor(nonce, a.walletId, ref, undefined, 0);

    holder = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const auth = { ...JSON_TYPE, authorization: `Bearer ${accessToken}` };
    const proof = holder.makeProof({ aud: issuer, nonce: JSON.parse(nonce.text).c_nonce, key: holder.newHolderKey() });
    const credentialCall = (r: string): Call => ({ method: 'POST', path: `/oid4vci/${r}/credential`, headers: auth, body: JSON.stringify({ credential_configuration_id: 'Pid', proofs: { jwt: [proof] } }) });
    await expectRefused(G, 'credential', credentialCall, a.walletId);
    // A's access token at B's issuer: checked with B's token key (derived for B), refused before anything is read.
    const elsewhere = await send(G, 'credential', credentialCall(b.publicRef));
    expect(elsewhere.status).toBe(401);
    expectActsFor(elsewhere, b.walletId, b.publicRef, undefined, 0);
    const issued = await send(G, 'credential', credentialCall(ref));
    expect(issued.status).toBe(200);
    expectActsFor(issued, a.walletId, ref);
    const body = JSON.parse(issued.text);
    credential = body.credentials[0].credential;

    const notificationCall = (r: string): Call => ({ method: 'POST', path: `/oid4vci/${r}/notification`, headers: auth, body: JSON.stringify({ notification_id: body.notification_id, event: 'credential_accepted' }) });
    await expectRefused(G, 'notification', notificationCall, a.walletId);
    const notified = await send(G, 'notification', notificationCall(ref));
    expect(notified.status).toBe(204);
    expectActsFor(notified, a.walletId, ref);
  }, 60_000);
});

describe('Status lists: each route acts for the wallet its reference names', () => {
  test('the IETF and W3C forms of a list, by its URL in the credential', async () => {
    const G: RouteGroup = 'status-lists-public';
    expect(credential).toBeDefined();
    const payload = JSON.parse(Buffer.from(credential.split('~')[0]!.split('.')[1]!, 'base64url').toString('utf8'));
    const uri = new URL(payload.status.status_list.uri);
    expect(uri.pathname).toBe(`/status-lists/${a.publicRef}/${a.def.id}/0/ietf`);
    const list = (r: string, format: string): Call => ({ method: 'GET', path: `/status-lists/${r}/${a.def.id}/0/${format}` });
    for (const [op, format] of [['getIetfStatusList', 'ietf'], ['getW3cStatusList', 'w3c']] as const) {
      await expectRefused(G, op, (r) => list(r, format), a.walletId);
      const real = await send(G, op, list(a.publicRef, format));
      expect(real.status).toBe(200);
      expectActsFor(real, a.walletId, a.publicRef);
      // The signed list names the URL it was fetched at.
      const signed = JSON.parse(Buffer.from(real.text.split('.')[1]!, 'base64url').toString('utf8'));
      expect(format === 'ietf' ? signed.sub : signed.id).toBe(`${api.rt.url}${list(a.publicRef, format).path}`);
      // A's definition under B's reference: B's session, where it does not exist.
      const crossed = await send(G, op, list(b.publicRef, format));
      expect(crossed.status).toBe(404);
      expectActsFor(crossed, b.walletId, b.publicRef);
    }
  }, 60_000);
});

const DCQL = { credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:pid'] }, claims: [{ path: ['given_name'] }] }] };
const VP_FORMATS = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] } };

describe('OID4VP verifier: each route acts for the wallet its reference names', () => {
  test('the request object and the response endpoint, by the URIs the request names', async () => {
    const G: RouteGroup = 'oid4vp-verifier';
    expect(credential).toBeDefined();
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: a.key, body: { dcql_query: DCQL, vp_formats: VP_FORMATS } }), 'request');
    const requestPath = new URL(parseAuthorizationRequestUri(created.request_uri).requestUri!).pathname;
    const id = created.presentation.presentation_id as string;
    const unknownHere = (kind: string): string => `/oid4vp/${a.publicRef}/${kind}/${randomUUID()}`;
    expect(requestPath).toBe(`/oid4vp/${a.publicRef}/request/${id}`);

    // Refused under other references without being retrieved: the one-time request object is still there after.
    await expectRefused(G, 'getRequestObject', (r) => ({ method: 'GET', path: `/oid4vp/${r}/request/${id}` }), a.walletId, { method: 'GET', path: unknownHere('request') });
    const crossed = await send(G, 'getRequestObject', { method: 'GET', path: `/oid4vp/${b.publicRef}/request/${id}` });
    expect(crossed.status).toBe(404);
    expectActsFor(crossed, b.walletId, b.publicRef);
    decisions.length = 0;
    const { payload } = await resolveAuthorizationRequest(created.request_uri);
    const retrieved = decisions.filter((d) => d.principal.fn === 'oid4vp-verifier');
    (driven.get(G) ?? driven.set(G, new Set()).get(G)!).add('getRequestObject');
    expectActsFor({ status: 200, text: '', seen: retrieved }, a.walletId, a.publicRef);
    expect(payload.response_uri).toBe(`${api.rt.url}/oid4vp/${a.publicRef}/response/${id}`);

    const { fields } = await answerDcql(payload as never, { pid: credential }, holder.holderKeys[0]!, { dryRun: true });
    const responseCall = (r: string): Call => ({ method: 'POST', path: `/oid4vp/${r}/response/${id}`, headers: FORM, body: new URLSearchParams(fields).toString() });
    await expectRefused(G, 'postPresentationResponse', responseCall, a.walletId, { ...responseCall(a.publicRef), path: unknownHere('response') });
    const answered = await send(G, 'postPresentationResponse', responseCall(a.publicRef));
    expect(answered.status).toBe(200);
    // The issuer DIDs it checks are read through PublicDids with the function's own role, never a session.
    expectActsFor(answered, a.walletId, a.publicRef, (d) => d.request.service === 'dynamodb' && d.request.action === 'Query' && d.request.on === 'PublicDids');
    expect((await ok(api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key: a.key }), 'presentation')).state).toBe('presentation-valid');
  }, 60_000);
});

describe('JSON-LD context files: the reference is part of the id', () => {
  test('a file and the list act for the wallet the reference names; other references, ids and junk are the same 404', async () => {
    const G: RouteGroup = 'jsonld-public';
    const stored = await ok(api.call('POST', '/api/v1/context', { key: a.key, body: { context_file_id: 'refs.jsonld', file: { '@context': { refs: 'https://example.com/vocab#refs' } } } }), 'context file');
    expect(stored.url).toBe(`${api.rt.url}/context/${a.publicRef}:refs.jsonld`);
    const file = (r: string): Call => ({ method: 'GET', path: `/context/${r}:refs.jsonld` });
    await expectRefused(G, 'getContextFile', file, a.walletId, { method: 'GET', path: `/context/${a.publicRef}:missing.jsonld` });
    const real = await send(G, 'getContextFile', file(a.publicRef));
    expect(real.status).toBe(200);
    expectActsFor(real, a.walletId, a.publicRef);
    // A's file name under B's reference: B's session, where it does not exist.
    const crossed = await send(G, 'getContextFile', file(b.publicRef));
    expect(crossed.status).toBe(404);
    expectActsFor(crossed, b.walletId, b.publicRef);
    const list = (r: string): Call => ({ method: 'GET', path: `/context?public_ref=${r}` });
    await expectRefused(G, 'listContextFiles', list, a.walletId);
    const listed = await send(G, 'listContextFiles', list(a.publicRef));
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.text).map((e: { id: string }) => e.id)).toEqual([`${a.publicRef}:refs.jsonld`]);
    expectActsFor(listed, a.walletId, a.publicRef);
  });
});

describe('did:web documents: named by the DID, not by any wallet', () => {
  test('the document path is the DID’s own random id; neither the wallet id nor its reference finds it; no session', async () => {
    const G: RouteGroup = 'resolver';
    const did = (await ok(api.call('POST', '/api/v1/create-did', { key: a.key, body: { method: 'web' } }), 'did:web')).did.did as string;
    await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, { key: a.key }), 'publish');
    const id = did.split(':').at(-1)!;
    expect(id).not.toBe(String(a.walletId));
    expect(id).not.toBe(a.publicRef);
    const document = await send(G, 'getDidWebDocument', { method: 'GET', path: `/dids/${id}/did.json` });
    expect(document.status).toBe(200);
    expect(JSON.parse(document.text).id).toBe(did);
    expect(document.seen.filter((d) => d.principal.wallet !== null)).toEqual([]);
    expect(document.seen.map((d) => `${(d.request as { action?: string }).action} ${(d.request as { on?: string }).on}`)).toEqual(['Query PublicDids']);
    // Refused: 400 where the value cannot be a did:web id of this service, 404 where it could.
    for (const other of [String(a.walletId), a.publicRef]) expect([400, 404]).toContain((await send(G, 'getDidWebDocument', { method: 'GET', path: `/dids/${other}/did.json` })).status);
  });
});

test('a wallet of an older data folder (no reference) gets one when the runtime starts; one that has one keeps it', async () => {
  const c = await api.newWallet();
  const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  const doc = DynamoDBDocumentClient.from(client);
  try {
    // As a data folder from before references: the wallet item without one, no lookup item.
    const key = { PK: `W#${c.walletId}`, SK: 'WALLET' };
    await doc.send(new UpdateCommand({ TableName: api.rt.tableName, Key: key, UpdateExpression: 'REMOVE public_ref' }));
    await doc.send(new DeleteCommand({ TableName: api.rt.tableName, Key: { PK: `SYS#PUBREF#${c.publicRef}`, SK: 'PUBREF' } }));
    await upgradeExistingWallets(client, api.rt.tableName);
    const me = await ok(api.call('GET', '/api/v1/wallet', { key: c.apiKey }), 'wallet');
    expect(me.public_ref).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(me.public_ref).not.toBe(c.publicRef);
    const lookup = await doc.send(new GetCommand({ TableName: api.rt.tableName, Key: { PK: `SYS#PUBREF#${me.public_ref}`, SK: 'PUBREF' }, ConsistentRead: true }));
    expect(lookup.Item).toEqual({ PK: `SYS#PUBREF#${me.public_ref}`, SK: 'PUBREF', wallet_id: String(c.walletId) });
    const metadata = await send('oid4vci-issuer', 'getCredentialIssuerMetadata', { method: 'GET', path: `/.well-known/openid-credential-issuer/oid4vci/${me.public_ref}` });
    expect(metadata.status).toBe(200);
    expectActsFor(metadata, c.walletId, me.public_ref);
    // Run again (every start does): nothing changes, for this wallet or any other.
    const before = await doc.send(new GetCommand({ TableName: api.rt.tableName, Key: { PK: `W#${a.walletId}`, SK: 'WALLET' } }));
    await upgradeExistingWallets(client, api.rt.tableName);
    expect((await ok(api.call('GET', '/api/v1/wallet', { key: c.apiKey }), 'wallet')).public_ref).toBe(me.public_ref);
    expect((await doc.send(new GetCommand({ TableName: api.rt.tableName, Key: { PK: `W#${a.walletId}`, SK: 'WALLET' } }))).Item).toEqual(before.Item);
    expect(before.Item!.public_ref).toBe(a.publicRef);
  } finally {
    client.destroy();
  }
});

test('every public route that names a wallet was driven above', () => {
  // jsonld-public names the wallet inside its ids (`<public_ref>:<name>`) and the list's query: both driven above.
  expect([...(driven.get('jsonld-public') ?? [])].sort()).toEqual(routesOf('jsonld-public').map((r) => r.operationId).sort());
  for (const group of ['oid4vci-issuer', 'status-lists-public', 'oid4vp-verifier'] as const) {
    const named = routesOf(group).filter((r) => r.path.includes('{public_ref}')).map((r) => r.operationId);
    expect(named).toEqual(routesOf(group).map((r) => r.operationId));
    expect([...(driven.get(group) ?? [])].sort()).toEqual(named.sort());
  }
});
