/**
 * JSON-LD credentials over DIDComm, end to end over HTTP (issue 23): Credo 0.6.3 as the holder
 * (Issue Credential 2.0 with its JSON-LD format service, auto-accepting) and a wallet of the service
 * issuing with POST /api/v1/credentials/json-ld. The offer leaves through the outbound worker, Credo's
 * request is checked by the inbound worker, the issuing worker signs (the local key manager) and sends
 * the credential, Credo verifies it with its own W3C stack, stores it and acks. @digitalbazaar/vc
 * verifies the same credential independently; a tampered copy fails both.
 */
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { DidCommCredentialState } from '@credo-ts/didcomm';
import { JsonTransformer, TypedArrayEncoder, W3cJsonLdVerifiableCredential } from '@credo-ts/core';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { LoopbackWebDidResolver } from '../helpers/credo-support';
import { didWebUrl } from '../helpers/issued-credentials';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { fetchPublishedStatusList, publishedStatus } from '../helpers/w3c-bitstring-status-list';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let hooks: Receiver;
let acme: { apiKey: string };
let other: { apiKey: string };
let did: string;
let otherDid: string;
let jwkX: string;

beforeAll(async () => {
  // Credo resolves did:web issuers from our public did.json route over loopback http.
  [api, credo, hooks] = await Promise.all([startTestApi(), startCredoPeer({ label: 'Ada (Credo)', jsonLdCredentials: true, resolvers: [new LoopbackWebDidResolver()] }), startReceiver()]);
  acme = await api.newWallet();
  other = await api.newWallet();
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: acme.apiKey, body: { urls: [`${hooks.url}/acme`] } }), 'webhook target');
  const made = (await ok(api.call('POST', '/api/v1/create-did', { key: acme.apiKey, body: { method: 'key' } }), 'create-did')).did;
  did = made.did;
  otherDid = (await ok(api.call('POST', '/api/v1/create-did', { key: other.apiKey, body: { method: 'key' } }), 'create-did')).did.did;
  const resolved = await ok(api.call('GET', `/1.0/identifiers/${encodeURIComponent(did)}`, {}), 'resolve');
  jwkX = ((resolved.didDocument ?? resolved).verificationMethod[0].publicKeyJwk as { x: string }).x;
}, 120_000);

afterAll(async () => {
  await credo?.stop();
  await api?.rt.stop();
  await hooks?.close();
});

const credentialFor = (subject: Record<string, unknown>, issuer = did) => ({
  '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName' }],
  type: ['VerifiableCredential', 'Membership'],
  issuer,
  issuanceDate: '2026-11-26T00:00:00Z',
  credentialSubject: subject,
});

/** Credo derives an Ed25519VerificationKey2018 from a did:key, as the did:key spec's default form; @digitalbazaar/vc gets the same document. */
function didKey2018Document() {
  const fragment = did.slice('did:key:'.length);
  const vm = { id: `${did}#${fragment}`, type: 'Ed25519VerificationKey2018', controller: did, publicKeyBase58: TypedArrayEncoder.toBase58(TypedArrayEncoder.fromBase64(jwkX)) };
  return { '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/ed25519-2018/v1'], id: did, verificationMethod: [vm], assertionMethod: [vm.id], authentication: [vm.id] };
}

/** A JSON-LD document loader as @digitalbazaar/vc calls it. */
type Loader = (url: string) => Promise<{ contextUrl: null; documentUrl: string; document: unknown }>;

function dbLoader(): Loader {
  const doc = didKey2018Document();
  return async (url: string) => {
    const context = BUNDLED_CONTEXTS.get(url);
    if (context) return { contextUrl: null, documentUrl: url, document: context };
    if (url === did) return { contextUrl: null, documentUrl: url, document: doc };
    const vm = doc.verificationMethod.find((m) => m.id === url);
    if (vm) return { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...vm } };
    throw new Error(`the verifier loads nothing else: ${url}`);
  };
}
/**
 * @digitalbazaar/vc's loader for a did:web issuer: the document from our public did.json route (the
 * did:web rule, over http on loopback), as any did:web verifier fetches it; contexts from memory.
 */
