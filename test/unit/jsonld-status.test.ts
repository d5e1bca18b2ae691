import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { cryptosuite as ecdsaRdfc2019 } from '@digitalbazaar/ecdsa-rdfc-2019-cryptosuite';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { decodeJwt } from 'jose';
import { didDocument, type DidDocument } from '../../lib/dids/document';
import { didWeb, multibaseKey } from '../../lib/dids/methods';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { offlineDocumentLoader, type JsonObject } from '../../lib/jsonld/loader';
import { signCredential, type Cryptosuite, type ProofType, type SigningKey } from '../../lib/jsonld/signing';
import { JsonLdStatusSource, withCredentialStatus } from '../../lib/jsonld/status';
import type { KeyAlg } from '../../lib/keys/port';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { definitionFromItem, statusKeys } from '../../lib/status-lists/records';
import { StatusListService } from '../../lib/status-lists/service';
import { tenantScope } from '../../lib/store/keys';
import { BASE, oid4vciFixture, REF, scope } from '../helpers/oid4vci-fixture';
import { MemoryStore } from '../helpers/memory-store';
import { decodeBitstringStatusList } from '../helpers/w3c-bitstring-status-list';

/**
 * `revocation_def_id` for JSON-LD credentials (lib/jsonld/status.ts) on the in-memory store: the entry
 * it allocates is the status-list feature's own (revoked through StatusListService, published by its
 * publisher, read back with the decoder written from the W3C text), and the credential carrying it
 * signs in safe mode and verifies with @digitalbazaar/vc.
 */
async function setup() {
  const store = new MemoryStore();
  const f = await oid4vciFixture({ store });
  const publisher = new StatusListPublisher({ store, keyManager: f.keyManager, events: f.publisher, refs: f.refs });
  const service = new StatusListService({ store, events: f.publisher, publisher });
  const source = new JsonLdStatusSource({ store, events: f.publisher, refs: f.refs });
  const def = await service.create(scope, { list_type: 'w3c', issuer_did: f.did.did }, BASE);
  const counter = async (id = def.id) => (await store.get(statusKeys.counter(scope, id)))?.next;
  return { store, f, publisher, service, source, def, counter };
}

describe('credentialStatusFor', () => {
  test("an index of the definition's W3C list, as a BitstringStatusListEntry; the entry exists once the issuance writes its ops", async () => {
    const { store, f, service, source, def } = await setup();
    const got = await source.credentialStatusFor(scope, def.id, 'ldx-1');
    const url = `${BASE}/status-lists/${REF}/${def.id}/0/w3c`;
    const index = got.record.status_list_index;
    expect(got.credentialStatus).toEqual({ id: `${url}#${index}`, type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: String(index), statusListCredential: url });
    expect(got.record).toEqual({ revocation_def_id: def.id, status_list: 0, status_list_index: index, status_list_credential: url });
    expect(got.listIssuer).toBe(f.did.qualified);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(index).toBeLessThan(def.list_size);
    // Staged, not written: nothing exists until the issuing transaction does.
    await expect(service.getEntry(scope, 'ldx-1')).rejects.toMatchObject({ status: 404 });
    await store.write(got.ops);
    expect(await service.getEntry(scope, 'ldx-1')).toMatchObject({ definition_id: def.id, credential_exchange_id: 'ldx-1', list: 0, index, status: '0', status_purpose: 'revocation' });
    expect(f.events('status_list.entry.assigned').map((e) => e.data.credential_exchange_id)).toEqual(['ldx-1']);
  });

  test('each exchange its own index; a retried issuance of the same exchange keeps its index and stages nothing', async () => {
    const { store, source, def, counter } = await setup();
    const indexes = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const got = await source.credentialStatusFor(scope, def.id, `ldx-${i}`);
      await store.write(got.ops);
      indexes.add(got.record.status_list_index);
    }
    expect(indexes.size).toBe(20);
    const first = await source.credentialStatusFor(scope, def.id, 'ldx-0');
    expect(first.ops).toEqual([]);
    expect(indexes.has(first.record.status_list_index)).toBe(true);
    expect(await counter()).toBe(20);
  });

  test('past list_size entries the next list of the definition is used (lists never fill up)', async () => {
    const { store, source, def } = await setup();
    await store.write([{ type: 'put', item: { ...statusKeys.counter(scope, def.id), next: def.list_size } }]);
    const got = await source.credentialStatusFor(scope, def.id, 'ldx-next');
    expect(got.record.status_list).toBe(1);
    expect(got.credentialStatus.statusListCredential).toBe(`${BASE}/status-lists/${REF}/${def.id}/1/w3c`);
  });

  test('revoked through the status-list service: revoked() reports it, and the published W3C list has the bit set', async () => {
    const { store, publisher, service, source, def } = await setup();
    const got = await source.credentialStatusFor(scope, def.id, 'ldx-r');
    await store.write(got.ops);
    expect(await source.revoked(scope, def.id, 'ldx-r')).toBe(false);
    await service.setStatus(scope, 'ldx-r', undefined, undefined);
    expect(await source.revoked(scope, def.id, 'ldx-r')).toBe(true);
    expect(await source.revoked(scope, def.id, 'ldx-never')).toBeNull();
    const record = definitionFromItem((await store.get(statusKeys.definition(scope, def.id)))!);
    const { publication } = await publisher.publish(scope, record, 0, 'w3c', { force: true });
    expect(publication.url).toBe(got.credentialStatus.statusListCredential);
    const list = decodeBitstringStatusList((decodeJwt(publication.token) as { credentialSubject: { encodedList: string } }).credentialSubject.encodedList);
    expect(list.status(got.record.status_list_index)).toBe(1);
    expect(list.status((got.record.status_list_index + 1) % def.list_size)).toBe(0);
  });
});

