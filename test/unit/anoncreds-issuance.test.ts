import { parseObjectId } from '../../lib/anoncreds/identifiers';
import { AnonCredsIssuance, checkAttributes } from '../../lib/anoncreds/issuance';
import { AnonCredsIssuer, revIndexClaimKey } from '../../lib/anoncreds/issuer';
import { parseKeyCorrectnessProof, parsePrimaryPublicKey, type CredentialOfferJson } from '../../lib/anoncreds/objects';
import { credDefJobFromOutboxItem, registryKeys } from '../../lib/anoncreds/registry';
import { RevocationRegistryStore, revRegKeys } from '../../lib/anoncreds/revocation-registry';
import { CredDefKeySealer } from '../../lib/anoncreds/sealed-keys';
import { PEER_DIDS, type AgentContext, type AgentKeys } from '../../lib/didcomm/agent';
import { decide } from '../../lib/didcomm/dispatch';
import { LocalDataKeys, WalletDataKeys } from '../../lib/didcomm/key-vault';
import { ANONCREDS_CREDENTIAL_FORMAT, ANONCREDS_OFFER_FORMAT, ANONCREDS_REQUEST_FORMAT, anoncredsRecordView, checkAnonCredsRequest } from '../../lib/didcomm/protocols/issue-credential-v2/anoncreds';
import { IssueRefused } from '../../lib/didcomm/protocols/issue-credential-v2/formats';
import { exchangeReader, ISSUE_JOB_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { CredentialIssuing } from '../../lib/didcomm/protocols/issue-credential-v2/issuing';
import { CREDENTIAL_PREVIEW_TYPE, ISSUE_CREDENTIAL_TYPE, OFFER_CREDENTIAL_TYPE, REQUEST_CREDENTIAL_TYPE } from '../../lib/didcomm/protocols/issue-credential-v2/messages';
import { exchangeKeys, storedExchangeFromItem, type StoredExchange } from '../../lib/didcomm/protocols/issue-credential-v2/records';
import { connectionItem, type StoredConnection } from '../../lib/didcomm/records';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import type { Item } from '../../lib/store/port';
import { holderCheckCredential, holderCredentialRequest, holderEncode, holderVerifyKeyCorrectness } from '../helpers/anoncreds-cl-holder';
import { loadVector } from '../helpers/anoncreds-fixtures';
import { anoncredsTestbed } from '../helpers/anoncreds-registry';
import { holderCheckBatch, holderRevocationBlinding } from '../helpers/anoncreds-revocation-holder';
import { refusalDetail as refusal } from '../helpers/refusal';

/**
 * AnonCreds issuance over Issue Credential 2.0 (RFC 0771 formats): the offer (every bad input a 4xx
 * with nothing stored or sent), the inbound worker's structural check of the request, and the issuing
 * worker's step — the holder's proof checked before signing, a revocation index allocated once per
 * exchange — with the credential checked by a holder written from the specification
 * (test/helpers/anoncreds-cl-holder.ts, anoncreds-revocation-holder.ts).
 */
const BASE = 'https://agent.example.test/prod';
const A = tenantScope('1');
const B = tenantScope('2');
const SCHEMA = { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree', 'age'] };
const ATTRS = [
  { name: 'name', value: 'Ada Lovelace' },
  { name: 'degree', value: 'Mathematics' },
  { name: 'age', value: '36' },
];
const at = '2026-11-26T08:00:00.000Z';
const connection = (id: string): StoredConnection => ({
  connection_id: id, state: 'active', rfc23_state: 'completed', their_label: 'Ada', their_did: 'did:peer:4x', my_did: 'did:peer:4y', their_role: 'invitee',
  invitation_key: null, invitation_msg_id: null, invitation_mode: 'once', connection_protocol: 'didexchange/1.1', alias: null, invitation_id: null, error_msg: null,
  created_at: at, updated_at: at, my_verkey: 'OurVerkey111111111111111111111111111111111', peer: { endpoint: 'https://holder.example/didcomm', recipient_keys: ['PeerVerkey11111111111111111111111111111111'], routing_keys: [] }, thid: 't', pthid: null,
});

function setup() {
  const { store, dids, events, registry, sealer, worker } = anoncredsTestbed();
  const issuance = new AnonCredsIssuance({ store, events, invitations: { create: () => Promise.reject(new Error('no invitation in these tests')) } });
  const issuer = new AnonCredsIssuer({ store, sealer });
  const issuing = new CredentialIssuing({ store, events, issuers: [issuer] });
  const jobOf = (s: TenantScope, id: string) => credDefJobFromOutboxItem([...store.items.values()].find((i) => i.PK === keys.walletPartition(s) && i.SK === `JOBQ#ACCD#${id}`)!)!;
  /** A public did:web DID, the schema, a definition (finished unless `wait`), and an active connection C1. */
  const wallet = async (s: TenantScope, opts: { revocable?: number; wait?: boolean } = {}) => {
    const d = await dids.create(s, { method: 'web', baseUrl: BASE });
    await dids.setPublic(s, d.did);
    const schema = await registry.createSchema(s, BASE, SCHEMA);
    const def = await registry.requestCredDef(s, BASE, { schema_id: schema.schema_id, tag: 't', support_revocation: opts.revocable !== undefined, ...(opts.revocable ? { revocation_registry_size: opts.revocable } : {}) });
    if (!opts.wait) expect(await worker.run(s, jobOf(s, def.id), 1)).toBe('finished');
    await store.write([{ type: 'put', item: connectionItem(s, connection('C1')) }]);
    const cd = (await registry.getCredDef(s, BASE, def.id)) as { credential_definition?: { value: { primary: unknown; revocation?: Record<string, string> } }; credential_definition_id: string | null; revocation_registry: { revocation_registry_id: string } | null };
    return { schema, def, cd };
  };
  const snapshot = () => JSON.stringify([...store.items.entries()].sort());
  const sent = () => [...store.items.values()].filter((i: Item) => i.type === 'didcomm_outbound').map((i: Item) => (i.job as { message: Record<string, unknown> }).message);
  const exchangeOf = async (s: TenantScope, id: string) => storedExchangeFromItem((await store.get(exchangeKeys.exchange(s, id)))!);
  const ctx = (s: TenantScope): AgentContext => ({ scope: s, now: new Date(), endpoint: 'https://issuer.example/didcomm/ref', keys: {} as AgentKeys, dids: PEER_DIDS, events, exchanges: exchangeReader(store) });
  /** The holder's request-credential on the exchange's thread, through the inbound worker's decision. */
  const holderAsks = async (s: TenantScope, x: StoredExchange, request: unknown, format = ANONCREDS_REQUEST_FORMAT) => {
    const message = {
      '@type': REQUEST_CREDENTIAL_TYPE, '@id': 'r1', '~thread': { thid: x.thread_id },
      formats: [{ attach_id: 'a', format }],
      'requests~attach': [{ '@id': 'a', 'mime-type': 'application/json', data: { base64: Buffer.from(JSON.stringify(request)).toString('base64') } }],
    };
    const d = await decide(ctx(s), { message, senderVerkey: 'PeerVerkey11111111111111111111111111111111', recipientVerkey: 'OurVerkey111111111111111111111111111111111' }, { kind: 'connection', connection: connection('C1') });
    await store.write(d.writes);
    return d;
  };
  return { store, registry, issuance, issuer, issuing, wallet, snapshot, sent, exchangeOf, holderAsks, jobOf, worker };
}


const holderKey = (cd: { credential_definition?: { value: { primary: unknown } } }) => parsePrimaryPublicKey(cd.credential_definition!.value.primary);
const offerIn = (message: Record<string, unknown>) => JSON.parse(Buffer.from((message['offers~attach'] as { data: { base64: string } }[])[0]!.data.base64, 'base64').toString('utf8')) as CredentialOfferJson;
const credentialIn = (message: Record<string, unknown>) => JSON.parse(Buffer.from((message['credentials~attach'] as { data: { base64: string } }[])[0]!.data.base64, 'base64').toString('utf8'));

describe('the offer (POST /api/v1/credentials)', () => {
  test('to a contact: the exchange (offer-sent, format anoncreds), its event and the offer with the RFC 0771 attachment and an RFC 0453 preview', async () => {
    const t = setup();
    const { schema, cd } = await t.wallet(A);
    const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: [...ATTRS].reverse(), contact_id: 'C1' }, 0, BASE);
    expect(made).toMatchObject({ state: 'offer-sent', format: 'anoncreds', connection_id: 'C1', revocation_def_id: null });
    const [message] = t.sent();
    expect(message).toMatchObject({ '@type': OFFER_CREDENTIAL_TYPE, formats: [{ attach_id: 'anoncreds', format: ANONCREDS_OFFER_FORMAT }] });
    // The preview in the schema's order, whatever the caller's.
    expect(message!.credential_preview).toEqual({ '@type': CREDENTIAL_PREVIEW_TYPE, attributes: ATTRS.map((a) => ({ ...a, 'mime-type': 'text/plain' })) });
    const offer = offerIn(message!);
    expect(Object.keys(offer)).toEqual(['schema_id', 'cred_def_id', 'key_correctness_proof', 'nonce']);
    expect(offer).toMatchObject({ schema_id: schema.schema_id, cred_def_id: cd.credential_definition_id });
    expect(BigInt(offer.nonce) < 1n << 80n).toBe(true);
    expect(holderVerifyKeyCorrectness(holderKey(cd), parseKeyCorrectnessProof(offer.key_correctness_proof))).toBe(true);
    const x = await t.exchangeOf(A, made!.credential_exchange_id);
    expect(x.offer).toEqual(offer);
    expect(x.format_options).toMatchObject({ cred_def_id: cd.credential_definition_id, values: ATTRS.map((a) => [a.name, a.value]), rev_reg_id: null });
    expect(anoncredsRecordView(x)).toMatchObject({ schema_id: schema.schema_id, cred_def_id: cd.credential_definition_id, rev_reg_id: null, cred_rev_id: null });
  });

  test('bad inputs: each a 4xx with its code, nothing stored or sent', async () => {
    const t = setup();
    const { schema } = await t.wallet(A);
    const other = await t.wallet(B);
    const before = t.snapshot();
    const body = { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' };
    const cases: [Record<string, unknown>, number, string, string?][] = [
      [{ ...body, rule: 'x' }, 400, 'rule_not_supported'],
      [{ ...body, schema_id: undefined }, 400, 'schema_id_required'],
      [{ ...body, attributes: undefined }, 400, 'attributes_required'],
      [{ ...body, schema_id: other.schema.schema_id }, 404, 'schema_not_found'],
      [{ ...body, schema_id: `${schema.schema_id}x` }, 404, 'schema_not_found'],
      [{ ...body, attributes: ATTRS.slice(1) }, 400, 'attributes_mismatch', 'missing "name"'],
      [{ ...body, attributes: [...ATTRS, { name: 'extra', value: '1' }] }, 400, 'attributes_mismatch', 'not in the schema "extra"'],
      [{ ...body, attributes: [...ATTRS, ATTRS[0]] }, 400, 'attributes_mismatch', 'more than once: "name"'],
      [{ ...body, attributes: [{ name: 'Name', value: 'x' }, ...ATTRS.slice(1)] }, 400, 'attributes_mismatch'],
      [{ ...body, attributes: [{ name: 'name', value: 'x'.repeat(4097) }, ...ATTRS.slice(1)] }, 400, 'attribute_value_too_long'],
      [{ ...body, cred_def_id: other.cd.credential_definition_id }, 404, 'cred_def_not_found'],
      [{ ...body, contact_id: 'C9' }, 404, 'contact_not_found'],
      [{ ...body, invitation_id: 1 }, 400, 'target_ambiguous'],
    ];
    for (const [input, status, code, text] of cases) {
      const r = await refusal(t.issuance.issue(A, input as never, 0, BASE));
      expect([JSON.stringify(input).slice(0, 80), r.status, r.code]).toEqual([JSON.stringify(input).slice(0, 80), status, code]);
      if (text) expect(r.message).toContain(text);
    }
    expect(t.snapshot()).toBe(before);
  });

  test("a definition not finished yet, one of another schema, or none: 409 / 400 / 404; with several, the newest finished one signs", async () => {
    const t = setup();
    const { schema, def } = await t.wallet(A, { wait: true });
    const body = { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' };
    expect(await refusal(t.issuance.issue(A, body, 0, BASE))).toMatchObject({ status: 409, code: 'cred_def_not_finished' });
    expect(await refusal(t.issuance.issue(A, { ...body, cred_def_id: def.id }, 0, BASE))).toMatchObject({ status: 409, code: 'cred_def_not_finished' });
    await t.worker.run(A, t.jobOf(A, def.id), 1);
    const newer = await t.registry.requestCredDef(A, BASE, { schema_id: schema.schema_id, tag: 'newer', support_revocation: false });
    await t.worker.run(A, t.jobOf(A, newer.id), 1);
    const newerId = (await t.registry.getCredDef(A, BASE, newer.id)).credential_definition_id;
    await t.issuance.issue(A, body, 0, BASE);
    expect(offerIn(t.sent()[0]!).cred_def_id).toBe(newerId);
    const older = (await t.registry.getCredDef(A, BASE, def.id)).credential_definition_id!;
    await t.issuance.issue(A, { ...body, cred_def_id: older }, 0, BASE);
    expect(offerIn(t.sent()[1]!).cred_def_id).toBe(older);
    const second = await t.registry.createSchema(A, BASE, { ...SCHEMA, schema_version: '2.0' });
    expect(await refusal(t.issuance.issue(A, { ...body, schema_id: second.schema_id }, 0, BASE))).toMatchObject({ status: 404, code: 'cred_def_not_found' });
    expect(await refusal(t.issuance.issue(A, { ...body, schema_id: second.schema_id, cred_def_id: older }, 0, BASE))).toMatchObject({ status: 400, code: 'cred_def_schema_mismatch' });
  });

  test('attributes are matched by their exact names, in the schema order', () => {
    expect(checkAttributes(['a', 'b c'], [{ name: 'b c', value: '2' }, { name: 'a', value: '1' }])).toEqual([['a', '1'], ['b c', '2']]);
    expect(() => checkAttributes(['a'], [{ name: '__proto__', value: '1' }])).toThrow('not in the schema');
  });
});

describe("the holder's request (inbound worker: structural only)", () => {
  const offer = { schema_id: 'S', cred_def_id: 'C', key_correctness_proof: {}, nonce: '123' };
  const request = { entropy: 'e', cred_def_id: 'C', blinded_ms: { u: '5', ur: null, hidden_attributes: ['master_secret'], committed_attributes: {} }, blinded_ms_correctness_proof: { c: '1', v_dash_cap: '2', m_caps: { master_secret: '3' }, r_caps: {} }, nonce: '456' };
  test('well formed: accepted as it is', () => expect(checkAnonCredsRequest(offer, request)).toEqual({ ok: true, detail: request }));
  test.each([
    ['another definition', { ...request, cred_def_id: 'D' }, 'another credential definition'],
    ['no link secret proof', { ...request, blinded_ms_correctness_proof: undefined }, 'blinded_ms_correctness_proof'],
    ['a non-decimal U', { ...request, blinded_ms: { ...request.blinded_ms, u: '0x5' } }, 'blinded_ms.u'],
    ['an oversized U', { ...request, blinded_ms: { ...request.blinded_ms, u: '9'.repeat(1201) } }, 'blinded_ms.u'],
    ['both entropy and prover_did', { ...request, prover_did: 'did:sov:x' }, 'exactly one'],
    ['a huge nonce', { ...request, nonce: '9'.repeat(31) }, 'nonce'],
    ['a nonce of 81 bits', { ...request, nonce: (1n << 80n).toString() }, 'at most 80 bits'],
    ['a revocation secret that is not a string', { ...request, blinded_ms: { ...request.blinded_ms, ur: { x: 1 } } }, 'blinded_ms.ur'],
    ['not an object', 'x', 'not an AnonCreds credential request'],
  ])('%s: refused', (_what, r, text) => {
    const out = checkAnonCredsRequest(offer, r);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.problem).toContain(text);
  });
});

describe('issuing (issuing worker)', () => {
  test('a holder written from the spec asks; the credential it receives verifies (primary signature, correctness proof, encoding); one credential-issued, one message', async () => {
    const t = setup();
    const { schema, cd } = await t.wallet(A);
    const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' }, 0, BASE);
    const offer = offerIn(t.sent()[0]!);
    const { request, secrets } = holderCredentialRequest(holderKey(cd), offer, 0x1234567890abcdefn << 128n);
    await t.holderAsks(A, await t.exchangeOf(A, made!.credential_exchange_id), request);
    expect((await t.exchangeOf(A, made!.credential_exchange_id)).state).toBe('request-received');
    expect(await t.issuing.run(A, made!.credential_exchange_id)).toEqual({ outcome: 'issued' });
    const message = t.sent()[1]!;
    expect(message).toMatchObject({ '@type': ISSUE_CREDENTIAL_TYPE, formats: [{ attach_id: 'anoncreds', format: ANONCREDS_CREDENTIAL_FORMAT }] });
    const credential = credentialIn(message);
    expect(credential).toMatchObject({ schema_id: schema.schema_id, cred_def_id: cd.credential_definition_id, rev_reg_id: null, rev_reg: null, witness: null });
    expect(credential.values.age).toEqual({ raw: '36', encoded: '36' });
    expect(holderCheckCredential(holderKey(cd), credential, request as { nonce: string }, secrets)).toBeNull();
    // Another link secret than the one blinded: the signature does not hold for it.
    expect(holderCheckCredential(holderKey(cd), credential, request as { nonce: string }, { ...secrets, linkSecret: secrets.linkSecret + 1n })).toBe('primary signature');
    const x = await t.exchangeOf(A, made!.credential_exchange_id);
    expect(x.state).toBe('credential-issued');
    expect(x.format_record).toEqual({ schema_id: schema.schema_id, cred_def_id: cd.credential_definition_id, rev_reg_id: null, cred_rev_id: null });
  });

  test("refused before signing: a broken proof, a proof on another nonce, another definition — abandoned, the holder told, nothing signed", async () => {
    const t = setup();
    const { schema, cd } = await t.wallet(A);
    const pk = holderKey(cd);
    const cases: [string, (offer: CredentialOfferJson) => Record<string, unknown>, string][] = [
      ['a broken proof', (o) => { const r = holderCredentialRequest(pk, o, 7n).request as { blinded_ms_correctness_proof: { c: string } }; r.blinded_ms_correctness_proof.c = String(BigInt(r.blinded_ms_correctness_proof.c) + 1n); return r; }, 'does not verify'],
      ['a proof on another nonce', (o) => holderCredentialRequest(pk, { ...o, nonce: String(BigInt(o.nonce) + 1n) }, 7n).request, 'does not verify'],
    ];
    for (const [what, make, text] of cases) {
      const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' }, 0, BASE);
      const offer = offerIn(t.sent().at(-1)!);
      await t.holderAsks(A, await t.exchangeOf(A, made!.credential_exchange_id), make(offer));
      expect([what, (await t.issuing.run(A, made!.credential_exchange_id)).outcome]).toEqual([what, 'refused']);
      const x = await t.exchangeOf(A, made!.credential_exchange_id);
      expect([what, x.state, x.credential]).toEqual([what, 'abandoned', null]);
      expect(x.error_msg).toContain(text);
      expect(t.sent().at(-1)).toMatchObject({ description: { code: 'issuance-abandoned' } });
    }
    // Another definition: the inbound worker refuses it already; the issuing half refuses it too.
    const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' }, 0, BASE);
    const x = await t.exchangeOf(A, made!.credential_exchange_id);
    const request = holderCredentialRequest(pk, { ...(x.offer as CredentialOfferJson), cred_def_id: 'did:web:other?service=anoncreds&relativeRef=/credDef/x' }, 7n).request;
    await expect(t.issuer.issue(A, { credential_exchange_id: x.credential_exchange_id, offer: x.offer, request, format_options: x.format_options })).rejects.toThrow(IssueRefused);
    expect((await t.holderAsks(A, x, request)).outbound[0]!.message).toMatchObject({ description: { code: 'issuance-abandoned' } });
  });

  test('a holder that answers in the legacy hlindy/cred-req@v2.0 format (RFC 0592) is told the format it must use: abandoned, nothing signed', async () => {
    const t = setup();
    const { schema, cd } = await t.wallet(A);
    const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' }, 0, BASE);
    const { request } = holderCredentialRequest(holderKey(cd), offerIn(t.sent()[0]!), 7n);
    // The same JSON (RFC 0592's request is anoncreds-rs' request), under the Indy format's identifier.
    const d = await t.holderAsks(A, await t.exchangeOf(A, made!.credential_exchange_id), request, 'hlindy/cred-req@v2.0');
    expect(d.outbound[0]!.message).toMatchObject({ description: { code: 'issuance-abandoned', en: expect.stringContaining(`no ${ANONCREDS_REQUEST_FORMAT} attachment`) } });
    const x = await t.exchangeOf(A, made!.credential_exchange_id);
    expect([x.state, x.credential]).toEqual(['abandoned', null]);
    expect([...t.store.items.values()].some((i: Item) => i.type === ISSUE_JOB_TYPE)).toBe(false);
  });

  test("a definition key sealed by seal version 1 (under the wallet's DIDComm data key): abandoned with that reason, the holder told, nothing signed", async () => {
    const t = setup();
    const { schema, cd, def } = await t.wallet(A);
    const keyItem = (await t.store.get(registryKeys.credDefKey(A, def.id)))!;
    await t.store.write([{ type: 'put', item: { ...keyItem, v: 1 } }]);
    const [made] = await t.issuance.issue(A, { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' }, 0, BASE);
    const offer = offerIn(t.sent().at(-1)!);
    await t.holderAsks(A, await t.exchangeOf(A, made!.credential_exchange_id), holderCredentialRequest(holderKey(cd), offer, 7n).request);
    expect(await t.issuing.run(A, made!.credential_exchange_id)).toMatchObject({ outcome: 'refused' });
    const x = await t.exchangeOf(A, made!.credential_exchange_id);
    expect([x.state, x.credential]).toEqual(['abandoned', null]);
    expect(x.error_msg).toContain('was sealed by an earlier version of the service (seal v1');
    expect(t.sent().at(-1)).toMatchObject({ description: { code: 'issuance-abandoned' } });
  });

  test('revocable: one index per exchange whatever the retries, the witness the holder checks against the status list; a full registry refuses offers up front', async () => {
    const t = setup();
    const { schema, cd } = await t.wallet(A, { revocable: 4 });
    const rid = parseObjectId(cd.revocation_registry!.revocation_registry_id, 'revRegDef')!.resourceId;
    const revKey = cd.credential_definition!.value.revocation!;
    const body = { schema_id: schema.schema_id, attributes: ATTRS, contact_id: 'C1' };
    const [made] = await t.issuance.issue(A, body, 0, BASE);
    expect(made!.revocation_def_id).toBe(cd.revocation_registry!.revocation_registry_id);
    const offer = offerIn(t.sent()[0]!);
    const { ur, vrPrime } = holderRevocationBlinding(revKey);
    const { request, secrets } = holderCredentialRequest(holderKey(cd), offer, 99n, { ur });
    const x = (await t.holderAsks(A, await t.exchangeOf(A, made!.credential_exchange_id), request), await t.exchangeOf(A, made!.credential_exchange_id));
    // The job run twice (SQS redelivery) signs twice at most, with one index.
    const first = await t.issuer.issue(A, { credential_exchange_id: x.credential_exchange_id, offer: x.offer, request: x.request, format_options: x.format_options });
    expect(await t.issuing.run(A, x.credential_exchange_id)).toEqual({ outcome: 'issued' });
    const done = await t.exchangeOf(A, x.credential_exchange_id);
    expect(first.record).toEqual(done.format_record);
    expect(done.format_record).toEqual({ schema_id: schema.schema_id, cred_def_id: cd.credential_definition_id, rev_reg_id: cd.revocation_registry!.revocation_registry_id, cred_rev_id: '1' });
    expect((await t.store.get(revRegKeys.registry(A, rid)))!.issued).toBe(1);
    expect((await t.store.get(revIndexClaimKey(A, x.credential_exchange_id)))!.index).toBe(1);
    const credential = credentialIn(t.sent()[1]!);
    expect(holderCheckCredential(holderKey(cd), credential, request as { nonce: string }, secrets)).toBeNull();
    const reg = (await t.store.get(revRegKeys.registry(A, rid)))!;
    const regs = new RevocationRegistryStore(t.store);
    const tails = (await regs.tails(A, reg.tails_hash as string, 10))!.file;
    const r = credential.signature.r_credential;
    const input = {
      revocationKey: revKey,
      revRegDef: JSON.parse(reg.document as string),
      statusList: JSON.parse(reg.status_list as string),
      tailsFile: tails,
      rCredential: r,
      primaryM2: credential.signature.p_credential.m_2,
      vrPrime,
      issuedWitness: credential.witness.omega,
    };
    const revoked = await regs.revoke(A, new CredDefKeySealer(new WalletDataKeys(t.store, new LocalDataKeys(new LocalSecretDeriver('ab'.repeat(32))), 'anoncreds')), rid, [1]);
    expect(holderCheckBatch([input, { ...input, statusList: revoked.statusList, issuedWitness: undefined }])).toEqual([null, 'accumulator']);
    // Indices 2 and 3 are the last (L − 1 = 3): then offers are refused before anything is stored.
    for (let n = 0; n < 2; n++) await regs.allocateIndexOnce(A, rid, revIndexClaimKey(A, `other-${n}`));
    const before = t.snapshot();
    expect(await refusal(t.issuance.issue(A, body, 0, BASE))).toMatchObject({ status: 409, code: 'revocation_registry_full' });
    expect(t.snapshot()).toBe(before);
  }, 240_000);

  test('attribute encoding: as anoncreds-rs encodes the vector credential', () => {
    const vector = loadVector<{ values: Record<string, { raw: string; encoded: string }> }>('anoncreds-legacy-credential.json');
    for (const v of Object.values(vector.values)) expect(holderEncode(v.raw).toString()).toBe(v.encoded);
  });
});