function didWebLoader(webDid: string): Loader {
  return async (url: string) => {
    const context = BUNDLED_CONTEXTS.get(url);
    if (context) return { contextUrl: null, documentUrl: url, document: context };
    if (url.split('#')[0] !== webDid) throw new Error(`the verifier loads nothing else: ${url}`);
    const res = await fetch(didWebUrl(webDid), { headers: { accept: 'application/did+json' } });
    if (res.status !== 200) throw new Error(`GET ${didWebUrl(webDid)}: ${res.status}`);
    const doc = (await res.json()) as { '@context': unknown; id: string; verificationMethod: { id: string }[] };
    if (doc.id !== webDid) throw new Error(`${didWebUrl(webDid)} names ${doc.id}`);
    if (url === webDid) return { contextUrl: null, documentUrl: url, document: doc };
    const vm = doc.verificationMethod.find((m) => m.id === url);
    if (!vm) throw new Error(`no ${url} in ${webDid}`);
    return { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...vm } };
  };
}

const dbVerify = (credential: Record<string, unknown>, documentLoader: Loader = dbLoader()) =>
  vc.verifyCredential({ credential, suite: [new Ed25519Signature2018(), new Ed25519Signature2020(), new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 })], documentLoader });

async function connect(apiKey = acme.apiKey): Promise<{ ours: string; theirs: string; invitationId: number }> {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: apiKey, body: {} }), 'invitation');
  const { connectionId } = await credo.receiveInvitationUrl(inv.invitation_url);
  await credo.waitForConnection((c) => c.id === connectionId, 30_000);
  const ours = await eventually(async () =>
    (await ok(api.call('GET', '/api/v1/connections', { key: apiKey }), 'connections')).find((c: any) => c.invitation_id === inv.invitation_id && c.state === 'active'), 30_000, 'our connection active');
  return { ours: ours.connection_id, theirs: connectionId, invitationId: inv.invitation_id };
}

const exchange = (id: string, apiKey = acme.apiKey) => ok(api.call('GET', `/api/v1/credentials/${id}`, { key: apiKey }), 'exchange');
const exchanges = async () => ok(api.call('GET', '/api/v1/credentials', { key: acme.apiKey }), 'exchanges');

/** Who issued, and how a verifier gets its DID document: the did:key wallet (acme) unless said otherwise. */
interface Issuer {
  readonly apiKey: string;
  readonly did: string;
  readonly proofType: 'Ed25519Signature2018' | 'Ed25519Signature2020';
  readonly verificationMethod: string;
  readonly loader: Loader;
}
const acmeIssuer = (): Issuer => ({ apiKey: acme.apiKey, did, proofType: 'Ed25519Signature2018', verificationMethod: `${did}#${did.slice(8)}`, loader: dbLoader() });

async function expectDelivered(exchangeId: string, threadId: string, subjectName: string, issuer: Issuer = acmeIssuer()) {
  const held = await credo.waitForCredentialExchange(DidCommCredentialState.Done, (r) => r.threadId === threadId, 60_000);
  expect(held.credentials).toHaveLength(1);
  const stored = (await credo.agent.w3cCredentials.getAll()).find((r) => r.id === held.credentials[0]!.credentialRecordId);
  expect(stored).toBeDefined();
  const done = await eventually(async () => {
    const x = await exchange(exchangeId, issuer.apiKey);
    return x.state === 'done' ? x : undefined;
  }, 30_000, 'our exchange done');
  expect(done).toMatchObject({ role: 'issuer', initiator: 'self', format: 'ld_proof', thread_id: threadId, error_msg: null });
  const issued = await ok(api.call('GET', `/api/v1/credentials/json-ld/${exchangeId}`, { key: issuer.apiKey }), 'issued credential');
  expect(issued.credentialSubject.memberName).toBe(subjectName);
  expect(issued.issuer).toBe(issuer.did);
  expect(issued.proof).toMatchObject({ type: issuer.proofType, proofPurpose: 'assertionMethod', verificationMethod: issuer.verificationMethod });
  // What Credo stored is what we issued.
  expect(stored!.encoded).toMatchObject({ credentialSubject: issued.credentialSubject, proof: issued.proof });
  // Credo's W3C verification, and @digitalbazaar/vc's on its own; a tampered copy fails both.
  const credoCheck = await credo.agent.w3cCredentials.verifyCredential({ credential: JsonTransformer.fromJSON(issued, W3cJsonLdVerifiableCredential) });
  expect(credoCheck.isValid).toBe(true);
  const db = await dbVerify(issued, issuer.loader);
  expect(db.error).toBeUndefined();
  expect(db.verified).toBe(true);
  const tampered = structuredClone(issued);
  tampered.credentialSubject.memberName = 'Mallory';
  expect((await credo.agent.w3cCredentials.verifyCredential({ credential: JsonTransformer.fromJSON(tampered, W3cJsonLdVerifiableCredential) })).isValid).toBe(false);
  expect((await dbVerify(tampered, issuer.loader)).verified).toBe(false);
  return issued;
}

