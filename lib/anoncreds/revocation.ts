// AnonCreds revocation (CL_ACCUM: the CKS accumulator on AMCL's BN254) as anoncreds-clsignatures
// computes it (src/issuer.rs `_new_credential_revocation_keys`, `_new_revocation_registry_keys`,
// `_new_non_revocation_credential`, `_update_revocation_accumulator`; src/types.rs `Tail`) and in
// anoncreds-rs' object shapes (revocation registry definition, revocation status list).
// Hand-written: no npm library implements it.
//
// Points are written additively (AMCL's ECP), the specification multiplicatively: g'·γ^i is g'^(γ^i).
// Tails: tail[k] = g'·γ^k. The accumulator is Σ_{j ∈ V} tail[L+1−j] over the valid indices V; a
// credential with index i holds the witness ω = Σ_{j ∈ V, j ≠ i} tail[L+1−j+i], and
// e(g·γ^i, acc)·e(g, ω)⁻¹ = e(g, g')^(γ^(L+1)) = z exactly when i ∈ V.
//
// Issuance is by default only: the initial status list is all zeros and its accumulator holds every
// index, so issuing never changes the published list. That is what anoncreds-rs holders assume when
// they compute their witness (they read list position j as index j and count index L as valid), and
// what the AnonCreds specification recommends (it warns against ISSUANCE_ON_DEMAND). Consequently the
// usable indices are 1 … L−1: index 0 does not exist and index L has no position in the list.
//
// Secret operations (γ, x, sk) run on BigInt, which is not constant-time; the modular inversions,
// whose running time depends most directly on their input, are blinded (docs/anoncreds.md).

import * as z from 'zod';
import { mod, modInverse, modPow, randomBelow } from './bignum';
import {
  CurveError,
  G1,
  G2,
  R,
  g1FromString,
  g1ToString,
  g2FromString,
  g2ToString,
  scalarFromString,
  scalarToString,
  type G1Point,
  type G2Point,
} from './bn254';
import { gtFromString, gtToString, pairing, type Fp12 } from './pairing';
import { generateTailsFile, tailsHash } from './tails';

export class RevocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevocationError';
  }
}

/** Bounds on a registry's size: at least one usable index, at most what tails.ts writes. */
export const MIN_MAX_CRED_NUM = 2;
export const MAX_MAX_CRED_NUM = 2 ** 24;

/** The credential definition's `value.revocation` (clsignatures `CredentialRevocationPublicKey`). */
export interface RevocationPublicKey {
  g: G1Point;
  g_dash: G2Point;
  h: G1Point;
  h0: G1Point;
  h1: G1Point;
  h2: G1Point;
  htilde: G1Point;
  h_cap: G2Point;
  u: G2Point;
  pk: G1Point;
  y: G2Point;
}

/** The private credential definition's `r_key`. */
export interface RevocationPrivateKey {
  x: bigint;
  sk: bigint;
}

/** The random choices; injectable so tests can reproduce anoncreds-rs values. */
export interface RevocationRandomness {
  /** A uniformly random non-zero scalar modulo the group order. */
  scalar(): bigint;
}

export const systemRevocationRandomness: RevocationRandomness = {
  scalar: () => randomBelow(R - 1n) + 1n,
};

const G1_KEYS = ['g', 'h', 'h0', 'h1', 'h2', 'htilde', 'pk'] as const;
const G2_KEYS = ['g_dash', 'h_cap', 'u', 'y'] as const;
/** anoncreds-rs' field order. */
const KEY_ORDER = ['g', 'g_dash', 'h', 'h0', 'h1', 'h2', 'htilde', 'h_cap', 'u', 'pk', 'y'] as const;

/** `_new_credential_revocation_keys`: random h, h0, h1, h2, h̃, g in G1 and u, ĥ, g' in G2; pk = g·sk, y = ĥ·x. */
export function newRevocationKeys(rand: RevocationRandomness = systemRevocationRandomness): {
  publicKey: RevocationPublicKey;
  privateKey: RevocationPrivateKey;
} {
  const g1 = () => G1.mul(G1.generator, rand.scalar());
  const g2 = () => G2.mul(G2.generator, rand.scalar());
  const [h, h0, h1, h2, htilde, g] = [g1(), g1(), g1(), g1(), g1(), g1()];
  const [u, h_cap] = [g2(), g2()];
  const x = rand.scalar();
  const sk = rand.scalar();
  const g_dash = g2();
  return {
    publicKey: { g, g_dash, h, h0, h1, h2, htilde, h_cap, u, pk: G1.mul(g, sk), y: G2.mul(h_cap, x) },
    privateKey: { x, sk },
  };
}

