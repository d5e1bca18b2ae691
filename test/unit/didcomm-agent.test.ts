import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { MemoryVault } from '../helpers/didcomm-memory-vault';
import { PEER_DIDS, type Outbound } from '../../lib/didcomm/agent';
import { generateKeyPair, packMessage } from '../../lib/didcomm/envelope';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { didcommKeys, storedConnectionFromItem, type StoredConnection } from '../../lib/didcomm/records';
import { ConnectionService } from '../../lib/didcomm/connections';
import { MessageService } from '../../lib/didcomm/messages';
import { OutboxPublisher } from '../../lib/events/publisher';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import type { WebhookRequest } from '../../lib/webhooks/transport';
import { MemoryStore } from '../helpers/memory-store';
import { targetUrlProblem } from '../../lib/webhooks/target-url';

/**
 * Two wallets of this service talk DIDComm to each other in process: real envelopes
 * (lib/didcomm/envelope.ts), real did:peer, a key vault in memory, and a transport that queues each
 * posted envelope for the receiving wallet's agent (the queue the workers drain when deployed).
 */
const BASE = 'https://agent.example.test';
const A = tenantScope('1');
const B = tenantScope('2');
const endpointOf = (s: TenantScope) => `${BASE}/didcomm/ref${s.walletId}`;


function setup(opts: { endpointProblem?: (url: string) => string | null } = {}) {
  const store = new MemoryStore();
  const vault = new MemoryVault();
  const events = new OutboxPublisher(store);
  const posted: WebhookRequest[] = [];
  const dropped: { wallet: string; reason: string; detail: string }[] = [];
  const transport = {
    post: async (r: WebhookRequest) => {
      posted.push(r);
      return { outcome: { kind: 'response' as const, status: 202 }, durationMs: 1 };
    },
  };
  const agent = new AgentRuntime({ store, events, keys: vault, dids: PEER_DIDS, transport, maxEnvelopeBytes: 256 * 1024, timeoutMs: 1000, ...opts });
  const invitations = new InvitationService({ store, events, refs: { of: async (s) => `ref${s.walletId}` }, keys: vault });
  /** Sends each outbound message, then delivers every posted envelope to its wallet, until quiet. */
  async function pump(from: TenantScope, outbound: readonly Outbound[]) {
    const queue: { scope: TenantScope; out: Outbound }[] = outbound.map((out) => ({ scope: from, out }));
    while (queue.length > 0) {
      const { scope, out } = queue.shift()!;
      const before = posted.length;
      expect(await agent.send(scope, out)).toMatchObject({ ok: true });
      for (const req of posted.slice(before)) {
        const to = [A, B].find((s) => req.url === endpointOf(s))!;
        const outcome = await agent.receive(to, endpointOf(to), JSON.parse(req.body));
        if (outcome.kind === 'dropped') dropped.push({ wallet: to.walletId, reason: outcome.reason, detail: outcome.detail });
        else queue.push(...outcome.outbound.map((o) => ({ scope: to, out: o })));
      }
    }
  }
  const connections = (s: TenantScope) => new ConnectionService(store).list(s, { 'sort-direction': 'asc' });
  const stored = async (s: TenantScope, id: string): Promise<StoredConnection> => storedConnectionFromItem((await store.get(didcommKeys.connection(s, id)))!);
  const eventTypes = (s: TenantScope) => [...store.items.values()].filter((i) => i.PK === keys.walletPartition(s) && String(i.SK).startsWith('EVT#')).map((i) => (i.event as { type: string }).type);
  return { store, vault, agent, invitations, pump, posted, dropped, connections, stored, eventTypes, messages: new MessageService(store) };
}

async function connect(t: ReturnType<typeof setup>, opts: { multi_use?: boolean } = {}) {
  const inv = await t.invitations.create(A, { label: 'Alice', ...opts }, BASE);
  const accepted = await t.agent.acceptInvitation(B, endpointOf(B), inv.invitation, { label: 'Bob', alias: 'alice' });
  await t.pump(B, accepted.outbound);
  return { inv, bConnection: accepted.connection };
}