test('over a connection (contact_id): offer, request, credential, ack; Credo stores a credential both verifiers accept; every state is an event', async () => {
  const { ours } = await connect();
  const [made] = await ok(api.call('POST', '/api/v1/credentials/json-ld', { key: acme.apiKey, body: { contact_id: ours, credential: credentialFor({ memberName: 'Ada Lovelace' }), proofType: 'Ed25519Signature2018' } }), 'issue');
  expect(made).toMatchObject({ state: 'offer-sent', connection_id: ours, format: 'ld_proof', role: 'issuer' });
  const issued = await expectDelivered(made.credential_exchange_id, made.thread_id, 'Ada Lovelace');
  // Credo set credentialSubject.id? It requests what was offered: no id was offered, none is set.
  expect(issued.credentialSubject.id).toBeUndefined();
  const record = await ok(api.call('GET', `/api/v1/credential-records/${made.credential_exchange_id}`, { key: acme.apiKey }), 'record');
  expect(record.cred_ex_record.state).toBe('done');
  expect(record.ld_proof).toMatchObject({ cred_ex_id: made.credential_exchange_id, issuer_did: did, proof_type: 'Ed25519Signature2018', credential: issued });
  expect((await exchanges()).map((x: any) => x.credential_exchange_id)).toContain(made.credential_exchange_id);
  const events = () => hooks.received('/acme').map((r) => JSON.parse(r.body) as { type: string; data: { credential_exchange_id?: string } });
  await eventually(async () => {
    const mine = events().filter((e) => e.data.credential_exchange_id === made.credential_exchange_id).map((e) => e.type);
    return ['credential.offer_sent', 'credential.request_received', 'credential.issued', 'credential.done'].every((t) => mine.includes(t)) ? true : undefined;
  }, 30_000, 'every state change as an event');
  // With timeout: the answer comes once the credential is issued.
  const [waited] = await ok(api.call('POST', '/api/v1/credentials/json-ld?timeout=15', { key: acme.apiKey, body: { contact_id: ours, credential: credentialFor({ memberName: 'Ada again' }), proofType: 'Ed25519Signature2018' } }), 'issue, waiting');
  expect(['credential-issued', 'done']).toContain(waited.state);
  // Another wallet sees none of it.
  expectError(await api.call('GET', `/api/v1/credentials/${made.credential_exchange_id}`, { key: other.apiKey }), 404, 'credential_exchange_not_found');
  expectError(await api.call('GET', `/api/v1/credentials/json-ld/${made.credential_exchange_id}`, { key: other.apiKey }), 404, 'credential_exchange_not_found');
}, 180_000);

test('by invitation_id before anyone accepted it: the offer goes out when its connection becomes active', async () => {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: acme.apiKey, body: {} }), 'invitation');
  const [made] = await ok(api.call('POST', '/api/v1/credentials/json-ld', { key: acme.apiKey, body: { invitation_id: inv.invitation_id, credential: credentialFor({ memberName: 'Grace Hopper' }), proofType: 'Ed25519Signature2018' } }), 'issue');
  expect(made).toMatchObject({ state: 'offer-sent', connection_id: null, invitation_id: inv.invitation_id });
  await credo.receiveInvitationUrl(inv.invitation_url);
  await expectDelivered(made.credential_exchange_id, made.thread_id, 'Grace Hopper');
  expect((await exchange(made.credential_exchange_id)).connection_id).not.toBeNull();
}, 180_000);

