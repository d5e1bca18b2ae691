// Holder-side checks written from the AnonCreds v1.0 specification (§ "Receiving a credential":
// verifying the credential's primary signature and its signature correctness proof; § "Credential
// definition": the key correctness proof), independent of lib/anoncreds/ — its own modular
// arithmetic and hashing — so agreement between the two is evidence, not a tautology.
import { createHash } from 'node:crypto';

export interface HolderPublicKey {
  n: bigint;
  s: bigint;
  rctxt: bigint;
  z: bigint;
  r: Record<string, bigint>;
}

function powMod(b: bigint, e: bigint, m: bigint): bigint {
  b %= m;
  if (b < 0n) b += m;
  if (e < 0n) {
    b = invMod(b, m);
    e = -e;
  }
  let out = 1n;
  while (e > 0n) {
    if (e & 1n) out = (out * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return out;
}

function invMod(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [((a % m) + m) % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  if (r0 !== 1n) throw new Error('not invertible');
  return ((s0 % m) + m) % m;
}

/** The spec's H: SHA-256 over the big-endian minimal byte strings, read as an integer. */
function h(...nums: bigint[]): bigint {
  const hash = createHash('sha256');
  for (const v of nums) {
    if (v === 0n) continue;
    const hex = v.toString(16);
    hash.update(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
  }
  return BigInt(`0x${hash.digest('hex')}`);
}

function isProbablePrime(n: bigint): boolean {
  if (n < 2n) return false;
  for (const p of [2n, 3n, 5n, 7n, 11n, 13n]) if (n % p === 0n) return n === p;
  let d = n - 1n;
  let s = 0;
  while ((d & 1n) === 0n) {
    d >>= 1n;
    s++;
  }
  for (const a of [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n]) {
    let x = powMod(a, d, n);
    if (x === 1n || x === n - 1n) continue;
    let composite = true;
    for (let i = 1; i < s; i++) {
      x = (x * x) % n;
      if (x === n - 1n) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

/**
 * Q = Z / (S^v · Rctxt^m₂ · ∏ R_i^m_i) mod n — what A^e must equal. `values` holds every attribute
 * the key has a base for, including the link secret under its key name.
 */
function expectedQ(pk: HolderPublicKey, sig: { m_2: bigint; v: bigint }, values: Record<string, bigint>): bigint {
  let denom = (powMod(pk.s, sig.v, pk.n) * powMod(pk.rctxt, sig.m_2, pk.n)) % pk.n;
  const keys = Object.keys(pk.r);
  if (keys.length !== Object.keys(values).length) throw new Error('attribute set does not match the key');
  for (const k of keys) {
    const m = values[k];
    if (m === undefined) throw new Error(`missing value for ${k}`);
    denom = (denom * powMod(pk.r[k]!, m, pk.n)) % pk.n;
  }
  return (pk.z * invMod(denom, pk.n)) % pk.n;
}

/** The primary signature equation Z ≡ A^e · S^v · Rctxt^m₂ · ∏ R_i^m_i (mod n), and e's range. */
export function holderVerifyPrimarySignature(
  pk: HolderPublicKey,
  sig: { m_2: bigint; a: bigint; e: bigint; v: bigint },
  values: Record<string, bigint>,
): boolean {
  const eStart = 1n << 596n;
  if (sig.e <= eStart || sig.e >= eStart + (1n << 119n) || !isProbablePrime(sig.e)) return false;
  return powMod(sig.a, sig.e, pk.n) === expectedQ(pk, sig, values);
}

/** Signature correctness proof: Â = A^(c + se·e) mod n and c = H(Q ‖ A ‖ Â ‖ nonce). */
export function holderVerifySignatureCorrectness(
  pk: HolderPublicKey,
  sig: { m_2: bigint; a: bigint; e: bigint; v: bigint },
  proof: { se: bigint; c: bigint },
  nonce: bigint,
  values: Record<string, bigint>,
): boolean {
  const q = expectedQ(pk, sig, values);
  if (powMod(sig.a, sig.e, pk.n) !== q) return false;
  const aHat = powMod(sig.a, proof.c + proof.se * sig.e, pk.n);
  return h(q, sig.a, aHat, nonce) === proof.c;
}

/** Key correctness proof: Ẑ = Z^(−c)·S^xz_cap, R̂_i = R_i^(−c)·S^xr_cap_i, c = H(Z ‖ R… ‖ Ẑ ‖ R̂…). */
export function holderVerifyKeyCorrectness(
  pk: HolderPublicKey,
  proof: { c: bigint; xz_cap: bigint; xr_cap: [string, bigint][] },
): boolean {
  const names = proof.xr_cap.map(([k]) => k);
  if (new Set(names).size !== names.length) return false;
  if (Object.keys(pk.r).some((k) => !names.includes(k)) || names.some((k) => !(k in pk.r))) return false;
  const zHat = (powMod(pk.z, -proof.c, pk.n) * powMod(pk.s, proof.xz_cap, pk.n)) % pk.n;
  const rHats = proof.xr_cap.map(([k, x]) => (powMod(pk.r[k]!, -proof.c, pk.n) * powMod(pk.s, x, pk.n)) % pk.n);
  return h(pk.z, ...names.map((k) => pk.r[k]!), zHat, ...rHats) === proof.c;
}

function randomBits(bits: number): bigint {
  const bytes = new Uint8Array(Math.ceil(bits / 8));
  crypto.getRandomValues(bytes);
  return BigInt(`0x${Buffer.from(bytes).toString('hex')}`) >> BigInt(bytes.length * 8 - bits);
}

/** The holder's secrets behind one credential request: what it needs to finish the signature (v′, and vr′ when revocable). */
export interface HolderRequestSecrets {
  linkSecret: bigint;
  vPrime: bigint;
}

/**
 * § "Requesting a credential": the link secret m hidden in U = S^v′ · R_master_secret^m (mod n), and the
 * proof of knowledge of (v′, m) bound to the offer's nonce — ũ = S^ṽ′ · R^m̃, c = H(U ‖ ũ ‖ nonce),
 * v̂′ = ṽ′ + c·v′, m̂ = m̃ + c·m. `extra` adds fields to the request (e.g. the revocable part `ur`).
 */
export function holderCredentialRequest(
  pk: HolderPublicKey,
  offer: { cred_def_id: string; nonce: string },
  linkSecret: bigint,
  extra: { ur?: string } = {},
): { request: Record<string, unknown>; secrets: HolderRequestSecrets } {
  const rMs = pk.r.master_secret;
  if (rMs === undefined) throw new Error('the key has no master_secret base');
  const vPrime = randomBits(2724);
  const u = (powMod(pk.s, vPrime, pk.n) * powMod(rMs, linkSecret, pk.n)) % pk.n;
  const vTilde = randomBits(3060);
  const mTilde = randomBits(593);
  const uTilde = (powMod(pk.s, vTilde, pk.n) * powMod(rMs, mTilde, pk.n)) % pk.n;
  const c = h(u, uTilde, BigInt(offer.nonce));
  return {
    secrets: { linkSecret, vPrime },
    request: {
      entropy: `holder-${randomBits(64).toString(16)}`,
      cred_def_id: offer.cred_def_id,
      blinded_ms: { u: u.toString(), ur: extra.ur ?? null, hidden_attributes: ['master_secret'], committed_attributes: {} },
      blinded_ms_correctness_proof: { c: c.toString(), v_dash_cap: (vTilde + c * vPrime).toString(), m_caps: { master_secret: (mTilde + c * linkSecret).toString() }, r_caps: {} },
      nonce: randomBits(80).toString(),
    },
  };
}

/** The spec's attribute encoding, written again here: a 32-bit integer as itself, else SHA-256 of the UTF-8 value, big-endian. */
export function holderEncode(raw: string): bigint {
  if (/^[+-]?[0-9]+$/.test(raw)) {
    const v = BigInt(raw);
    if (v >= -(2n ** 31n) && v < 2n ** 31n) return v;
  }
  return BigInt(`0x${createHash('sha256').update(raw, 'utf8').digest('hex')}`);
}

/**
 * What the holder checks on receiving a credential (§ "Receiving a credential"): every value encoded as
 * the spec says, the primary signature over them and its correctness proof bound to the request's nonce.
 * Returns null when it holds, else the first failed check.
 */
export function holderCheckCredential(
  pk: HolderPublicKey,
  credential: { values: Record<string, { raw: string; encoded: string }>; signature: { p_credential: Record<string, string> }; signature_correctness_proof: { se: string; c: string } },
  request: { nonce: string },
  secrets: HolderRequestSecrets,
): string | null {
  const values: Record<string, bigint> = { master_secret: secrets.linkSecret };
  for (const [name, v] of Object.entries(credential.values)) {
    if (holderEncode(v.raw) !== BigInt(v.encoded)) return `encoding of ${name}`;
    values[name.replaceAll(' ', '').toLowerCase()] = BigInt(v.encoded);
  }
  const p = credential.signature.p_credential;
  const sig = { m_2: BigInt(p.m_2!), a: BigInt(p.a!), e: BigInt(p.e!), v: BigInt(p.v!) + secrets.vPrime };
  if (!holderVerifyPrimarySignature(pk, sig, values)) return 'primary signature';
  const proof = { se: BigInt(credential.signature_correctness_proof.se), c: BigInt(credential.signature_correctness_proof.c) };
  if (!holderVerifySignatureCorrectness(pk, sig, proof, BigInt(request.nonce), values)) return 'signature correctness proof';
  return null;
}
