/**
 * POST /api/v1/credentials/anoncreds/revoke through the local runtime (contract 4.2): an AnonCreds
 * exchange as issuance leaves it (fabricated in the runtime's store: this test is about revocation),
 * on a revocable definition the worker made and an index allocated in its registry; revoked over HTTP,
 * the published status list shows the index, the exchange is credential-revoked with its event, and
 * Credo 0.6.3, connected over a real DIDComm connection, receives the RFC 0721 v2 notification.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DidCommEventTypes, type DidCommMessageProcessedEvent } from '@credo-ts/didcomm';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { REVOCATION_NOTIFICATION_TYPE } from '../../lib/anoncreds/credential-revocation';
import { parseObjectId } from '../../lib/anoncreds/identifiers';
import { RevocationRegistryStore } from '../../lib/anoncreds/revocation-registry';
import { exchangeItem } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { tenantScope } from '../../lib/store/keys';
import { precomputedPrimesGenerator } from '../helpers/anoncreds-registry';
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { storedExchange } from '../helpers/exchange-fixture';

fenceTestNetwork();

let api: TestApi;
let credo: CredoPeer;
let hooks: Receiver;
let client: DynamoDBClient;
let a: Awaited<ReturnType<typeof walletWithPublicDid>>;
let b: Awaited<ReturnType<typeof walletWithPublicDid>>;

beforeAll(async () => {
  [api, credo, hooks] = await Promise.all([startTestApi({ anoncredsKeyGenerator: precomputedPrimesGenerator() }), startCredoPeer({ label: 'Holder (Credo)', jsonLdCredentials: true }), startReceiver()]);
  client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  [a, b] = await Promise.all([walletWithPublicDid(api, { method: 'web' }), walletWithPublicDid(api, { method: 'web' })]);
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: a.key, body: { urls: [`${hooks.url}/a`] } }), 'webhook target');
}, 120_000);

afterAll(async () => {
  client?.destroy();
  await credo?.stop();
  await api?.rt.stop();
  await hooks?.close();
});

/** A finished revocable definition of the wallet (registry of 10). */
async function revocableDefinition(key: string) {
  const schema = await ok(api.call('POST', '/api/v1/schemas', { key, body: { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree'] } }), 'schema');
  const made = await api.call('POST', '/api/v1/credential-definitions', { key, body: { schema_id: schema.schema_id, tag: 'rev', support_revocation: true, revocation_registry_size: 10 } });
  expect(made.status).toBe(202);
  const requested = made.body;
  const done = await eventually(async () => {
    const r = await ok(api.call('GET', `/api/v1/credential-definitions/${requested.id}`, { key }), 'get cred def');
    return r.state === 'finished' ? r : undefined;
  }, 120_000, 'the definition finished');
  return { schema, cd: done, revRegId: done.revocation_registry.revocation_registry_id as string, rid: parseObjectId(done.revocation_registry.revocation_registry_id, 'revRegDef')!.resourceId };
}

let n = 0;
/** An issued exchange as AnonCreds issuance leaves it, its index allocated in the registry (in the runtime's table). */
async function issuedExchange(walletId: number, def: Awaited<ReturnType<typeof revocableDefinition>>, connectionId: string) {
  const store = new DynamoDbStore(() => client, api.rt.tableName);
  const scope = tenantScope(String(walletId));
  const index = await new RevocationRegistryStore(store).allocateIndex(scope, def.rid);
  const at = new Date().toISOString();
  const id = `01KREVOKEDEXCHANGE000000${String(n++).padStart(2, '0')}`;
  const x = storedExchange(id, {
    connection_id: connectionId,
    state: 'done',
    created_at: at,
    request: {},
    credential: { schema_id: def.schema.schema_id, cred_def_id: def.cd.credential_definition_id },
    format_record: { schema_id: def.schema.schema_id, cred_def_id: def.cd.credential_definition_id, rev_reg_id: def.revRegId, cred_rev_id: String(index) },
  });
  await store.write([{ type: 'put', item: exchangeItem(scope, x) }]);
  return { id, index };
}

async function connect(key: string): Promise<{ ours: string; theirs: string }> {
  const inv = await ok(api.call('POST', '/api/v1/invitations', { key, body: {} }), 'invitation');
  const { connectionId } = await credo.receiveInvitationUrl(inv.invitation_url);
  await credo.waitForConnection((c) => c.id === connectionId, 30_000);
  const ours = await eventually(async () => (await ok(api.call('GET', '/api/v1/connections', { key }), 'connections')).find((c: any) => c.invitation_id === inv.invitation_id && c.state === 'active'), 30_000, 'our connection active');
  return { ours: ours.connection_id, theirs: connectionId };
}

const R = '/api/v1/credentials/anoncreds/revoke';

test('revoked over HTTP: the status list shows the index, the exchange is credential-revoked with its event, Credo receives the revocation notification; twice says so; another wallet cannot', async () => {
  const def = await revocableDefinition(a.key);
  const { ours, theirs } = await connect(a.key);
  const { id, index } = await issuedExchange(a.walletId, def, ours);
  const other = await issuedExchange(a.walletId, def, ours);

  const received: Record<string, unknown>[] = [];
  const listener = (e: DidCommMessageProcessedEvent) => {
    const m = e.payload.message as unknown as { type: string; toJSON(): Record<string, unknown> };
    if (m.type === REVOCATION_NOTIFICATION_TYPE) received.push({ ...m.toJSON(), connectionId: e.payload.connection?.id });
  };
  credo.agent.events.on(DidCommEventTypes.DidCommMessageProcessed, listener);

  // Another wallet: not found, and nothing changes.
  expectError(await api.call('POST', R, { key: b.key, body: { credential_exchange_id: id } }), 404, 'credential_exchange_not_found');
  expectError(await api.call('POST', R, { key: a.key, body: { credential_exchange_id: id, connection_id: '01KNOTTHEEXCHANGESCONNECTN' } }), 400, 'connection_mismatch');
  expectError(await api.call('POST', R, { key: a.key, body: {} }), 400, 'credential_exchange_id_required');
  expect(await ok(api.call('GET', `/api/v1/credentials/${id}`, { key: a.key }), 'exchange')).toMatchObject({ state: 'done' });

  const res = await ok(api.call('POST', R, { key: a.key, body: { credential_exchange_id: id, connection_id: ours } }), 'revoke');
  expect(res).toEqual({ message: `Credential ${id} revoked; the holder is notified on connection ${ours}` });
  expect(await ok(api.call('GET', `/api/v1/credentials/${id}`, { key: a.key }), 'exchange')).toMatchObject({ state: 'credential-revoked', format: 'anoncreds' });
  expect(await ok(api.call('GET', `/api/v1/credentials/${other.id}`, { key: a.key }), 'other exchange')).toMatchObject({ state: 'done' });

  // The list as resolvers read it, at the current time.
  const list = await ok(api.call('GET', `${def.cd.revocation_registry.status_list_url.slice(api.rt.url.length)}/${Math.floor(Date.now() / 1000) + 1}`, {}), 'status list');
  expect(list.resource.revocationList[index]).toBe(1);
  expect(list.resource.revocationList[other.index]).toBe(0);

  // The holder's agent got RFC 0721 v2 on our connection, naming the credential as Credo matches it.
  const note = await eventually(async () => received[0], 30_000, 'Credo received the notification');
  expect(note).toMatchObject({ '@type': REVOCATION_NOTIFICATION_TYPE, revocation_format: 'anoncreds', credential_id: `${def.revRegId}::${index}`, connectionId: theirs });
  const events = () => hooks.received('/a').map((r) => JSON.parse(r.body) as { type: string; data: { credential_exchange_id?: string; state?: string } });
  await eventually(async () => (events().some((e) => e.type === 'credential.revoked' && e.data.credential_exchange_id === id && e.data.state === 'credential-revoked') ? true : undefined), 30_000, 'the credential.revoked event');

  // Twice: 200, saying so; nothing sent, the list unchanged.
  expect(await ok(api.call('POST', R, { key: a.key, body: { credential_exchange_id: id, connection_id: ours } }), 'revoke again')).toEqual({ message: `Credential ${id} was already revoked: nothing changed` });
  const again = await ok(api.call('GET', `${def.cd.revocation_registry.status_list_url.slice(api.rt.url.length)}/${Math.floor(Date.now() / 1000) + 1}`, {}), 'status list');
  expect(again.resource).toEqual(list.resource);
  await new Promise((r) => setTimeout(r, 2000));
  expect(received).toHaveLength(1);
  credo.agent.events.off(DidCommEventTypes.DidCommMessageProcessed, listener);
}, 300_000);
