import { transition } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { exchangeItem, exchangeKeys, storedExchangeFromItem, type ExchangeState } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { exchangeRevocationHook } from '../../lib/didcomm/protocols/issue-credential-v2/revocation';
import { JsonLdStatusSource } from '../../lib/jsonld/status';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { statusKeys } from '../../lib/status-lists/records';
import { StatusListService } from '../../lib/status-lists/service';
import { tenantScope } from '../../lib/store/keys';
import type { WriteOp } from '../../lib/store/port';
import { BASE, oid4vciFixture, scope } from '../helpers/oid4vci-fixture';
import { MemoryStore } from '../helpers/memory-store';
import { storedExchange } from '../helpers/exchange-fixture';

/**
 * `credential-revoked` for DIDComm JSON-LD exchanges: revoking the exchange's status-list entry
 * through the status-list service moves the exchange, with its `credential.revoked` event, in the
 * entry's own transaction (the service's onStatusChange hook); nothing else moves it.
 */
async function setup() {
  const store = new MemoryStore();
  const f = await oid4vciFixture({ store });
  const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs });
  const service = new StatusListService({ store, events: f.publisher, publisher, onStatusChange: exchangeRevocationHook(store, f.publisher) });
  const source = new JsonLdStatusSource({ store, events: f.publisher, refs: f.refs });
  const def = await service.create(scope, { list_type: 'w3c', issuer_did: f.did.did }, BASE);
  let n = 0;
  /** A DIDComm ld_proof exchange in `state` with its entry in `defId` (as issuance writes them). */
  const exchange = async (state: ExchangeState, opts: { credential?: unknown; defId?: string } = {}) => {
    const id = `01JEXCHANGE0000000000000${String(n++).padStart(2, '0')}`;
    const defId = opts.defId ?? def.id;
    const status = await source.credentialStatusFor(scope, defId, id);
    const at = '2026-11-26T10:00:00.000Z';
    const x = storedExchange(id, {
      state,
      format: 'ld_proof',
      revocation_def_id: defId,
      created_at: at,
      credential: opts.credential !== undefined ? opts.credential : state === 'credential-issued' || state === 'done' ? { type: ['VerifiableCredential'] } : null,
    });
    await store.write([{ type: 'put', item: exchangeItem(scope, x) }, ...status.ops]);
    return id;
  };
  const stateOf = async (id: string, s = scope) => storedExchangeFromItem((await store.get(exchangeKeys.exchange(s, id)))!).state;
  const revokedEvents = () => f.events('credential.revoked').map((e) => (e.data as { credential_exchange_id: string; state: string }));
  return { store, f, service, def, exchange, stateOf, revokedEvents };
}

