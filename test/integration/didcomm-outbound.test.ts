import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { resolveDidPeer } from '../../lib/didcomm/did-peer';
import { didKeyFromVerkey } from '../../lib/didcomm/envelope';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';
import { base58, sodiumKeyPair, sodiumReady, sodiumUnpack, type SodiumKeyPair } from '../helpers/sodium-envelope';

/**
 * DIDComm outbound end to end on the local runtime, against a peer on loopback that reads what it is
 * sent with libsodium (test/helpers/sodium-envelope.ts, independent of lib/didcomm/envelope.ts):
 * POST /api/v1/invitations/receive -> connection + outbox job in one transaction -> table stream ->
 * relay -> didcomm-outbound queue -> worker -> authcrypted POST. The inbound side (the peer's DID
 * Exchange response reaching us) is another function: here the test completes the connection itself,
 * writing the state the inbound worker would, and then sends basic messages on it.
 */
let api: TestApi;
let rx: Receiver;
let ddb: DynamoDBDocumentClient;
let peer: SodiumKeyPair;
let peerVerkey: string;

fenceTestNetwork();

beforeAll(async () => {
  await sodiumReady();
  peer = sodiumKeyPair();
  peerVerkey = base58(peer.publicKey);
  [api, rx] = await Promise.all([startTestApi({ webhookRetryDelaysSeconds: [1, 1], webhookTimeoutMs: 2000 }), startReceiver()]);
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
});
afterAll(async () => {
  ddb?.destroy();
  await Promise.all([api?.rt.stop(), rx?.close()]);
});

function peerInvitation(path: string, overrides: Record<string, unknown> = {}) {
  return {
    '@type': 'https://didcomm.org/out-of-band/1.1/invitation',
    '@id': randomUUID(),
    label: 'Loopback peer',
    handshake_protocols: ['https://didcomm.org/didexchange/1.1'],
    services: [{ id: '#inline', type: 'did-communication', recipientKeys: [didKeyFromVerkey(peerVerkey)], routingKeys: [], serviceEndpoint: `${rx.url}${path}` }],
    ...overrides,
  };
}
const urlOf = (invitation: object) => `https://peer.example.test/invite?oob=${Buffer.from(JSON.stringify(invitation)).toString('base64url')}`;

function opened(body: string) {
  const { message, senderVerkey } = sodiumUnpack(body, peer);
  return { message: message as Record<string, any>, senderVerkey };
}

async function items(walletId: number, prefix: string) {
  const out = await ddb.send(new QueryCommand({ TableName: api.rt.tableName, KeyConditionExpression: 'PK = :pk AND begins_with(SK, :p)', ExpressionAttributeValues: { ':pk': `W#${walletId}`, ':p': prefix } }));
  return out.Items ?? [];
}

/** Seeds what the inbound worker writes when the peer's DID Exchange response arrives: the outbound path tested against the loopback reader alone. */
async function completeConnection(walletId: number, connectionId: string, endpointPath: string) {
  await ddb.send(
    new UpdateCommand({
      TableName: api.rt.tableName,
      Key: { PK: `W#${walletId}`, SK: `DCCONN#${connectionId}` },
      UpdateExpression: 'SET #s = :s, rfc23_state = :r, peer = :p, updated_at = :u',
      ExpressionAttributeNames: { '#s': 'state' },
      ExpressionAttributeValues: { ':s': 'active', ':r': 'completed', ':p': { endpoint: `${rx.url}${endpointPath}`, recipient_keys: [peerVerkey], routing_keys: [] }, ':u': new Date().toISOString() },
    }),
  );
}

const messageIdOf = (success: string) => /^Message (\S+) queued for contact (\S+)$/.exec(success)![1]!;

