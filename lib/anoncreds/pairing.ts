// The optimal ate pairing on AMCL's BN254 (Fp254BNb), with AMCL's Fp12 tower so that values
// serialize as anoncreds-clsignatures' `Pair::to_string` prints them (the revocation registry's
// accumulator key z). Hand-written on BigInt: no npm library implements this curve's pairing
// (milagro-crypto-js has one, used only by the tests as a reference).
//
// Tower (as AMCL): Fp2 = Fp[i]/(i² + 1), Fp4 = Fp2[s]/(s² − ξ) with ξ = 1 + i, Fp12 = Fp4[w]/(w³ − s).
// Internally an Fp12 element is kept as six Fp2 coefficients over w (w⁶ = ξ): c[k] multiplies w^k.
// AMCL's FP12 (a, b, c) of FP4s (x + y·s) is then a = c0 + c3·s, b = c1 + c4·s, c = c2 + c5·s.
//
// Not constant-time (BigInt, value-dependent branches). Its one issuer use, z = e(g·γ^(L+1), g'),
// blinds its inputs (revocation.ts `accumulatorKey`), as g·γ^(L+1) must stay secret.

import { mod, modInverse } from './bignum';
import { BN_X, CurveError, Fp2, G1, G2, P, R, type Fp2Element, type G1Point, type G2Point } from './bn254';

export type Fp12 = readonly [Fp2Element, Fp2Element, Fp2Element, Fp2Element, Fp2Element, Fp2Element];

const ZERO2: Fp2Element = Fp2.zero;

export const FP12_ONE: Fp12 = [Fp2.one, ZERO2, ZERO2, ZERO2, ZERO2, ZERO2];

function fp2Pow(a: Fp2Element, e: bigint): Fp2Element {
  let out = Fp2.one;
  let b = a;
  while (e > 0n) {
    if (e & 1n) out = Fp2.mul(out, b);
    b = Fp2.sqr(b);
    e >>= 1n;
  }
  return out;
}

const XI: Fp2Element = { a: 1n, b: 1n };
const conj2 = (a: Fp2Element): Fp2Element => ({ a: a.a, b: a.b === 0n ? 0n : P - a.b });

/** Frobenius constants: w^p = w·ξ^((p−1)/6), so the coefficient of w^k gains γ_k = ξ^(k(p−1)/6). */
const FROB: Fp2Element[] = Array.from({ length: 6 }, (_, k) => fp2Pow(XI, (BigInt(k) * (P - 1n)) / 6n));
/** On the twist, π(Q) = (conj(x)·ξ^((p−1)/3), conj(y)·ξ^((p−1)/2)). */
const TWIST_FROB_X = FROB[2]!;
const TWIST_FROB_Y = FROB[3]!;

/**
 * a·b in Fp12. Products are summed unreduced and reduced once per coefficient (far fewer BigInt
 * divisions); zero coefficients of b are skipped, which makes multiplying by a sparse line cheap.
 */
export function fp12Mul(a: Fp12, b: Fp12): Fp12 {
  const re = [0n, 0n, 0n, 0n, 0n, 0n];
  const im = [0n, 0n, 0n, 0n, 0n, 0n];
  for (let j = 0; j < 6; j++) {
    const y = b[j]!;
    if (y.a === 0n && y.b === 0n) continue;
    for (let i = 0; i < 6; i++) {
      const x = a[i]!;
      const t0 = x.a * y.a;
      const t1 = x.b * y.b;
      let pr = t0 - t1;
      let pi = (x.a + x.b) * (y.a + y.b) - t0 - t1;
      let k = i + j;
      if (k >= 6) {
        // w⁶ = ξ = 1 + i: (pr + pi·i)(1 + i) = (pr − pi) + (pr + pi)·i
        k -= 6;
        [pr, pi] = [pr - pi, pr + pi];
      }
      re[k] = re[k]! + pr;
      im[k] = im[k]! + pi;
    }
  }
  return re.map((v, k) => ({ a: mod(v, P), b: mod(im[k]!, P) })) as unknown as Fp12;
}

export const fp12Sqr = (a: Fp12): Fp12 => fp12Mul(a, a);