test('neither contact_id nor invitation_id: connectionless; Credo takes the offer from the invitation without connecting, answers with its ~service, stores the credential and acks; no connection on either side', async () => {
  const didcomm = credo.agent.modules.didcomm;
  const credoConnections = async () => (await didcomm.connections.getAll()).length;
  const ourConnections = async () => (await ok(api.call('GET', '/api/v1/connections', { key: acme.apiKey }), 'connections')).length;
  const [credoBefore, oursBefore] = [await credoConnections(), await ourConnections()];
  const [made] = await ok(api.call('POST', '/api/v1/credentials/json-ld', { key: acme.apiKey, body: { credential: credentialFor({ memberName: 'Katherine Johnson' }), proofType: 'Ed25519Signature2018' } }), 'issue');
  expect(made).toMatchObject({ state: 'offer-sent', connection_id: null });
  const invitation = JSON.parse(Buffer.from(new URL(made.invitation_url).searchParams.get('oob')!, 'base64url').toString('utf8'));
  expect(invitation.handshake_protocols).toBeUndefined();
  expect(invitation.id ?? invitation['@id']).toBe(made.parent_thread_id);
  const received = await didcomm.oob.receiveInvitationFromUrl(made.invitation_url, { autoAcceptInvitation: true, label: 'Ada (Credo)' });
  expect(received.connectionRecord).toBeUndefined();
  await expectDelivered(made.credential_exchange_id, made.thread_id, 'Katherine Johnson');
  // Credo's side: the exchange ran on no connection, and it made none.
  const held = (await (didcomm as unknown as { credentials: { getAll(): Promise<{ threadId: string; connectionId?: string }[]> } }).credentials.getAll()).find((r) => r.threadId === made.thread_id);
  expect(held).toBeDefined();
  expect(held!.connectionId).toBeUndefined();
  expect(await credoConnections()).toBe(credoBefore);
  // Ours: done on no connection; the invitation was used up by the request.
  expect(await exchange(made.credential_exchange_id)).toMatchObject({ state: 'done', connection_id: null, invitation_id: made.invitation_id });
  expect(await ourConnections()).toBe(oursBefore);
  expect((await ok(api.call('GET', `/api/v1/invitations/${made.invitation_id}`, { key: acme.apiKey }), 'invitation')).state).toBe('done');
}, 180_000);

test("a did:web issuer (the wallet's public DID): @digitalbazaar/vc verifies with our did.json; Credo 0.6.3 needs the document's jws-2020 context, which it does not bundle, so offline it stores nothing", async () => {
  const web = await walletWithPublicDid(api, { method: 'web' });
  expect(web.did).toMatch(/^did:web:127\.0\.0\.1%3A\d+:dids:/);
  const { ours } = await connect(web.key);
  const loader = didWebLoader(web.did);
  // Both suites sign with the document's Ed25519VerificationKey2020 (lib/jsonld/signing.ts picks it for either).
  for (const proofType of ['Ed25519Signature2020', 'Ed25519Signature2018'] as const) {
    const name = `Dorothy Vaughan (${proofType})`;
    const [made] = await ok(api.call('POST', '/api/v1/credentials/json-ld', { key: web.key, body: { contact_id: ours, credential: credentialFor({ memberName: name }, web.did), proofType } }), `issue, ${proofType}`);
    // Credo requests it, and we sign and send it.
    const issued = await eventually(async () => {
      const r = await api.call('GET', `/api/v1/credentials/json-ld/${made.credential_exchange_id}`, { key: web.key });
      return r.status === 200 ? r.body : undefined;
    }, 60_000, 'issued credential');
    expect(issued).toMatchObject({ issuer: web.did, credentialSubject: { memberName: name }, proof: { type: proofType, proofPurpose: 'assertionMethod', verificationMethod: `${web.did}#key-multibase` } });
    // @digitalbazaar/vc, with the document from our did.json route: valid; tampered: not.
    const db = await dbVerify(issued, loader);
    expect(db.error).toBeUndefined();
    expect(db.verified).toBe(true);
    const tampered = structuredClone(issued);
    tampered.credentialSubject.memberName = 'Mallory';
    expect((await dbVerify(tampered, loader)).verified).toBe(false);
    // Measured (docs/jsonld.md): Credo resolves the DID and frames its document, whose JsonWebKey2020
    // method brings https://w3id.org/security/suites/jws-2020/v1; Credo 0.6.3 does not bundle it
    // (nor is it in any package here), so without the network its W3C check fails on that context,
    // and its holder leaves the exchange at request-sent and stores nothing.
    const credoCheck = await credo.agent.w3cCredentials.verifyCredential({ credential: JsonTransformer.fromJSON(issued, W3cJsonLdVerifiableCredential) });
    expect(credoCheck.isValid).toBe(false);
    expect(JSON.stringify(credoCheck.validations, (_k, v) => (v instanceof Error ? { ...v, message: v.message } : v))).toContain('https://w3id.org/security/suites/jws-2020/v1');
    await new Promise((r) => setTimeout(r, 3000));
    const held = (await credo.agent.modules.didcomm.credentials.getAll()).find((r: { threadId: string }) => r.threadId === made.thread_id);
    expect(held?.state).toBe(DidCommCredentialState.RequestSent);
    expect((await exchange(made.credential_exchange_id, web.key)).state).toBe('credential-issued');
  }
}, 180_000);

