import { JsonTransformer, W3cCredentialsModule, W3cCredentialsModuleConfig, W3cJsonLdVerifiableCredential } from '@credo-ts/core';
import { didDocument } from '../../lib/dids/document';
import { multibaseKey } from '../../lib/dids/methods';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { offlineDocumentLoader } from '../../lib/jsonld/loader';
import { signCredential, type ProofType } from '../../lib/jsonld/signing';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { tenantScope } from '../../lib/store/keys';
import { createCredoAgent } from '../helpers/credo-holder';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { MemoryStore } from '../helpers/memory-store';

/**
 * Credo 0.6.3, the holder framework the DIDComm issuance will deliver to, verifies what the signing
 * core makes with its own JSON-LD stack and its own did:key resolver. Credo's loader bundles the
 * credentials and security contexts but fetches the Ed25519 2020 suite's from w3id.org; tests have no
 * network, so its loader is given the published contexts (from the npm packages) first and Credo's
 * own loader for everything else (DIDs included).
 */
fenceTestNetwork();
const credoDefaultLoader = new W3cCredentialsModuleConfig().documentLoader;
const scope = tenantScope('3');
const store = new MemoryStore();
const km = new LocalKeyManager(store, new LocalSecretDeriver('12'.repeat(32)));
let agent: Awaited<ReturnType<typeof createCredoAgent>>;

beforeAll(async () => {
  agent = await createCredoAgent({
    w3cCredentials: new W3cCredentialsModule({
      documentLoader: (agentContext) => {
        const credo = credoDefaultLoader(agentContext);
        return async (url: string) => {
          const context = BUNDLED_CONTEXTS.get(url);
          return context ? { contextUrl: null, documentUrl: url, document: context } : credo(url);
        };
      },
    }),
  });
});
afterAll(async () => {
  await agent?.shutdown();
});

async function didKeyCredential(proofType: ProofType) {
  const created = await km.create(scope, 'EdDSA');
  const did = `did:key:${multibaseKey(created.publicJwk)}`;
  const key = { did, document: didDocument(did, 'key', created.publicJwk), ref: created.ref, alg: 'EdDSA' as const };
  const credential = {
    '@context': [CONTEXT_URLS.credentialsV1, { ex: 'https://example.com/vocab#', memberName: 'ex:memberName' }],
    type: ['VerifiableCredential'],
    issuer: did,
    issuanceDate: '2026-11-26T00:00:00Z',
    credentialSubject: { id: 'did:example:ada', memberName: 'Ada Lovelace' },
  };
  return signCredential({ keyManager: km, scope, key, credential, proof: { proofType }, documentLoader: offlineDocumentLoader() });
}

const verifyWithCredo = (credential: Record<string, unknown>) => agent.w3cCredentials.verifyCredential({ credential: JsonTransformer.fromJSON(credential, W3cJsonLdVerifiableCredential) });

test('Ed25519Signature2018 on a did:key issuer: Credo verifies it with its own did:key resolver; a tampered copy fails', async () => {
  const signed = await didKeyCredential('Ed25519Signature2018');
  const result = await verifyWithCredo(signed);
  expect(result.error).toBeUndefined();
  expect(result.isValid).toBe(true);
  const tampered = structuredClone(signed) as { credentialSubject: Record<string, unknown> };
  tampered.credentialSubject.memberName = 'Mallory';
  expect((await verifyWithCredo(tampered)).isValid).toBe(false);
});

test('Ed25519Signature2020 on a did:key issuer: Credo refuses it (its did:key resolver derives an Ed25519VerificationKey2018, which its 2020 suite does not take)', async () => {
  // A fact about the holder, pinned so that the issuance that delivers to Credo chooses its suite knowingly (docs/jsonld.md).
  const result = await verifyWithCredo(await didKeyCredential('Ed25519Signature2020'));
  expect(result.isValid).toBe(false);
  expect(JSON.stringify(result.validations, (_k, v) => (v instanceof Error ? v.message : v))).toContain("MUST contain the context url");
});