export function fp12Eq(a: Fp12, b: Fp12): boolean {
  return a.every((c, k) => Fp2.eq(c, b[k]!));
}

/** The p-power Frobenius. */
export function fp12Frob(a: Fp12, times = 1): Fp12 {
  let r = a;
  for (let t = 0; t < times; t++) r = r.map((c, k) => Fp2.mul(conj2(c), FROB[k]!)) as unknown as Fp12;
  return r;
}

/** The p⁶-power Frobenius (w ↦ −w); the inverse of a unitary element (any pairing value). */
export function fp12Conj(a: Fp12): Fp12 {
  return a.map((c, k) => (k % 2 === 1 ? Fp2.neg(c) : c)) as unknown as Fp12;
}

// Fp4 = Fp2[s]/(s² − ξ), for the inverse only.
type Fp4 = { a: Fp2Element; b: Fp2Element };
const mulXi = (x: Fp2Element): Fp2Element => Fp2.mul(x, XI);
const f4Mul = (x: Fp4, y: Fp4): Fp4 => ({
  a: Fp2.add(Fp2.mul(x.a, y.a), mulXi(Fp2.mul(x.b, y.b))),
  b: Fp2.add(Fp2.mul(x.a, y.b), Fp2.mul(x.b, y.a)),
});
const f4Sub = (x: Fp4, y: Fp4): Fp4 => ({ a: Fp2.sub(x.a, y.a), b: Fp2.sub(x.b, y.b) });
const f4Add = (x: Fp4, y: Fp4): Fp4 => ({ a: Fp2.add(x.a, y.a), b: Fp2.add(x.b, y.b) });
/** ·s: (a + b·s)·s = b·ξ + a·s */
const f4MulS = (x: Fp4): Fp4 => ({ a: mulXi(x.b), b: x.a });
function f4Inv(x: Fp4): Fp4 {
  const n = Fp2.inv(Fp2.sub(Fp2.sqr(x.a), mulXi(Fp2.sqr(x.b))));
  return { a: Fp2.mul(x.a, n), b: Fp2.neg(Fp2.mul(x.b, n)) };
}

/** a⁻¹ in Fp12, as a cubic extension of Fp4 (w³ = s). */
export function fp12Inv(x: Fp12): Fp12 {
  const A: Fp4 = { a: x[0], b: x[3] };
  const B: Fp4 = { a: x[1], b: x[4] };
  const C: Fp4 = { a: x[2], b: x[5] };
  const t0 = f4Sub(f4Mul(A, A), f4MulS(f4Mul(B, C)));
  const t1 = f4Sub(f4MulS(f4Mul(C, C)), f4Mul(A, B));
  const t2 = f4Sub(f4Mul(B, B), f4Mul(A, C));
  const norm = f4Add(f4Mul(A, t0), f4MulS(f4Add(f4Mul(C, t1), f4Mul(B, t2))));
  if (Fp2.isZero(norm.a) && Fp2.isZero(norm.b)) throw new CurveError('inverse of zero');
  const ni = f4Inv(norm);
  const r0 = f4Mul(t0, ni);
  const r1 = f4Mul(t1, ni);
  const r2 = f4Mul(t2, ni);
  return [r0.a, r1.a, r2.a, r0.b, r1.b, r2.b];
}

/** a^e for a unitary a (a pairing value): negative exponents use the conjugate. 4-bit window. */
export function gtPow(a: Fp12, e: bigint): Fp12 {
  let base = a;
  if (e < 0n) {
    base = fp12Conj(a);
    e = -e;
  }
  const table: Fp12[] = [FP12_ONE, base];
  for (let i = 2; i < 16; i++) table.push(fp12Mul(table[i - 1]!, base));
  const hex = e.toString(16);
  let r = FP12_ONE;
  for (let i = 0; i < hex.length; i++) {
    if (i > 0) for (let s = 0; s < 4; s++) r = fp12Sqr(r);
    const d = parseInt(hex[i]!, 16);
    if (d) r = fp12Mul(r, table[d]!);
  }
  return r;
}

// ---- Miller loop ------------------------------------------------------------------------------