export type RevocationPublicKeyJson = Record<(typeof KEY_ORDER)[number], string>;

export function revocationPublicKeyToJson(k: RevocationPublicKey): RevocationPublicKeyJson {
  const out = {} as RevocationPublicKeyJson;
  for (const name of KEY_ORDER) {
    out[name] = (G1_KEYS as readonly string[]).includes(name)
      ? g1ToString(k[name] as G1Point)
      : g2ToString(k[name] as G2Point);
  }
  return out;
}

function point<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CurveError) throw new RevocationError(`invalid ${what}: ${e.message}`);
    throw e;
  }
}

const amclString = z.string().min(1).max(2000);

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = issue.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new RevocationError(`invalid ${what}${path}: ${issue.message}`);
  }
  return r.data;
}

/** Parses `value.revocation`; every point must be on its curve (and G2 points in the subgroup). */
export function parseRevocationPublicKey(json: unknown): RevocationPublicKey {
  const v = parse(z.object(Object.fromEntries(KEY_ORDER.map((k) => [k, amclString]))), json, 'revocation public key');
  const s = v as Record<string, string>;
  const out: Record<string, G1Point | G2Point> = {};
  for (const k of G1_KEYS) out[k] = point(`revocation key ${k}`, () => g1FromString(s[k]));
  for (const k of G2_KEYS) out[k] = point(`revocation key ${k}`, () => g2FromString(s[k]));
  return out as unknown as RevocationPublicKey;
}

export function revocationPrivateKeyToJson(k: RevocationPrivateKey): { x: string; sk: string } {
  return { x: scalarToString(k.x), sk: scalarToString(k.sk) };
}

export function parseRevocationPrivateKey(json: unknown): RevocationPrivateKey {
  const v = parse(z.object({ x: z.string(), sk: z.string() }), json, 'revocation private key');
  return { x: point('x', () => scalarFromString(v.x)), sk: point('sk', () => scalarFromString(v.sk)) };
}

/** Checks that a private key belongs to a public key (pk = g·sk, y = ĥ·x). */
export function revocationKeysMatch(pub: RevocationPublicKey, priv: RevocationPrivateKey): boolean {
  return G1.eq(G1.mul(pub.g, priv.sk), pub.pk) && G2.eq(G2.mul(pub.h_cap, priv.x), pub.y);
}

// ---- Blinded scalar inversion -------------------------------------------------------------------

/** a⁻¹ mod r computed as ρ·(a·ρ)⁻¹ for a random ρ, so the inversion's running time is independent of a. */
function blindedInverse(a: bigint, rand: RevocationRandomness): bigint {
  const v = mod(a, R);
  if (v === 0n) throw new RevocationError('scalar is not invertible');
  const rho = rand.scalar();
  return (rho * modInverse((v * rho) % R, R)) % R;
}

// ---- Revocation registry -------------------------------------------------------------------------

function checkMaxCredNum(maxCredNum: number): void {
  if (!Number.isInteger(maxCredNum) || maxCredNum < MIN_MAX_CRED_NUM || maxCredNum > MAX_MAX_CRED_NUM) {
    throw new RevocationError(`maxCredNum must be an integer in [${MIN_MAX_CRED_NUM}, ${MAX_MAX_CRED_NUM}]`);
  }
}

/** `_new_revocation_registry_keys`: γ random, z = e(g·γ^(L+1), g'). */
export function newRevocationRegistryKeys(
  pub: RevocationPublicKey,
  maxCredNum: number,
  rand: RevocationRandomness = systemRevocationRandomness,
): { z: Fp12; gamma: bigint } {
  checkMaxCredNum(maxCredNum);
  const gamma = rand.scalar();
  return { z: accumulatorKey(pub, gamma, maxCredNum, rand), gamma };
}

/**
 * z = e(g·γ^(L+1), g'), computed as e(g·(γ^(L+1)·ρ), g'·ρ⁻¹) for a random ρ (bilinearity: the same
 * value), so the pairing never sees the secret point g·γ^(L+1).
 */
