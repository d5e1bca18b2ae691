import { PEER_DIDS } from '../../lib/didcomm/agent';
import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { decide } from '../../lib/didcomm/dispatch';
import { didKeyFromVerkey, generateKeyPair, packMessage, unpackMessage, verkeyFromPublicKey, type Ed25519KeyPair } from '../../lib/didcomm/envelope';
import { outboundJobFromOutboxItem, outboundOf } from '../../lib/didcomm/outbound';
import { CredentialIssuing } from '../../lib/didcomm/protocols/issue-credential-v2/issuing';
import { LD_PROOF } from '../../lib/didcomm/protocols/issue-credential-v2/ld-proof';
import { CREDENTIAL_ACK_TYPE, CREDENTIAL_PROBLEM_REPORT_TYPE, ISSUE_CREDENTIAL_TYPE, OFFER_CREDENTIAL_TYPE, REQUEST_CREDENTIAL_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/messages';
import { CredentialOffering } from '../../lib/didcomm/protocols/issue-credential-v2/offering';
import { exchangeKeys, storedExchangeFromItem, type StoredExchange } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { ISSUE_JOB_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { invitationFromUrl } from '../../lib/didcomm/protocols/out-of-band/messages';
import { didcommKeys, invitationFromItem } from '../../lib/didcomm/records';
import { OutboxPublisher } from '../../lib/events/publisher';
import { NodeWebhookTransport } from '../../lib/adapters/node-webhook-transport';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import type { Item } from '../../lib/store/port';
import { targetUrlProblem } from '../../lib/webhooks/target-url';
import type { WebhookRequest } from '../../lib/webhooks/transport';
import { CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { MemoryVault } from '../helpers/didcomm-memory-vault';
import { loopbackOnlyRequest } from '../helpers/loopback-only';
import { MemoryStore } from '../helpers/memory-store';

/**
 * Connectionless issuance (RFC 0434 without handshake_protocols, RFC 0056 ~service) through the real
 * pieces: CredentialOffering makes the invitation, a holder packs real envelopes to its key, the
 * AgentRuntime dispatches them, CredentialIssuing answers to the holder's ~service.
 */
const BASE = 'https://issuer.example.test';
const A = tenantScope('1');
const B = tenantScope('2');
const endpointOf = (s: TenantScope) => `${BASE}/didcomm/ref${s.walletId}`;
const HOLDER_ENDPOINT = 'https://holder.example.test/didcomm';

const detail = {
  credential: {
    '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://example.com/vocab#', memberName: 'ex:memberName' }],
    type: ['VerifiableCredential'],
    issuer: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
    issuanceDate: '2026-11-26T00:00:00Z',
    credentialSubject: { memberName: 'Ada' },
  },
  options: { proofType: 'Ed25519Signature2018', proofPurpose: 'assertionMethod' },
};

let ulidSeq = 0;
const nextExchangeId = () => `01JDQ3M1Z8V2Q9R6T4X7Y0B5${String(10 + ulidSeq++).padStart(2, '0')}`;

function holder(): { kp: Ed25519KeyPair; verkey: string } {
  const kp = generateKeyPair();
  return { kp, verkey: verkeyFromPublicKey(kp.publicKey) };
}

async function setup() {
  const store = new MemoryStore();
  const vault = new MemoryVault();
  const events = new OutboxPublisher(store);
  const posted: WebhookRequest[] = [];
  const transport = { post: async (r: WebhookRequest) => (posted.push(r), { outcome: { kind: 'response' as const, status: 202 }, durationMs: 1 }) };
  const agent = new AgentRuntime({ store, events, keys: vault, dids: PEER_DIDS, transport, timeoutMs: 1000, endpointProblem: (u) => targetUrlProblem(u, { allowLoopback: false }) });
  const invitations = new InvitationService({ store, events, refs: { of: async (s) => `ref${s.walletId}` }, keys: vault });
  const offering = new CredentialOffering({ store, events, invitations });
  const issuing = new CredentialIssuing({ store, events, issuers: [{ name: 'ld_proof', issue: async () => ({ attachment: { signed: true }, record: { proof_type: 'Ed25519Signature2018' } }) }] });

  /** A connectionless offer: the exchange, and what the holder reads from the invitation. */
  async function offer(scope: TenantScope = A) {
    const made = await offering.offer(scope, { kind: 'invitation' }, { format: LD_PROOF, exchangeId: nextExchangeId(), detail, formatOptions: {}, revocationDefId: null }, 0, BASE);
    const invitation = invitationFromUrl(made.invitation_url!) as Record<string, any>;
    const attached = JSON.parse(Buffer.from(invitation['requests~attach'][0].data.base64, 'base64').toString('utf8')) as Record<string, any>;
    return { made, invitation, offerMessage: attached, ourVerkey: attached['~service'].recipientKeys[0] as string };
  }
  const exchangeOf = async (id: string, scope: TenantScope = A): Promise<StoredExchange> => storedExchangeFromItem((await store.get(exchangeKeys.exchange(scope, id)))!);
  /** An envelope from `from` (authcrypt; anoncrypt without) to our invitation key, received by wallet `scope`. */
  const receive = (message: Record<string, unknown>, to: string, from?: Ed25519KeyPair, scope: TenantScope = A) =>
    agent.receive(scope, endpointOf(scope), JSON.parse(Buffer.from(packMessage(message, [to], from)).toString('utf8')));
  const outboxJobs = () => [...store.items.values()].map((i: Item) => outboundJobFromOutboxItem(i)).filter((j) => j !== null);
  const eventTypes = () => [...store.items.values()].filter((i) => i.PK === keys.walletPartition(A) && String(i.SK).startsWith('EVT#')).map((i) => (i.event as { type: string }).type);
  return { store, vault, agent, offering, issuing, offer, exchangeOf, receive, outboxJobs, eventTypes, posted };
}

const request = (thid: string, service?: unknown, id = 'req-1') => ({
  '@type': REQUEST_CREDENTIAL_TYPE,
  '@id': id,
  '~thread': { thid },
  formats: [{ attach_id: 'a', format: 'aries/ld-proof-vc-detail@v1.0' }],
  'requests~attach': [{ '@id': 'a', 'mime-type': 'application/json', data: { base64: Buffer.from(JSON.stringify(detail)).toString('base64') } }],
  ...(service === undefined ? {} : { '~service': service }),
});
const serviceOf = (verkey: string, endpoint = HOLDER_ENDPOINT) => ({ recipientKeys: [didKeyFromVerkey(verkey)], routingKeys: [], serviceEndpoint: endpoint });
const ack = (thid: string) => ({ '@type': CREDENTIAL_ACK_TYPE, '@id': 'ack-1', '~thread': { thid }, status: 'OK' });
const report = (thid: string) => ({ '@type': CREDENTIAL_PROBLEM_REPORT_TYPE, '@id': 'pr-1', '~thread': { thid }, description: { code: 'issuance-abandoned', en: 'no thanks' } });

describe('the connectionless invitation', () => {
  test('no handshake_protocols; the offer in requests~attach carries our ~service (the invitation key, our endpoint); the exchange has no connection', async () => {
    const t = await setup();
    const { made, invitation, offerMessage, ourVerkey } = await t.offer();
    expect(invitation.handshake_protocols).toBeUndefined();
    expect(offerMessage).toMatchObject({ '@type': OFFER_CREDENTIAL_TYPE, '@id': made.thread_id, '~service': { recipientKeys: [ourVerkey], routingKeys: [], serviceEndpoint: endpointOf(A) } });
    expect(invitation.services[0].recipientKeys).toEqual([didKeyFromVerkey(ourVerkey)]);
    expect(made).toMatchObject({ state: 'offer-sent', connection_id: null, parent_thread_id: invitation['@id'] });
    const inv = invitationFromItem((await t.store.get(didcommKeys.invitation(A, made.invitation_id!)))!);
    expect(inv).toMatchObject({ invitation_key: ourVerkey, multi_use: false, state: 'await-response' });
    expect(await t.store.get(didcommKeys.recipientKey(A, ourVerkey))).toMatchObject({ kind: 'invitation', invitation_id: made.invitation_id, exchange_id: made.credential_exchange_id });
    expect(t.outboxJobs()).toEqual([]); // nothing is sent: the holder reads the invitation
  });
});

describe('a holder answers without connecting', () => {
  test('request (pinned), credential to its ~service, ack: done with connection_id null; replays and other keys dropped', async () => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const ada = holder();
    const mallory = holder();
    // Another wallet's endpoint never reaches this wallet's exchange: its key is not that wallet's.
    expect(await t.receive(request(made.thread_id, serviceOf(ada.verkey)), ourVerkey, ada.kp, B)).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
    // Before any request, a problem report cannot end the exchange (anyone holding the invitation could).
    expect(await t.receive(report(made.thread_id), ourVerkey, mallory.kp)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });

    expect(await t.receive(request(made.thread_id, serviceOf(ada.verkey)), ourVerkey, ada.kp)).toMatchObject({ kind: 'committed', outbound: [] });
    let x = await t.exchangeOf(made.credential_exchange_id);
    expect(x).toMatchObject({ state: 'request-received', connection_id: null, request: detail });
    expect(x.connectionless?.holder).toEqual({ verkey: ada.verkey, endpoint: HOLDER_ENDPOINT, recipient_keys: [ada.verkey], routing_keys: [] });
    expect(invitationFromItem((await t.store.get(didcommKeys.invitation(A, made.invitation_id!)))!).state).toBe('done');
    expect([...t.store.items.values()].filter((i) => i.type === ISSUE_JOB_TYPE)).toHaveLength(1);

    // Single use: a later request (the same again, or another holder's) is dropped, and changes nothing.
    expect(await t.receive(request(made.thread_id, serviceOf(ada.verkey), 'req-2'), ourVerkey, ada.kp)).toMatchObject({ kind: 'dropped', reason: 'stale' });
    expect(await t.receive(request(made.thread_id, serviceOf(mallory.verkey)), ourVerkey, mallory.kp)).toMatchObject({ kind: 'dropped', reason: 'stale' });
    expect((await t.exchangeOf(made.credential_exchange_id)).connectionless?.holder?.verkey).toBe(ada.verkey);

    // The issuing worker answers to Ada's ~service: authcrypted from the invitation key, our ~service on it.
    expect(await t.issuing.run(A, made.credential_exchange_id)).toEqual({ outcome: 'issued' });
    const [job] = t.outboxJobs();
    expect(job).toMatchObject({ connection_id: `connectionless:${made.credential_exchange_id}`, sender_verkey: ourVerkey, to: { endpoint: HOLDER_ENDPOINT, recipient_keys: [ada.verkey], routing_keys: [] } });
    expect(await t.agent.send(A, outboundOf(job!))).toMatchObject({ ok: true });
    const delivered = unpackMessage(JSON.parse(t.posted[0]!.body), ada.kp);
    expect(t.posted[0]!.url).toBe(HOLDER_ENDPOINT);
    expect(delivered.senderVerkey).toBe(ourVerkey);
    expect(delivered.message).toMatchObject({ '@type': ISSUE_CREDENTIAL_TYPE, '~thread': { thid: made.thread_id }, '~service': { recipientKeys: [ourVerkey], serviceEndpoint: endpointOf(A) } });

    // A replayed request after the issue: dropped.
    expect(await t.receive(request(made.thread_id, serviceOf(ada.verkey)), ourVerkey, ada.kp)).toMatchObject({ kind: 'dropped', reason: 'stale' });
    // The ack must come from the pinned key: not another holder's, not anoncrypt.
    expect(await t.receive(ack(made.thread_id), ourVerkey, mallory.kp)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });
    expect(await t.receive(ack(made.thread_id), ourVerkey)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });
    expect(await t.receive(report(made.thread_id), ourVerkey, mallory.kp)).toMatchObject({ kind: 'dropped', reason: 'unauthenticated' });
    expect((await t.exchangeOf(made.credential_exchange_id)).state).toBe('credential-issued');
    expect(await t.receive(ack(made.thread_id), ourVerkey, ada.kp)).toMatchObject({ kind: 'committed' });
    x = await t.exchangeOf(made.credential_exchange_id);
    expect(x).toMatchObject({ state: 'done', connection_id: null });
    expect(t.eventTypes()).toEqual(['invitation.created', 'credential.offer_sent', 'credential.request_received', 'credential.issued', 'credential.done']);
  });

  test('two valid requests decided on the same read: only the first commits (the write is conditioned on the state)', async () => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const [ada, bob] = [holder(), holder()];
    const item = (await t.store.get(didcommKeys.invitation(A, made.invitation_id!)))!;
    const target = { kind: 'invitation' as const, invitation: invitationFromItem(item), exchangeId: made.credential_exchange_id };
    const ctx = t.agent.context(A, endpointOf(A));
    const first = await decide(ctx, { message: request(made.thread_id, serviceOf(ada.verkey)), senderVerkey: ada.verkey, recipientVerkey: ourVerkey }, target);
    const second = await decide(ctx, { message: request(made.thread_id, serviceOf(bob.verkey)), senderVerkey: bob.verkey, recipientVerkey: ourVerkey }, target);
    await t.store.write(first.writes);
    await expect(t.store.write(second.writes)).rejects.toMatchObject({ name: 'ConditionFailedError' });
    expect((await t.exchangeOf(made.credential_exchange_id)).connectionless?.holder?.verkey).toBe(ada.verkey);
  });

  test('the holder may abandon it after its request (a problem report from its key)', async () => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const ada = holder();
    await t.receive(request(made.thread_id, serviceOf(ada.verkey)), ourVerkey, ada.kp);
    expect(await t.receive(report(made.thread_id), ourVerkey, ada.kp)).toMatchObject({ kind: 'committed' });
    expect(await t.exchangeOf(made.credential_exchange_id)).toMatchObject({ state: 'abandoned', error_msg: 'the holder reported: no thanks' });
  });

  test('a request that differs from the offer: abandoned, the problem report goes to its ~service', async () => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const ada = holder();
    const changed = request(made.thread_id, serviceOf(ada.verkey));
    changed['requests~attach'][0]!.data.base64 = Buffer.from(JSON.stringify({ ...detail, credential: { ...detail.credential, credentialSubject: { memberName: 'Mallory' } } })).toString('base64');
    const out = await t.receive(changed, ourVerkey, ada.kp);
    expect(out).toMatchObject({ kind: 'committed' });
    const sent = out.kind === 'committed' ? out.outbound : [];
    expect(sent).toEqual([expect.objectContaining({ senderVerkey: ourVerkey, to: { endpoint: HOLDER_ENDPOINT, recipientKeys: [ada.verkey], routingKeys: [] } })]);
    expect(sent[0]!.message).toMatchObject({ '@type': CREDENTIAL_PROBLEM_REPORT_TYPE, '~service': { recipientKeys: [ourVerkey] } });
    expect((await t.exchangeOf(made.credential_exchange_id)).state).toBe('abandoned');
  });
});