/**
 * The line through T and S (points of the twist, affine; S = T for the tangent), evaluated at the
 * G1 point P through the untwisting map (x, y) ↦ (x·w², y·w³). With slope λ:
 * l = y_P − λ·x_P·w + (λ·x_T − y_T)·w³, up to a factor in Fp2 that the final exponentiation removes.
 */
function lineAt(t: G2Point, s: G2Point, p: G1Point): { line: Fp12; sum: G2Point } {
  let lambda: Fp2Element;
  if (Fp2.eq(t.x, s.x)) {
    // Only the tangent can share x here: n < r, so T = −S never happens for points of order r.
    if (!Fp2.eq(t.y, s.y) || Fp2.isZero(t.y)) throw new CurveError('vertical line in the Miller loop');
    const x2 = Fp2.sqr(t.x);
    lambda = Fp2.mul(Fp2.add(Fp2.add(x2, x2), x2), Fp2.inv(Fp2.add(t.y, t.y)));
  } else {
    lambda = Fp2.mul(Fp2.sub(s.y, t.y), Fp2.inv(Fp2.sub(s.x, t.x)));
  }
  const x3 = Fp2.sub(Fp2.sub(Fp2.sqr(lambda), t.x), s.x);
  const y3 = Fp2.sub(Fp2.mul(lambda, Fp2.sub(t.x, x3)), t.y);
  const c1 = Fp2.neg(Fp2.mul(lambda, { a: p.x, b: 0n }));
  const c3 = Fp2.sub(Fp2.mul(lambda, t.x), t.y);
  return { line: [{ a: p.y, b: 0n }, c1, ZERO2, c3, ZERO2, ZERO2], sum: { x: x3, y: y3, inf: false } };
}

function twistFrob(q: G2Point): G2Point {
  return { x: Fp2.mul(conj2(q.x), TWIST_FROB_X), y: Fp2.mul(conj2(q.y), TWIST_FROB_Y), inf: false };
}

/** The ate loop length |6x + 2|; x < 0 for this curve, so the loop result is conjugated. */
const ATE_N = 6n * BN_X + 2n;
const ATE_ABS = ATE_N < 0n ? -ATE_N : ATE_N;
const ATE_BITS = ATE_ABS.toString(2);

/** The Miller loop of the optimal ate pairing, before the final exponentiation. */
export function millerLoop(p: G1Point, q: G2Point): Fp12 {
  if (p.inf || q.inf) return FP12_ONE;
  let f = FP12_ONE;
  let t = q;
  for (let i = 1; i < ATE_BITS.length; i++) {
    const d = lineAt(t, t, p);
    f = fp12Mul(fp12Sqr(f), d.line);
    t = d.sum;
    if (ATE_BITS[i] === '1') {
      const a = lineAt(t, q, p);
      f = fp12Mul(f, a.line);
      t = a.sum;
    }
  }
  if (ATE_N < 0n) {
    f = fp12Conj(f);
    t = G2.neg(t);
  }
  const q1 = twistFrob(q);
  const q2 = G2.neg(twistFrob(q1));
  const l1 = lineAt(t, q1, p);
  f = fp12Mul(f, l1.line);
  f = fp12Mul(f, lineAt(l1.sum, q2, p).line);
  return f;
}

// The hard part (p⁴ − p² + 1)/r = λ0 + λ1·p + λ2·p² + λ3·p³ with these polynomials in x (BN
// curves; test/unit/anoncreds-pairing.test.ts checks the identity), so f^hard is a product of four
// ~190-bit powers of Frobenius images: far fewer squarings than one 760-bit power.
const X = BN_X;
export const HARD_PART = [
  -36n * X ** 3n - 30n * X ** 2n - 18n * X - 2n,
  -36n * X ** 3n - 18n * X ** 2n - 12n * X + 1n,
  6n * X ** 2n + 1n,
  1n,
] as const;

