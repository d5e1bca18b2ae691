/**
 * `revocation_def_id` for JSON-LD credentials end to end against the local runtime: a W3C revocation
 * definition made over HTTP, an entry allocated by lib/jsonld/status.ts with the adapters the functions
 * build (in the wallet's session, the access guard checking every call), a credential signed with it
 * by lib/jsonld/signing.ts through the runtime's key manager, revoked through the status-list API, and
 * the published W3C list read as a verifier reads it: fetched from its public URL, its JWS checked
 * with the issuer's key from the resolver, its bits read with the decoder written from the W3C text.
 * @digitalbazaar/vc verifies the credential's signature, before and after the revocation, with the DID
 * document our resolver serves; with a status checker that reads the VC-JWT list it refuses it after.
 */
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { buildDeps } from '../../functions/shared/deps';
import { buildKeyManager } from '../../functions/shared/issuer-keys';
import { walletSessions } from '../../functions/shared/sessions';
import { readDid } from '../../lib/dids/records';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { offlineDocumentLoader, type JsonObject } from '../../lib/jsonld/loader';
import { signCredential, signingKeyOf, type ProofType } from '../../lib/jsonld/signing';
import { JsonLdStatusSource, withCredentialStatus } from '../../lib/jsonld/status';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { decodeBitstringStatusList, fetchPublishedStatusList, publishedStatus } from '../helpers/w3c-bitstring-status-list';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.rt.stop();
});

/** What the issuing function builds (its function name here is the status-list admin's: the grants it needs are the same). */
function wiring() {
  const deps = buildDeps('status-lists', { sessions: walletSessions });
  return { deps, keyManager: buildKeyManager(deps), source: new JsonLdStatusSource({ store: deps.store, events: deps.events, refs: new PublicRefs(deps.store) }) };
}

/** The verifier's loader: bundled contexts from memory, DID documents from our resolver (loopback). */
async function verifierLoader(url: string) {
  const context = BUNDLED_CONTEXTS.get(url);
  if (context) return { contextUrl: null, documentUrl: url, document: context };
  const [did] = url.split('#');
  if (!did!.startsWith('did:')) throw new Error(`the verifier loads no ${url}`);
  const res = await fetch(`${api.rt.url}/1.0/identifiers/${encodeURIComponent(did!)}`, { headers: { accept: 'application/did+json' } });
  const body = (await res.json()) as { didDocument?: JsonObject } & JsonObject;
  const doc = (body.didDocument ?? body) as { '@context': unknown; verificationMethod: { id: string }[] };
  if (url === did) return { contextUrl: null, documentUrl: url, document: doc };
  const vm = doc.verificationMethod.find((m) => m.id === url);
  if (!vm) throw new Error(`no ${url} in ${did}`);
  return { contextUrl: null, documentUrl: url, document: { '@context': doc['@context'], ...vm } };
}

const suites = () => [new Ed25519Signature2020(), new Ed25519Signature2018(), new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 })];

const statusAt = (url: string, index: number) => publishedStatus(url, index, api.rt.url);

/**
 * A status checker for @digitalbazaar/vc that reads our VC-JWT lists (its own Bitstring checker reads
 * only lists secured with linked-data proofs): the Bitstring Status List "Validate Algorithm".
 */
async function checkStatus({ credential }: { credential: JsonObject }) {
  const entry = credential.credentialStatus as { statusPurpose: string; statusListIndex: string; statusListCredential: string };
  const list = await fetchPublishedStatusList(entry.statusListCredential, api.rt.url);
  if (list.credentialSubject.statusPurpose !== entry.statusPurpose) return { verified: false, error: new Error('status purpose mismatch') };
  const status = decodeBitstringStatusList(list.credentialSubject.encodedList).status(Number(entry.statusListIndex));
  return { verified: status === 0, status };
}