test('receiving an invitation sends an authcrypted DID Exchange request from the new connection key; basic messages go out and are marked sent, with message.sent', async () => {
  const w = await api.newWallet();
  expect((await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls: [`${rx.url}/hooks-${w.walletId}`] } })).status).toBe(200);
  const invitation = peerInvitation('/peer-a');
  const received = await api.call('POST', '/api/v1/invitations/receive', { key: w.apiKey, body: { invitation_url: urlOf(invitation), alias: 'peer a' } });
  expect(received.status).toBe(200);
  const connection = received.body;
  expect(connection).toMatchObject({ state: 'request', rfc23_state: 'request-sent', their_role: 'inviter', their_label: 'Loopback peer', alias: 'peer a', invitation_msg_id: invitation['@id'], contact_id: connection.connection_id, invitation_id: null });

  const [request] = await rx.waitFor('/peer-a', 1);
  expect(request!.headers['content-type']).toBe('application/didcomm-envelope-enc');
  const req = opened(request!.body);
  expect(req.message).toMatchObject({ '@type': 'https://didcomm.org/didexchange/1.1/request', '~thread': { pthid: invitation['@id'] }, did: connection.my_did });
  // Authcrypted by our key on this connection: the key of the did:peer:4 the request carries.
  expect(req.senderVerkey).toBe(resolveDidPeer(connection.my_did).verkeys[0]);

  await completeConnection(w.walletId, connection.connection_id, '/peer-a-msgs');
  const sent = await api.call('POST', '/api/v1/messages', { key: w.apiKey, body: { contact_id: connection.connection_id, message: 'hello, peer' } });
  expect(sent.status).toBe(200);
  expect(sent.body.success).toMatch(new RegExp(`^Message \\S+ queued for contact ${connection.connection_id}$`));
  const messageId = messageIdOf(sent.body.success);
  const [delivered] = await rx.waitFor('/peer-a-msgs', 1);
  const msg = opened(delivered!.body);
  expect(msg.message).toMatchObject({ '@type': 'https://didcomm.org/basicmessage/1.0/message', content: 'hello, peer' });
  expect(msg.senderVerkey).toBe(req.senderVerkey);
  const record = await eventually(async () => {
    const m = await api.call('GET', `/api/v1/messages/${messageId}`, { key: w.apiKey });
    return m.body.state === 'sent' ? m.body : undefined;
  }, 15000, 'message marked sent');
  expect(record).toMatchObject({ message_id: messageId, contact_id: connection.connection_id, invitation_id: null, message: 'hello, peer', direction: 'sent' });
  const hooks = await eventually(async () => {
    const types = rx.received(`/hooks-${w.walletId}`).map((r) => JSON.parse(r.body).type as string);
    return types.includes('message.sent') ? types : undefined;
  }, 15000, 'message.sent delivered');
  expect(hooks).toEqual(expect.arrayContaining(['connection.request', 'message.sent']));
  // The job items are outbox items with a TTL: nothing else is kept of a sent message than its record.
  expect((await items(w.walletId, 'JOBQ#DCOUT#')).every((i) => typeof i.ttl === 'number')).toBe(true);
});

test('a peer answering 500 gets the message again on the retry schedule, then it is failed with message.failed; no attempt after the last', async () => {
  const w = await api.newWallet();
  expect((await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls: [`${rx.url}/hooks-${w.walletId}`] } })).status).toBe(200);
  rx.on('/peer-b', 202);
  rx.on('/peer-b-msgs', 500);
  const received = await api.call('POST', '/api/v1/invitations/receive', { key: w.apiKey, body: { invitation: peerInvitation('/peer-b') } });
  expect(received.status).toBe(200);
  await rx.waitFor('/peer-b', 1);
  await completeConnection(w.walletId, received.body.connection_id, '/peer-b-msgs');
  const sent = await api.call('POST', '/api/v1/messages', { key: w.apiKey, body: { contact_id: received.body.connection_id, message: 'are you there?' } });
  expect(sent.status).toBe(200);
  const messageId = messageIdOf(sent.body.success);
  // Three attempts: the first, and one per delay of the schedule [1, 1].
  const attempts = await rx.waitFor('/peer-b-msgs', 3, 20000);
  for (const a of attempts) expect(opened(a.body).message.content).toBe('are you there?');
  const failed = await eventually(async () => {
    const m = await api.call('GET', `/api/v1/messages/${messageId}`, { key: w.apiKey });
    return m.body.state === 'failed' ? m.body : undefined;
  }, 15000, 'message marked failed');
  expect(failed).toMatchObject({ message_id: messageId, direction: 'sent' });
  const event = await eventually(async () => {
    const e = rx.received(`/hooks-${w.walletId}`).map((r) => JSON.parse(r.body)).find((b) => b.type === 'message.failed');
    return e ?? undefined;
  }, 15000, 'message.failed delivered');
  expect(event.data).toMatchObject({ message_id: messageId, state: 'failed', failure_reason: expect.stringContaining('retries exhausted after 3 attempts') });
  await new Promise((r) => setTimeout(r, 2500));
  expect(rx.received('/peer-b-msgs')).toHaveLength(3);
});