/** f^((p¹² − 1)/r): the easy part (p⁶ − 1)(p² + 1), then the hard part as a 4-way multi-power. */
export function finalExponentiation(f: Fp12): Fp12 {
  let g = fp12Mul(fp12Conj(f), fp12Inv(f));
  g = fp12Mul(fp12Frob(g, 2), g);
  // g is now unitary: a negative exponent is a conjugate.
  const bases = HARD_PART.map((e, k) => {
    const b = fp12Frob(g, k);
    return e < 0n ? fp12Conj(b) : b;
  });
  const exps = HARD_PART.map((e) => (e < 0n ? -e : e));
  // Simultaneous exponentiation: one table of the 16 products of the four bases.
  const table: Fp12[] = [FP12_ONE];
  for (let m = 1; m < 16; m++) {
    const low = m & -m;
    const k = Math.log2(low);
    table.push(fp12Mul(table[m - low]!, bases[k]!));
  }
  const bits = Math.max(...exps.map((e) => e.toString(2).length));
  let r = FP12_ONE;
  for (let i = bits - 1; i >= 0; i--) {
    r = fp12Sqr(r);
    let m = 0;
    for (let k = 0; k < 4; k++) if ((exps[k]! >> BigInt(i)) & 1n) m |= 1 << k;
    if (m) r = fp12Mul(r, table[m]!);
  }
  return r;
}

/** e(P, Q) as anoncreds-clsignatures' `Pair::pair(P, Q)` computes it. */
export function pairing(p: G1Point, q: G2Point): Fp12 {
  if (!G1.isValid(p)) throw new CurveError('point is not on G1');
  if (!G2.isValid(q)) throw new CurveError('point is not in G2');
  return finalExponentiation(millerLoop(p, q));
}

/** clsignatures' `is_valid_pair` (a cyclotomic-subgroup check): g^(p⁴ + 1) = g^(p²). */
export function isValidGt(a: Fp12): boolean {
  if (a.every((c) => Fp2.isZero(c))) return false;
  const f2 = fp12Frob(a, 2);
  return fp12Eq(fp12Mul(fp12Frob(f2, 2), a), f2);
}

// ---- AMCL hex ---------------------------------------------------------------------------------
// FP12::to_hex prints a, b, c; FP4 a, b; FP2 a, b; each FP as "<excess> <Montgomery residue>".
// After `Pair::pair` AMCL has reduced every coordinate, so every excess is 1.

const MONT = (1n << 280n) % P;
const MONT_INV = modInverse(MONT, P);
/** Position k of AMCL's print order → our coefficient index (a.a, a.b, b.a, b.b, c.a, c.b). */
const ORDER = [0, 3, 1, 4, 2, 5] as const;

export function gtToString(a: Fp12): string {
  const fp = (v: bigint) => `1 ${((v * MONT) % P).toString(16).toUpperCase().padStart(64, '0')}`;
  return ORDER.map((k) => `${fp(a[k]!.a)} ${fp(a[k]!.b)}`).join(' ');
}

/** Parses AMCL's FP12 hex, with clsignatures' checks (excess a positive u32; cyclotomic subgroup). */
export function gtFromString(s: unknown): Fp12 {
  if (typeof s !== 'string') throw new CurveError('pairing value must be a string');
  const parts = s.split(/[ \t\n\r\f]+/).filter((t) => t.length > 0);
  if (parts.length !== 24) throw new CurveError('pairing value must have 12 coordinates');
  const v: bigint[] = [];
  for (let i = 0; i < 12; i++) {
    const xes = parts[2 * i]!;
    const hex = parts[2 * i + 1]!;
    if (!/^[0-9]{1,10}$/.test(xes) || Number(xes) === 0 || Number(xes) > 0xffffffff) {
      throw new CurveError('invalid coordinate excess');
    }
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new CurveError('coordinate must be 64 hex digits');
    v.push(((BigInt(`0x${hex}`) % P) * MONT_INV) % P);
  }
  const out: Fp2Element[] = new Array(6);
  ORDER.forEach((k, pos) => (out[k] = { a: v[2 * pos]!, b: v[2 * pos + 1]! }));
  const a = out as unknown as Fp12;
  if (!isValidGt(a)) throw new CurveError('invalid pairing value');
  return a;
}

/** The group order, for callers checking bilinearity or exponents. */
export const GT_ORDER = R;
