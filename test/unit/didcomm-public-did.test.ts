import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { PEER_DIDS } from '../../lib/didcomm/agent';
import { generateKeyPair, packMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { verifyAttachment } from '../../lib/didcomm/protocols/did-exchange/signed-attachment';
import { didcommKeys } from '../../lib/didcomm/records';
import { didcommServiceKey, DIDCOMM_SERVICE_MARKER } from '../../lib/dids/didcomm-service';
import { publicLookup } from '../../lib/dids/records';
import { DidService } from '../../lib/dids/service';
import { OutboxPublisher } from '../../lib/events/publisher';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { DidResolver } from '../../lib/resolver/resolver';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import { TaaService } from '../../lib/taa/service';
import { memoryPublicDidDidcomm, MemoryVault } from '../helpers/didcomm-memory-vault';
import { MemoryStore } from '../helpers/memory-store';

/**
 * The public DID's DIDComm service: in the resolved document only for the current public sov/indy/web
 * DID, with the wallet's endpoint and key; moved by set-public-did; and a DID Exchange request to that
 * key naming the public DID (an implicit invitation) makes a connection, anything else is dropped.
 */
const BASE = 'https://agent.example.test/prod';
const A = tenantScope('1');
const B = tenantScope('2');
const refOf = (s: TenantScope) => `ref-${s.walletId}`.padEnd(22, '_');

function setup() {
  const store = new MemoryStore();
  const vault = new MemoryVault();
  const dids = new DidService({
    store,
    keyManager: new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32))),
    taa: new TaaService(store, undefined),
    indyNamespace: 'test',
    limits: { maxDids: 100, maxCreationsPerMinute: 100 },
    didcomm: memoryPublicDidDidcomm(store, vault),
  });
  const resolver = new DidResolver(store);
  const agent = new AgentRuntime({ store, events: new OutboxPublisher(store), keys: vault, dids: PEER_DIDS, maxEnvelopeBytes: 256 * 1024, timeoutMs: 1000 });
  const doc = async (did: string) => (await resolver.resolve(did, BASE))!.document as Record<string, any>;
  const publicKeyRecord = (s: TenantScope) => [...store.items.values()].find((i) => i.PK === keys.walletPartition(s) && String(i.SK).startsWith('DCRCPT#') && i.kind === 'public-did');
  const snapshot = () => JSON.stringify([...store.items.entries()].sort());
  return { store, vault, dids, resolver, agent, doc, publicKeyRecord, snapshot };
}

/** A peer agent outside the service: its own key and did:peer:4, a DID Exchange request naming `pthid`, authcrypted to `to`. */
function peerRequest(to: string, pthid: string, type = 'https://didcomm.org/didexchange/1.1/request') {
  const key = generateKeyPair();
  const did = PEER_DIDS.createDidPeer4({ verkey: verkeyFromPublicKey(key.publicKey), serviceEndpoint: 'https://peer.example.test/in' }).longForm;
  const id = `req-${Math.random().toString(36).slice(2)}`;
  const message = { '@type': type, '@id': id, '~thread': { thid: id, pthid }, label: 'Peer', did };
  return { did, envelope: JSON.parse(Buffer.from(packMessage(message, [to], key)).toString('utf8')) as unknown };
}

