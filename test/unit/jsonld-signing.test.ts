import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { cryptosuite as ecdsaRdfc2019 } from '@digitalbazaar/ecdsa-rdfc-2019-cryptosuite';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { didDocument, type DidDocument } from '../../lib/dids/document';
import { didJwk, didWeb, multibaseKey, type DidMethod } from '../../lib/dids/methods';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { offlineDocumentLoader, UndefinedTermError, UnknownContextError, type JsonObject } from '../../lib/jsonld/loader';
import { planProof, signCredential, signingKeyOf, UnsupportedProofError, type Cryptosuite, type ProofType, type SigningKey } from '../../lib/jsonld/signing';
import { DidService } from '../../lib/dids/service';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { DidResolver } from '../../lib/resolver/resolver';
import { TaaService } from '../../lib/taa/service';
import type { KeyAlg, KeyManager } from '../../lib/keys/port';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { tenantScope } from '../../lib/store/keys';
import { memoryPublicDidDidcomm } from '../helpers/didcomm-memory-vault';
import { MemoryStore } from '../helpers/memory-store';

/**
 * The JSON-LD signing core (lib/jsonld/signing.ts) with the local key manager, checked by an
 * independent verifier: @digitalbazaar/vc with the suites' own verifiers, resolving our DID documents
 * (lib/dids/document.ts, as the resolver serves them) through a loader of its own.
 */
const scope = tenantScope('7');
const store = new MemoryStore();
const local = new LocalKeyManager(store, new LocalSecretDeriver('ef'.repeat(32)));
/** Counts signing calls, so a refusal can be shown to have reached no key. */
let signCalls = 0;
const keyManager: KeyManager = {
  create: (s, alg) => local.create(s, alg),
  publicJwk: (s, ref, alg) => local.publicJwk(s, ref, alg),
  scheduleDeletion: (s, ref) => local.scheduleDeletion(s, ref),
  sign: (s, ref, alg, data) => {
    signCalls += 1;
    return local.sign(s, ref, alg, data);
  },
};

async function issuerKey(method: DidMethod, alg: KeyAlg): Promise<SigningKey> {
  const created = await keyManager.create(scope, alg);
  const did = method === 'key' ? `did:key:${multibaseKey(created.publicJwk)}` : method === 'jwk' ? didJwk(created.publicJwk) : didWeb('https://issuer.example', `${alg}${method}`.replace(/[^A-Za-z0-9]/g, ''));
  return { did, document: didDocument(did, method, created.publicJwk), ref: created.ref, alg };
}

/** The verifier's own loader: the bundled contexts and the issuers' DID documents (a method by its id, with the document's @context). */
function verifierLoader(documents: readonly DidDocument[]) {
  return async (url: string) => {
    const context = BUNDLED_CONTEXTS.get(url);
    if (context) return { contextUrl: null, documentUrl: url, document: context };
    const [did] = url.split('#');
    const doc = documents.find((d) => d.id === did);
    if (!doc) throw new Error(`verifier cannot load ${url}`);
    if (url === did) return { contextUrl: null, documentUrl: url, document: doc };
    const vm = doc.verificationMethod.find((m) => m.id === url);
    if (!vm) throw new Error(`no ${url} in ${did}`);
    return { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...vm } };
  };
}

const verifierSuites = () => [new Ed25519Signature2020(), new Ed25519Signature2018(), new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 }), new DataIntegrityProof({ cryptosuite: ecdsaRdfc2019 })];

