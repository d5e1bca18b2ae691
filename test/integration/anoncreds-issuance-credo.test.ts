/**
 * AnonCreds credentials over DIDComm, end to end over HTTP (issue 24): Credo 0.6.3 as the holder's
 * agent (its Issue Credential 2.0 protocol, auto-accepting) with a holder-side `anoncreds/*` format whose
 * crypto is the holder written from the AnonCreds specification (test/helpers/credo-anoncreds-format.ts:
 * Credo's own AnonCreds module cannot load anoncreds-rs here). A wallet issues with POST
 * /api/v1/credentials: the offer leaves through the outbound worker, the holder resolves the definition
 * through the did:web AnonCreds method, checks the key correctness proof and answers with its blinded
 * link secret; the inbound worker checks the request, the issuing worker checks the holder's proof and
 * signs; the holder verifies the credential (and, revocable, its witness against the published status
 * list), stores it and acks. Bad inputs are refused with nothing stored or sent.
 */
import { DidCommCredentialState, DidCommEventTypes, type DidCommMessageProcessedEvent } from '@credo-ts/didcomm';
import { REVOCATION_NOTIFICATION_TYPE } from '../../lib/anoncreds/credential-revocation';
import { holderCheckBatch } from '../helpers/anoncreds-revocation-holder';
import { precomputedPrimesGenerator } from '../helpers/anoncreds-registry';
import { didWebAnonCredsResolver, SpecAnonCredsHolderFormatService } from '../helpers/credo-anoncreds-format';
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let hooks: Receiver;
let holder: SpecAnonCredsHolderFormatService;
let resolveObject: (id: string) => Promise<any>;
let acme: Awaited<ReturnType<typeof walletWithPublicDid>>;
let other: Awaited<ReturnType<typeof walletWithPublicDid>>;
const SCHEMA = { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree', 'age'] };
const ATTRS = [
  { name: 'name', value: 'Ada Lovelace' },
  { name: 'degree', value: 'Mathematics' },
  { name: 'age', value: '36' },
];

/** A definition requested (202, state wait) and made by the worker. */
async function definition(key: string, body: Record<string, unknown>): Promise<any> {
  const requested = await api.call('POST', '/api/v1/credential-definitions', { key, body });
  if (requested.status !== 202) throw new Error(`definition: ${requested.status} ${JSON.stringify(requested.body)}`);
  return finished(key, requested.body.id);
}

async function finished(key: string, id: string): Promise<any> {
  return eventually(async () => {
    const d = await ok(api.call('GET', `/api/v1/credential-definitions/${id}`, { key }), 'definition');
    return d.state === 'finished' ? d : undefined;
  }, 180_000, 'definition finished');
}

beforeAll(async () => {
  holder = new SpecAnonCredsHolderFormatService({ credentialDefinition: (id) => resolveObject(id), linkSecret: 0x5eed5eed5eed5eed5eed5eed5eed5eedn << 100n });
  [api, credo, hooks] = await Promise.all([startTestApi({ anoncredsKeyGenerator: precomputedPrimesGenerator() }), startCredoPeer({ label: 'Ada (Credo)', credentialFormats: [holder] }), startReceiver()]);
  resolveObject = didWebAnonCredsResolver(api.rt.url);
  [acme, other] = await Promise.all([walletWithPublicDid(api, { method: 'web' }), walletWithPublicDid(api, { method: 'web' })]);
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: acme.key, body: { urls: [`${hooks.url}/acme`] } }), 'webhook target');
}, 240_000);

afterAll(async () => {
  await credo?.stop();
  await api?.rt.stop();
  await hooks?.close();
});

async function connect(): Promise<string> {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: acme.key, body: {} }), 'invitation');
  const { connectionId } = await credo.receiveInvitationUrl(inv.invitation_url);
  await credo.waitForConnection((c) => c.id === connectionId, 30_000);
  const ours = await eventually(async () =>
    (await ok(api.call('GET', '/api/v1/connections', { key: acme.key }), 'connections')).find((c: any) => c.invitation_id === inv.invitation_id && c.state === 'active'), 30_000, 'our connection active');
  return ours.connection_id;
}

const exchange = (id: string) => ok(api.call('GET', `/api/v1/credentials/${id}`, { key: acme.key }), 'exchange');
const doneExchange = (id: string) => eventually(async () => {
  const x = await exchange(id);
  return x.state === 'done' ? x : undefined;
}, 60_000, 'our exchange done');