export function accumulatorKey(
  pub: Pick<RevocationPublicKey, 'g' | 'g_dash'>,
  gamma: bigint,
  maxCredNum: number,
  rand: RevocationRandomness = systemRevocationRandomness,
): Fp12 {
  const rho = rand.scalar();
  const p = G1.mul(pub.g, (modPow(gamma, BigInt(maxCredNum) + 1n, R) * rho) % R);
  return pairing(p, G2.mul(pub.g_dash, modInverse(rho, R)));
}

export interface RevocationRegistryDefinitionJson {
  issuerId: string;
  revocDefType: 'CL_ACCUM';
  tag: string;
  credDefId: string;
  value: {
    maxCredNum: number;
    publicKeys: { accumKey: { z: string } };
    tailsHash: string;
    tailsLocation: string;
  };
}

export interface RevocationRegistryDefinitionPrivateJson {
  value: { gamma: string };
}

/**
 * anoncreds-rs `create_revocation_registry_def`: keys, tails file and the two objects. The tails
 * location usually names the file by its hash, so it is a function of the hash.
 */
export function createRevocationRegistryDefinition(
  input: {
    issuerId: string;
    credDefId: string;
    tag: string;
    publicKey: RevocationPublicKey;
    maxCredNum: number;
    tailsLocation: (tailsHash: string) => string;
  },
  rand: RevocationRandomness = systemRevocationRandomness,
): {
  definition: RevocationRegistryDefinitionJson;
  definitionPrivate: RevocationRegistryDefinitionPrivateJson;
  tailsFile: Buffer;
} {
  const { z: zKey, gamma } = newRevocationRegistryKeys(input.publicKey, input.maxCredNum, rand);
  const tailsFile = generateTailsFile(input.publicKey.g_dash, gamma, input.maxCredNum);
  const hash = tailsHash(tailsFile);
  return {
    definition: {
      issuerId: input.issuerId,
      revocDefType: 'CL_ACCUM',
      tag: input.tag,
      credDefId: input.credDefId,
      value: {
        maxCredNum: input.maxCredNum,
        publicKeys: { accumKey: { z: gtToString(zKey) } },
        tailsHash: hash,
        tailsLocation: input.tailsLocation(hash),
      },
    },
    definitionPrivate: { value: { gamma: scalarToString(gamma) } },
    tailsFile,
  };
}

const idString = z.string().min(1).max(2048);

export interface RevocationRegistryDefinition {
  issuerId: string;
  tag: string;
  credDefId: string;
  maxCredNum: number;
  z: Fp12;
  tailsHash: string;
  tailsLocation: string;
}

export function parseRevocationRegistryDefinition(json: unknown): RevocationRegistryDefinition {
  const v = parse(
    z.object({
      issuerId: idString,
      revocDefType: z.literal('CL_ACCUM'),
      tag: z.string().max(256),
      credDefId: idString,
      value: z.object({
        maxCredNum: z.number().int().min(MIN_MAX_CRED_NUM).max(MAX_MAX_CRED_NUM),
        publicKeys: z.object({ accumKey: z.object({ z: amclString }) }),
        tailsHash: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 SHA-256 hash'),
        tailsLocation: z.string().min(1).max(2048),
      }),
    }),
    json,
    'revocation registry definition',
  );
  return {
    issuerId: v.issuerId,
    tag: v.tag,
    credDefId: v.credDefId,
    maxCredNum: v.value.maxCredNum,
    z: point('accumulator key z', () => gtFromString(v.value.publicKeys.accumKey.z)),
    tailsHash: v.value.tailsHash,
    tailsLocation: v.value.tailsLocation,
  };
}

export function parseRevocationRegistryPrivate(json: unknown): bigint {
  const v = parse(z.object({ value: z.object({ gamma: z.string() }) }), json, 'revocation registry private part');
  const gamma = point('gamma', () => scalarFromString(v.value.gamma));
  if (gamma === 0n) throw new RevocationError('invalid gamma: zero');
  return gamma;
}

// ---- Accumulator and status list ----------------------------------------------------------------

/** The tails index of revocation index i: L + 1 − i (clsignatures `_get_index`). */
const tailIndex = (maxCredNum: number, revIdx: number) => BigInt(maxCredNum + 1 - revIdx);