test("another wallet's contact is a 404 like a missing one; bad inputs are 4xx with {error, code} and change nothing", async () => {
  const w = await api.newWallet();
  const other = await api.newWallet();
  rx.on('/peer-c', 202);
  const received = await api.call('POST', '/api/v1/invitations/receive', { key: w.apiKey, body: { invitation: peerInvitation('/peer-c') } });
  expect(received.status).toBe(200);
  const contact = received.body.connection_id as string;
  await rx.waitFor('/peer-c', 1);
  const inv = await api.call('POST', '/api/v1/invitations', { key: w.apiKey, body: {} });
  expect(inv.status).toBe(200);

  const snapshot = async () => ({
    messages: (await items(w.walletId, 'DCMSG#')).length + (await items(other.walletId, 'DCMSG#')).length,
    connections: (await items(w.walletId, 'DCCONN#')).length + (await items(other.walletId, 'DCCONN#')).length,
    jobs: (await items(w.walletId, 'JOBQ#DCOUT#')).length + (await items(other.walletId, 'JOBQ#DCOUT#')).length,
  });
  const before = await snapshot();
  const M = '/api/v1/messages';
  // Another wallet's contact and invitation: exactly as missing ones.
  expectError(await api.call('POST', M, { key: other.apiKey, body: { contact_id: contact, message: 'x' } }), 404, 'contact_not_found');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { contact_id: '01KNOSUCHCONNECTION0000000', message: 'x' } }), 404, 'contact_not_found');
  expectError(await api.call('POST', M, { key: other.apiKey, body: { invitation_id: inv.body.invitation_id, message: 'x' } }), 404, 'invitation_not_found');
  // Ours, but not usable yet.
  expectError(await api.call('POST', M, { key: w.apiKey, body: { contact_id: contact, message: 'x' } }), 409, 'connection_not_active');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { invitation_id: inv.body.invitation_id, message: 'x' } }), 409, 'no_connection');
  // Malformed.
  expectError(await api.call('POST', M, { key: w.apiKey, body: { contact_id: contact } }), 400, 'message_required');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { contact_id: contact, message: '' } }), 400, 'message_required');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { message: 'to nobody' } }), 400, 'target_required');
  expectError(await api.call('POST', M, { key: w.apiKey }), 400, 'message_required');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { contact_id: contact, message: 'x'.repeat(16 * 1024 + 1) } }), 400, 'validation_failed');
  expectError(await api.call('POST', M, { key: w.apiKey, body: { invitation_id: '1', message: 'x' } }), 400, 'validation_failed');
  expectError(await api.call('POST', M, { key: w.apiKey, rawBody: '{"message":' }), 400, 'malformed_json');

  const R = '/api/v1/invitations/receive';
  expectError(await api.call('POST', R, { key: w.apiKey, body: {} }), 400, 'invitation_required');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation: peerInvitation('/x'), invitation_url: urlOf(peerInvitation('/x')) } }), 400, 'invitation_required');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation_url: 'https://peer.example.test/?c_i=e30' } }), 400, 'unsupported_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation_url: 'https://peer.example.test/?d_m=e30' } }), 400, 'unsupported_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation_url: 'https://peer.example.test/i/abc?_oobid=123' } }), 400, 'unsupported_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation_url: 'https://peer.example.test/?oob=not-json' } }), 400, 'invalid_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation_url: 'not a url' } }), 400, 'invalid_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation: { '@type': 'https://didcomm.org/connections/1.0/invitation' } } }), 400, 'invalid_invitation');
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation: peerInvitation('/x', { handshake_protocols: ['https://didcomm.org/connections/1.0'] }) } }), 400, 'invalid_invitation');
  // The peer's endpoint is refused as a webhook target would be: private addresses never, plain http only for loopback here.
  for (const endpoint of ['http://10.1.2.3/didcomm', 'https://169.254.169.254/latest', 'ftp://peer.example.test/x']) {
    const bad = peerInvitation('/x');
    (bad.services[0] as { serviceEndpoint: string }).serviceEndpoint = endpoint;
    expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation: bad } }), 400, 'invalid_invitation');
  }
  expectError(await api.call('POST', R, { key: w.apiKey, body: { invitation: peerInvitation('/x'), extra: 1 } }), 400, 'validation_failed');
  expect(await snapshot()).toEqual(before);
});
