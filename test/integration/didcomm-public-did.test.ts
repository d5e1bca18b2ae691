/**
 * The public DID's DIDComm service, end to end: Credo 0.6.3 resolves the wallet's public DID over
 * HTTP from this service (did:sov through `GET /1.0/identifiers/{did}`, as a Universal Resolver
 * client would; did:web through its did.json), finds the `did-communication` service and connects
 * to it with an implicit invitation (RFC 0023/0434). The connection completes on both sides, basic
 * messages go both ways, and the service follows the public DID. The documents are read through the
 * real PublicDids index (DynamoDB Local projects only its declared attributes).
 */
import { storedEnvelopes } from '../helpers/didcomm-inbound-store';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { PEER_DIDS } from '../../lib/didcomm/agent';
import { generateKeyPair, packMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { HttpDidResolver, startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { LoopbackWebDidResolver } from '../helpers/credo-support';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { ok, startTestApi, type TestApi } from '../helpers/runtime';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let hooks: Receiver;
let acme: { apiKey: string; publicRef: string; walletId: number };
let other: { apiKey: string; publicRef: string; walletId: number };

beforeAll(async () => {
  [api, hooks] = await Promise.all([startTestApi(), startReceiver()]);
  credo = await startCredoPeer({ label: 'Ada (Credo)', resolvers: [new HttpDidResolver(['sov', 'indy'], api.rt.url), new LoopbackWebDidResolver()] });
  acme = await api.newWallet();
  other = await api.newWallet();
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: acme.apiKey, body: { urls: [`${hooks.url}/acme`] } }), 'webhook target');
}, 120_000);

afterAll(async () => {
  await credo?.stop();
  await api?.rt.stop();
  await hooks?.close();
});

async function publicDid(key: string, method: 'sov' | 'web' | 'key'): Promise<string> {
  await ok(api.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } }), 'accept-taa');
  const created = await ok(api.call('POST', '/api/v1/create-did', { key, body: { method } }), 'create DID');
  const did: string = created.did.did;
  await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, { key }), 'set-public-did');
  return method === 'sov' ? `did:sov:${did}` : did;
}

/** The document as a DID resolver client gets it. */
async function documentOf(did: string): Promise<any> {
  const res = await api.call('GET', `/1.0/identifiers/${encodeURIComponent(did)}`, { headers: { accept: 'application/did+json' } });
  expect(res.status).toBe(200);
  return res.body;
}

const connections = (key: string) => ok(api.call('GET', '/api/v1/connections', { key }), 'connections');
const messages = (key: string) => ok(api.call('GET', '/api/v1/messages', { key }), 'messages');


let sovDid: string;
let verkey: string;

test("Credo connects to the wallet's public did:sov through its resolved DIDComm service; messages go both ways", async () => {
  sovDid = await publicDid(acme.apiKey, 'sov');
  const doc = await documentOf(sovDid);
  const service = doc.service.find((s: any) => s.type === 'did-communication');
  expect(service).toMatchObject({ id: `${sovDid}#did-communication`, serviceEndpoint: `${api.rt.url}/didcomm/${acme.publicRef}`, recipientKeys: [`${sovDid}#didcomm-1`], routingKeys: [] });
  verkey = doc.verificationMethod.find((m: any) => m.id === `${sovDid}#didcomm-1`).publicKeyBase58;

  const { connectionId: credoSide } = await credo.receiveImplicitInvitation(sovDid);
  expect((await credo.waitForConnection((c) => c.id === credoSide, 30_000)).state).toBe('completed');
  const ours = await eventually(async () => (await connections(acme.apiKey)).find((c: any) => c.invitation_key === verkey && c.state === 'active'), 30_000, 'our connection active');
  expect(ours).toMatchObject({ their_label: 'Ada (Credo)', their_role: 'invitee', rfc23_state: 'completed', invitation_mode: 'multi', invitation_id: null, invitation_msg_id: sovDid, alias: null, connection_protocol: 'didexchange/1.1' });
  expect(ours.their_did).toMatch(/^did:peer:/);
  expect(ours.my_did).toMatch(/^did:peer:4/);

  await credo.sendBasicMessage(credoSide, 'hello acme');
  const got = await eventually(async () => (await messages(acme.apiKey)).find((m: any) => m.message === 'hello acme'), 30_000, 'the received message');
  expect(got).toMatchObject({ direction: 'received', contact_id: ours.connection_id });
  await ok(api.call('POST', '/api/v1/messages', { key: acme.apiKey, body: { contact_id: ours.connection_id, message: 'hello Ada' } }), 'send');
  expect(await credo.waitForBasicMessage((c) => c === 'hello Ada', 30_000)).toEqual({ content: 'hello Ada', connectionId: credoSide });

  // The tenant heard the connection as for any other.
  const events = () => hooks.received('/acme').map((r) => JSON.parse(r.body) as { type: string; data: { connection_id?: string } });
  await eventually(async () => {
    const mine = events().filter((e) => e.data.connection_id === ours.connection_id).map((e) => e.type);
    return ['connection.response', 'connection.active'].every((t) => mine.includes(t)) ? true : undefined;
  }, 30_000, 'the connection events');
}, 120_000);

