/**
 * DIDComm v1 INTEROP, end to end over HTTP: Credo 0.6.3 (test/helpers/credo-didcomm.ts, its own
 * envelope, DID Exchange and did:peer code) and a wallet of the service, in both roles. Credo accepts
 * our invitation and we accept Credo's; each connection completes on both sides, and basic messages
 * travel both ways through the public endpoint, the inbound worker, the outbound queue and worker.
 */
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, ok, startTestApi, type TestApi } from '../helpers/runtime';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let acme: { apiKey: string; publicRef: string };
let other: { apiKey: string };
let hooks: Receiver;

beforeAll(async () => {
  [api, credo, hooks] = await Promise.all([startTestApi(), startCredoPeer({ label: 'Ada (Credo)' }), startReceiver()]);
  acme = await api.newWallet();
  other = await api.newWallet();
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: acme.apiKey, body: { urls: [`${hooks.url}/acme`] } }), 'webhook target');
}, 120_000);

afterAll(async () => {
  await credo?.stop();
  await api?.rt.stop();
  await hooks?.close();
});

const connection = (id: string) => ok(api.call('GET', `/api/v1/connections/${id}`, { key: acme.apiKey }), 'connection');
const messages = () => ok(api.call('GET', '/api/v1/messages', { key: acme.apiKey }), 'messages');

async function talk(contactId: string, credoConnectionId: string, tag: string) {
  // Credo → us: stored as received on that connection.
  await credo.sendBasicMessage(credoConnectionId, `hello acme ${tag}`);
  const got = await eventually(async () => (await messages()).find((m: any) => m.message === `hello acme ${tag}`), 30000, 'the received message');
  expect(got).toMatchObject({ direction: 'received', state: 'received', contact_id: contactId });
  // Us → Credo, by contact_id: queued, then sent, and Credo has it on its side of the connection.
  const sent = await ok(api.call('POST', '/api/v1/messages', { key: acme.apiKey, body: { contact_id: contactId, message: `hello Ada ${tag}` } }), 'send');
  expect(typeof sent.success).toBe('string');
  expect(await credo.waitForBasicMessage((c) => c === `hello Ada ${tag}`, 30_000)).toEqual({ content: `hello Ada ${tag}`, connectionId: credoConnectionId });
  const ours = await eventually(async () => (await messages()).find((m: any) => m.message === `hello Ada ${tag}` && m.state === 'sent'), 30000, 'our message sent');
  expect(ours).toMatchObject({ direction: 'sent', contact_id: contactId });
}

test('Credo accepts our invitation: the connection completes on both sides, and basic messages go both ways', async () => {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: acme.apiKey, body: { alias: 'Ada' } }), 'invitation');
  const { connectionId: credoSide } = await credo.receiveInvitationUrl(inv.invitation_url);
  expect((await credo.waitForConnection((c) => c.id === credoSide, 30_000)).state).toBe('completed');
  const ours = await eventually(async () =>
    (await ok(api.call('GET', '/api/v1/connections', { key: acme.apiKey }), 'connections')).find((c: any) => c.invitation_id === inv.invitation_id && c.state === 'active'), 30000, 'our connection active');
  expect(ours).toMatchObject({ their_label: 'Ada (Credo)', their_role: 'invitee', rfc23_state: 'completed', alias: 'Ada' });
  await talk(ours.connection_id, credoSide, 'one');
  // The tenant heard each step as a webhook event.
  const events = () => hooks.received('/acme').map((r) => JSON.parse(r.body) as { type: string; data: { connection_id?: string; contact_id?: string } });
  await eventually(async () => {
    const mine = events().filter((e) => (e.data.connection_id ?? e.data.contact_id) === ours.connection_id).map((e) => e.type);
    return ['connection.response', 'connection.active', 'message.received', 'message.sent'].every((t) => mine.includes(t)) ? true : undefined;
  }, 30_000, 'the connection and message events');
  // By invitation_id: the connection the invitation produced.
  await ok(api.call('POST', '/api/v1/messages', { key: acme.apiKey, body: { invitation_id: inv.invitation_id, message: 'by invitation' } }), 'send by invitation');
  expect(await credo.waitForBasicMessage((c) => c === 'by invitation', 30_000)).toMatchObject({ connectionId: credoSide });
  // Another wallet names neither.
  expectError(await api.call('POST', '/api/v1/messages', { key: other.apiKey, body: { contact_id: ours.connection_id, message: 'x' } }), 404, 'contact_not_found');
  expectError(await api.call('GET', `/api/v1/connections/${ours.connection_id}`, { key: other.apiKey }), 404, 'connection_not_found');
}, 120_000);

test("we accept Credo's invitation: the connection completes on both sides, and basic messages go both ways", async () => {
  const { invitationUrl, outOfBandId } = await credo.createInvitation();
  const created = await ok(api.call('POST', '/api/v1/invitations/receive', { key: acme.apiKey, body: { invitation_url: invitationUrl, alias: 'Ada as inviter' } }), 'receive');
  expect(created).toMatchObject({ state: 'request', their_role: 'inviter', alias: 'Ada as inviter', invitation_id: null });
  const credoConnection = await credo.waitForConnection((c) => (c as { outOfBandId?: string }).outOfBandId === outOfBandId, 30_000);
  const ours = await eventually(async () => {
    const c = await connection(created.connection_id);
    return c.state === 'active' ? c : undefined;
  }, 30000, 'our connection active');
  expect(ours).toMatchObject({ their_label: 'Ada (Credo)', rfc23_state: 'completed' });
  await talk(created.connection_id, credoConnection.id, 'two');
}, 120_000);

test('a multi-use invitation yields one connection per agent that accepts it; a message by its invitation_id is then ambiguous', async () => {
  const second = await startCredoPeer({ label: 'Grace (Credo)' });
  try {
    const inv = await ok(api.call('POST', '/api/v1/invitations', { key: acme.apiKey, body: { multi_use: true } }), 'invitation');
    const [a, b] = await Promise.all([credo.receiveInvitationUrl(inv.invitation_url), second.receiveInvitationUrl(inv.invitation_url)]);
    await Promise.all([credo.waitForConnection((c) => c.id === a.connectionId, 30_000), second.waitForConnection((c) => c.id === b.connectionId, 30_000)]);
    const both = await eventually(async () => {
      const mine = (await ok(api.call('GET', '/api/v1/connections', { key: acme.apiKey }), 'connections')).filter((c: any) => c.invitation_id === inv.invitation_id && c.state === 'active');
      return mine.length === 2 ? mine : undefined;
    }, 30000, 'two active connections');
    expect(both.map((c: any) => c.their_label).sort()).toEqual(['Ada (Credo)', 'Grace (Credo)']);
    expect(both.every((c: any) => c.invitation_mode === 'multi')).toBe(true);
    expect((await ok(api.call('GET', `/api/v1/invitations/${inv.invitation_id}`, { key: acme.apiKey }), 'invitation')).state).toBe('await-response');
    expectError(await api.call('POST', '/api/v1/messages', { key: acme.apiKey, body: { invitation_id: inv.invitation_id, message: 'to whom?' } }), 409, 'invitation_ambiguous');
  } finally {
    await second.stop();
  }
}, 120_000);