function credentialOf(issuer: string, version: 1 | 2 = 1): JsonObject {
  const base = version === 1 ? [CONTEXT_URLS.credentialsV1, 'https://w3id.org/security/suites/ed25519-2020/v1'] : [CONTEXT_URLS.credentialsV2];
  return {
    '@context': [...base, { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName', memberSince: 'ex:memberSince' }],
    type: ['VerifiableCredential', 'Membership'],
    issuer,
    ...(version === 1 ? { issuanceDate: '2026-11-26T00:00:00Z' } : { validFrom: '2026-11-26T00:00:00Z' }),
    credentialSubject: { id: 'did:example:ada', memberName: 'Ada Lovelace', memberSince: '1843' },
  };
}

const cases: [string, DidMethod, KeyAlg, ProofType, Cryptosuite | undefined, 1 | 2][] = [
  ['Ed25519Signature2020 on did:key', 'key', 'EdDSA', 'Ed25519Signature2020', undefined, 1],
  ['Ed25519Signature2020 on did:web', 'web', 'EdDSA', 'Ed25519Signature2020', undefined, 1],
  ['Ed25519Signature2018 on did:web', 'web', 'EdDSA', 'Ed25519Signature2018', undefined, 1],
  ['DataIntegrityProof eddsa-rdfc-2022 on did:key', 'key', 'EdDSA', 'DataIntegrityProof', 'eddsa-rdfc-2022', 2],
  ['DataIntegrityProof eddsa-rdfc-2022 on did:web', 'web', 'EdDSA', 'DataIntegrityProof', 'eddsa-rdfc-2022', 2],
  ['DataIntegrityProof ecdsa-rdfc-2019 on did:key (P-256)', 'key', 'ES256', 'DataIntegrityProof', 'ecdsa-rdfc-2019', 2],
  ['DataIntegrityProof ecdsa-rdfc-2019 on did:web (P-256)', 'web', 'ES256', 'DataIntegrityProof', 'ecdsa-rdfc-2019', 2],
];

describe.each(cases)('%s', (_name, method, alg, proofType, cryptosuite, version) => {
  let key: SigningKey;
  let signed: JsonObject;
  beforeAll(async () => {
    key = await issuerKey(method, alg);
    const before = signCalls;
    signed = await signCredential({ keyManager, scope, key, credential: credentialOf(key.did, version), proof: { proofType, cryptosuite }, documentLoader: offlineDocumentLoader() });
    expect(signCalls).toBe(before + 1);
  });

  test('the proof names the suite and a verification method our DID document contains', () => {
    const proof = signed.proof as Record<string, unknown>;
    expect(proof.type).toBe(proofType);
    if (cryptosuite) expect(proof.cryptosuite).toBe(cryptosuite);
    expect(proof.proofPurpose).toBe('assertionMethod');
    expect(key.document.verificationMethod.map((m) => m.id)).toContain(proof.verificationMethod);
  });

  test('@digitalbazaar/vc verifies it against the DID document; a tampered copy fails', async () => {
    const documentLoader = verifierLoader([key.document]);
    const result = await vc.verifyCredential({ credential: signed, suite: verifierSuites(), documentLoader });
    expect(result.error).toBeUndefined();
    expect(result.verified).toBe(true);
    const tampered = structuredClone(signed);
    (tampered.credentialSubject as Record<string, unknown>).memberName = 'Mallory';
    expect((await vc.verifyCredential({ credential: tampered, suite: verifierSuites(), documentLoader })).verified).toBe(false);
    // Another DID's document under the same name: the signature does not verify with its key.
    const other = await issuerKey(method, alg);
    const impostor = { ...other.document, id: key.did, verificationMethod: other.document.verificationMethod.map((m) => ({ ...m, id: m.id.replace(other.did, key.did), controller: key.did })), assertionMethod: (other.document.assertionMethod as string[]).map((id) => id.replace(other.did, key.did)) };
    expect((await vc.verifyCredential({ credential: signed, suite: verifierSuites(), documentLoader: verifierLoader([impostor]) })).verified).toBe(false);
  });
});

describe('refused before any signing call', () => {
  let key: SigningKey;
  beforeAll(async () => {
    key = await issuerKey('web', 'EdDSA');
  });
  const refuse = async (credential: JsonObject, expected: unknown) => {
    const before = signCalls;
    await expect(signCredential({ keyManager, scope, key, credential, documentLoader: offlineDocumentLoader() })).rejects.toThrow(expected as Error);
    expect(signCalls).toBe(before);
  };

  test('a term no context defines: an UndefinedTermError naming it', async () => {
    const credential = credentialOf(key.did);
    (credential.credentialSubject as Record<string, unknown>).nickname = 'Ada';
    const before = signCalls;
    const err = await signCredential({ keyManager, scope, key, credential, documentLoader: offlineDocumentLoader() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UndefinedTermError);
    expect((err as UndefinedTermError).status).toBe(400);
    expect((err as Error).message).toContain('"nickname"');
    expect(signCalls).toBe(before);
  });

  test('a context the loader does not hold: an UnknownContextError naming the URL, and no fetch', async () => {
    const credential = { ...credentialOf(key.did), '@context': [CONTEXT_URLS.credentialsV1, 'https://schema.org/'] };
    const err = await signCredential({ keyManager, scope, key, credential, documentLoader: offlineDocumentLoader() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownContextError);
    expect((err as Error).message).toContain('https://schema.org/');
    await refuse(credential, UnknownContextError);
  });

  test("the wallet's own context file resolves through the lookup port", async () => {
    const url = 'https://api.example/context/AbCdEfGhIjKlMnOpQrStUv:membership.jsonld';
    const credential = { ...credentialOf(key.did), '@context': [CONTEXT_URLS.credentialsV1, url] };
    const looked: string[] = [];
    const documentLoader = offlineDocumentLoader({
      contexts: async (u) => {
        looked.push(u);
        return u === url ? { '@context': { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName', memberSince: 'ex:memberSince' } } : undefined;
      },
    });
    const signed = await signCredential({ keyManager, scope, key, credential, documentLoader });
    expect(looked).toEqual([url]);
    const verify = async (u: string) => (u === url ? { contextUrl: null, documentUrl: u, document: { '@context': { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName', memberSince: 'ex:memberSince' } } } : verifierLoader([key.document])(u));
    expect((await vc.verifyCredential({ credential: signed, suite: verifierSuites(), documentLoader: verify })).verified).toBe(true);
  });

  test('an issuer other than the signing DID, and a malformed credential', async () => {
    await refuse(credentialOf('did:example:someone-else'), /issuer must be the signing DID/);
    const { credentialSubject: _none, ...noSubject } = credentialOf(key.did);
    await refuse(noSubject, /credentialSubject/);
  });

  test('a proofType the key or the document cannot make', async () => {
    const p256 = await issuerKey('web', 'ES256');
    const jwkKey = await issuerKey('jwk', 'EdDSA');
    const cannot: [SigningKey, ProofType, Cryptosuite | undefined, RegExp][] = [
      [p256, 'Ed25519Signature2020', undefined, /needs an Ed25519 key; .* has a P-256 key/],
      [p256, 'DataIntegrityProof', 'eddsa-rdfc-2022', /needs an Ed25519 key/],
      [key, 'DataIntegrityProof', 'ecdsa-rdfc-2019', /needs a P-256 key/],
      // did:jwk's document is its JWK alone: no method the 2018 suite's verifiers read.
      [jwkKey, 'Ed25519Signature2018', undefined, /needs a verification method of type Ed25519VerificationKey2018 or Ed25519VerificationKey2020/],
      [key, 'Ed25519Signature2020', 'eddsa-rdfc-2022', /cryptosuite applies to DataIntegrityProof only/],
    ];
    for (const [k, proofType, cryptosuite, message] of cannot) {
      expect(() => planProof(k, { proofType, cryptosuite })).toThrow(UnsupportedProofError);
      const before = signCalls;
      await expect(signCredential({ keyManager, scope, key: k, credential: credentialOf(k.did), proof: { proofType, cryptosuite }, documentLoader: offlineDocumentLoader() })).rejects.toThrow(message);
      expect(signCalls).toBe(before);
    }
    expect(() => planProof(key, { proofType: 'BbsBlsSignature2020' as ProofType })).toThrow(UnsupportedProofError);
    expect(() => planProof(key, { verificationMethod: `${key.did}#nope` })).toThrow(/not an assertion method/);
  });

  test('defaults: Ed25519Signature2020 on an Ed25519 key (the 2020 method first), DataIntegrityProof picks the cryptosuite by key', async () => {
    expect(planProof(key)).toMatchObject({ name: 'Ed25519Signature2020', verificationMethod: `${key.did}#key-multibase` });
    const p256 = await issuerKey('key', 'ES256');
    expect(planProof(p256, { proofType: 'DataIntegrityProof' }).name).toBe('DataIntegrityProof with ecdsa-rdfc-2019');
    expect(planProof(key, { proofType: 'DataIntegrityProof' }).name).toBe('DataIntegrityProof with eddsa-rdfc-2022');
  });
});

describe("through the DID service and the resolver: the wallet's own DIDs, their documents as served", () => {
  test.each([
    ['sov', 'ed25519', 'Ed25519Signature2020', undefined],
    ['sov', 'ed25519', 'Ed25519Signature2018', undefined],
    ['web', 'ed25519', 'DataIntegrityProof', 'eddsa-rdfc-2022'],
    ['web', 'p256', 'DataIntegrityProof', 'ecdsa-rdfc-2019'],
    ['key', 'ed25519', 'Ed25519Signature2020', undefined],
    ['key', 'p256', 'DataIntegrityProof', 'ecdsa-rdfc-2019'],
  ] as const)('did:%s (%s): %s %s', async (method, keyType, proofType, cryptosuite) => {
    const didStore = new MemoryStore();
    const km = new LocalKeyManager(didStore, new LocalSecretDeriver('ab'.repeat(32)));
    const taa = new TaaService(didStore, { text: 'Agreement', version: '1.0', aml: { click: 'clicked' }, amlVersion: '1.0' });
    const dids = new DidService({ didcomm: memoryPublicDidDidcomm(didStore), store: didStore, keyManager: km, taa, indyNamespace: 'test', limits: { maxDids: 10, maxCreationsPerMinute: 10 } });
    const record = await dids.create(scope, { method, keyType, baseUrl: 'https://issuer.example/prod' });
    await taa.accept(scope, { mechanism: 'click' });
    await dids.setPublic(scope, record.did);
    const key = signingKeyOf(record);
    const signed = await signCredential({ keyManager: km, scope, key, credential: credentialOf(key.did, cryptosuite ? 2 : 1), proof: { proofType, cryptosuite }, documentLoader: offlineDocumentLoader() });
    const resolver = new DidResolver(didStore);
    // The served document of a public DID also carries its DIDComm service and key agreement key; the
    // signing method is one of its assertion methods all the same.
    const resolved = (await resolver.resolve(key.did))!.document as unknown as DidDocument;
    const vm = (signed.proof as { verificationMethod: string }).verificationMethod;
    expect(resolved.assertionMethod).toContain(vm);
    expect(resolved.verificationMethod.find((m) => m.id === vm)).toEqual(key.document.verificationMethod.find((m) => m.id === vm));
    expect((await vc.verifyCredential({ credential: signed, suite: verifierSuites(), documentLoader: verifierLoader([resolved]) })).verified).toBe(true);
  });
});
