import { G1, R, scalarToString } from '../../lib/anoncreds/bn254';
import { randomBelow } from '../../lib/anoncreds/bignum';
import { AnonCredsCredentialRevocation, REVOCATION_NOTIFICATION_TYPE } from '../../lib/anoncreds/credential-revocation';
import { parseObjectId } from '../../lib/anoncreds/identifiers';
import { anoncredsPublicOperations } from '../../lib/anoncreds/operations';
import { PublicObjects } from '../../lib/anoncreds/public-objects';
import { credDefJobFromOutboxItem, registryKeys } from '../../lib/anoncreds/registry';
import { parseRevocationPublicKey, parseRevocationStatusList, signNonRevocation } from '../../lib/anoncreds/revocation';
import { RevocationRegistryStore, revRegKeys } from '../../lib/anoncreds/revocation-registry';
import { outboundJobFromOutboxItem } from '../../lib/didcomm/outbound';
import { exchangeItem, exchangeKeys, storedExchangeFromItem, type ExchangeState } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { connectionItem, type StoredConnection } from '../../lib/didcomm/records';
import type { EventEnvelope } from '../../lib/events/envelope';
import type { RawRepresentation } from '../../lib/http/contract';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import type { WriteOp } from '../../lib/store/port';
import { anoncredsTestbed } from '../helpers/anoncreds-registry';
import { holderCheckBatch } from '../helpers/anoncreds-revocation-holder';
import { refusal, refusalDetail } from '../helpers/refusal';
import { storedExchange } from '../helpers/exchange-fixture';

/**
 * POST /api/v1/credentials/anoncreds/revoke (lib/anoncreds/credential-revocation.ts) on the in-memory
 * store: an issued AnonCreds exchange of the shape issuance leaves (format_record {schema_id,
 * cred_def_id, rev_reg_id, cred_rev_id}) on a real revocable definition and an index allocated by the
 * registry; revoked in one transaction with its exchange, its event and the holder's notification.
 */
