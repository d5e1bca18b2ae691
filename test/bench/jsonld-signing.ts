/**
 * Part of `npm run bench` (`BENCH_ONLY=jsonld-signing npm run bench`): JSON-LD credentials of about
 * 1.5 KB (with a revocation entry from lib/jsonld/status.ts) signed with each proof suite through the
 * signing core (lib/jsonld/signing.ts: checks, safe mode, the key-manager port with the local
 * adapter) next to the raw library (@digitalbazaar/vc's issue with a signer over node's crypto.sign on
 * the same key), and verified with @digitalbazaar/vc; one core, sequential, the three interleaved run
 * by run so that a loaded machine's swings fall on all of them alike. p50 and p99 per column.
 */
import { sign, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { cryptosuite as ecdsaRdfc2019 } from '@digitalbazaar/ecdsa-rdfc-2019-cryptosuite';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { didDocument } from '../../lib/dids/document';
import { didWeb } from '../../lib/dids/methods';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { offlineDocumentLoader } from '../../lib/jsonld/loader';
import { planProof, signCredential, type Cryptosuite, type ProofType, type SigningKey } from '../../lib/jsonld/signing';
import { withCredentialStatus } from '../../lib/jsonld/status';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import type { KeyAlg } from '../../lib/keys/port';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';
import { percentile, loadAverage } from './stats';

const RUNS = Number(process.env.BENCH_JSONLD_RUNS ?? '400');
const WARMUP = Number(process.env.BENCH_JSONLD_WARMUP ?? '100');

/** Each function once per run, interleaved; their times in ms. */
async function timed(fns: readonly (() => Promise<unknown>)[]): Promise<number[][]> {
  for (let i = 0; i < WARMUP; i++) for (const fn of fns) await fn(); // the first suite also warms jsonld itself
  const ms: number[][] = fns.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of fns.entries()) {
      const t0 = performance.now();
      await fn();
      ms[k]!.push(performance.now() - t0);
    }
  }
  return ms;
}

const cell = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 99).toFixed(1)}`;

/** A revocation entry as lib/jsonld/status.ts makes them (a list URL of the local runtime's shape). */
const STATUS_URL = 'http://127.0.0.1:3000/status-lists/b-jKU8dstNq0VbWmDm76oA/0b8f5a3e-6c1d-4f7e-9a2b-3c4d5e6f7a8b/0/w3c';
const STATUS = { id: `${STATUS_URL}#88213`, type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '88213', statusListCredential: STATUS_URL };

/** A membership credential of about 1.5 KB with its revocation entry (v1 for the Ed25519 suites, v2 for Data Integrity). */
function credentialOf(issuer: string, version: 1 | 2): Record<string, unknown> {
  return withCredentialStatus(membershipOf(issuer, version), STATUS);
}

