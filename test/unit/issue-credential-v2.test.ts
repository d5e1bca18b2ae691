import { ProtocolViolation, PEER_DIDS, type AgentContext, type AgentKeys } from '../../lib/didcomm/agent';
import { decide } from '../../lib/didcomm/dispatch';
import { IssueRefused } from '../../lib/didcomm/protocols/issue-credential-v2/formats';
import { exchangeReader, ISSUE_JOB_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { CredentialIssuing, type FormatIssuer } from '../../lib/didcomm/protocols/issue-credential-v2/issuing';
import { checkLdProofRequest, LD_PROOF_DETAIL_FORMAT, LD_PROOF_VC_FORMAT } from '../../lib/didcomm/protocols/issue-credential-v2/ld-proof';
import { CREDENTIAL_PROBLEM_REPORT_TYPE, ISSUE_CREDENTIAL_TYPE, REQUEST_CREDENTIAL_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/messages';
import { exchangeItem, exchangeKeys, storedExchangeFromItem, type StoredExchange } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { connectionItem, type StoredConnection } from '../../lib/didcomm/records';
import { OutboxPublisher } from '../../lib/events/publisher';
import { DidService } from '../../lib/dids/service';
import { JsonLdIssuance, type StatusSource } from '../../lib/jsonld/issuance';
import { CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { TaaService } from '../../lib/taa/service';
import { tenantScope } from '../../lib/store/keys';
import type { Item } from '../../lib/store/port';
import { memoryPublicDidDidcomm } from '../helpers/didcomm-memory-vault';
import { MemoryStore } from '../helpers/memory-store';

const scope = tenantScope('7');
const credential = {
  '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://example.com/vocab#', memberName: 'ex:memberName' }],
  type: ['VerifiableCredential'],
  issuer: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
  issuanceDate: '2026-11-26T00:00:00Z',
  credentialSubject: { memberName: 'Ada' },
};
const offer = { credential, options: { proofType: 'Ed25519Signature2018', proofPurpose: 'assertionMethod' } };

describe('RFC 0593: the request must repeat the offer', () => {
  test('the same detail (key order aside) is accepted', () => {
    const reordered = { options: { proofPurpose: 'assertionMethod', proofType: 'Ed25519Signature2018' }, credential: Object.fromEntries(Object.entries(credential).reverse()) };
    expect(checkLdProofRequest(offer, reordered)).toEqual({ ok: true, detail: reordered });
  });
  test('the holder may set credentialSubject.id to a DID when the offer has none', () => {
    const request = { ...offer, credential: { ...credential, credentialSubject: { id: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', memberName: 'Ada' } } };
    expect(checkLdProofRequest(offer, request).ok).toBe(true);
  });
  test.each([
    ['a subject id that is not a DID', { ...offer, credential: { ...credential, credentialSubject: { id: 'https://evil.example/me', memberName: 'Ada' } } }, 'must be a DID'],
    ['a changed claim', { ...offer, credential: { ...credential, credentialSubject: { memberName: 'Mallory' } } }, 'differs'],
    ['a holder id and a changed claim', { ...offer, credential: { ...credential, credentialSubject: { id: 'did:example:1', memberName: 'Mallory' } } }, 'differs'],
    ['another proof type', { ...offer, options: { ...offer.options, proofType: 'Ed25519Signature2020' } }, 'options differ'],
    ['a status the holder asks for', { ...offer, options: { ...offer.options, credentialStatus: { type: 'StatusList2021Entry' } } }, 'options differ'],
    ['an added field', { ...offer, credential: { ...credential, expirationDate: '2099-01-01T00:00:00Z' } }, 'differs'],
    ['not a detail at all', { credential: 'x' }, 'not an ld-proof-vc-detail'],
  ])('%s is refused', (_what, request, message) => {
    const out = checkLdProofRequest(offer, request);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.problem).toContain(message);
  });
  test('a subject id the offer set cannot be replaced', () => {
    const offered = { ...offer, credential: { ...credential, credentialSubject: { id: 'did:example:ada', memberName: 'Ada' } } };
    expect(checkLdProofRequest(offered, { ...offered, credential: { ...offered.credential, credentialSubject: { id: 'did:example:mallory', memberName: 'Ada' } } }).ok).toBe(false);
  });
});

const at = '2026-11-26T08:00:00.000Z';
const peerVerkey = 'PeerVerkey11111111111111111111111111111111';
const connection = (id: string, invitationId: number | null = null): StoredConnection => ({
  connection_id: id, state: 'active', rfc23_state: 'completed', their_label: 'Ada', their_did: 'did:peer:4x', my_did: 'did:peer:4y', their_role: 'invitee',
  invitation_key: null, invitation_msg_id: null, invitation_mode: 'once', connection_protocol: 'didexchange/1.1', alias: null, invitation_id: invitationId, error_msg: null,
  created_at: at, updated_at: at, my_verkey: 'OurVerkey111111111111111111111111111111111', peer: { endpoint: 'https://holder.example/didcomm', recipient_keys: [peerVerkey], routing_keys: [] }, thid: 't', pthid: null,
});
const exchange = (over: Partial<StoredExchange> = {}): StoredExchange => ({
  credential_exchange_id: '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE', connection_id: 'C1', invitation_id: null, invitation_url: null, thread_id: 'thread-1', parent_thread_id: null,
  role: 'issuer', initiator: 'self', state: 'offer-sent', format: 'ld_proof', revocation_def_id: null, error_msg: null, created_at: at, updated_at: at,
  offer, request: null, credential: null, offer_message: null, format_options: {}, format_record: null, connectionless: null, ...over,
});
const requestMessage = (detail: unknown, thid = 'thread-1') => ({
  '@type': REQUEST_CREDENTIAL_TYPE, '@id': 'r1', '~thread': { thid },
  formats: [{ attach_id: 'a', format: LD_PROOF_DETAIL_FORMAT }],
  'requests~attach': [{ '@id': 'a', 'mime-type': 'application/json', data: { base64: Buffer.from(JSON.stringify(detail)).toString('base64') } }],
});

function setup(x: StoredExchange) {
  const store = new MemoryStore();
  const events = new OutboxPublisher(store);
  const ctx: AgentContext = { scope, now: new Date('2026-11-26T08:01:00Z'), endpoint: 'https://issuer.example/didcomm/ref', keys: {} as AgentKeys, dids: PEER_DIDS, events, exchanges: exchangeReader(store) };
  return { store, events, ctx, seed: () => store.write([{ type: 'put', item: exchangeItem(scope, x) }, { type: 'put', item: { ...exchangeKeys.thread(scope, x.thread_id), exchange_id: x.credential_exchange_id } }, { type: 'put', item: connectionItem(scope, connection('C1')) }]) };
}
const fromPeer = (message: Record<string, unknown>) => ({ message, senderVerkey: peerVerkey, recipientVerkey: 'OurVerkey111111111111111111111111111111111' });
const eventsOf = (store: MemoryStore) => [...store.items.values()].filter((i: Item) => i.type === 'event').map((i: Item) => (i.event as { type: string }).type);

describe('the issuer side of Issue Credential 2.0 (inbound worker)', () => {
  test('a matching request: request-received, its event and the issuing job, nothing sent yet', async () => {
    const { store, ctx, seed } = setup(exchange());
    await seed();
    const d = await decide(ctx, fromPeer(requestMessage(offer)), { kind: 'connection', connection: connection('C1') });
    expect(d.outbound).toEqual([]);
    await store.write(d.writes);
    const x = storedExchangeFromItem((await store.get(exchangeKeys.exchange(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')))!);
    expect(x).toMatchObject({ state: 'request-received', request: offer });
    expect([...store.items.values()].filter((i: Item) => i.type === ISSUE_JOB_TYPE).map((i: Item) => i.job)).toEqual([{ v: 1, wallet_id: '7', exchange_id: '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE' }]);
    expect(eventsOf(store)).toEqual(['credential.request_received']);
    // The same request again (a replay): refused as stale, nothing more written.
    await expect(decide(ctx, fromPeer(requestMessage(offer)), { kind: 'connection', connection: connection('C1') })).rejects.toThrow(ProtocolViolation);
  });

  test('a request that differs from the offer: abandoned, and a problem report to the holder on the thread', async () => {
    const { store, ctx, seed } = setup(exchange());
    await seed();
    const d = await decide(ctx, fromPeer(requestMessage({ ...offer, credential: { ...credential, credentialSubject: { memberName: 'Mallory' } } })), { kind: 'connection', connection: connection('C1') });
    expect(d.outbound).toHaveLength(1);
    expect(d.outbound[0]!.message).toMatchObject({ '@type': CREDENTIAL_PROBLEM_REPORT_TYPE, '~thread': { thid: 'thread-1' }, description: { code: 'issuance-abandoned' } });
    await store.write(d.writes);
    expect((await store.get(exchangeKeys.exchange(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')))).toMatchObject({ state: 'abandoned', error_msg: 'the requested credential differs from the offered one' });
    expect([...store.items.values()].some((i: Item) => i.type === ISSUE_JOB_TYPE)).toBe(false);
    expect(eventsOf(store)).toEqual(['credential.abandoned']);
  });

  test("another connection's request on the thread, or an unknown thread: dropped", async () => {
    const { ctx, seed } = setup(exchange());
    await seed();
    const other = { ...connection('C2'), peer: connection('C1').peer };
    await expect(decide(ctx, fromPeer(requestMessage(offer)), { kind: 'connection', connection: other })).rejects.toMatchObject({ problemCode: 'unknown_thread' });
    await expect(decide(ctx, fromPeer(requestMessage(offer, 'nope')), { kind: 'connection', connection: connection('C1') })).rejects.toMatchObject({ problemCode: 'unknown_thread' });
  });
});

describe('the issuing step (issuing worker)', () => {
  const issuer = (issue: FormatIssuer['issue']): FormatIssuer => ({ name: 'ld_proof', issue });

  test('issued: credential-issued with the issue-credential message queued; a second run of the same job does nothing', async () => {
    const { store, events, seed } = setup(exchange({ state: 'request-received', request: offer }));
    await seed();
    const calls: unknown[] = [];
    const issuing = new CredentialIssuing({ store, events, issuers: [issuer(async (_s, x) => (calls.push(x), { attachment: { signed: true }, record: { proof_type: 'Ed25519Signature2018' } }))] });
    expect(await issuing.run(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')).toEqual({ outcome: 'issued' });
    expect(await issuing.run(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')).toMatchObject({ outcome: 'skipped' });
    expect(calls).toHaveLength(1);
    const jobs = [...store.items.values()].filter((i: Item) => i.type === 'didcomm_outbound').map((i: Item) => (i.job as { message: Record<string, unknown> }).message);
    expect(jobs).toEqual([expect.objectContaining({ '@type': ISSUE_CREDENTIAL_TYPE, '~thread': { thid: 'thread-1' }, formats: [{ attach_id: 'ld_proof', format: LD_PROOF_VC_FORMAT }] })]);
    expect(await store.get(exchangeKeys.exchange(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE'))).toMatchObject({ state: 'credential-issued', credential: { signed: true } });
    expect(eventsOf(store)).toEqual(['credential.issued']);
  });

  test('refused by the format: abandoned, the holder told', async () => {
    const { store, events, seed } = setup(exchange({ state: 'request-received', request: offer }));
    await seed();
    const issuing = new CredentialIssuing({ store, events, issuers: [issuer(async () => { throw new IssueRefused('issuance-abandoned', 'the issuer DID was deactivated'); })] });
    expect(await issuing.run(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')).toMatchObject({ outcome: 'refused' });
    expect(await store.get(exchangeKeys.exchange(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE'))).toMatchObject({ state: 'abandoned', error_msg: 'the issuer DID was deactivated' });
    expect([...store.items.values()].filter((i: Item) => i.type === 'didcomm_outbound').map((i: Item) => (i.job as { message: { '@type': string } }).message['@type'])).toEqual([CREDENTIAL_PROBLEM_REPORT_TYPE]);
  });

  test('a fault of ours (the key manager down) is thrown for SQS to retry, with nothing written', async () => {
    const { store, events, seed } = setup(exchange({ state: 'request-received', request: offer }));
    await seed();
    const before = [...store.items.values()].length;
    const issuing = new CredentialIssuing({ store, events, issuers: [issuer(async () => { throw new Error('KMS unavailable'); })] });
    await expect(issuing.run(scope, '01JDQ3M1Z8V2Q9R6T4X7Y0B5CE')).rejects.toThrow('KMS unavailable');
    expect([...store.items.values()].length).toBe(before);
  });
});

describe('revocation_def_id and the status-list source', () => {
  async function issuanceWith(statusSource: StatusSource) {
    const store = new MemoryStore();
    const km = new LocalKeyManager(store, new LocalSecretDeriver('cd'.repeat(32)));
    const taa = new TaaService(store, { text: 'Agreement', version: '1.0', aml: { click: 'clicked' }, amlVersion: '1.0' });
    const dids = new DidService({ didcomm: memoryPublicDidDidcomm(store), store, keyManager: km, taa, indyNamespace: 'test', limits: { maxDids: 10, maxCreationsPerMinute: 10 } });
    const record = await dids.create(scope, { method: 'key', keyType: 'ed25519', baseUrl: 'https://issuer.example' });
    await store.write([{ type: 'put', item: connectionItem(scope, connection('C1')) }]);
    const events = new OutboxPublisher(store);
    const issuance = new JsonLdIssuance({ store, events, invitations: { create: async () => { throw new Error('not used'); } }, contexts: () => async () => undefined, statusSource });
    return { store, issuance, did: record.did };
  }

  test("with a source: the offered credential carries its entry (and, v1, the status context); the source is asked once with the exchange's id", async () => {
    const calls: unknown[][] = [];
    const entry = { id: 'https://issuer.example/status/1#42', type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '42', statusListCredential: 'https://issuer.example/status/1' };
    const record = { revocation_def_id: 'def-1', status_list: 1, status_list_index: 42, status_list_credential: entry.statusListCredential };
    // The source's own writes (the entry record) join the offer's transaction.
    const entryKey = { PK: `W#${scope.walletId}`, SK: 'SLE#def-1#x' };
    const { store, issuance, did } = await issuanceWith({
      credentialStatusFor: async (...args) => (calls.push(args), { credentialStatus: entry, record, listIssuer: 'did:example:issuer', ops: [{ type: 'put', item: { ...entryKey, type: 'status_entry' }, condition: 'not_exists' }] }),
    });
    const [made] = await issuance.issue(scope, { contact_id: 'C1', credential: { ...credential, issuer: did }, revocation_def_id: 'def-1', proofType: 'Ed25519Signature2018' }, 0, 'https://issuer.example');
    expect(calls).toEqual([[scope, 'def-1', made!.credential_exchange_id]]);
    const x = storedExchangeFromItem((await store.get(exchangeKeys.exchange(scope, made!.credential_exchange_id)))!);
    const offered = (x.offer as { credential: Record<string, unknown> }).credential;
    expect(offered.credentialStatus).toEqual(entry);
    expect(offered['@context']).toContain(CONTEXT_URLS.statusList);
    expect(x.revocation_def_id).toBe('def-1');
    expect(x.format_options.credential_status).toEqual(record);
    expect(await store.get(entryKey)).toMatchObject({ type: 'status_entry' });
    // The offer left with it, in the same transaction.
    const sent = [...store.items.values()].filter((i: Item) => i.type === 'didcomm_outbound').map((i: Item) => (i.job as { message: Record<string, unknown> }).message);
    expect(sent).toHaveLength(1);
  });
});