test('revocable (revocation_def_id): signed with its BitstringStatusListEntry; revoked through the status-list API (the exchange credential-revoked with its event; not by another wallet), the published W3C list shows it; Credo 0.6.3 will not hold it', async () => {
  const { ours } = await connect();
  const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: acme.apiKey, body: { list_type: 'w3c', issuer_did: did } }), 'w3c definition');
  const [made] = await ok(
    api.call('POST', '/api/v1/credentials/json-ld', { key: acme.apiKey, body: { contact_id: ours, revocation_def_id: def.id, credential: credentialFor({ memberName: 'Mary Jackson' }), proofType: 'Ed25519Signature2018' } }),
    'issue, revocable',
  );
  expect(made).toMatchObject({ state: 'offer-sent', revocation_def_id: def.id });
  // Credo requests what was offered (the entry included), and we sign and send it.
  const issued = await eventually(async () => {
    const r = await api.call('GET', `/api/v1/credentials/json-ld/${made.credential_exchange_id}`, { key: acme.apiKey });
    return r.status === 200 ? r.body : undefined;
  }, 60_000, 'issued credential');
  const entry = issued.credentialStatus as { type: string; statusPurpose: string; statusListIndex: string; statusListCredential: string };
  expect(entry).toMatchObject({ type: 'BitstringStatusListEntry', statusPurpose: 'revocation' });
  expect(issued['@context']).toContain(CONTEXT_URLS.statusList);
  // Measured: Credo 0.6.3's JSON-LD format service verifies a received credential with status checking
  // on, and its W3C service throws for any JSON-LD credentialStatus ("not supported"): it stays at
  // request-sent and stores nothing. Its signature check alone accepts the credential.
  const credoCheck = (verifyCredentialStatus: boolean) => credo.agent.w3cCredentials.verifyCredential({ credential: JsonTransformer.fromJSON(issued, W3cJsonLdVerifiableCredential), verifyCredentialStatus });
  expect((await credoCheck(false)).isValid).toBe(true);
  expect((await credoCheck(true)).isValid).toBe(false);
  // The published list, read and its signature checked as a verifier does (test/helpers/w3c-bitstring-status-list.ts).
  expect((await fetchPublishedStatusList(entry.statusListCredential, api.rt.url)).credentialSubject.statusPurpose).toBe('revocation');
  const bit = () => publishedStatus(entry.statusListCredential, Number(entry.statusListIndex), api.rt.url);
  // @digitalbazaar/vc, with a status check reading our list (its own reads linked-data lists only: docs/jsonld.md).
  const checkStatus = async () => {
    const status = await bit();
    return { verified: status === 0, status };
  };
  const verifyWithStatus = () => vc.verifyCredential({ credential: issued, suite: [new Ed25519Signature2018()], documentLoader: dbLoader(), checkStatus });
  expect(await bit()).toBe(0);
  expect((await verifyWithStatus()).verified).toBe(true);
  // Issued (Credo never acks it): another wallet cannot revoke it, nor change the exchange.
  expect(await exchange(made.credential_exchange_id)).toMatchObject({ state: 'credential-issued' });
  expectError(await api.call('PATCH', `/api/v1/status-list/entries/revoke/${made.credential_exchange_id}`, { key: other.apiKey }), 404, 'exchange_not_found');
  expectError(await api.call('PATCH', `/api/v1/status-list/entries/revoke/${made.credential_exchange_id}?definition_id=${def.id}`, { key: other.apiKey }), 404, 'exchange_not_found');
  expect(await exchange(made.credential_exchange_id)).toMatchObject({ state: 'credential-issued' });
  expect(await bit()).toBe(0);
  expect(await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${made.credential_exchange_id}`, { key: acme.apiKey }), 'revoke')).toMatchObject({ status: '1', index: Number(entry.statusListIndex) });
  // The exchange moved in the same transaction as the entry: revoked as soon as the PATCH answered, with its event.
  const revokedAt = await exchange(made.credential_exchange_id);
  expect(revokedAt).toMatchObject({ state: 'credential-revoked', revocation_def_id: def.id });
  const events = () => hooks.received('/acme').map((r) => JSON.parse(r.body) as { type: string; data: { credential_exchange_id?: string; state?: string } });
  await eventually(async () => (events().some((e) => e.type === 'credential.revoked' && e.data.credential_exchange_id === made.credential_exchange_id && e.data.state === 'credential-revoked') ? true : undefined), 30_000, 'the credential.revoked event');
  await eventually(async () => ((await bit()) === 1 ? true : undefined), 30_000, 'the list shows the revocation');
  expect((await verifyWithStatus()).verified).toBe(false);
  // Revoking again: the same entry, nothing moves (one event).
  expect(await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${made.credential_exchange_id}`, { key: acme.apiKey }), 'revoke again')).toMatchObject({ status: '1' });
  expect(await exchange(made.credential_exchange_id)).toEqual(revokedAt);
  expect(events().filter((e) => e.type === 'credential.revoked' && e.data.credential_exchange_id === made.credential_exchange_id)).toHaveLength(1);
  // Another wallet's definition is not found, and nothing is offered.
  const foreign = await ok(api.call('POST', '/api/v1/status-list/defs', { key: other.apiKey, body: { list_type: 'w3c', issuer_did: otherDid } }), 'other definition');
  expectError(await api.call('POST', '/api/v1/credentials/json-ld', { key: acme.apiKey, body: { contact_id: ours, revocation_def_id: foreign.id, credential: credentialFor({ memberName: 'x' }), proofType: 'Ed25519Signature2018' } }), 404, 'status_list_definition_not_found');
}, 180_000);