test('DID Exchange 1.1 between two wallets: request, response with a signed rotated DID, complete; both active', async () => {
  const t = setup();
  const { inv, bConnection } = await connect(t);
  expect(t.dropped).toEqual([]);
  const [a] = await t.connections(A);
  const [b] = await t.connections(B);
  expect(a).toMatchObject({ state: 'active', rfc23_state: 'completed', their_role: 'invitee', their_label: 'Bob', invitation_id: inv.invitation_id, connection_protocol: 'didexchange/1.1', invitation_mode: 'once' });
  expect(b).toMatchObject({ connection_id: bConnection.connection_id, state: 'active', rfc23_state: 'completed', their_role: 'inviter', their_label: 'Alice', alias: 'alice', invitation_id: null });
  // Each side knows the other's pairwise did:peer:4.
  expect(a!.their_did).toBe(b!.my_did);
  expect(b!.their_did).toBe(a!.my_did);
  expect(a!.my_did).toMatch(/^did:peer:4/);
  expect(t.eventTypes(A)).toEqual(['invitation.created', 'connection.response', 'connection.active']);
  expect(t.eventTypes(B)).toEqual(['connection.request', 'connection.active']);
  // The single-use invitation is done: a second agent's request is dropped, nothing stored.
  expect((await t.invitations.get(A, inv.invitation_id)).state).toBe('done');
  const third = tenantScope('3');
  const again = await t.agent.acceptInvitation(third, endpointOf(third), inv.invitation, { label: 'Carol', alias: null });
  await t.agent.send(third, again.outbound[0]!);
  const outcome = await t.agent.receive(A, endpointOf(A), JSON.parse(t.posted.at(-1)!.body));
  expect(outcome).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
  expect(await t.connections(A)).toHaveLength(1);
});

test('basic messages both ways are stored with their direction, and message.received is published', async () => {
  const t = setup();
  await connect(t);
  const [a] = await t.connections(A);
  const [b] = await t.connections(B);
  const sent = await t.agent.sendMessage(B, endpointOf(B), await t.stored(B, b!.connection_id), 'hello Alice');
  await t.pump(B, sent.outbound);
  await t.agent.markMessage(B, sent.message.message_id, 'sent');
  const reply = await t.agent.sendMessage(A, endpointOf(A), await t.stored(A, a!.connection_id), 'hello Bob');
  await t.pump(A, reply.outbound);
  expect(t.dropped).toEqual([]);
  expect((await t.messages.list(A)).map((m) => [m.direction, m.message, m.contact_id, m.state])).toEqual([
    ['received', 'hello Alice', a!.connection_id, 'received'],
    ['sent', 'hello Bob', a!.connection_id, 'queued'],
  ]);
  expect((await t.messages.list(B)).map((m) => [m.direction, m.message, m.state])).toEqual([
    ['sent', 'hello Alice', 'sent'],
    ['received', 'hello Bob', 'received'],
  ]);
  expect(t.eventTypes(A).filter((e) => e.startsWith('message.'))).toEqual(['message.received']);
});

test('a multi-use invitation yields one connection per agent that accepts it', async () => {
  const t = setup();
  const inv = await t.invitations.create(A, { multi_use: true }, BASE);
  for (const s of [B, tenantScope('3')]) {
    const accepted = await t.agent.acceptInvitation(s, endpointOf(s), inv.invitation, { label: `wallet ${s.walletId}`, alias: null });
    const before = t.posted.length;
    await t.agent.send(s, accepted.outbound[0]!);
    const outcome = await t.agent.receive(A, endpointOf(A), JSON.parse(t.posted[before]!.body));
    expect(outcome.kind).toBe('committed');
  }
  expect((await t.connections(A)).map((c) => [c.their_label, c.invitation_mode, c.state])).toEqual([
    ['wallet 2', 'multi', 'response'],
    ['wallet 3', 'multi', 'response'],
  ]);
  expect((await t.invitations.get(A, inv.invitation_id)).state).toBe('await-response');
});

