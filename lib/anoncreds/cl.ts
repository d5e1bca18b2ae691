// CL (Camenisch–Lysyanskaya) primary credential signatures as anoncreds-clsignatures computes them
// (src/issuer.rs: `_new_credential_primary_keys`, `_new_credential_key_correctness_proof`,
// `_check_blinded_credential_secrets_correctness_proof`, `_gen_credential_context`,
// `_sign_primary_credential`, `_new_signature_correctness_proof`). Hand-written: no npm library
// implements CL signatures. Fiat–Shamir hashes take the same byte encodings (OpenSSL BN_bn2bin) in
// the same order, so the deterministic clsignatures vectors reproduce exactly.
//
// All secret-dependent arithmetic runs on BigInt, which is not constant-time (docs/anoncreds.md).

import {
  generatePrimeInRange,
  generateSafePrime,
  genX,
  hashListToBignum,
  hashToBignum,
  mod,
  modInverse,
  modPow,
  randomBelow,
  randomBits,
  randomQuadraticResidue,
  toBytes,
} from './bignum';

export class ClError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClError';
  }
}

// clsignatures src/constants.rs
export const LARGE_PRIME = 1024;
export const LARGE_E_START = 596;
export const LARGE_E_END_RANGE = 119;
export const LARGE_VPRIME_PRIME = 2724;

export interface PrimaryPublicKey {
  n: bigint;
  s: bigint;
  rctxt: bigint;
  z: bigint;
  /** One base per attribute (schema attributes and the hidden `master_secret`). */
  r: Record<string, bigint>;
}

/** p and q are the Sophie Germain primes p', q' (n = (2p'+1)(2q'+1)), as clsignatures stores them. */
export interface PrimaryPrivateKey {
  p: bigint;
  q: bigint;
}

export interface PrimaryPublicKeyMetadata {
  xz: bigint;
  xr: Record<string, bigint>;
}

export interface KeyCorrectnessProof {
  c: bigint;
  xz_cap: bigint;
  /** Ordered: the order is part of the hash. */
  xr_cap: [string, bigint][];
}

export interface BlindedCredentialSecrets {
  u: bigint;
  hidden_attributes: string[];
  committed_attributes: Record<string, bigint>;
}

export interface BlindedCredentialSecretsCorrectnessProof {
  c: bigint;
  v_dash_cap: bigint;
  m_caps: Record<string, bigint>;
  r_caps: Record<string, bigint>;
}

export interface PrimaryCredentialSignature {
  m_2: bigint;
  a: bigint;
  e: bigint;
  v: bigint;
}

export interface SignatureCorrectnessProof {
  se: bigint;
  c: bigint;
}

/** The random choices of key generation and signing; injectable so the clsignatures mocks reproduce. */
export interface ClRandomness {
  /** `generate_safe_prime(LARGE_PRIME)`: a (LARGE_PRIME + 1)-bit safe prime. */
  safePrime(): Promise<bigint>;
  /** `random_qr(n)` */
  randomQr(n: bigint): bigint;
  /** `gen_x(p', q')`: uniform in [2, p'q' − 1). */
  genX(p: bigint, q: bigint): bigint;
  /** `generate_v_prime_prime()`: 2724 random bits with the top bit set. */
  vPrimePrime(): bigint;
  /** `generate_prime_in_range(596, 119)`: the signature's prime e. */
  primeE(): bigint;
  /** `bn_rand_range(n)`: uniform in [0, n). */
  randBelow(n: bigint): bigint;
}

export const systemRandomness: ClRandomness = {
  safePrime: () => generateSafePrime(LARGE_PRIME),
  randomQr: randomQuadraticResidue,
  genX,
  vPrimePrime: () => randomBits(LARGE_VPRIME_PRIME) | (1n << BigInt(LARGE_VPRIME_PRIME - 1)),
  primeE: () => generatePrimeInRange(LARGE_E_START, LARGE_E_END_RANGE),
  randBelow: randomBelow,
};

const sortedKeys = (o: Record<string, unknown>) => Object.keys(o).sort();