function checkIndex(maxCredNum: number, revIdx: number): void {
  if (!Number.isInteger(revIdx) || revIdx < 1 || revIdx > maxCredNum - 1) {
    throw new RevocationError(`revocation index must be an integer in [1, ${maxCredNum - 1}]`);
  }
}

/** Σ_{j ∈ V} g'·γ^(L+1−j) for the valid indices 1 … L: one scalar sum, one point multiplication. */
export function initialAccumulator(gDash: G2Point, gamma: bigint, maxCredNum: number): G2Point {
  checkMaxCredNum(maxCredNum);
  // Indices 1 … L are tails L … 1: Σ_{k=1}^{L} γ^k.
  let pow = 1n;
  let sum = 0n;
  for (let k = 0; k < maxCredNum; k++) {
    pow = (pow * gamma) % R;
    sum += pow;
  }
  sum %= R;
  return sum === 0n ? G2.infinity : G2.mul(gDash, sum);
}

export interface RevocationStatusListJson {
  revRegDefId: string;
  issuerId: string;
  revocationList: (0 | 1)[];
  currentAccumulator: string;
  timestamp: number;
}

export interface RevocationStatusList {
  revRegDefId: string;
  issuerId: string;
  /** true = revoked; position j is revocation index j. */
  revoked: boolean[];
  accumulator: G2Point;
  timestamp: number;
}

const timestampSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export function statusListToJson(list: RevocationStatusList): RevocationStatusListJson {
  return {
    revRegDefId: list.revRegDefId,
    issuerId: list.issuerId,
    revocationList: list.revoked.map((r) => (r ? 1 : 0)),
    currentAccumulator: g2ToString(list.accumulator),
    timestamp: list.timestamp,
  };
}

export function parseRevocationStatusList(json: unknown): RevocationStatusList {
  const v = parse(
    z.object({
      revRegDefId: idString,
      issuerId: idString,
      revocationList: z
        .array(z.union([z.literal(0), z.literal(1)]))
        .min(MIN_MAX_CRED_NUM)
        .max(MAX_MAX_CRED_NUM),
      currentAccumulator: amclString,
      timestamp: timestampSchema,
    }),
    json,
    'revocation status list',
  );
  return {
    revRegDefId: v.revRegDefId,
    issuerId: v.issuerId,
    revoked: v.revocationList.map((b) => b === 1),
    accumulator: point('accumulator', () => g2FromString(v.currentAccumulator, { allowInfinity: true })),
    timestamp: v.timestamp,
  };
}

/** anoncreds-rs `create_revocation_status_list` with issuance by default: nothing revoked, every index accumulated. */
export function createRevocationStatusList(input: {
  revRegDefId: string;
  issuerId: string;
  gDash: G2Point;
  gamma: bigint;
  maxCredNum: number;
  timestamp: number;
}): RevocationStatusList {
  parse(timestampSchema, input.timestamp, 'timestamp');
  return {
    revRegDefId: input.revRegDefId,
    issuerId: input.issuerId,
    revoked: new Array<boolean>(input.maxCredNum).fill(false),
    accumulator: initialAccumulator(input.gDash, input.gamma, input.maxCredNum),
    timestamp: input.timestamp,
  };
}

/**
 * anoncreds-rs `update_revocation_status_list`: revokes (and, with `reinstated`, makes valid again)
 * the given indices. Indices already in the requested state change nothing and are reported back.
 * The accumulator moves by g'·(Σ_reinstated γ^(L+1−j) − Σ_revoked γ^(L+1−j)): one point multiplication.
 */