test('bad inputs: each a 4xx naming the problem, with nothing stored and nothing sent', async () => {
  const { ours } = await connect();
  const before = (await exchanges()).length;
  const credoBefore = (await credo.agent.modules.didcomm.credentials.getAll()).length;
  const issue = (body: Record<string, unknown>, key = acme.apiKey) => api.call('POST', '/api/v1/credentials/json-ld', { key, body: { contact_id: ours, proofType: 'Ed25519Signature2018', ...body } });
  // A context the loader does not hold (never fetched).
  expectError(await issue({ credential: { ...credentialFor({ memberName: 'x' }), '@context': [CONTEXT_URLS.credentialsV1, 'https://schema.org/'] } }), 400, 'unknown_context');
  // Safe mode: a term no context defines, named.
  const unsafe = await issue({ credential: credentialFor({ memberName: 'x', nickname: 'y' }) });
  expectError(unsafe, 400, 'undefined_term');
  expect(unsafe.body.error).toContain('nickname');
  // Another wallet's contact is not found (its own issuer DID, our connection id).
  expectError(await issue({ credential: { ...credentialFor({ memberName: 'x' }), issuer: otherDid } }, other.apiKey), 404, 'contact_not_found');
  // A proof the key cannot make (a P-256 suite on an Ed25519 key).
  expectError(await issue({ credential: credentialFor({ memberName: 'x' }), proofType: 'DataIntegrityProof', cryptosuite: 'ecdsa-rdfc-2019' }), 400, 'unsupported_proof_type');
  // rule has no meaning: refused.
  expectError(await issue({ credential: credentialFor({ memberName: 'x' }), rule: 'anything' }), 400, 'rule_not_supported');
  // A revocation definition this wallet does not have.
  expectError(await issue({ credential: credentialFor({ memberName: 'x' }), revocation_def_id: 'def-1' }), 404, 'status_list_definition_not_found');
  // An issuer that is not this wallet's DID.
  expectError(await issue({ credential: { ...credentialFor({ memberName: 'x' }), issuer: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' } }), 400, 'unknown_did');
  await new Promise((r) => setTimeout(r, 3000));
  expect((await exchanges()).length).toBe(before);
  expect((await credo.agent.modules.didcomm.credentials.getAll()).length).toBe(credoBefore);
  expect(await ok(api.call('GET', '/api/v1/credentials', { key: other.apiKey }), 'other wallet exchanges')).toEqual([]);
}, 120_000);