test('to a contact: offer, request, credential, ack — the holder verifies what it receives; records and events; bad inputs refused with nothing sent', async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: acme.key, body: SCHEMA }), 'schema');
  const def = await definition(acme.key, { schema_id: schema.schema_id, tag: 'default' });
  const contact = await connect();

  // Bad inputs first: each a 4xx, and nothing reaches the holder (no exchange is listed afterwards).
  const otherSchema = await ok(api.call('POST', '/api/v1/schemas', { key: other.key, body: SCHEMA }), 'other schema');
  const waiting = await ok(api.call('POST', '/api/v1/schemas', { key: acme.key, body: { ...SCHEMA, schema_version: '2.0' } }), 'schema without definition');
  const body = { schema_id: schema.schema_id, attributes: ATTRS, contact_id: contact };
  expectError(await api.call('POST', '/api/v1/credentials', { key: acme.key, body: { ...body, schema_id: otherSchema.schema_id } }), 404, 'schema_not_found');
  expectError(await api.call('POST', '/api/v1/credentials', { key: acme.key, body: { ...body, schema_id: waiting.schema_id } }), 404, 'cred_def_not_found');
  expectError(await api.call('POST', '/api/v1/credentials', { key: acme.key, body: { ...body, attributes: ATTRS.slice(1) } }), 400, 'attributes_mismatch');
  expectError(await api.call('POST', '/api/v1/credentials', { key: acme.key, body: { ...body, attributes: [...ATTRS, { name: 'x', value: 'y' }] } }), 400, 'attributes_mismatch');
  expectError(await api.call('POST', '/api/v1/credentials', { key: acme.key, body: { ...body, rule: 'r' } }), 400, 'rule_not_supported');
  expectError(await api.call('POST', '/api/v1/credentials?timeout=99', { key: acme.key, body }), 400, 'validation_failed');
  expectError(await api.call('POST', '/api/v1/credentials', { key: other.key, body: { ...body, contact_id: contact, schema_id: otherSchema.schema_id } }), 404, 'cred_def_not_found');
  expect(await ok(api.call('GET', '/api/v1/credentials', { key: acme.key }), 'no exchange yet')).toEqual([]);

  const [made] = await ok(api.call('POST', '/api/v1/credentials', { key: acme.key, body }), 'issue');
  expect(made).toMatchObject({ state: 'offer-sent', connection_id: contact, format: 'anoncreds', role: 'issuer', revocation_def_id: null });
  const held = await credo.waitForCredentialExchange(DidCommCredentialState.Done, (r) => r.threadId === made.thread_id, 60_000);
  expect(held.credentials).toEqual([{ credentialRecordType: 'spec-anoncreds', credentialRecordId: expect.any(String) }]);
  // Credo took the RFC 0453 preview from the offer.
  expect(held.credentialAttributes?.map((a) => [a.name, a.value])).toEqual(ATTRS.map((a) => [a.name, a.value]));
  const done = await doneExchange(made.credential_exchange_id);
  expect(done).toMatchObject({ format: 'anoncreds', thread_id: made.thread_id, error_msg: null });
  const got = holder.held.find((h) => h.threadId === made.thread_id)!;
  expect(got.credential).toMatchObject({ schema_id: schema.schema_id, cred_def_id: def.credential_definition_id, rev_reg_id: null, witness: null });
  expect(got.credential.values).toEqual({ name: { raw: 'Ada Lovelace', encoded: expect.stringMatching(/^[0-9]{70,}$/) }, degree: { raw: 'Mathematics', encoded: expect.any(String) }, age: { raw: '36', encoded: '36' } });

  const record = await ok(api.call('GET', `/api/v1/credential-records/${made.credential_exchange_id}`, { key: acme.key }), 'record');
  expect(record.cred_ex_record.state).toBe('done');
  expect(record.anoncreds).toMatchObject({ cred_ex_id: made.credential_exchange_id, schema_id: schema.schema_id, cred_def_id: def.credential_definition_id, rev_reg_id: null, cred_rev_id: null, credential: got.credential, request: got.request });
  expectError(await api.call('GET', `/api/v1/credential-records/${made.credential_exchange_id}`, { key: other.key }), 404, 'credential_exchange_not_found');
  const events = () => hooks.received('/acme').map((r) => JSON.parse(r.body) as { type: string; data: { credential_exchange_id?: string } });
  await eventually(async () => {
    const mine = events().filter((e) => e.data.credential_exchange_id === made.credential_exchange_id).map((e) => e.type);
    return ['credential.offer_sent', 'credential.request_received', 'credential.issued', 'credential.done'].every((t) => mine.includes(t)) ? true : undefined;
  }, 30_000, 'every state change as an event');
}, 300_000);