/**
 * `_new_credential_primary_keys`: a credential definition's primary key pair. `attributes` are the
 * schema's attribute names; `nonSchemaAttributes` the hidden ones (AnonCreds: `master_secret`).
 */
export async function newPrimaryKeys(
  attributes: string[],
  nonSchemaAttributes: string[],
  rand: ClRandomness = systemRandomness,
): Promise<{ publicKey: PrimaryPublicKey; privateKey: PrimaryPrivateKey; metadata: PrimaryPublicKeyMetadata }> {
  if (attributes.length === 0) throw new ClError('list of attributes is empty');
  const all = [...nonSchemaAttributes, ...attributes];
  if (new Set(all).size !== all.length) throw new ClError('attribute names must be unique');
  if (all.some((a) => typeof a !== 'string' || a.length === 0 || a === '__proto__')) {
    throw new ClError('invalid attribute name');
  }
  const pSafe = await rand.safePrime();
  let qSafe = await rand.safePrime();
  // Equal primes would make n a square; astronomically unlikely, but cheap to exclude.
  while (qSafe === pSafe) qSafe = await rand.safePrime();
  const p = pSafe >> 1n;
  const q = qSafe >> 1n;
  const n = pSafe * qSafe;
  const sk = { p, q };
  let s: bigint;
  // A generator of the whole group of quadratic residues (order p'q').
  for (;;) {
    s = rand.randomQr(n);
    if (s !== 1n && issuerModPow(s, p, sk) !== 1n && issuerModPow(s, q, sk) !== 1n) break;
  }
  const xz = rand.genX(p, q);
  const xr: Record<string, bigint> = {};
  for (const name of all) xr[name] = rand.genX(p, q);
  const r: Record<string, bigint> = {};
  for (const name of all) r[name] = issuerModPow(s, xr[name]!, sk);
  const z = issuerModPow(s, xz, sk);
  const rctxt = issuerModPow(s, rand.genX(p, q), sk);
  return { publicKey: { n, s, rctxt, z, r }, privateKey: sk, metadata: { xz, xr } };
}

/**
 * `_new_credential_key_correctness_proof`: proves Z and every R_i are powers of S. clsignatures
 * orders the attributes by its HashMap; we use sorted names (any order verifies: the proof lists it).
 */
export function newKeyCorrectnessProof(
  pk: PrimaryPublicKey,
  sk: PrimaryPrivateKey,
  meta: PrimaryPublicKeyMetadata,
  rand: ClRandomness = systemRandomness,
  order: string[] = sortedKeys(pk.r),
): KeyCorrectnessProof {
  const xzTilda = rand.genX(sk.p, sk.q);
  const xrTilda: Record<string, bigint> = {};
  for (const k of order) xrTilda[k] = rand.genX(sk.p, sk.q);
  const zTilda = issuerModPow(pk.s, xzTilda, sk);
  const parts: Uint8Array[] = [toBytes(pk.z)];
  for (const k of order) parts.push(toBytes(requireKey(pk.r, k)));
  parts.push(toBytes(zTilda));
  for (const k of order) parts.push(toBytes(issuerModPow(pk.s, xrTilda[k]!, sk)));
  const c = hashListToBignum([Buffer.concat(parts)]);
  return {
    c,
    xz_cap: c * meta.xz + xzTilda,
    xr_cap: order.map((k) => [k, c * requireKey(meta.xr, k) + xrTilda[k]!]),
  };
}

function requireKey(o: Record<string, bigint>, k: string): bigint {
  const v = Object.hasOwn(o, k) ? o[k] : undefined;
  if (v === undefined) throw new ClError(`value by key '${k}' not found`);
  return v;
}

/**
 * base^exp mod n for the issuer, who knows n = P·Q (P = 2p'+1, Q = 2q'+1): two half-size
 * exponentiations with reduced exponents, recombined (CRT) — about four times faster than modPow
 * on n, and the same value. A negative exponent uses the inverse, as clsignatures' `mod_exp` does
 * (attribute values such as "-5" encode to negative integers).
 */