describe("the public DID's document", () => {
  test('a public sov DID gets the did-communication service: the wallet endpoint, and the DIDComm key in keyAgreement only', async () => {
    const t = setup();
    const d = await t.dids.create(A, { method: 'sov', baseUrl: BASE });
    expect(await t.resolver.resolve(d.qualified, BASE)).toBeNull(); // not public yet: not even resolvable
    await t.dids.setPublic(A, d.did);
    const doc = await t.doc(d.qualified);
    const verkey = String(t.publicKeyRecord(A)!.SK).slice('DCRCPT#'.length);
    const keyId = `${d.qualified}#didcomm-1`;
    expect(doc.service).toEqual([
      {
        id: `${d.qualified}#did-communication`,
        type: 'did-communication',
        priority: 0,
        recipientKeys: [keyId],
        routingKeys: [],
        serviceEndpoint: `${BASE}/didcomm/${refOf(A)}`,
        accept: ['didcomm/aip1', 'didcomm/aip2;env=rfc19'],
      },
    ]);
    expect(doc.verificationMethod).toContainEqual({ id: keyId, type: 'Ed25519VerificationKey2018', controller: d.qualified, publicKeyBase58: verkey });
    expect(doc.keyAgreement).toEqual([keyId]);
    expect(doc.authentication).not.toContain(keyId);
    expect(doc.assertionMethod).not.toContain(keyId);
    // The key is one the vault holds (the worker can unseal it), and it is not the DID's signing key.
    expect(await t.vault.keyPair(A.walletId, verkey)).toBeDefined();
    expect(verkey).not.toBe(d.verkey);
    // Without a base URL (the verifier's resolutions) there is no service.
    expect((await t.resolver.resolve(d.qualified))!.document.service).toBeUndefined();
    // Setting it public again changes nothing.
    const before = t.snapshot();
    await t.dids.setPublic(A, d.did);
    expect(t.snapshot()).toBe(before);
  });

  test('the service follows the public DID: indy, then web, then did:key (none); one key throughout; posted DIDs lose it', async () => {
    const t = setup();
    const indy = await t.dids.create(A, { method: 'indy', baseUrl: BASE });
    const web = await t.dids.create(A, { method: 'web', keyType: 'p256', baseUrl: BASE });
    const key = await t.dids.create(A, { method: 'key', baseUrl: BASE });
    await t.dids.setPublic(A, indy.did);
    const first = (await t.doc(indy.qualified)).service[0];
    expect(first.serviceEndpoint).toBe(`${BASE}/didcomm/${refOf(A)}`);
    const verkey = t.publicKeyRecord(A)!.SK;
    expect(t.publicKeyRecord(A)).toMatchObject({ did: indy.qualified });

    await t.dids.setPublic(A, web.did);
    expect((await t.doc(indy.qualified)).service).toBeUndefined();
    expect((await t.doc(indy.qualified)).verificationMethod.map((m: any) => m.id)).not.toContain(`${indy.qualified}#didcomm-1`);
    const webDoc = await t.doc(web.qualified);
    expect(webDoc.service[0]).toMatchObject({ id: `${web.qualified}#did-communication`, recipientKeys: [`${web.qualified}#didcomm-1`] });
    expect(t.publicKeyRecord(A)).toMatchObject({ SK: verkey, did: web.qualified });

    await t.dids.setPublic(A, key.did);
    for (const did of [indy.qualified, key.qualified]) expect((await t.doc(did)).service).toBeUndefined();
    // A did:web document keeps only its AnonCreds registry service (docs/anoncreds.md): objects published under it stay resolvable.
    expect((await t.doc(web.qualified)).service.map((s: any) => s.type)).toEqual(['AnonCredsRegistry']);
    expect(t.publicKeyRecord(A)!.SK).toBe(verkey);
    expect(t.publicKeyRecord(A)!.did).toBeUndefined();
    // Out of the index, but kept: the next sov/indy/web public DID gets the same key.
    expect((await t.store.get(didcommServiceKey(A, refOf(A))))!.PDID).toBeUndefined();
    await t.dids.setPublic(A, indy.did);
    expect(t.publicKeyRecord(A)).toMatchObject({ SK: verkey, did: indy.qualified });
    expect((await t.doc(indy.qualified)).service).toHaveLength(1);
  });

  test('a DID made public before the service existed gets it when set public again', async () => {
    const t = setup();
    const d = await t.dids.create(A, { method: 'web', baseUrl: BASE });
    await t.dids.setPublic(A, d.did);
    // What a wallet whose public DID was set before this feature holds: no service item, no key lookup.
    await t.store.write([{ type: 'delete', key: didcommServiceKey(A, refOf(A)) }, { type: 'delete', key: { PK: keys.walletPartition(A), SK: String(t.publicKeyRecord(A)!.SK) } }]);
    expect((await t.doc(d.qualified)).service.map((s: any) => s.type)).toEqual(['AnonCredsRegistry']);
    await expect(t.dids.setPublic(A, d.did)).resolves.toMatchObject({ posture: 'public' });
    expect((await t.doc(d.qualified)).service[0].serviceEndpoint).toBe(`${BASE}/didcomm/${refOf(A)}`);
    expect(t.publicKeyRecord(A)).toMatchObject({ did: d.qualified });
  });

  test("no wallet's document carries another wallet's service, even one published under its DID's lookup value", async () => {
    const t = setup();
    const a = await t.dids.create(A, { method: 'sov', baseUrl: BASE });
    const b = await t.dids.create(B, { method: 'sov', baseUrl: BASE });
    await t.dids.setPublic(A, a.did);
    await t.dids.setPublic(B, b.did);
    expect((await t.doc(a.qualified)).service[0].serviceEndpoint).toBe(`${BASE}/didcomm/${refOf(A)}`);
    expect((await t.doc(b.qualified)).service[0].serviceEndpoint).toBe(`${BASE}/didcomm/${refOf(B)}`);
    // B's service item made to name A's DID (what no code path writes): A's document ignores it.
    const bService = (await t.store.get(didcommServiceKey(B, refOf(B))))!;
    await t.store.write([{ type: 'put', item: { ...bService, PDID: publicLookup(a.qualified), qualified: a.qualified, method: DIDCOMM_SERVICE_MARKER } }]);
    await t.store.write([{ type: 'delete', key: didcommServiceKey(A, refOf(A)) }]);
    const doc = await t.doc(a.qualified);
    expect(doc.service).toBeUndefined();
    expect(JSON.stringify(doc)).not.toContain(refOf(B));
  });
});