test('a tampered, wrongly addressed, replayed or unauthenticated envelope is dropped with its reason and nothing stored', async () => {
  const t = setup();
  await connect(t);
  const [a] = await t.connections(A);
  const [b] = await t.connections(B);
  const bConn = await t.stored(B, b!.connection_id);
  const sent = await t.agent.sendMessage(B, endpointOf(B), bConn, 'original');
  await t.agent.send(B, sent.outbound[0]!);
  const envelope = JSON.parse(t.posted.at(-1)!.body);
  const before = t.store.items.size;

  const tampered = { ...envelope, ciphertext: Buffer.from(Buffer.from(envelope.ciphertext, 'base64url').map((x: number, i: number) => (i === 0 ? x ^ 1 : x))).toString('base64url') };
  expect(await t.agent.receive(A, endpointOf(A), tampered)).toMatchObject({ kind: 'dropped', reason: 'decrypt_failed' });
  // Addressed to wallet A's key, delivered to wallet B: B holds no such key.
  expect(await t.agent.receive(B, endpointOf(B), envelope)).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
  expect(await t.agent.receive(A, endpointOf(A), { protected: 'x' })).toMatchObject({ kind: 'dropped', reason: 'malformed' });
  // Someone who knows A's connection key but is not the peer (anoncrypt, or authcrypt from another key).
  const message = { '@type': 'https://didcomm.org/basicmessage/1.0/message', '@id': 'x1', content: 'forged', sent_time: new Date().toISOString() };
  const anon = JSON.parse(Buffer.from(packMessage(message, [(await t.stored(A, a!.connection_id)).my_verkey])).toString());
  expect(await t.agent.receive(A, endpointOf(A), anon)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });
  const stranger = generateKeyPair();
  const forged = JSON.parse(Buffer.from(packMessage(message, [(await t.stored(A, a!.connection_id)).my_verkey], stranger)).toString());
  expect(await t.agent.receive(A, endpointOf(A), forged)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });
  expect(t.store.items.size).toBe(before);

  // The genuine envelope is taken.
  expect(await t.agent.receive(A, endpointOf(A), envelope)).toMatchObject({ kind: 'committed' });
  expect((await t.messages.list(A)).map((m) => m.message)).toEqual(['original']);
  // Replayed: the same message again is refused by the transaction.
  const size = t.store.items.size;
  expect(await t.agent.receive(A, endpointOf(A), envelope)).toMatchObject({ kind: 'dropped', reason: 'stale' });
  expect(t.store.items.size).toBe(size);
});

test('a deleted invitation accepts no request', async () => {
  const t = setup();
  const inv = await t.invitations.create(A, { multi_use: true }, BASE);
  await t.invitations.delete(A, inv.invitation_id);
  const accepted = await t.agent.acceptInvitation(B, endpointOf(B), inv.invitation, { label: 'Bob', alias: null });
  await t.agent.send(B, accepted.outbound[0]!);
  expect(await t.agent.receive(A, endpointOf(A), JSON.parse(t.posted.at(-1)!.body))).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
  expect(await t.connections(A)).toEqual([]);
});

test('DID Exchange 1.0 when the invitation offers only 1.0; a trust ping is answered; a problem report abandons the connection', async () => {
  const t = setup();
  const inv = await t.invitations.create(A, {}, BASE);
  const only10 = { ...inv.invitation, handshake_protocols: ['https://didcomm.org/didexchange/1.0'] };
  const accepted = await t.agent.acceptInvitation(B, endpointOf(B), only10, { label: 'Bob', alias: null });
  expect(accepted.outbound[0]!.message['@type']).toBe('https://didcomm.org/didexchange/1.0/request');
  await t.pump(B, accepted.outbound);
  expect(t.dropped).toEqual([]);
  const [a] = await t.connections(A);
  const [b] = await t.connections(B);
  expect([a!.connection_protocol, a!.state, b!.state]).toEqual(['didexchange/1.0', 'active', 'active']);

  // A trust ping from B is answered on its thread; the answer is taken by B without a change.
  const bConn = await t.stored(B, b!.connection_id);
  const ping = { connectionId: bConn.connection_id, to: { endpoint: bConn.peer!.endpoint, recipientKeys: bConn.peer!.recipient_keys, routingKeys: [] }, senderVerkey: bConn.my_verkey, message: { '@type': 'https://didcomm.org/trust_ping/1.0/ping', '@id': 'ping-1', response_requested: true } };
  const before = t.posted.length;
  await t.pump(B, [ping]);
  expect(t.posted).toHaveLength(before + 2);
  expect(t.dropped).toEqual([]);

  // A problem report from B on the exchange thread: A's side is abandoned, and then refuses messages.
  const report = { ...ping, message: { '@type': 'https://didcomm.org/didexchange/1.0/problem_report', '@id': 'pr-1', '~thread': { thid: bConn.thid }, 'problem-code': 'request_not_accepted', explain: 'changed my mind' } };
  await t.pump(B, [report]);
  expect(await t.connections(A)).toMatchObject([{ state: 'error', rfc23_state: 'abandoned', error_msg: 'changed my mind' }]);
  expect(t.eventTypes(A).at(-1)).toBe('connection.error');
  const message = await t.agent.sendMessage(B, endpointOf(B), bConn, 'still there?');
  await t.pump(B, message.outbound);
  expect(t.dropped).toEqual([{ wallet: '1', reason: 'not_active', detail: 'the connection was abandoned' }]);
  expect((await t.messages.list(A)).filter((m) => m.direction === 'received')).toEqual([]);
});