export function issuerModPow(base: bigint, exp: bigint, sk: PrimaryPrivateKey): bigint {
  const P = 2n * sk.p + 1n;
  const Q = 2n * sk.q + 1n;
  if (exp < 0n) return issuerModPow(modInverse(base, P * Q), -exp, sk);
  const half = (m: bigint) => {
    const b = mod(base, m);
    if (b === 0n) return exp === 0n ? 1n : 0n;
    return modPow(b, exp % (m - 1n), m);
  };
  const rp = half(P);
  const rq = half(Q);
  return rq + Q * mod((rp - rq) * modInverse(Q, P), P);
}


/**
 * `_check_blinded_credential_secrets_correctness_proof`: the holder's proof that it knows the
 * hidden values in U. `nonce` is the one of the credential offer. Throws ClError when invalid.
 * The issuer passes its private key to compute with CRT; the result does not depend on it.
 */
export function checkBlindedSecretsCorrectnessProof(
  blinded: BlindedCredentialSecrets,
  proof: BlindedCredentialSecretsCorrectnessProof,
  nonce: bigint,
  pk: PrimaryPublicKey,
  sk?: PrimaryPrivateKey,
): void {
  const { n } = pk;
  if (sk && n !== (2n * sk.p + 1n) * (2n * sk.q + 1n)) throw new ClError('private key does not match the public key');
  const pow = (b: bigint, e: bigint) => (sk ? issuerModPow(b, e, sk) : modPow(b, e, n));
  let uCap: bigint;
  try {
    uCap = (pow(modInverse(blinded.u, n), proof.c) * pow(pk.s, proof.v_dash_cap)) % n;
    for (const attr of blinded.hidden_attributes) {
      uCap = (uCap * pow(requireKey(pk.r, attr), requireKey(proof.m_caps, attr))) % n;
    }
    const parts: Uint8Array[] = [];
    for (const key of sortedKeys(blinded.committed_attributes)) {
      const value = blinded.committed_attributes[key]!;
      // Pedersen commitment Z^m_cap · S^r_cap (clsignatures `get_pedersen_commitment`).
      const commitment = (pow(pk.z, requireKey(proof.m_caps, key)) * pow(pk.s, requireKey(proof.r_caps, key))) % n;
      const commCap = (pow(modInverse(value, n), proof.c) * commitment) % n;
      parts.push(toBytes(commCap), toBytes(value));
    }
    parts.push(toBytes(blinded.u), toBytes(uCap), toBytes(nonce));
    if (hashListToBignum([Buffer.concat(parts)]) === proof.c) return;
  } catch (err) {
    if (err instanceof ClError) throw err;
    throw new ClError('invalid blinded credential secrets');
  }
  throw new ClError('invalid blinded credential secrets correctness proof');
}

/**
 * `_gen_credential_context` (m₂): SHA-256 over the little-endian-hashed prover id and revocation
 * index (−1 without revocation).
 */
export function credentialContext(proverId: string, revIdx?: number): bigint {
  const idx = revIdx === undefined ? -1 : revIdx;
  return hashListToBignum([
    Buffer.concat([toBytes(hashToBignum(proverId, 'little')), toBytes(hashToBignum(String(idx), 'little'))]),
  ]);
}

/** Checks the value and hidden attribute sets against the key, as `_new_primary_credential` does. */
function checkAttributes(pk: PrimaryPublicKey, values: Record<string, bigint>, blinded: BlindedCredentialSecrets): void {
  for (const attr of Object.keys(pk.r)) {
    if (!Object.hasOwn(values, attr) && !blinded.hidden_attributes.includes(attr)) {
      throw new ClError(`credential attribute '${attr}' value not provided`);
    }
  }
  for (const attr of blinded.hidden_attributes) {
    if (Object.hasOwn(values, attr)) {
      throw new ClError(`blinded credential secret '${attr}' also contained in credential attributes`);
    }
  }
  for (const attr of Object.keys(values)) requireKey(pk.r, attr);
}