describe('revoking the entry of a DIDComm JSON-LD exchange', () => {
  test('an issued exchange (credential-issued, done) goes to credential-revoked with its event, in the entry change', async () => {
    const t = await setup();
    for (const state of ['credential-issued', 'done'] as const) {
      const id = await t.exchange(state);
      await t.service.setStatus(scope, id, undefined, undefined);
      expect(await t.stateOf(id)).toBe('credential-revoked');
      expect(t.revokedEvents().filter((e) => e.credential_exchange_id === id)).toEqual([expect.objectContaining({ credential_exchange_id: id, state: 'credential-revoked' })]);
      expect(await t.service.getEntry(scope, id)).toMatchObject({ status: '1' });
    }
  });

  test('one transaction: when it fails, neither the entry nor the exchange changes', async () => {
    const t = await setup();
    const id = await t.exchange('done');
    const write = t.store.write.bind(t.store);
    let seen: readonly WriteOp[] = [];
    t.store.write = async (ops) => {
      seen = ops;
      throw new Error('the table is unavailable');
    };
    await expect(t.service.setStatus(scope, id, undefined, undefined)).rejects.toThrow('unavailable');
    t.store.write = write;
    // The exchange's put and its event were in the entry's transaction.
    expect(seen.some((op) => op.type === 'put' && op.item.SK === `CREX#${id}`)).toBe(true);
    expect(seen.some((op) => op.type === 'update' && op.key.SK === statusKeys.entry(scope, t.def.id, id).SK)).toBe(true);
    expect(await t.stateOf(id)).toBe('done');
    expect(await t.service.getEntry(scope, id)).toMatchObject({ status: '0' });
    expect(t.revokedEvents()).toEqual([]);
  });

  test('revoked before issuance: the exchange ends in credential-revoked (nothing is signed afterwards)', async () => {
    const t = await setup();
    for (const state of ['offer-sent', 'request-received'] as const) {
      const id = await t.exchange(state);
      await t.service.setStatus(scope, id, undefined, undefined);
      expect(await t.stateOf(id)).toBe('credential-revoked');
    }
  });

  test('abandoned: moves only when its credential had been issued', async () => {
    const t = await setup();
    const never = await t.exchange('abandoned');
    const after = await t.exchange('abandoned', { credential: { type: ['VerifiableCredential'] } });
    await t.service.setStatus(scope, never, undefined, undefined);
    await t.service.setStatus(scope, after, undefined, undefined);
    expect(await t.stateOf(never)).toBe('abandoned');
    expect(await t.stateOf(after)).toBe('credential-revoked');
    expect(t.revokedEvents().map((e) => e.credential_exchange_id)).toEqual([after]);
  });

  test('revoking again changes nothing (one event); clearing a revocation is refused, the state stays', async () => {
    const t = await setup();
    const id = await t.exchange('done');
    await t.service.setStatus(scope, id, undefined, undefined);
    const before = JSON.stringify([...t.store.items.entries()]);
    await t.service.setStatus(scope, id, undefined, '1');
    expect(JSON.stringify([...t.store.items.entries()])).toBe(before);
    await expect(t.service.setStatus(scope, id, undefined, '0')).rejects.toMatchObject({ status: 400, code: 'revocation_final' });
    expect(await t.stateOf(id)).toBe('credential-revoked');
    expect(t.revokedEvents()).toHaveLength(1);
  });

  test('the exchange changed meanwhile (the holder acked): the change is decided again and lands on the new state', async () => {
    const t = await setup();
    const id = await t.exchange('credential-issued');
    const write = t.store.write.bind(t.store);
    let raced = false;
    t.store.write = async (ops) => {
      if (!raced && ops.some((op) => op.type === 'put' && op.item.SK === `CREX#${id}`)) {
        raced = true;
        // The ack lands between the hook's read and the entry's transaction.
        const x = storedExchangeFromItem((await t.store.get(exchangeKeys.exchange(scope, id)))!);
        await write(transition(t.f.publisher, scope, x, 'done', new Date('2026-11-26T10:00:01Z')).writes);
      }
      return write(ops);
    };
    await t.service.setStatus(scope, id, undefined, undefined);
    expect(raced).toBe(true);
    expect(await t.stateOf(id)).toBe('credential-revoked');
    expect(t.f.events('credential.done').map((e) => (e.data as { credential_exchange_id: string }).credential_exchange_id)).toEqual([id]);
    expect(t.revokedEvents()).toHaveLength(1);
  });

  test('suspension and reinstatement of an entry never move an exchange', async () => {
    const t = await setup();
    const suspension = await t.service.create(scope, { list_type: 'w3c', status_purpose: 'suspension', issuer_did: t.f.did.did }, BASE);
    const id = await t.exchange('done');
    // An entry of the same exchange in a suspension definition (as if it were the exchange's revocation_def_id).
    const entry = { ...(await t.store.get(statusKeys.entry(scope, t.def.id, id)))!, ...statusKeys.entry(scope, suspension.id, id), definition_id: suspension.id, status_purpose: 'suspension' };
    await t.store.write([{ type: 'put', item: entry }]);
    const x = storedExchangeFromItem((await t.store.get(exchangeKeys.exchange(scope, id)))!);
    await t.store.write([{ type: 'put', item: exchangeItem(scope, { ...x, revocation_def_id: suspension.id }) }]);
    await t.service.setStatus(scope, id, suspension.id, '1');
    expect(await t.stateOf(id)).toBe('done');
    await t.service.setStatus(scope, id, suspension.id, '0');
    expect(await t.stateOf(id)).toBe('done');
    expect(t.revokedEvents()).toEqual([]);
  });

  test("only the exchange's own revocation_def_id: an entry of another definition leaves it", async () => {
    const t = await setup();
    const other = await t.service.create(scope, { list_type: 'w3c', issuer_did: t.f.did.did }, BASE);
    const id = await t.exchange('done');
    const entry = { ...(await t.store.get(statusKeys.entry(scope, t.def.id, id)))!, ...statusKeys.entry(scope, other.id, id), definition_id: other.id };
    await t.store.write([{ type: 'put', item: entry }]);
    await t.service.setStatus(scope, id, other.id, undefined);
    expect(await t.stateOf(id)).toBe('done');
  });

  test('an OID4VCI exchange (no DIDComm exchange of that id): only the entry changes', async () => {
    const t = await setup();
    const f = t.f;
    const { exchangeId } = await f.offer();
    const stateBefore = (await f.exchange(exchangeId)).state;
    // The entry is assigned at issuance; give it one as the allocator would.
    const entry = { ...(await t.store.get(statusKeys.entry(scope, t.def.id, await t.exchange('done'))))!, ...statusKeys.entry(scope, t.def.id, exchangeId), exchange_id: exchangeId };
    await t.store.write([{ type: 'put', item: entry }]);
    await t.service.setStatus(scope, exchangeId, t.def.id, undefined);
    expect(await t.service.getEntry(scope, exchangeId, t.def.id)).toMatchObject({ status: '1' });
    expect((await f.exchange(exchangeId)).state).toBe(stateBefore);
    expect(await t.store.get(exchangeKeys.exchange(scope, exchangeId))).toBeUndefined();
    expect(t.revokedEvents()).toEqual([]);
  });

  test("another wallet cannot revoke it: 404, nothing changed", async () => {
    const t = await setup();
    const id = await t.exchange('done');
    const before = JSON.stringify([...t.store.items.entries()]);
    await expect(t.service.setStatus(tenantScope('8'), id, undefined, undefined)).rejects.toMatchObject({ status: 404 });
    await expect(t.service.setStatus(tenantScope('8'), id, t.def.id, undefined)).rejects.toMatchObject({ status: 404 });
    expect(JSON.stringify([...t.store.items.entries()])).toBe(before);
  });
});