test('a request naming another pthid, sent to the public DID key, is dropped: nothing stored', async () => {
  const before = (await connections(acme.apiKey)).length;
  const key = generateKeyPair();
  const did = PEER_DIDS.createDidPeer4({ verkey: verkeyFromPublicKey(key.publicKey), serviceEndpoint: credo.endpoint }).longForm;
  const request = { '@type': 'https://didcomm.org/didexchange/1.1/request', '@id': 'r-1', '~thread': { thid: 'r-1', pthid: 'did:sov:NotThisWalletsDid1234' }, label: 'Mallory', did };
  const basic = { '@type': 'https://didcomm.org/basicmessage/1.0/message', '@id': 'b-1', content: 'no connection', sent_time: new Date().toISOString() };
  for (const message of [request, basic]) {
    const res = await api.call('POST', `/didcomm/${acme.publicRef}`, { rawBody: Buffer.from(packMessage(message, [verkey], key)), headers: { 'content-type': 'application/didcomm-envelope-enc' } });
    expect(res.status).toBe(202);
  }
  await eventually(async () => ((await storedEnvelopes(api.rt, acme.walletId, verkey)) === 0 ? true : undefined), 20_000, 'the worker to take both envelopes');
  expect((await connections(acme.apiKey)).length).toBe(before);
  expect((await messages(acme.apiKey)).find((m: any) => m.message === 'no connection')).toBeUndefined();
}, 60_000);

test("the service follows the public DID: did:web gets it (Credo connects again, the same key), did:sov loses it; another wallet's documents never carry it", async () => {
  const webDid = await publicDid(acme.apiKey, 'web');
  expect((await documentOf(sovDid)).service).toBeUndefined();
  // The did:web document as the did.json route serves it.
  const path = webDid.split(':').slice(3).join('/');
  const webDoc = await ok(api.call('GET', `/${path}/did.json`), 'did.json');
  // Beside it, every did:web document's AnonCreds registry service (docs/anoncreds.md).
  const anoncredsService = { id: `${webDid}#anoncreds`, type: 'AnonCredsRegistry', serviceEndpoint: `${api.rt.url}/dids/${webDid.split(':').pop()}/anoncreds` };
  expect(webDoc.service).toEqual([expect.objectContaining({ serviceEndpoint: `${api.rt.url}/didcomm/${acme.publicRef}`, recipientKeys: [`${webDid}#didcomm-1`] }), anoncredsService]);
  expect(webDoc.verificationMethod.find((m: any) => m.id === `${webDid}#didcomm-1`).publicKeyBase58).toBe(verkey);

  const { connectionId } = await credo.receiveImplicitInvitation(webDid);
  await credo.waitForConnection((c) => c.id === connectionId, 30_000);
  await eventually(async () => (await connections(acme.apiKey)).find((c: any) => c.invitation_msg_id === webDid && c.state === 'active'), 30_000, 'the did:web connection active');
  // The old public DID offers no service any more.
  await expect(credo.receiveImplicitInvitation(sovDid)).rejects.toThrow();

  const otherDid = await publicDid(other.apiKey, 'sov');
  const otherDoc = await documentOf(otherDid);
  expect(otherDoc.service).toEqual([expect.objectContaining({ serviceEndpoint: `${api.rt.url}/didcomm/${other.publicRef}` })]);
  for (const doc of [otherDoc, await documentOf(sovDid)]) expect(JSON.stringify(doc)).not.toContain(acme.publicRef);
  expect(JSON.stringify(otherDoc)).not.toContain(verkey);
  expect(await connections(other.apiKey)).toEqual([]);

  // did:key documents are the spec's: no service, and the web DID (now posted) loses its DIDComm service (its AnonCreds one stays).
  await publicDid(acme.apiKey, 'key');
  expect((await ok(api.call('GET', `/${path}/did.json`), 'did.json')).service).toEqual([anoncredsService]);
}, 120_000);
