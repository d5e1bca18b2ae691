/**
 * Part of `npm run bench` (`BENCH_ONLY=anoncreds-cl npm run bench`): CPU cost of the AnonCreds issuer
 * primitives (lib/anoncreds/), one core, sequential (about 10 minutes, most of it the revocation
 * registries; BENCH_ANONCREDS_RUNS, 20 by default, 5 for a quick look; BENCH_ANONCREDS_ONLY, a
 * substring of the rows to run).
 * Uses the anoncreds-rs credential definition and request in test/helpers/anoncreds-vectors/ for
 * signing, so no key generation is needed for that part.
 */
import { performance } from 'node:perf_hooks';
import { generatePrimeInRange, generateSafePrime, modPow } from '../../lib/anoncreds/bignum';
import { G1, G2, g1FromString } from '../../lib/anoncreds/bn254';
import { generateTailsFile } from '../../lib/anoncreds/tails';
import { pairing } from '../../lib/anoncreds/pairing';
import { createCredential } from '../../lib/anoncreds/objects';
import {
  createRevocationRegistryDefinition,
  createRevocationStatusList,
  newRevocationKeys,
  parseRevocationPrivateKey,
  parseRevocationPublicKey,
  parseRevocationRegistryPrivate,
  signNonRevocation,
  statusListToJson,
  updateRevocationStatusList,
} from '../../lib/anoncreds/revocation';
import {
  LARGE_PRIME,
  newKeyCorrectnessProof,
  newPrimaryKeys,
  signCredential,
  systemRandomness,
  type PrimaryPrivateKey,
  type PrimaryPublicKey,
} from '../../lib/anoncreds/cl';
import { loadVector } from '../helpers/anoncreds-fixtures';
import { loadAverage } from './stats';

const RUNS = Number(process.env.BENCH_ANONCREDS_RUNS ?? '20');
/** `BENCH_ANONCREDS_ONLY=credential`: only the rows whose name contains it. */
const ONLY = process.env.BENCH_ANONCREDS_ONLY;

async function measure(name: string, fn: () => unknown | Promise<unknown>, runs = RUNS): Promise<void> {
  if (ONLY && !name.includes(ONLY)) return;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!;
  console.log(`| ${name} | ${runs} | ${q(0.5).toFixed(1)} | ${q(0.99).toFixed(1)} | ${times[0]!.toFixed(1)} |`);
}

const big = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, BigInt(v)]));

async function main() {
  const cd = loadVector<{
    credentialDefinition: { value: { primary: { n: string; s: string; rctxt: string; z: string; r: Record<string, string> } } };
    credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } };
  }>('anoncreds-credential-definition.json');
  const req = loadVector<{
    credentialRequest: {
      entropy: string;
      nonce: string;
      blinded_ms: { u: string; hidden_attributes: string[] };
      blinded_ms_correctness_proof: { c: string; v_dash_cap: string; m_caps: Record<string, string> };
    };
  }>('anoncreds-credential-request.json');
  const offer = loadVector<{ nonce: string }>('anoncreds-credential-offer.json');
  const cred = loadVector<{ values: Record<string, { encoded: string }> }>('anoncreds-legacy-credential.json');
  const p = cd.credentialDefinition.value.primary;
  const publicKey: PrimaryPublicKey = { n: BigInt(p.n), s: BigInt(p.s), rctxt: BigInt(p.rctxt), z: BigInt(p.z), r: big(p.r) };
  const privateKey = big(cd.credentialDefinitionPrivate.value.p_key) as unknown as PrimaryPrivateKey;
  const input = {
    proverId: req.credentialRequest.entropy,
    blinded: { u: BigInt(req.credentialRequest.blinded_ms.u), hidden_attributes: req.credentialRequest.blinded_ms.hidden_attributes, committed_attributes: {} },
    blindedProof: {
      c: BigInt(req.credentialRequest.blinded_ms_correctness_proof.c),
      v_dash_cap: BigInt(req.credentialRequest.blinded_ms_correctness_proof.v_dash_cap),
      m_caps: big(req.credentialRequest.blinded_ms_correctness_proof.m_caps),
      r_caps: {},
    },
    credentialNonce: BigInt(offer.nonce),
    issuanceNonce: BigInt(req.credentialRequest.nonce),
    values: Object.fromEntries(Object.entries(cred.values).map(([k, v]) => [k, BigInt(v.encoded)])),
    publicKey,
    privateKey,
  };

  console.log(`\n### AnonCreds issuer primitives (lib/anoncreds/), one core, ${process.version}`);
  console.log(`load average at start: ${loadAverage()}\n`);
  console.log('| operation | runs | p50 ms | p99 ms | min ms |');
  console.log('|---|---|---|---|---|');
  const k = 0x22eb5716fb01f2122de924466542b923d8c96f16c9b5fe2c00b7d7dc1499ea50n;
  await measure('BN254 G1 scalar multiplication', () => G1.mul(G1.generator, k));
  await measure('BN254 G2 scalar multiplication', () => G2.mul(G2.generator, k));
  await measure('modPow, 2050-bit modulus, 2724-bit exponent', () => modPow(publicKey.s, 2n ** 2723n + 12345n, publicKey.n));
  await measure('prime e (597 bits)', () => generatePrimeInRange(596, 119));
  await measure('credential: blinded-secrets proof check + primary signature + correctness proof (5 attributes)', () =>
    signCredential(input),
  );
  const gDash = G2.mul(G2.generator, k);
  await measure('revocation tails file, L = 100 (201 tails)', () => generateTailsFile(gDash, k + 1n, 100), Math.min(RUNS, 5));
  await measure('revocation tails file, L = 1000 (2001 tails)', () => generateTailsFile(gDash, k + 1n, 1000), 1);
  await revocation(req as unknown as RevocationRequestVector, publicKey, privateKey);
  await measure(`safe prime, ${LARGE_PRIME + 1} bits`, () => generateSafePrime(LARGE_PRIME));
  const safe = [2n * privateKey.p + 1n, 2n * privateKey.q + 1n];
  await measure('primary key pair without the safe primes (6 attributes) + key correctness proof', async () => {
    let i = 0;
    const rand = { ...systemRandomness, safePrime: async () => safe[i++ % 2]! };
    const keys = await newPrimaryKeys(['id', 'name', 'age', 'sex', 'height'], ['master_secret'], rand);
    newKeyCorrectnessProof(keys.publicKey, keys.privateKey, keys.metadata);
  });
  await measure(
    'primary key pair with two fresh safe primes (6 attributes) + key correctness proof',
    async () => {
      const keys = await newPrimaryKeys(['id', 'name', 'age', 'sex', 'height'], ['master_secret']);
      newKeyCorrectnessProof(keys.publicKey, keys.privateKey, keys.metadata);
    },
    Math.min(RUNS, 10),
  );
}

