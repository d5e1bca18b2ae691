/**
 * The public DIDComm endpoint and the inbound worker, driven by an independent agent: Credo 0.6.3
 * (test/helpers/credo-didcomm.ts) accepts one of our invitations and posts its DID Exchange request to
 * `POST /didcomm/{public_ref}`; the worker unpacks it with the invitation's key and records the
 * connection. And what the public may send: wrong media types, junk, unknown references, oversized
 * bodies and envelopes for another wallet's keys change nothing.
 */
import { storedEnvelopes } from '../helpers/didcomm-inbound-store';
import { generateKeyPair, packMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually } from '../helpers/receiver';
import { expectError, ok, startTestApi, type TestApi } from '../helpers/runtime';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let alice: { apiKey: string; publicRef: string; walletId: number };
let bob: { apiKey: string; publicRef: string; walletId: number };

beforeAll(async () => {
  [api, credo] = await Promise.all([startTestApi(), startCredoPeer({ label: 'credo-peer' })]);
  alice = await api.newWallet();
  bob = await api.newWallet();
}, 120_000);

afterAll(async () => {
  await credo?.stop();
  await api?.rt.stop();
});

const connections = (key: string) => ok(api.call('GET', '/api/v1/connections', { key }), 'connections');


const envelopeTo = (verkey: string) => Buffer.from(packMessage({ '@type': 'https://didcomm.org/trust_ping/1.0/ping', '@id': 'p1' }, [verkey])).toString();

test('Credo accepts our invitation: its DID Exchange request reaches the wallet, which records the connection', async () => {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: alice.apiKey, body: { alias: 'front desk' } }), 'invitation');
  expect(inv.invitation_url.startsWith(`${api.rt.url}/didcomm/${alice.publicRef}?oob=`)).toBe(true);
  await credo.receiveInvitationUrl(inv.invitation_url);
  const record = await ok(api.call('GET', `/api/v1/invitations/${inv.invitation_id}`, { key: alice.apiKey }), 'invitation record');
  const c = await eventually(async () => (await connections(alice.apiKey)).find((x: any) => x.invitation_id === inv.invitation_id), 20000, 'the connection');
  expect(c).toMatchObject({ their_label: 'credo-peer', their_role: 'invitee', alias: 'front desk', invitation_key: record.invitation_key });
  expect(c.their_did).toMatch(/^did:peer:/);
  expect(['response', 'active']).toContain(c.state);
  // A single-use invitation is done once it produced its connection.
  expect((await ok(api.call('GET', `/api/v1/invitations/${inv.invitation_id}`, { key: alice.apiKey }), 'invitation')).state).toBe('done');
  // The other wallet sees none of it.
  expect(await connections(bob.apiKey)).toEqual([]);
}, 60_000);

describe('what the public endpoint refuses, and what it takes without telling', () => {
  test('wrong media type 415, junk 400, unknown reference 404, too large 413: nothing stored', async () => {
    const body = envelopeTo(verkeyFromPublicKey(generateKeyPair().publicKey));
    expectError(await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: body, headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: '{"protected":"e30"}', headers: { 'content-type': 'application/didcomm-envelope-enc' } }), 400, 'invalid_envelope');
    expectError(await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: 'not json', headers: { 'content-type': 'application/didcomm-envelope-enc' } }), 400, 'malformed_json');
    expectError(await api.call('POST', '/didcomm/AAAAAAAAAAAAAAAAAAAAAA', { rawBody: body, headers: { 'content-type': 'application/didcomm-envelope-enc' } }), 404, 'endpoint_not_found');
    const huge = JSON.stringify({ protected: 'e30', iv: 'x', ciphertext: 'x'.repeat(300 * 1024), tag: 'x' });
    expectError(await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: huge, headers: { 'content-type': 'application/didcomm-envelope-enc' } }), 413, 'payload_too_large');
  });

  test('an envelope for a key of another wallet (or of none) is answered 202 like any other, and goes nowhere', async () => {
    const inv = await ok(api.call('POST', '/api/v1/invitations', { key: alice.apiKey, body: {} }), 'invitation');
    const before = (await connections(alice.apiKey)).length;
    const aliceKey: string = (await ok(api.call('GET', `/api/v1/invitations/${inv.invitation_id}`, { key: alice.apiKey }), 'invitation record')).invitation_key;
    // Alice's key posted to Bob's endpoint, and a key of nobody's: 202, and nothing stored in either partition.
    for (const type of ['application/didcomm-envelope-enc', 'application/ssi-agent-wire', 'application/json']) {
      const res = await api.call('POST', `/didcomm/${bob.publicRef}`, { rawBody: envelopeTo(aliceKey), headers: { 'content-type': type } });
      expect(res.status).toBe(202);
      expect(res.body).toBeUndefined();
    }
    const nobody = verkeyFromPublicKey(generateKeyPair().publicKey);
    const none = await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: envelopeTo(nobody), headers: { 'content-type': 'application/didcomm-envelope-enc' } });
    expect(none.status).toBe(202);
    expect(await storedEnvelopes(api.rt, bob.walletId, aliceKey)).toBe(0);
    expect(await storedEnvelopes(api.rt, alice.walletId, aliceKey)).toBe(0);
    expect(await storedEnvelopes(api.rt, alice.walletId, nobody)).toBe(0);
    // Envelopes to Alice's own invitation key are stored and queued: an anoncrypted trust ping (only a
    // DID Exchange request may use an invitation key) and a copy tampered in transit (it does not decrypt).
    // The worker takes both and drops them: the stored envelopes go, and nothing else changes.
    const tampered = JSON.parse(envelopeTo(aliceKey));
    const bytes = Buffer.from(tampered.ciphertext, 'base64url');
    bytes[0]! ^= 1;
    tampered.ciphertext = bytes.toString('base64url');
    for (const body of [envelopeTo(aliceKey), JSON.stringify(tampered)]) {
      expect((await api.call('POST', `/didcomm/${alice.publicRef}`, { rawBody: body, headers: { 'content-type': 'application/didcomm-envelope-enc' } })).status).toBe(202);
    }
    await eventually(async () => ((await storedEnvelopes(api.rt, alice.walletId, aliceKey)) === 0 ? true : undefined), 20000, 'the worker to take both envelopes');
    expect((await connections(alice.apiKey)).length).toBe(before);
    expect(await connections(bob.apiKey)).toEqual([]);
    expect((await ok(api.call('GET', `/api/v1/invitations/${inv.invitation_id}`, { key: alice.apiKey }), 'invitation')).state).toBe('await-response');
  });
});