describe('refused before anything is stored', () => {
  const ada = holder();
  const other = holder();
  test.each([
    ['no ~service', () => undefined, ada.kp, 'no_service'],
    ['anoncrypt (no sender key to pin)', () => serviceOf(ada.verkey), undefined, 'unauthenticated'],
    ["a ~service that does not name the sender's key", () => serviceOf(other.verkey), ada.kp, 'unauthenticated'],
    ['a ~service with a key that is no Ed25519 key', () => ({ recipientKeys: [ada.verkey, 'not-a-key'], serviceEndpoint: HOLDER_ENDPOINT }), ada.kp, 'bad_service'],
    ['a malformed ~service', () => ({ recipientKeys: 'x', serviceEndpoint: 7 }), ada.kp, 'bad_service'],
    ['an http endpoint', () => serviceOf(ada.verkey, 'http://holder.example.test/didcomm'), ada.kp, 'bad_service'],
    ['a private address', () => serviceOf(ada.verkey, 'https://10.1.2.3/didcomm'), ada.kp, 'bad_service'],
    ['the metadata address', () => serviceOf(ada.verkey, 'https://169.254.169.254/latest'), ada.kp, 'bad_service'],
    ['a loopback host', () => serviceOf(ada.verkey, 'https://localhost:8443/didcomm'), ada.kp, 'bad_service'],
    ['an endpoint that is no URL', () => serviceOf(ada.verkey, 'holder'), ada.kp, 'bad_service'],
  ])('%s: dropped, the exchange still open to a valid request', async (_what, service, from, reason) => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const before = new Map(t.store.items);
    expect(await t.receive(request(made.thread_id, service()), ourVerkey, from)).toMatchObject({ kind: 'dropped', reason });
    expect(new Map(t.store.items)).toEqual(before);
    // The first valid request still takes it.
    expect(await t.receive(request(made.thread_id, serviceOf(ada.verkey)), ourVerkey, ada.kp)).toMatchObject({ kind: 'committed' });
  });

  test("a DID Exchange request to the invitation's key (it offers no handshake), or another exchange's thread on it: dropped", async () => {
    const t = await setup();
    const one = await t.offer();
    const two = await t.offer();
    const ada = holder();
    expect(await t.receive({ '@type': 'https://didcomm.org/didexchange/1.1/request', '@id': 'x', '~thread': { pthid: one.invitation['@id'] }, label: 'x', did: 'did:peer:4x' }, one.ourVerkey, ada.kp)).toMatchObject({
      kind: 'dropped',
      reason: 'unexpected_message',
    });
    // The invitation key of exchange one names exchange one only, in this wallet only.
    expect(await t.receive(request(two.made.thread_id, serviceOf(ada.verkey)), one.ourVerkey, ada.kp)).toMatchObject({ kind: 'dropped', reason: 'unknown_thread' });
    expect((await t.exchangeOf(two.made.credential_exchange_id)).state).toBe('offer-sent');
  });

  test('a holder host that resolves to a private address: refused by the outbound SSRF guard when the credential is sent, nothing dialled', async () => {
    const t = await setup();
    const { made, ourVerkey } = await t.offer();
    const ada = holder();
    await t.receive(request(made.thread_id, serviceOf(ada.verkey, 'https://holder.example.test/didcomm')), ourVerkey, ada.kp);
    await t.issuing.run(A, made.credential_exchange_id);
    const connector = loopbackOnlyRequest();
    const guarded = new AgentRuntime({
      store: t.store,
      events: new OutboxPublisher(t.store),
      keys: t.vault,
      dids: PEER_DIDS,
      timeoutMs: 1000,
      transport: new NodeWebhookTransport({ allowLoopback: false, resolver: async () => [{ address: '10.0.0.7', family: 4 }], request: connector }),
    });
    const result = await guarded.send(A, outboundOf(t.outboxJobs()[0]!));
    expect(result).toMatchObject({ ok: false, outcome: { kind: 'refused_address' } });
    expect(connector.dialled).toEqual([]);
  });
});

describe('the other delivery modes', () => {
  test("invitation_id naming a connectionless invitation: 409 invitation_connectionless (it makes no connection to wait for)", async () => {
    const t = await setup();
    const { made } = await t.offer();
    await expect(t.offering.target(A, { invitation_id: made.invitation_id! })).rejects.toMatchObject({ status: 409, code: 'invitation_connectionless' });
    // A plain invitation still makes the offer wait for its connection.
    const plain = await new InvitationService({ store: t.store, events: new OutboxPublisher(t.store), refs: { of: async (s) => `ref${s.walletId}` }, keys: t.vault }).create(A, {}, BASE);
    expect(await t.offering.target(A, { invitation_id: plain.invitation_id })).toEqual({ kind: 'pending', invitationId: plain.invitation_id });
    expect((plain.invitation as { handshake_protocols?: unknown }).handshake_protocols).toEqual(['https://didcomm.org/didexchange/1.1', 'https://didcomm.org/didexchange/1.0']);
  });
});