function membershipOf(issuer: string, version: 1 | 2): Record<string, unknown> {
  const vocab = { ex: 'https://example.com/vocab#', Membership: 'ex:Membership', memberName: 'ex:memberName', memberSince: 'ex:memberSince', address: 'ex:address', street: 'ex:street', city: 'ex:city', postalCode: 'ex:postalCode', country: 'ex:country', level: 'ex:level', benefits: 'ex:benefits' };
  return {
    '@context': [version === 1 ? CONTEXT_URLS.credentialsV1 : CONTEXT_URLS.credentialsV2, vocab],
    type: ['VerifiableCredential', 'Membership'],
    issuer,
    ...(version === 1 ? { issuanceDate: '2026-11-26T00:00:00Z', expirationDate: '2027-11-26T00:00:00Z' } : { validFrom: '2026-11-26T00:00:00Z', validUntil: '2027-11-26T00:00:00Z' }),
    credentialSubject: {
      id: 'did:example:ebfeb1f712ebc6f1c276e12ec21',
      memberName: 'Ada Lovelace',
      memberSince: '1843-07-10',
      level: 'gold',
      address: { street: '12 St James’s Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'GB' },
      benefits: ['library', 'lectures', 'analytical engine workshop', 'guest passes'],
    },
  };
}

async function main() {
  const store = new MemoryStore();
  const secrets = new LocalSecretDeriver('ab'.repeat(32));
  const km = new LocalKeyManager(store, secrets);
  const scope = tenantScope('1');
  const load = loadAverage();
  console.log('\n### JSON-LD credentials: sign and verify per proof suite, one core\n');
  console.log(`Load average at start (1/5/15 min): ${load}. ${RUNS} runs after ${WARMUP} warm-up runs, the three columns interleaved; p50 / p99 in ms per credential.\n`);
  console.log('| suite | bytes (unsigned → signed) | first signature in the process | sign: signing core (port) | sign: raw library, local key | verify (@digitalbazaar/vc) | core − raw, p50 |');
  console.log('|---|---|---|---|---|---|---|');
  const rows: [string, KeyAlg, ProofType, Cryptosuite | undefined, 1 | 2][] = [
    ['Ed25519Signature2020', 'EdDSA', 'Ed25519Signature2020', undefined, 1],
    ['Ed25519Signature2018', 'EdDSA', 'Ed25519Signature2018', undefined, 1],
    ['DataIntegrityProof eddsa-rdfc-2022', 'EdDSA', 'DataIntegrityProof', 'eddsa-rdfc-2022', 2],
    ['DataIntegrityProof ecdsa-rdfc-2019', 'ES256', 'DataIntegrityProof', 'ecdsa-rdfc-2019', 2],
  ];
  for (const [name, alg, proofType, cryptosuite, version] of rows) {
    const created = await km.create(scope, alg);
    const did = didWeb('https://issuer.example', `bench${alg}`);
    const key: SigningKey = { did, document: didDocument(did, 'web', created.publicJwk), ref: created.ref, alg };
    const credential = credentialOf(did, version);
    const documentLoader = offlineDocumentLoader();
    const port = () => signCredential({ keyManager: km, scope, key, credential, proof: { proofType, cryptosuite }, documentLoader });
    const t0 = performance.now();
    const signed = await port();
    const first = performance.now() - t0;

    // The raw library: the same suite and verification method, a signer over node's crypto on the same private key.
    await km.sign(scope, created.ref, alg, new Uint8Array(1));
    const priv = (km as unknown as { cache: Map<string, KeyObject> }).cache.get(`${scope.walletId}|${created.ref}`);
    if (!priv) throw new Error('the local key manager keeps opened keys in `cache` (as test/bench/signing.ts reads them)');
    const plan = planProof(key, { proofType, cryptosuite });
    const signer = { id: plan.verificationMethod, algorithm: plan.suite.signerAlgorithm, sign: async ({ data }: { data: Uint8Array }) => new Uint8Array(alg === 'EdDSA' ? sign(null, data, priv) : sign('sha256', data, { key: priv, dsaEncoding: 'ieee-p1363' })) };
    const raw = () => vc.issue({ credential: structuredClone(credential), suite: plan.suite.build(signer), documentLoader });

    const verifierLoader = async (url: string) => {
      const context = BUNDLED_CONTEXTS.get(url);
      if (context) return { contextUrl: null, documentUrl: url, document: context };
      if (url === did) return { contextUrl: null, documentUrl: url, document: key.document };
      const vm = key.document.verificationMethod.find((m) => m.id === url);
      if (!vm) throw new Error(`cannot load ${url}`);
      return { contextUrl: null, documentUrl: url, document: { '@context': key.document['@context'], ...vm } };
    };
    const suites = [new Ed25519Signature2020(), new Ed25519Signature2018(), new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 }), new DataIntegrityProof({ cryptosuite: ecdsaRdfc2019 })];
    // The signature only: @digitalbazaar/vc wants a status checker for a credential with credentialStatus.
    const checkStatus = async () => ({ verified: true });
    const verify = async () => {
      const r = await vc.verifyCredential({ credential: signed, suite: suites, documentLoader: verifierLoader, checkStatus });
      if (!r.verified) throw new Error(`${name}: did not verify`);
    };
    const [p, r, v] = await timed([port, raw, verify]);
    console.log(`| ${name} | ${JSON.stringify(credential).length} → ${JSON.stringify(signed).length} | ${first.toFixed(1)} | ${cell(p!)} | ${cell(r!)} | ${cell(v!)} | ${(percentile(p!, 50) - percentile(r!, 50)).toFixed(2)} |`);
  }
  console.log(`\nLoad average at the end: ${loadAverage()}.`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
