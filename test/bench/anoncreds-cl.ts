/**
 * Part of `npm run bench` (`BENCH_ONLY=anoncreds npm run bench`): CPU cost of the AnonCreds issuer
 * primitives (lib/anoncreds/), one core, sequential (about 3 minutes; BENCH_ANONCREDS_RUNS, 20 by
 * default, 5 for a quick look).
 * Uses the anoncreds-rs credential definition and request in test/helpers/anoncreds-vectors/ for
 * signing, so no key generation is needed for that part.
 */
import { performance } from 'node:perf_hooks';
import { generatePrimeInRange, generateSafePrime, modPow } from '../../lib/anoncreds/bignum';
import { G1, G2 } from '../../lib/anoncreds/bn254';
import { generateTailsFile } from '../../lib/anoncreds/tails';
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

const RUNS = Number(process.env.BENCH_ANONCREDS_RUNS ?? '20');

async function measure(name: string, fn: () => unknown | Promise<unknown>, runs = RUNS): Promise<void> {
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

  console.log(`\n### AnonCreds issuer primitives (lib/anoncreds/), one core, ${process.version}\n`);
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

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