test('an invitation that is not Out-of-Band, or offers no DID Exchange, is refused before anything is stored', async () => {
  const t = setup();
  const inv = await t.invitations.create(A, {}, BASE);
  const size = t.store.items.size;
  await expect(t.agent.acceptInvitation(B, endpointOf(B), { ...inv.invitation, handshake_protocols: ['https://didcomm.org/connections/1.0'] }, { label: 'Bob', alias: null })).rejects.toMatchObject({ problemCode: 'invalid_invitation' });
  await expect(t.agent.acceptInvitation(B, endpointOf(B), { hello: 'world' }, { label: 'Bob', alias: null })).rejects.toMatchObject({ problemCode: 'invalid_invitation' });
  const noHttp = { ...inv.invitation, services: [{ id: '#inline', type: 'did-communication', recipientKeys: [(inv.invitation.services as { recipientKeys: string[] }[])[0]!.recipientKeys[0]], serviceEndpoint: 'ws://agent.example.test' }] };
  await expect(t.agent.acceptInvitation(B, endpointOf(B), noHttp, { label: 'Bob', alias: null })).rejects.toMatchObject({ problemCode: 'invalid_invitation' });
  expect(t.store.items.size).toBe(size);
});

test('an inline service may name a plain verkey shorter than 43 characters (verkeyOfReference); a key of another size is refused, nothing stored', async () => {
  const t = setup();
  const inv = await t.invitations.create(A, {}, BASE);
  const service = (inv.invitation.services as { serviceEndpoint: string }[])[0]!;
  const withKey = (key: string) => ({ ...inv.invitation, services: [{ id: '#inline', type: 'did-communication', recipientKeys: [key], serviceEndpoint: service.serviceEndpoint }] });
  const short = bs58.encode(Buffer.concat([Buffer.alloc(10), Buffer.of(0xff), randomBytes(21)]));
  const accepted = await t.agent.acceptInvitation(B, endpointOf(B), withKey(short), { label: 'Bob', alias: null });
  expect(accepted.connection.invitation_key).toBe(short);
  const size = t.store.items.size;
  await expect(t.agent.acceptInvitation(B, endpointOf(B), withKey(bs58.encode(randomBytes(31))), { label: 'Bob', alias: null })).rejects.toMatchObject({ problemCode: 'invalid_invitation' });
  expect(t.store.items.size).toBe(size);
});

test("an invitation whose service endpoint the webhooks' URL rule refuses is refused at once: nothing stored, nothing queued", async () => {
  // The deployed rule (functions/didcomm/handler.ts); literal addresses only, so no name is resolved and nothing is dialled.
  const t = setup({ endpointProblem: (url) => targetUrlProblem(url, { allowLoopback: false }) });
  const inv = await t.invitations.create(A, {}, BASE);
  const key = (inv.invitation.services as { recipientKeys: string[] }[])[0]!.recipientKeys[0];
  const size = t.store.items.size;
  for (const endpoint of ['http://169.254.169.254/latest', 'https://10.1.2.3/didcomm', 'https://[::1]/didcomm', 'http://agent.example.test/didcomm']) {
    const invitation = { ...inv.invitation, services: [{ id: '#inline', type: 'did-communication', recipientKeys: [key], serviceEndpoint: endpoint }] };
    await expect(t.agent.acceptInvitation(B, endpointOf(B), invitation, { label: 'Bob', alias: null })).rejects.toMatchObject({ problemCode: 'invalid_invitation', message: expect.stringContaining("the invitation's service endpoint") });
  }
  expect(t.store.items.size).toBe(size);
  expect(t.posted).toEqual([]);
  // The same invitation with a public https endpoint is accepted.
  const ok = await t.agent.acceptInvitation(B, endpointOf(B), inv.invitation, { label: 'Bob', alias: null });
  expect(ok.connection.state).toBe('request');
});