describe("DID Exchange requests to the public DID's key (implicit invitations)", () => {
  async function published() {
    const t = setup();
    const d = await t.dids.create(A, { method: 'sov', baseUrl: BASE });
    await t.dids.setPublic(A, d.did);
    const verkey = String(t.publicKeyRecord(A)!.SK).slice('DCRCPT#'.length);
    const endpoint = `${BASE}/didcomm/${refOf(A)}`;
    return { t, d, verkey, endpoint };
  }

  test('a request naming the public DID makes a new connection each time, answered with a response signed by the DIDComm key', async () => {
    const { t, d, verkey, endpoint } = await published();
    for (const pthid of [d.qualified, d.did, `${d.qualified}#did-communication`]) {
      const { did, envelope } = peerRequest(verkey, pthid);
      const outcome = await t.agent.receive(A, endpoint, envelope);
      expect(outcome).toMatchObject({ kind: 'committed', type: 'https://didcomm.org/didexchange/1.1/request' });
      if (outcome.kind !== 'committed') throw new Error('not committed');
      const [out] = outcome.outbound;
      expect(out!.to.endpoint).toBe('https://peer.example.test/in');
      const response = out!.message as any;
      expect(response['~thread'].pthid).toBe(pthid);
      expect(verifyAttachment(response['did_rotate~attach'], [verkey]).toString('utf8')).toBe(response.did);
      const stored = (await t.store.get(didcommKeys.connection(A, out!.connectionId)))!;
      expect(stored).toMatchObject({ their_did: did, their_role: 'invitee', invitation_mode: 'multi', invitation_id: null, invitation_key: verkey, invitation_msg_id: pthid, state: 'response', alias: null });
    }
    expect([...t.store.items.values()].filter((i) => i.type === 'didcomm_connection')).toHaveLength(3);
  });

  test('a request naming another pthid, or any other message, to that key is dropped and nothing is stored', async () => {
    const { t, d, verkey, endpoint } = await published();
    const before = t.snapshot();
    for (const pthid of ['did:sov:SomeoneElse1234567890', `${d.qualified}#key-1`, 'an-invitation-id']) {
      expect(await t.agent.receive(A, endpoint, peerRequest(verkey, pthid).envelope)).toMatchObject({ kind: 'dropped', reason: 'request_not_accepted' });
    }
    expect(await t.agent.receive(A, endpoint, peerRequest(verkey, d.qualified, 'https://didcomm.org/basicmessage/1.0/message').envelope)).toMatchObject({ kind: 'dropped', reason: 'unexpected_message' });
    // Another wallet does not take an envelope for A's key.
    expect(await t.agent.receive(B, endpoint, peerRequest(verkey, d.qualified).envelope)).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
    expect(t.snapshot()).toBe(before);
  });

  test('once the public DID moves, a request naming the old one is dropped; with a did:key public DID, every request is', async () => {
    const { t, d, verkey, endpoint } = await published();
    const next = await t.dids.create(A, { method: 'web', baseUrl: BASE });
    await t.dids.setPublic(A, next.did);
    expect(await t.agent.receive(A, endpoint, peerRequest(verkey, d.qualified).envelope)).toMatchObject({ kind: 'dropped', reason: 'request_not_accepted' });
    expect(await t.agent.receive(A, endpoint, peerRequest(verkey, next.qualified).envelope)).toMatchObject({ kind: 'committed' });
    const key = await t.dids.create(A, { method: 'key', baseUrl: BASE });
    await t.dids.setPublic(A, key.did);
    const before = t.snapshot();
    for (const pthid of [next.qualified, key.qualified]) {
      expect(await t.agent.receive(A, endpoint, peerRequest(verkey, pthid).envelope)).toMatchObject({ kind: 'dropped', reason: 'not_for_us' });
    }
    expect(t.snapshot()).toBe(before);
  });

  test('a request decided before the public DID moved does not commit', async () => {
    const { t, d, verkey, endpoint } = await published();
    const next = await t.dids.create(A, { method: 'sov', baseUrl: BASE });
    // The move lands between the worker's read of the key's lookup and its transaction.
    const write = t.store.write.bind(t.store);
    let moved = false;
    t.store.write = async (ops) => {
      if (!moved && ops.some((o) => o.type === 'check' && String(o.key.SK).startsWith('DCRCPT#'))) {
        moved = true;
        await t.dids.setPublic(A, next.did);
      }
      return write(ops);
    };
    expect(await t.agent.receive(A, endpoint, peerRequest(verkey, d.qualified).envelope)).toMatchObject({ kind: 'dropped', reason: 'stale' });
    expect(moved).toBe(true);
    expect([...t.store.items.values()].filter((i) => i.type === 'didcomm_connection')).toHaveLength(0);
  });
});