/** `_sign_primary_credential`: A = (Z / (S^v · U · Rctxt^m₂ · ∏ R_i^m_i))^(e⁻¹ mod p'q') mod n. */
export function signPrimaryCredential(
  pk: PrimaryPublicKey,
  sk: PrimaryPrivateKey,
  m2: bigint,
  values: Record<string, bigint>,
  v: bigint,
  blinded: BlindedCredentialSecrets,
  e: bigint,
): { a: bigint; q: bigint } {
  const { n } = pk;
  if (n !== (2n * sk.p + 1n) * (2n * sk.q + 1n)) throw new ClError('private key does not match the public key');
  let rx = issuerModPow(pk.s, v, sk);
  if (blinded.u !== 0n) rx = (rx * blinded.u) % n;
  rx = (rx * issuerModPow(pk.rctxt, m2, sk)) % n;
  for (const key of sortedKeys(values)) {
    rx = (issuerModPow(requireKey(pk.r, key), values[key]!, sk) * rx) % n;
  }
  let rxInverse: bigint;
  try {
    rxInverse = modInverse(rx, n);
  } catch {
    throw new ClError('blinded secrets are not invertible modulo n');
  }
  const q = (pk.z * rxInverse) % n;
  const eInverse = modInverse(e, sk.p * sk.q);
  const a = issuerModPow(q, eInverse, sk);
  // Release A only if A^e = Q: guards the CRT result against faults, and refuses a Q outside the
  // quadratic residues (possible only with a malicious U), where A would carry information about
  // the factorization.
  if (modPow(a, e, n) !== q) throw new ClError('credential request does not yield a valid signature');
  return { a, q };
}

/** `_new_signature_correctness_proof`: proves A = Q^(e⁻¹) without revealing the factorization. */
export function newSignatureCorrectnessProof(
  pk: PrimaryPublicKey,
  sk: PrimaryPrivateKey,
  signature: PrimaryCredentialSignature,
  q: bigint,
  nonce: bigint,
  rand: ClRandomness = systemRandomness,
): SignatureCorrectnessProof {
  const order = sk.p * sk.q;
  const r = rand.randBelow(order);
  const aCap = issuerModPow(q, r, sk);
  const c = hashListToBignum([Buffer.concat([toBytes(q), toBytes(signature.a), toBytes(aCap), toBytes(nonce)])]);
  const se = mod(r - ((c * modInverse(signature.e, order)) % order), order);
  return { se, c };
}

export interface SignCredentialInput {
  proverId: string;
  blinded: BlindedCredentialSecrets;
  blindedProof: BlindedCredentialSecretsCorrectnessProof;
  /** Nonce of the credential offer (the holder's blinded-secrets proof is bound to it). */
  credentialNonce: bigint;
  /** Nonce of the credential request (the signature correctness proof is bound to it). */
  issuanceNonce: bigint;
  /** Encoded attribute values (see bignum.ts `encodeAttribute`). */
  values: Record<string, bigint>;
  publicKey: PrimaryPublicKey;
  privateKey: PrimaryPrivateKey;
  /** Revocation index; omitted for credentials without revocation. */
  revIdx?: number;
}

/** `Issuer::sign_credential` for the primary (non-revocation) part. */
export function signCredential(
  input: SignCredentialInput,
  rand: ClRandomness = systemRandomness,
): { signature: PrimaryCredentialSignature; correctnessProof: SignatureCorrectnessProof } {
  const { publicKey: pk, privateKey: sk, blinded, values } = input;
  checkBlindedSecretsCorrectnessProof(blinded, input.blindedProof, input.credentialNonce, pk, sk);
  checkAttributes(pk, values, blinded);
  const m2 = credentialContext(input.proverId, input.revIdx);
  const v = rand.vPrimePrime();
  const e = rand.primeE();
  const { a, q } = signPrimaryCredential(pk, sk, m2, values, v, blinded, e);
  const signature = { m_2: m2, a, e, v };
  return { signature, correctnessProof: newSignatureCorrectnessProof(pk, sk, signature, q, input.issuanceNonce, rand) };
}