export function updateRevocationStatusList(
  list: RevocationStatusList,
  input: { gDash: G2Point; gamma: bigint; revoked?: number[]; reinstated?: number[]; timestamp: number },
): { list: RevocationStatusList; revoked: number[]; reinstated: number[]; unchanged: number[] } {
  parse(timestampSchema, input.timestamp, 'timestamp');
  const L = list.revoked.length;
  const revokeSet = new Set(input.revoked ?? []);
  const reinstateSet = new Set(input.reinstated ?? []);
  for (const i of [...revokeSet, ...reinstateSet]) checkIndex(L, i);
  for (const i of revokeSet) if (reinstateSet.has(i)) throw new RevocationError(`index ${i} both revoked and reinstated`);
  const next = [...list.revoked];
  const revoked: number[] = [];
  const reinstated: number[] = [];
  const unchanged: number[] = [];
  let exponent = 0n;
  for (const i of [...revokeSet].sort((a, b) => a - b)) {
    if (next[i]) unchanged.push(i);
    else {
      next[i] = true;
      revoked.push(i);
      exponent -= modPow(input.gamma, tailIndex(L, i), R);
    }
  }
  for (const i of [...reinstateSet].sort((a, b) => a - b)) {
    if (!next[i]) unchanged.push(i);
    else {
      next[i] = false;
      reinstated.push(i);
      exponent += modPow(input.gamma, tailIndex(L, i), R);
    }
  }
  exponent = mod(exponent, R);
  const accumulator = exponent === 0n ? list.accumulator : G2.add(list.accumulator, G2.mul(input.gDash, exponent));
  return {
    list: { ...list, revoked: next, accumulator, timestamp: input.timestamp },
    revoked,
    reinstated,
    unchanged: unchanged.sort((a, b) => a - b),
  };
}

// ---- Non-revocation credential signature --------------------------------------------------------

export interface NonRevocationSignatureJson {
  sigma: string;
  c: string;
  vr_prime_prime: string;
  witness_signature: { sigma_i: string; u_i: string; g_i: string };
  g_i: string;
  i: number;
  m2: string;
}

export interface NonRevocationIssuance {
  r_credential: NonRevocationSignatureJson;
  /** The credential's `rev_reg` (the accumulator it was issued against) and `witness`. */
  rev_reg: { accum: string };
  witness: { omega: string };
}

/**
 * `_new_non_revocation_credential` with issuance by default:
 *   σ = (h0 + h1·m2 + Ur + g_i + h2·vr'')·(x + c)⁻¹,  σ_i = g'·(sk + γ^i)⁻¹,  u_i = u·γ^i,  g_i = g·γ^i,
 *   ω = (acc − g'·γ^(L+1−i))·γ^i, with c and vr'' random and m2 the credential context modulo r.
 */
export function signNonRevocation(
  input: {
    revIdx: number;
    /** The credential context m2 (cl.ts `credentialContext(proverId, revIdx)`), as the primary signature uses it. */
    credentialContext: bigint;
    /** The holder's blinded revocation secret (`blinded_ms.ur` of the credential request). */
    ur: G1Point;
    publicKey: RevocationPublicKey;
    privateKey: RevocationPrivateKey;
    gamma: bigint;
    statusList: RevocationStatusList;
  },
  rand: RevocationRandomness = systemRevocationRandomness,
): NonRevocationIssuance {
  const { revIdx: i, publicKey: pk, privateKey: sk, gamma, statusList } = input;
  const L = statusList.revoked.length;
  checkIndex(L, i);
  if (statusList.revoked[i]) throw new RevocationError(`revocation index ${i} is revoked`);
  if (input.ur.inf || !G1.isValid(input.ur)) throw new RevocationError('invalid blinded revocation secret');
  const vrPrimePrime = rand.scalar();
  const c = rand.scalar();
  const m2 = mod(input.credentialContext, R);
  const gammaI = modPow(gamma, BigInt(i), R);
  const gI = G1.mul(pk.g, gammaI);
  let base = G1.add(pk.h0, G1.mul(pk.h1, m2));
  base = G1.add(base, input.ur);
  base = G1.add(base, gI);
  base = G1.add(base, G1.mul(pk.h2, vrPrimePrime));
  const sigma = G1.mul(base, blindedInverse(sk.x + c, rand));
  const sigmaI = G2.mul(pk.g_dash, blindedInverse(sk.sk + gammaI, rand));
  const uI = G2.mul(pk.u, gammaI);
  const tail = G2.mul(pk.g_dash, modPow(gamma, tailIndex(L, i), R));
  const omega = G2.mul(G2.sub(statusList.accumulator, tail), gammaI);
  const gIString = g1ToString(gI);
  return {
    r_credential: {
      sigma: g1ToString(sigma),
      c: scalarToString(c),
      vr_prime_prime: scalarToString(vrPrimePrime),
      witness_signature: { sigma_i: g2ToString(sigmaI), u_i: g2ToString(uI), g_i: gIString },
      g_i: gIString,
      i,
      m2: scalarToString(m2),
    },
    rev_reg: { accum: g2ToString(statusList.accumulator) },
    witness: { omega: g2ToString(omega) },
  };
}
