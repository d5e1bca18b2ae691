import { DidService } from '../../lib/dids/service';
import { memoryPublicDidDidcomm } from '../helpers/didcomm-memory-vault';
import { OutboxPublisher } from '../../lib/events/publisher';
import type { EventEnvelope } from '../../lib/events/envelope';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { ExchangeService, exchangeView } from '../../lib/oid4vci/exchanges';
import { oid4vciKeys, PRE_AUTHORIZED_GRANT, type ExchangeRecord } from '../../lib/oid4vci/records';
import { draftFromSdJwt, SupportedCredentialService } from '../../lib/oid4vci/supported';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope } from '../../lib/store/keys';
import { TaaService } from '../../lib/taa/service';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { MemoryStore } from '../helpers/memory-store';

const BASE = 'https://api.example.com/prod';
const scope = tenantScope('7');
const other = tenantScope('8');
const REF = 'R7R7R7R7R7R7R7R7R7R7R7';

async function setup() {
  let now = Date.parse('2026-11-23T10:00:00Z');
  const clock = () => new Date(now);
  const store = new MemoryStore();
  const dids = new DidService({
    didcomm: memoryPublicDidDidcomm(store),
    store,
    keyManager: new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32))),
    taa: new TaaService(store, undefined),
    indyNamespace: 't',
    limits: { maxDids: 100, maxCreationsPerMinute: 100 },
  });
  const supported = new SupportedCredentialService({ store, now: clock });
  await store.write([{ type: 'put', item: { ...keys.wallet(scope), type: 'wallet', wallet_id: '7', public_ref: REF } }]);
  const exchanges = new ExchangeService({ store, events: new OutboxPublisher(store, clock), refs: new PublicRefs(store), now: clock });
  const config = await supported.create(
    scope,
    draftFromSdJwt({ id: 'Pid', vct: 'urn:pid', claims: { given_name: { mandatory: true, value_type: 'string' }, address: { city: { value_type: 'string' } } } }),
  );
  const events = (type?: string) =>
    [...store.items.values()].filter((i) => i.PK === 'W#7' && String(i.SK).startsWith('EVT#')).map((i) => i.event as EventEnvelope).filter((e) => !type || e.type === type);
  return { store, dids, supported, exchanges, config, events, advance: (ms: number) => (now += ms) };
}