test('to an invitation (invitation_id) not yet accepted: the offer waits for its connection and goes out on it', async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: acme.key, body: { ...SCHEMA, schema_name: 'pending degree' } }), 'schema');
  await definition(acme.key, { schema_id: schema.schema_id, tag: 'default' });
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key: acme.key, body: {} }), 'invitation');
  const [made] = await ok(api.call('POST', '/api/v1/credentials', { key: acme.key, body: { schema_id: schema.schema_id, attributes: ATTRS, invitation_id: inv.invitation_id } }), 'issue');
  expect(made).toMatchObject({ state: 'offer-sent', connection_id: null, invitation_id: inv.invitation_id, format: 'anoncreds' });
  await credo.receiveInvitationUrl(inv.invitation_url);
  const done = await doneExchange(made.credential_exchange_id);
  expect(done.connection_id).toEqual(expect.any(String));
  expect(holder.held.find((h) => h.threadId === made.thread_id)?.credential.schema_id).toBe(schema.schema_id);
}, 300_000);

test('revocable: the credential carries its revocation index and a witness the holder checks against the published status list; revoked through the API, the holder is notified and its check refuses the witness', async () => {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key: acme.key, body: { ...SCHEMA, schema_name: 'revocable degree' } }), 'schema');
  const def = await definition(acme.key, { schema_id: schema.schema_id, tag: 'rev', support_revocation: true, revocation_registry_size: 4 });
  const contact = await connect();
  const [made] = await ok(api.call('POST', '/api/v1/credentials?timeout=20', { key: acme.key, body: { schema_id: schema.schema_id, attributes: ATTRS, contact_id: contact } }), 'issue');
  expect(made.revocation_def_id).toBe(def.revocation_registry.revocation_registry_id);
  await doneExchange(made.credential_exchange_id);
  const record = await ok(api.call('GET', `/api/v1/credential-records/${made.credential_exchange_id}`, { key: acme.key }), 'record');
  expect(record.anoncreds).toMatchObject({ rev_reg_id: def.revocation_registry.revocation_registry_id, cred_rev_id: '1' });
  const got = holder.held.find((h) => h.threadId === made.thread_id)!;
  expect(got.credential.rev_reg_id).toBe(def.revocation_registry.revocation_registry_id);
  // What a holder fetches: the registry definition, the status list now, the tails file.
  const revRegDef = await resolveObject(def.revocation_registry.revocation_registry_id);
  const statusList = (await (await fetch(`${def.revocation_registry.status_list_url}/${Math.floor(Date.now() / 1000) + 5}`)).json()) as { resource: unknown };
  const tails = new Uint8Array(await (await fetch(def.revocation_registry.tails_location)).arrayBuffer());
  const r = got.credential.signature.r_credential;
  expect(r.i).toBe(1);
  const checkAgainst = (list: unknown) => holderCheckBatch([{ revocationKey: def.credential_definition.value.revocation, revRegDef, statusList: list as never, tailsFile: tails, rCredential: r, primaryM2: got.credential.signature.p_credential.m_2, vrPrime: got.vrPrime!, issuedWitness: got.credential.witness.omega }])[0];
  expect(checkAgainst(statusList.resource)).toBeNull();

  // Revoked through the API with the holder notified: the exchange is credential-revoked, Credo gets
  // RFC 0721 on its connection, and the holder's own check refuses the witness against the new list.
  const notes: { credential_id?: string }[] = [];
  const listener = (e: DidCommMessageProcessedEvent) => {
    const m = e.payload.message as unknown as { type: string; toJSON(): { credential_id?: string } };
    if (m.type === REVOCATION_NOTIFICATION_TYPE) notes.push(m.toJSON());
  };
  credo.agent.events.on(DidCommEventTypes.DidCommMessageProcessed, listener);
  try {
    const revoked = await ok(api.call('POST', '/api/v1/credentials/anoncreds/revoke', { key: acme.key, body: { credential_exchange_id: made.credential_exchange_id, connection_id: contact } }), 'revoke');
    expect(revoked.message).toContain('revoked');
    expect(await exchange(made.credential_exchange_id)).toMatchObject({ state: 'credential-revoked' });
    const note = await eventually(async () => notes[0], 30_000, 'Credo received the revocation notification');
    expect(note.credential_id).toBe(`${def.revocation_registry.revocation_registry_id}::1`);
    const after = (await (await fetch(`${def.revocation_registry.status_list_url}/${Math.floor(Date.now() / 1000) + 5}`)).json()) as { resource: unknown };
    expect(checkAgainst(after.resource)).toBe('accumulator');
  } finally {
    credo.agent.events.off(DidCommEventTypes.DidCommMessageProcessed, listener);
  }
}, 300_000);