async function until(read: () => Promise<number>, want: number, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while ((await read()) !== want) {
    if (Date.now() - start > timeoutMs) throw new Error(`status did not become ${want} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.each<[string, ProofType, 1 | 2]>([
  ['Ed25519Signature2020, credentials v1 + status context', 'Ed25519Signature2020', 1],
  ['DataIntegrityProof eddsa-rdfc-2022, credentials v2', 'DataIntegrityProof', 2],
])('a JSON-LD credential with its entry (%s): revoked through the status-list API, the published W3C list shows it', async (_name, proofType, version) => {
  const w = await walletWithPublicDid(api, { method: 'key' });
  const def = await ok(api.call('POST', '/api/v1/status-list/defs', { key: w.key, body: { list_type: 'w3c' } }), 'definition');
  expect(def).toMatchObject({ list_type: 'w3c', status_purpose: 'revocation', issuer_did: w.did });
  const { deps, keyManager, source } = wiring();
  const scope = tenantScope(String(w.walletId));
  const exchangeId = `ldp-${version}-${Date.now()}`;

  const { signed, status } = await inSession(scope, async () => {
    const status = await source.credentialStatusFor(scope, def.id, exchangeId);
    const key = signingKeyOf(await readDid(deps.store, scope, w.did));
    const credential: JsonObject = {
      '@context': [version === 1 ? CONTEXT_URLS.credentialsV1 : CONTEXT_URLS.credentialsV2, { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName' }],
      type: ['VerifiableCredential', 'Membership'],
      issuer: w.did,
      credentialSubject: { id: 'did:example:ada', memberName: 'Ada Lovelace' },
    };
    const signed = await signCredential({ keyManager, scope, key, credential: withCredentialStatus(credential, status.credentialStatus), proof: { proofType }, documentLoader: offlineDocumentLoader() });
    // The issuing transaction: here the entry's ops alone (the exchange record is the issuance's).
    await deps.store.write(status.ops);
    return { signed, status };
  });
  const entryStatus = signed.credentialStatus as { statusListCredential: string; statusListIndex: string };
  const index = Number(entryStatus.statusListIndex);
  expect(entryStatus.statusListCredential).toBe(`${api.rt.url}/status-lists/${w.publicRef}/${def.id}/0/w3c`);
  expect(status.listIssuer).toBe(w.did);

  // The status-list API knows the entry by the exchange id.
  expect(await ok(api.call('GET', `/api/v1/status-list/entries/${exchangeId}`, { key: w.key }), 'entry')).toMatchObject({ definition_id: def.id, list: 0, index, status: '0', credential_exchange_id: exchangeId });
  expect(await statusAt(entryStatus.statusListCredential, index)).toBe(0);
  expect((await vc.verifyCredential({ credential: signed, suite: suites(), documentLoader: verifierLoader, checkStatus })).verified).toBe(true);

  expect(await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, { key: w.key }), 'revoke')).toMatchObject({ status: '1', index });
  await until(() => statusAt(entryStatus.statusListCredential, index), 1);
  expect(await inSession(scope, () => source.revoked(scope, def.id, exchangeId))).toBe(true);

  // The signature still verifies (revocation changes the list, not the credential); the status check now fails.
  const signatureOnly = await vc.verifyCredential({ credential: signed, suite: suites(), documentLoader: verifierLoader, checkStatus: async () => ({ verified: true }) });
  expect(signatureOnly.error).toBeUndefined();
  expect(signatureOnly.verified).toBe(true);
  const withStatus = await vc.verifyCredential({ credential: signed, suite: suites(), documentLoader: verifierLoader, checkStatus });
  expect(withStatus.verified).toBe(false);
  expect(withStatus.statusResult).toMatchObject({ verified: false, status: 1 });
});

test("over the real store and access guard: another wallet's definition is a 404 like an unknown one, an IETF definition a 400; nothing is counted", async () => {
  const a = await walletWithPublicDid(api, { method: 'key' });
  const b = await walletWithPublicDid(api, { method: 'key' });
  const defB = await ok(api.call('POST', '/api/v1/status-list/defs', { key: b.key, body: { list_type: 'w3c' } }), 'definition of B');
  const ietfA = await ok(api.call('POST', '/api/v1/status-list/defs', { key: a.key, body: { list_type: 'ietf' } }), 'ietf definition of A');
  const { source } = wiring();
  const scopeA = tenantScope(String(a.walletId));
  const refusal = (id: string) => inSession(scopeA, () => source.credentialStatusFor(scopeA, id, 'ldp-x')).then(() => null, (e: { status: number; code: string }) => [e.status, e.code]);
  expect(await refusal(defB.id)).toEqual([404, 'status_list_definition_not_found']);
  expect(await refusal('123e4567-e89b-42d3-a456-426614174000')).toEqual([404, 'status_list_definition_not_found']);
  expect(await refusal(ietfA.id)).toEqual([400, 'list_type_mismatch']);
  // B's definition handed out nothing.
  const detail = await ok(api.call('GET', `/api/v1/status-list/defs/${defB.id}`, { key: b.key }), 'definition of B');
  expect(detail[0].entries_assigned).toBe(0);
  expectError(await api.call('GET', '/api/v1/status-list/entries/ldp-x', { key: a.key }), 404, 'exchange_not_found');
});