describe('issue', () => {
  test('an offer under the public DID: exchange, code and offer-ref items, and the created event, together', async () => {
    const s = await setup();
    const did = await s.dids.create(scope, { method: 'key', baseUrl: BASE });
    await s.dids.setPublic(scope, did.did);
    const out = await s.exchanges.issue(scope, { supported_cred_id: s.config.supported_cred_id, credential_subject: { given_name: 'Erika' } }, BASE);
    const code = out.offer.grants[PRE_AUTHORIZED_GRANT]['pre-authorized_code'];
    expect(out.offer).toEqual({
      credential_issuer: `${BASE}/oid4vci/${REF}`,
      credentials: ['Pid'],
      credential_configuration_ids: ['Pid'],
      grants: { [PRE_AUTHORIZED_GRANT]: { 'pre-authorized_code': code, user_pin_required: false } },
    });
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out.credential_offer).toBe(`openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(out.offer))}`);
    const record = (await s.store.get(oid4vciKeys.exchange(scope, out.exchange.exchange_id)))! as unknown as ExchangeRecord;
    expect(out.credential_offer_uri).toBe(`openid-credential-offer://?credential_offer_uri=${encodeURIComponent(`${BASE}/oid4vci/${REF}/offers/${record.offer_ref}`)}`);
    expect(out.exchange).toEqual({
      exchange_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      supported_cred_id: s.config.supported_cred_id,
      wallet_id: '7',
      state: 'created',
      pin: null,
      credential_subject: { given_name: 'Erika' },
      verification_method: did.kid,
      issuer_id: did.qualified,
      code,
      nonce: null,
      token: null,
      created_at: '2026-11-23T10:00:00.000Z',
      updated_at: '2026-11-23T10:00:00.000Z',
    });
    expect(record).toMatchObject({ state: 'offer', code_expires_at: Date.parse('2026-11-23T10:10:00Z') });
    expect(await s.store.get(oid4vciKeys.code(scope, code))).toMatchObject({
      exchange_id: record.exchange_id,
      ttl: record.code_expires_at / 1000 + 86400,
    });
    expect(await s.store.get(oid4vciKeys.offerRef(scope, record.offer_ref))).toMatchObject({ exchange_id: record.exchange_id, offer: out.offer });
    const [created] = s.events('oid4vci.exchange.created');
    expect(created!.data).toMatchObject({ exchange_id: record.exchange_id, state: 'offer', pin_required: false });
    expect(created!.data).not.toHaveProperty('code');
  });

  test('a pin: tx_code with input mode and length; expires_in sets the code lifetime', async () => {
    const s = await setup();
    const did = await s.dids.create(scope, { method: 'jwk', keyType: 'p256', baseUrl: BASE });
    const input = { supported_cred_id: s.config.supported_cred_id, credential_subject: { given_name: 'E' }, did: did.did };
    const numeric = await s.exchanges.issue(scope, { ...input, pin: '493536', expires_in: 3600 }, BASE);
    expect(numeric.offer.grants[PRE_AUTHORIZED_GRANT]).toMatchObject({ user_pin_required: true, tx_code: { input_mode: 'numeric', length: 6, description: expect.any(String) } });
    expect(numeric.exchange.pin).toBe('493536');
    expect((await s.exchanges.get(scope, numeric.exchange.exchange_id))).toMatchObject({ code_expires_at: Date.parse('2026-11-23T11:00:00Z') });
    const text = await s.exchanges.issue(scope, { ...input, pin: 'Ab12' }, BASE);
    expect(text.offer.grants[PRE_AUTHORIZED_GRANT].tx_code).toMatchObject({ input_mode: 'text', length: 4 });
    expect(s.events('oid4vci.exchange.created').map((e) => e.data.pin_required)).toEqual([true, true]);
    expect(JSON.stringify(s.events())).not.toContain('493536');
  });

  test('the DID: given bare or full, a verification method of it; not another wallet’s, not deactivated, not none', async () => {
    const s = await setup();
    const base = { supported_cred_id: s.config.supported_cred_id, credential_subject: { given_name: 'E' } };
    await expect(s.exchanges.issue(scope, base, BASE)).rejects.toMatchObject({ status: 400, code: 'no_public_did', details: [{ path: 'did' }] });
    const sov = await s.dids.create(scope, { method: 'sov', baseUrl: BASE });
    expect((await s.exchanges.issue(scope, { ...base, did: sov.did }, BASE)).exchange).toMatchObject({ issuer_id: `did:sov:${sov.did}`, verification_method: `did:sov:${sov.did}#key-1` });
    expect((await s.exchanges.issue(scope, { ...base, did: `did:sov:${sov.did}`, verification_method: `${sov.did}#key-multibase` }, BASE)).exchange.verification_method).toBe(
      `did:sov:${sov.did}#key-multibase`,
    );
    await expect(s.exchanges.issue(scope, { ...base, did: sov.did, verification_method: `did:sov:${sov.did}#key-9` }, BASE)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_verification_method',
    });
    const theirs = await s.dids.create(other, { method: 'key', baseUrl: BASE });
    await expect(s.exchanges.issue(scope, { ...base, did: theirs.did }, BASE)).rejects.toMatchObject({ status: 400, code: 'unknown_did' });
    const gone = await s.dids.create(scope, { method: 'key', baseUrl: BASE });
    await s.dids.deactivate(scope, gone.did);
    await expect(s.exchanges.issue(scope, { ...base, did: gone.did }, BASE)).rejects.toMatchObject({ status: 400, code: 'did_deactivated' });
  });

  test('the subject is checked against the claims; another wallet’s configuration is unknown', async () => {
    const s = await setup();
    const did = await s.dids.create(scope, { method: 'key', baseUrl: BASE });
    const input = { supported_cred_id: s.config.supported_cred_id, did: did.did };
    await expect(s.exchanges.issue(scope, { ...input, credential_subject: { address: { city: 5, zip: '1' }, nick: 'x' } }, BASE)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_credential_subject',
      details: [
        { path: 'credential_subject/address/city', message: expect.stringContaining('must be a string') },
        { path: 'credential_subject/address/zip', message: expect.stringContaining('unknown claim') },
        { path: 'credential_subject/given_name', message: expect.stringContaining('mandatory') },
        { path: 'credential_subject/nick', message: expect.stringContaining('unknown claim') },
      ],
    });
    await expect(s.exchanges.issue(scope, { ...input, credential_subject: { given_name: 'E', '': 1 } }, BASE)).rejects.toMatchObject({
      status: 400,
      code: 'validation_failed',
      details: [{ path: 'credential_subject.' }],
    });
    await expect(s.exchanges.issue(other, { ...input, credential_subject: { given_name: 'E' } }, BASE)).rejects.toMatchObject({ status: 404, code: 'supported_credential_not_found' });
    expect(s.events()).toEqual([]);
  });
});