const BASE = 'https://agent.example.test/prod';
const A = tenantScope('1');
const B = tenantScope('2');
const SCHEMA = { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree'] };
const HOLDER_TIMEOUT_MS = 240_000;

async function setup() {
  let clock = Date.parse('2026-11-26T09:00:00Z');
  const now = () => new Date(clock);
  const { store, dids, events, registry, sealer, worker } = anoncredsTestbed({ now });
  const regs = new RevocationRegistryStore(store, now);
  const revocation = new AnonCredsCredentialRevocation({ store, events, sealer, now });
  const tick = (seconds: number) => (clock += seconds * 1000);

  let defs = 0;
  /** A finished definition (revocable or not) of `s`, under its public did:web DID. */
  const definition = async (s: TenantScope, revocable: boolean) => {
    const d = await dids.create(s, { method: 'web', baseUrl: BASE });
    await dids.setPublic(s, d.did);
    const schema = await registry.createSchema(s, BASE, { ...SCHEMA, schema_version: `1.${defs++}` });
    const r = await registry.requestCredDef(s, BASE, { schema_id: schema.schema_id, tag: revocable ? 'rev' : 'plain', support_revocation: revocable, ...(revocable ? { revocation_registry_size: 10 } : {}) });
    const job = credDefJobFromOutboxItem([...store.items.values()].find((i) => i.PK === keys.walletPartition(s) && i.SK === `JOBQ#ACCD#${r.id}`)!)!;
    expect(await worker.run(s, job, 1)).toBe('finished');
    const cd = (await registry.getCredDef(s, BASE, r.id)) as any;
    const revRegId: string | null = cd.revocation_registry?.revocation_registry_id ?? null;
    return { did: d.qualified, didId: d.qualified.split(':').pop()!, schema, cd, record: r, revRegId, rid: revRegId ? parseObjectId(revRegId, 'revRegDef')!.resourceId : null };
  };

  const connection = async (s: TenantScope, id: string, state: StoredConnection['state'] = 'active') => {
    const at = now().toISOString();
    const c: StoredConnection = {
      connection_id: id,
      state,
      rfc23_state: state === 'active' ? 'completed' : 'abandoned',
      their_label: 'Holder',
      their_did: 'did:peer:4holder',
      my_did: 'did:peer:4ours',
      their_role: 'invitee',
      invitation_key: null,
      invitation_msg_id: null,
      invitation_mode: 'once',
      connection_protocol: 'didexchange/1.1',
      alias: null,
      invitation_id: 1,
      error_msg: null,
      created_at: at,
      updated_at: at,
      my_verkey: 'OurVerkey1111111111111111111111111111111111',
      peer: { endpoint: 'http://127.0.0.1:9/didcomm', recipient_keys: ['HolderVerkey111111111111111111111111111111'], routing_keys: [] },
      thid: 'thid-1',
      pthid: null,
    };
    await store.write([{ type: 'put', item: connectionItem(s, c) }]);
    return c;
  };

  let n = 0;
  /** An exchange as AnonCreds issuance leaves it (format anoncreds), with an index allocated when revocable and issued. */
  const exchange = async (s: TenantScope, def: Awaited<ReturnType<typeof definition>>, state: ExchangeState, opts: { format?: string; connectionId?: string } = {}) => {
    const issued = state === 'credential-issued' || state === 'done';
    const index = issued && def.rid ? await regs.allocateIndex(s, def.rid) : null;
    const at = now().toISOString();
    const x = storedExchange(`01JANONCREDSEXCHANGE0000${String(n++).padStart(2, '0')}`, {
      connection_id: opts.connectionId ?? 'conn-a',
      invitation_id: 1,
      thread_id: `thread-${n}`,
      state,
      format: opts.format ?? 'anoncreds',
      created_at: at,
      request: issued ? {} : null,
      credential: issued ? { schema_id: def.schema.schema_id } : null,
      format_record: issued ? { schema_id: def.schema.schema_id, cred_def_id: def.cd.credential_definition_id, rev_reg_id: def.revRegId, cred_rev_id: index === null ? null : String(index) } : null,
    });
    await store.write([{ type: 'put', item: exchangeItem(s, x) }]);
    return { id: x.credential_exchange_id, index };
  };

  const stateOf = async (s: TenantScope, id: string) => storedExchangeFromItem((await store.get(exchangeKeys.exchange(s, id)))!).state;
  const eventsOf = (s: TenantScope, type: string) =>
    [...store.items.values()].filter((i) => i.PK === keys.walletPartition(s) && String(i.SK).startsWith('EVT#')).map((i) => i.event as EventEnvelope).filter((e) => e.type === type);
  const jobs = (s: TenantScope) => [...store.items.values()].filter((i) => i.PK === keys.walletPartition(s)).map((i) => outboundJobFromOutboxItem(i)).filter((j) => j !== null);
  const snapshot = () => JSON.stringify([...store.items.entries()].sort());
  const listOf = async (s: TenantScope, rid: string) => JSON.parse((await store.get(revRegKeys.registry(s, rid)))!.status_list as string) as { revocationList: number[]; currentAccumulator: string };
  return { store, sealer, regs, revocation, tick, now, definition, connection, exchange, stateOf, eventsOf, jobs, snapshot, listOf };
}


describe('revoking an issued AnonCreds credential', () => {
  test('the index revoked in the published list and the exchange credential-revoked with its event, in one transaction; the holder accepts the witness before and refuses it after', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const { id, index } = await t.exchange(A, def, 'done');
    const rid = def.rid!;

    // The credential's non-revocation part, as issuance makes it at the allocated index.
    const pub = parseRevocationPublicKey(def.cd.credential_definition.value.revocation);
    const privateKey = (await t.sealer.openRevocationKey('1', def.record.id, (await t.store.get(registryKeys.credDefKey(A, def.record.id)))!))!;
    const gammaItem = (await t.store.get(revRegKeys.gamma(A, rid)))!;
    const gamma = BigInt(`0x${((await t.sealer.openJson('1', rid, 'rev-reg-private', gammaItem)) as { value: { gamma: string } }).value.gamma}`);
    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    const vrPrime = randomBelow(R - 1n) + 1n;
    const m2 = randomBelow(R);
    const before = JSON.parse(reg.status_list as string);
    const issued = signNonRevocation({ revIdx: index!, credentialContext: m2, ur: G1.mul(pub.h2, vrPrime), publicKey: pub, privateKey, gamma, statusList: parseRevocationStatusList(before) });

    let written: readonly WriteOp[] = [];
    const write = t.store.write.bind(t.store);
    t.store.write = async (ops) => ((written = ops), write(ops));
    t.tick(10);
    expect(await t.revocation.revoke(A, { credential_exchange_id: id })).toEqual({ message: `Credential ${id} revoked` });
    t.store.write = write;
    // One transaction: registry, list version, exchange, event.
    expect(written.map((op) => (op.type === 'put' ? op.item.SK : op.type === 'update' ? op.key.SK : op.type).toString().split('#')[0])).toEqual(['ACRR', 'ACRRSL', 'CREX', 'EVT']);
    expect(await t.stateOf(A, id)).toBe('credential-revoked');
    expect(t.eventsOf(A, 'credential.revoked').map((e) => e.data)).toEqual([expect.objectContaining({ credential_exchange_id: id, state: 'credential-revoked', format: 'anoncreds' })]);
    expect(t.jobs(A)).toEqual([]);

    // The published list (as resolvers fetch it) shows the index revoked.
    const now = Math.floor(t.now().getTime() / 1000);
    const served = (await anoncredsPublicOperations(new PublicObjects(t.store)).getRevocationStatusListResource({ params: { id: def.didId, resource_id: rid, timestamp: now }, baseUrl: BASE, request: { method: 'GET', url: '', headers: {} } } as never)) as unknown as RawRepresentation;
    const after = JSON.parse(served.body).resource;
    expect(after.revocationList[index!]).toBe(1);
    expect(after.revocationList.filter((v: number) => v === 1)).toHaveLength(1);

    const tailsFile = (await t.regs.tails(A, reg.tails_hash as string, 9))!.file;
    const inputs = (statusList: unknown) => ({
      revocationKey: def.cd.credential_definition.value.revocation,
      revRegDef: JSON.parse(reg.document as string),
      statusList: statusList as { revocationList: number[]; currentAccumulator: string },
      tailsFile,
      rCredential: issued.r_credential,
      primaryM2: m2.toString(),
      vrPrime: scalarToString(vrPrime),
    });
    expect(holderCheckBatch([{ ...inputs(before), issuedWitness: issued.witness.omega }, inputs(after)])).toEqual([null, 'accumulator']);
  }, HOLDER_TIMEOUT_MS);

  test('twice: 200 "already revoked", nothing written', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const { id } = await t.exchange(A, def, 'credential-issued');
    await t.revocation.revoke(A, { credential_exchange_id: id });
    const before = t.snapshot();
    expect(await t.revocation.revoke(A, { credential_exchange_id: id })).toEqual({ message: `Credential ${id} was already revoked: nothing changed` });
    expect(await t.revocation.revoke(A, { credential_exchange_id: id, connection_id: 'conn-a' })).toEqual({ message: `Credential ${id} was already revoked: nothing changed` });
    expect(t.snapshot()).toBe(before);
    expect(t.eventsOf(A, 'credential.revoked')).toHaveLength(1);
  });

  test('with connection_id: the holder is sent an RFC 0721 v2 notification on the exchange\'s connection, in the same transaction', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const c = await t.connection(A, 'conn-a');
    const { id, index } = await t.exchange(A, def, 'done');
    expect(await t.revocation.revoke(A, { credential_exchange_id: id, connection_id: 'conn-a' })).toEqual({ message: `Credential ${id} revoked; the holder is notified on connection conn-a` });
    const [job, ...more] = t.jobs(A);
    expect(more).toEqual([]);
    expect(job).toMatchObject({ connection_id: 'conn-a', sender_verkey: c.my_verkey, to: { endpoint: c.peer!.endpoint, recipient_keys: c.peer!.recipient_keys } });
    expect(job!.message).toEqual({ '@type': REVOCATION_NOTIFICATION_TYPE, '@id': expect.any(String), revocation_format: 'anoncreds', credential_id: `${def.revRegId}::${index}`, comment: expect.any(String) });
    // Credo 0.6.3's pattern for an anoncreds credential_id.
    expect(String(job!.message.credential_id)).toMatch(/^([a-zA-Z0-9+\-.]+:.+)::(\d+)$/);
    expect(await t.stateOf(A, id)).toBe('credential-revoked');
  });

  test('bad inputs: 4xx, nothing changed', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const plain = await t.definition(A, false);
    await t.connection(A, 'conn-a');
    await t.connection(A, 'conn-closed', 'error');
    const issued = await t.exchange(A, def, 'done');
    const onClosed = await t.exchange(A, def, 'done', { connectionId: 'conn-closed' });
    const offered = await t.exchange(A, def, 'offer-sent');
    const requested = await t.exchange(A, def, 'request-received');
    const notRevocable = await t.exchange(A, plain, 'done');
    const jsonLd = await t.exchange(A, def, 'done', { format: 'ld_proof' });
    const bDef = await t.definition(B, true);
    const theirs = await t.exchange(B, bDef, 'done');
    const before = t.snapshot();
    const cases: [Record<string, string | null>, number, string][] = [
      [{}, 400, 'credential_exchange_id_required'],
      [{ credential_exchange_id: null }, 400, 'credential_exchange_id_required'],
      [{ credential_exchange_id: '01JNOSUCHEXCHANGE000000000' }, 404, 'credential_exchange_not_found'],
      [{ credential_exchange_id: theirs.id }, 404, 'credential_exchange_not_found'],
      [{ credential_exchange_id: offered.id }, 409, 'credential_not_issued'],
      [{ credential_exchange_id: requested.id }, 409, 'credential_not_issued'],
      [{ credential_exchange_id: notRevocable.id }, 409, 'credential_not_revocable'],
      [{ credential_exchange_id: jsonLd.id }, 409, 'not_anoncreds_exchange'],
      [{ credential_exchange_id: issued.id, connection_id: 'conn-closed' }, 400, 'connection_mismatch'],
      [{ credential_exchange_id: issued.id, connection_id: 'conn-unknown' }, 400, 'connection_mismatch'],
      [{ credential_exchange_id: onClosed.id, connection_id: 'conn-closed' }, 409, 'connection_not_active'],
    ];
    for (const [input, status, code] of cases) expect([input, await refusal(t.revocation.revoke(A, input))]).toEqual([input, { status, code }]);
    expect(t.snapshot()).toBe(before);
    // B's own exchange is untouched by A and revocable by B.
    expect(await t.revocation.revoke(B, { credential_exchange_id: theirs.id })).toEqual({ message: `Credential ${theirs.id} revoked` });
  });

  test("a registry whose γ was sealed by seal version 1 (under the wallet's DIDComm data key): 409 rev_reg_key_outdated, saying why, nothing changed", async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const { id } = await t.exchange(A, def, 'done');
    const gamma = (await t.store.get(revRegKeys.gamma(A, def.rid!)))!;
    await t.store.write([{ type: 'put', item: { ...gamma, v: 1 } }]);
    const before = t.snapshot();
    const refused = await refusalDetail(t.revocation.revoke(A, { credential_exchange_id: id }));
    expect(refused).toMatchObject({ status: 409, code: 'rev_reg_key_outdated' });
    expect(refused.message).toContain('sealed by an earlier version of the service (seal v1');
    expect(t.snapshot()).toBe(before);
    expect(await t.stateOf(A, id)).toBe('done');
  });

  test('abandoned: revocable when its credential had been issued (the holder reported a problem after receiving it), not otherwise', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const after = await t.exchange(A, def, 'done');
    const x = storedExchangeFromItem((await t.store.get(exchangeKeys.exchange(A, after.id)))!);
    await t.store.write([{ type: 'put', item: exchangeItem(A, { ...x, state: 'abandoned', error_msg: 'the holder reported: refused' }) }]);
    const before = await t.exchange(A, def, 'abandoned');
    const snapshot = t.snapshot();
    expect(await refusal(t.revocation.revoke(A, { credential_exchange_id: before.id }))).toEqual({ status: 409, code: 'credential_not_issued' });
    expect(t.snapshot()).toBe(snapshot);
    expect(await t.revocation.revoke(A, { credential_exchange_id: after.id })).toEqual({ message: `Credential ${after.id} revoked` });
    expect(await t.stateOf(A, after.id)).toBe('credential-revoked');
    expect((await t.listOf(A, def.rid!)).revocationList[after.index!]).toBe(1);
  });

  test('the exchange changed under the revocation (the holder acked): decided again, revoked once', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const { id, index } = await t.exchange(A, def, 'credential-issued');
    const write = t.store.write.bind(t.store);
    let raced = false;
    t.store.write = async (ops) => {
      if (!raced && ops.some((op) => op.type === 'put' && op.item.SK === `CREX#${id}`)) {
        raced = true;
        const x = storedExchangeFromItem((await t.store.get(exchangeKeys.exchange(A, id)))!);
        await write([{ type: 'put', item: exchangeItem(A, { ...x, state: 'done', updated_at: '2026-11-26T09:00:00.500Z' }) }]);
      }
      return write(ops);
    };
    expect(await t.revocation.revoke(A, { credential_exchange_id: id })).toEqual({ message: `Credential ${id} revoked` });
    expect(raced).toBe(true);
    expect(await t.stateOf(A, id)).toBe('credential-revoked');
    expect((await t.listOf(A, def.rid!)).revocationList[index!]).toBe(1);
    expect((await t.store.get(revRegKeys.registry(A, def.rid!)))!.version).toBe(2);
  });

  test('concurrent revocations of the same exchange: one revokes, the other says already revoked', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const { id } = await t.exchange(A, def, 'done');
    const got = await Promise.all([t.revocation.revoke(A, { credential_exchange_id: id }), t.revocation.revoke(A, { credential_exchange_id: id })]);
    expect(got.map((g) => g.message).sort()).toEqual([`Credential ${id} revoked`, `Credential ${id} was already revoked: nothing changed`]);
    expect(t.eventsOf(A, 'credential.revoked')).toHaveLength(1);
    expect((await t.store.get(revRegKeys.registry(A, def.rid!)))!.version).toBe(2);
  });

  test('a connection closed between the check and the write: 409 connection_not_active, nothing revoked', async () => {
    const t = await setup();
    const def = await t.definition(A, true);
    const c = await t.connection(A, 'conn-a');
    const { id } = await t.exchange(A, def, 'done');
    const write = t.store.write.bind(t.store);
    t.store.write = async (ops) => {
      if (ops.some((op) => op.type === 'check')) await write([{ type: 'put', item: connectionItem(A, { ...c, state: 'error' }) }]);
      return write(ops);
    };
    expect(await refusal(t.revocation.revoke(A, { credential_exchange_id: id, connection_id: 'conn-a' }))).toEqual({ status: 409, code: 'connection_not_active' });
    expect(await t.stateOf(A, id)).toBe('done');
    expect((await t.store.get(revRegKeys.registry(A, def.rid!)))!.version).toBe(1);
    expect(t.jobs(A)).toEqual([]);
  });
});