describe('refused before anything is allocated', () => {
  test('an unknown definition, a malformed id and another wallet\'s definition: the same 404', async () => {
    const { store, source, def, counter } = await setup();
    // Wallet 8's definition, in its own partition.
    const scope8 = tenantScope('8');
    const foreign = { ...def, id: '0f0e0d0c-0b0a-4908-8706-050403020100', wallet_id: '8' };
    await store.write([
      { type: 'put', item: { ...statusKeys.definition(scope8, foreign.id), type: 'status_definition', ...foreign } },
      { type: 'put', item: { ...statusKeys.counter(scope8, foreign.id), next: 0 } },
    ]);
    const answer = async (id: string) => source.credentialStatusFor(scope, id, 'ldx-1').then(() => 'allocated', (e: { status: number; code: string; message: string }) => [e.status, e.code, e.message.replace(id, '<id>')]);
    const unknown = await answer('123e4567-e89b-42d3-a456-426614174000');
    expect(unknown).toEqual([404, 'status_list_definition_not_found', 'No status list definition <id> in this wallet']);
    expect(await answer(foreign.id)).toEqual(unknown);
    expect(await answer('x#SLD#y')).toEqual(unknown);
    expect(await counter()).toBe(0);
    expect(await counter(foreign.id)).toBeUndefined(); // wallet 7 has no counter of that id
    expect((await store.get(statusKeys.counter(scope8, foreign.id)))?.next).toBe(0);
  });

  test('an IETF definition (400 list_type_mismatch) and a suspension definition (400 status_purpose_mismatch)', async () => {
    const { f, service, source, counter } = await setup();
    const ietf = await service.create(scope, { list_type: 'ietf', issuer_did: f.did.did }, BASE);
    await expect(source.credentialStatusFor(scope, ietf.id, 'ldx-1')).rejects.toMatchObject({ status: 400, code: 'list_type_mismatch' });
    const suspension = await service.create(scope, { list_type: 'w3c', status_purpose: 'suspension', issuer_did: f.did.did }, BASE);
    await expect(source.credentialStatusFor(scope, suspension.id, 'ldx-1')).rejects.toMatchObject({ status: 400, code: 'status_purpose_mismatch' });
    expect([await counter(ietf.id), await counter(suspension.id)]).toEqual([0, 0]);
  });

  test('a definition deleted meanwhile (its counter gone): 404, nothing counted', async () => {
    const { store, source, def } = await setup();
    await store.write([{ type: 'delete', key: statusKeys.counter(scope, def.id) }]);
    await expect(source.credentialStatusFor(scope, def.id, 'ldx-1')).rejects.toMatchObject({ status: 404, code: 'status_list_definition_not_found' });
    expect(await store.get(statusKeys.counter(scope, def.id))).toBeUndefined();
  });
});

describe('withCredentialStatus', () => {
  const status = { id: 'https://x.example/l#3', type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '3', statusListCredential: 'https://x.example/l' };

  test('a v1 credential gets the Bitstring Status List context once; a v2 credential needs none', () => {
    const v1 = withCredentialStatus({ '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://ex.example/#' }], type: ['VerifiableCredential'] }, status);
    expect(v1['@context']).toEqual([CONTEXT_URLS.credentialsV1, { ex: 'https://ex.example/#' }, CONTEXT_URLS.statusList]);
    expect(withCredentialStatus({ '@context': [CONTEXT_URLS.credentialsV1, CONTEXT_URLS.statusList] }, status)['@context']).toEqual([CONTEXT_URLS.credentialsV1, CONTEXT_URLS.statusList]);
    expect(withCredentialStatus({ '@context': [CONTEXT_URLS.credentialsV2] }, status)['@context']).toEqual([CONTEXT_URLS.credentialsV2]);
    expect(withCredentialStatus({ '@context': CONTEXT_URLS.credentialsV2 }, status)).toEqual({ '@context': [CONTEXT_URLS.credentialsV2], credentialStatus: status });
  });

  test('a credential that brings its own credentialStatus: 400 credential_status_conflict', () => {
    expect(() => withCredentialStatus({ '@context': [CONTEXT_URLS.credentialsV2], credentialStatus: { type: 'Other' } }, status)).toThrow(expect.objectContaining({ status: 400, code: 'credential_status_conflict' }));
  });
});