interface RevocationRequestVector {
  credentialRequest: { entropy: string; blinded_ms: { ur: string } };
}

/** Revocation (lib/anoncreds/revocation.ts) with the anoncreds-rs revocation keys and request. */
async function revocation(req: RevocationRequestVector, publicKey: PrimaryPublicKey, privateKey: PrimaryPrivateKey) {
  const cd = loadVector<{
    credentialDefinition: { value: { revocation: unknown } };
    credentialDefinitionPrivate: { value: { r_key: unknown } };
  }>('anoncreds-credential-definition.json');
  const rr = loadVector<{ revocationRegistryDefinitionPrivate: unknown }>('anoncreds-revocation-registry-definition.json');
  const pub = parseRevocationPublicKey(cd.credentialDefinition.value.revocation);
  const priv = parseRevocationPrivateKey(cd.credentialDefinitionPrivate.value.r_key);
  const gamma = parseRevocationRegistryPrivate(rr.revocationRegistryDefinitionPrivate);
  const reg = (maxCredNum: number) => () =>
    createRevocationRegistryDefinition({
      issuerId: 'did:web:example.org',
      credDefId: 'did:web:example.org/cd',
      tag: 'default',
      publicKey: pub,
      maxCredNum,
      tailsLocation: (h) => `https://example.org/tails/${h}`,
    });
  const list = (maxCredNum: number) => () =>
    createRevocationStatusList({ revRegDefId: 'rr', issuerId: 'i', gDash: pub.g_dash, gamma, maxCredNum, timestamp: 1 });
  await measure('pairing e(P, Q) (optimal ate, BN254)', () => pairing(pub.g, pub.g_dash));
  await measure('revocation keys of a credential definition (value.revocation, r_key)', () => newRevocationKeys());
  await measure('revocation registry definition, L = 1,000 (z + 2,001 tails)', reg(1000), Math.min(RUNS, 3));
  await measure('revocation registry definition, L = 10,000 (z + 20,001 tails)', reg(10000), 1);
  await measure('initial status list, L = 1,000 (accumulator)', list(1000));
  await measure('initial status list, L = 10,000 (accumulator)', list(10000));
  const list1k = list(1000)();
  const list10k = list(10000)();
  const ur = g1FromString(req.credentialRequest.blinded_ms.ur);
  await measure('non-revocation signature of one credential (σ, σ_i, u_i, g_i, witness)', () =>
    signNonRevocation({
      revIdx: 500,
      credentialContext: 123456789n,
      ur,
      publicKey: pub,
      privateKey: priv,
      gamma,
      statusList: list1k,
    }),
  );
  const offer = loadVector<Parameters<typeof createCredential>[0]['offer']>('anoncreds-credential-offer.json');
  const cred = loadVector<{ values: Record<string, { raw: string }> }>('anoncreds-legacy-credential.json');
  const values = Object.fromEntries(Object.entries(cred.values).map(([k, v]) => [k, v.raw]));
  const request = loadVector<{ credentialRequest: unknown }>('anoncreds-credential-request.json').credentialRequest;
  await measure('revocable credential: createCredential (primary + non-revocation, 5 attributes)', () =>
    createCredential({
      publicKey,
      privateKey,
      offer,
      request,
      values,
      revocation: { revRegId: 'rr', revIdx: 9, publicKey: pub, privateKey: priv, gamma, statusList: list1k },
    }),
  );
  let n = 0;
  for (const [L, l] of [
    [1000, list1k],
    [10000, list10k],
  ] as const) {
    await measure(`revoke one credential, L = ${L.toLocaleString('en')}: accumulator update + status list JSON`, () => {
      const next = updateRevocationStatusList(l, { gDash: pub.g_dash, gamma, revoked: [1 + (n++ % (L - 1))], timestamp: n });
      return JSON.stringify(statusListToJson(next.list));
    });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