describe('exchanges', () => {
  async function issued() {
    const s = await setup();
    const did = await s.dids.create(scope, { method: 'key', baseUrl: BASE });
    const issue = (given_name: string) => s.exchanges.issue(scope, { supported_cred_id: s.config.supported_cred_id, did: did.did, credential_subject: { given_name } }, BASE);
    return { ...s, did, issue };
  }

  test('an unredeemed exchange reads as expired once its code lifetime passed: recorded and announced once, even read concurrently', async () => {
    const s = await issued();
    const { exchange } = await s.issue('E');
    expect((await s.exchanges.get(scope, exchange.exchange_id)).state).toBe('offer');
    s.advance(600_000);
    expect((await s.exchanges.get(scope, exchange.exchange_id)).state).toBe('offer'); // the last valid millisecond
    s.advance(1);
    const reads = await Promise.all([s.exchanges.get(scope, exchange.exchange_id), s.exchanges.list(scope), s.exchanges.get(scope, exchange.exchange_id)]);
    expect(reads[0]).toMatchObject({ state: 'expired', updated_at: '2026-11-23T10:10:00.001Z' });
    expect(reads[1].map((r) => r.state)).toEqual(['expired']);
    expect(reads[2].state).toBe('expired');
    expect(s.events('oid4vci.exchange.expired')).toHaveLength(1);
    expect(s.events('oid4vci.exchange.expired')[0]!.data).toMatchObject({ exchange_id: exchange.exchange_id, state: 'expired' });
    await s.exchanges.get(scope, exchange.exchange_id);
    expect(s.events('oid4vci.exchange.expired')).toHaveLength(1);
  });

  test('a list that cannot record an expiry now still shows it expired, and a later read records it', async () => {
    const s = await issued();
    const { exchange } = await s.issue('E');
    s.advance(600_001);
    const write = s.store.write.bind(s.store);
    s.store.write = async () => {
      throw new Error('throttled');
    };
    expect((await s.exchanges.list(scope)).map((r) => r.state)).toEqual(['expired']);
    expect(s.events('oid4vci.exchange.expired')).toHaveLength(0);
    s.store.write = write;
    expect((await s.exchanges.get(scope, exchange.exchange_id)).state).toBe('expired');
    expect(s.events('oid4vci.exchange.expired')).toHaveLength(1);
  });

  test('a state other than offer never expires by time', async () => {
    const s = await issued();
    const { exchange } = await s.issue('E');
    await s.store.write([{ type: 'update', key: oid4vciKeys.exchange(scope, exchange.exchange_id), set: { state: 'redeemed' } }]);
    s.advance(86400_000);
    expect((await s.exchanges.get(scope, exchange.exchange_id)).state).toBe('redeemed');
    expect(s.events('oid4vci.exchange.expired')).toEqual([]);
  });

  test('list filters by exchange_id, state and supported_cred_id, and pages', async () => {
    const s = await issued();
    const a = (await s.issue('A')).exchange;
    s.advance(1000);
    const b = (await s.issue('B')).exchange;
    await s.store.write([{ type: 'update', key: oid4vciKeys.exchange(scope, b.exchange_id), set: { state: 'issued' } }]);
    const ids = async (f: object) => (await s.exchanges.list(scope, f)).map((r) => r.exchange_id).sort();
    expect(await ids({})).toEqual([a.exchange_id, b.exchange_id].sort());
    expect(await ids({ state: 'offer' })).toEqual([a.exchange_id]);
    expect(await ids({ state: 'issued' })).toEqual([b.exchange_id]);
    expect(await ids({ exchange_id: b.exchange_id })).toEqual([b.exchange_id]);
    expect(await ids({ exchange_id: 'nope' })).toEqual([]);
    expect(await ids({ supported_cred_id: s.config.supported_cred_id, state: 'offer' })).toEqual([a.exchange_id]);
    expect(await ids({ supported_cred_id: 'other' })).toEqual([]);
    expect(await s.exchanges.list(other)).toEqual([]);
    const p1 = await s.exchanges.listPage(scope, { limit: 1, cursor: undefined });
    const p2 = await s.exchanges.listPage(scope, { limit: 1, cursor: p1.next! });
    expect([...p1.items, ...p2.items].map((r) => r.exchange_id).sort()).toEqual([a.exchange_id, b.exchange_id].sort());
    expect(p2.next).toBeNull();
    expect(exchangeView(p1.items[0]!)).not.toHaveProperty('offer_ref');
  });

  test('delete removes the exchange, its code and its offer, and announces it; then 404', async () => {
    const s = await issued();
    const out = await s.issue('E');
    const id = out.exchange.exchange_id;
    const record = (await s.store.get(oid4vciKeys.exchange(scope, id)))! as unknown as ExchangeRecord;
    await expect(s.exchanges.delete(other, id)).rejects.toMatchObject({ status: 404, code: 'exchange_not_found' });
    await s.exchanges.delete(scope, id);
    expect(await s.store.get(oid4vciKeys.exchange(scope, id))).toBeUndefined();
    expect(await s.store.get(oid4vciKeys.code(scope, out.exchange.code))).toBeUndefined();
    expect(await s.store.get(oid4vciKeys.offerRef(scope, record.offer_ref))).toBeUndefined();
    expect(s.events('oid4vci.exchange.removed').map((e) => e.data)).toEqual([expect.objectContaining({ exchange_id: id, state: 'offer' })]);
    await expect(s.exchanges.get(scope, id)).rejects.toMatchObject({ status: 404, code: 'exchange_not_found' });
    await expect(s.exchanges.delete(scope, id)).rejects.toMatchObject({ status: 404 });
    // Only the exchange's own items went: the wallet's DID is still there.
    expect(await s.store.get(keys.did(scope, s.did.qualified))).toBeDefined();
  });

  test('a delete that races a state change reports the state it deleted', async () => {
    const s = await issued();
    const { exchange } = await s.issue('E');
    const write = s.store.write.bind(s.store);
    let raced = false;
    s.store.write = async (ops) => {
      if (!raced && ops.some((o) => o.type === 'delete')) {
        raced = true;
        await write([{ type: 'update', key: oid4vciKeys.exchange(scope, exchange.exchange_id), set: { state: 'redeemed', updated_at: 'later' } }]);
      }
      return write(ops);
    };
    await s.exchanges.delete(scope, exchange.exchange_id);
    expect(s.events('oid4vci.exchange.removed').map((e) => e.data.state)).toEqual(['redeemed']);
  });
});