describe('a credential with its entry signs in safe mode and verifies', () => {
  const verifierSuites = () => [new Ed25519Signature2020(), new Ed25519Signature2018(), new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 }), new DataIntegrityProof({ cryptosuite: ecdsaRdfc2019 })];
  const loaderFor = (doc: DidDocument) => async (url: string) => {
    const context = BUNDLED_CONTEXTS.get(url);
    if (context) return { contextUrl: null, documentUrl: url, document: context };
    if (url === doc.id) return { contextUrl: null, documentUrl: url, document: doc };
    const vm = doc.verificationMethod.find((m) => m.id === url);
    if (!vm) throw new Error(`verifier cannot load ${url}`);
    return { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...vm } };
  };
  const cases: [string, KeyAlg, ProofType, Cryptosuite | undefined, 1 | 2][] = [
    ['Ed25519Signature2020, v1 context', 'EdDSA', 'Ed25519Signature2020', undefined, 1],
    ['Ed25519Signature2018, v1 context', 'EdDSA', 'Ed25519Signature2018', undefined, 1],
    ['Ed25519Signature2020, v2 context', 'EdDSA', 'Ed25519Signature2020', undefined, 2],
    ['DataIntegrityProof eddsa-rdfc-2022, v2 context', 'EdDSA', 'DataIntegrityProof', 'eddsa-rdfc-2022', 2],
    ['DataIntegrityProof ecdsa-rdfc-2019, v1 context', 'ES256', 'DataIntegrityProof', 'ecdsa-rdfc-2019', 1],
  ];

  test.each(cases)('%s', async (_name, alg, proofType, cryptosuite, version) => {
    const { store, f, source, def } = await setup();
    const created = await f.keyManager.create(scope, alg);
    const did = didWeb('https://issuer.example', `s${alg}`.replace(/[^A-Za-z0-9]/g, ''));
    const key: SigningKey = { did, document: didDocument(did, 'web', created.publicJwk), ref: created.ref, alg };
    const got = await source.credentialStatusFor(scope, def.id, 'ldx-s');
    await store.write(got.ops);
    const credential: JsonObject = {
      '@context': [version === 1 ? CONTEXT_URLS.credentialsV1 : CONTEXT_URLS.credentialsV2, { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName' }],
      type: ['VerifiableCredential', 'Membership'],
      issuer: did,
      credentialSubject: { id: 'did:example:ada', memberName: 'Ada Lovelace' },
    };
    const documentLoader = offlineDocumentLoader();
    // Without the status context a v1 credential's entry has undefined terms: safe mode names one.
    if (version === 1) {
      await expect(signCredential({ keyManager: f.keyManager, scope, key, credential: { ...credential, credentialStatus: got.credentialStatus }, proof: { proofType, cryptosuite }, documentLoader })).rejects.toMatchObject({ status: 400, code: 'undefined_term' });
    }
    const signed = await signCredential({ keyManager: f.keyManager, scope, key, credential: withCredentialStatus(credential, got.credentialStatus), proof: { proofType, cryptosuite }, documentLoader });
    expect(signed.credentialStatus).toEqual(got.credentialStatus);
    // @digitalbazaar/vc insists on a status checker when a credential has credentialStatus: the signature is what is checked here.
    const checkStatus = async () => ({ verified: true });
    const result = await vc.verifyCredential({ credential: signed, suite: verifierSuites(), documentLoader: loaderFor(key.document), checkStatus });
    expect(result.error).toBeUndefined();
    expect(result.verified).toBe(true);
    // The entry is covered by the proof: another index does not verify.
    const moved = structuredClone(signed);
    (moved.credentialStatus as Record<string, unknown>).statusListIndex = String(got.record.status_list_index + 1);
    expect((await vc.verifyCredential({ credential: moved, suite: verifierSuites(), documentLoader: loaderFor(key.document), checkStatus })).verified).toBe(false);
  });

  test('did:key issuer with the default suite, the loader answering every context from memory', async () => {
    const { store, f, source, def } = await setup();
    const created = await f.keyManager.create(scope, 'EdDSA');
    const did = `did:key:${multibaseKey(created.publicJwk)}`;
    const key: SigningKey = { did, document: didDocument(did, 'key', created.publicJwk), ref: created.ref, alg: 'EdDSA' };
    const got = await source.credentialStatusFor(scope, def.id, 'ldx-k');
    await store.write(got.ops);
    const asked: string[] = [];
    const loader = offlineDocumentLoader();
    const counting = async (url: string) => {
      asked.push(url);
      return loader(url);
    };
    const signed = await signCredential({ keyManager: f.keyManager, scope, key, credential: withCredentialStatus({ '@context': [CONTEXT_URLS.credentialsV1], type: ['VerifiableCredential'], issuer: did, credentialSubject: { id: 'did:example:1' } }, got.credentialStatus), documentLoader: counting });
    expect((signed.proof as { type: string }).type).toBe('Ed25519Signature2020');
    expect(asked).toContain(CONTEXT_URLS.statusList);
    expect(asked.every((u) => BUNDLED_CONTEXTS.has(u))).toBe(true);
  });
});
