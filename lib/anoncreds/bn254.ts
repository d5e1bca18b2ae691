// Miracl AMCL's BN254 (`Fp254BNb`), the curve anoncreds-clsignatures uses. Hand-written on BigInt
// because no npm library implements this curve (@noble/curves' bn254 is Ethereum's alt_bn128, a
// different curve). Constants are AMCL's ROM for BN254 (test/unit/anoncreds-bn254.test.ts checks
// them against milagro-crypto-js).
//
// BigInt arithmetic is NOT constant-time: timings of multiplications and inversions depend on the
// values. Scalar multiplication uses a Montgomery ladder (one addition and one doubling per bit,
// fixed 256-bit length) so the operation sequence does not depend on the scalar, but the underlying
// BigInt operations still leak through timing. See docs/anoncreds.md.

import { mod, modInverse } from './bignum';

export const P = 0x2523648240000001ba344d80000000086121000000000013a700000000000013n;
/** Order of G1 and G2 (AMCL `CURVE_Order`). */
export const R = 0x2523648240000001ba344d8000000007ff9f800000000010a10000000000000dn;
/** BN parameter x (AMCL `CURVE_Bnx` with SIGN_OF_X = NEGATIVEX). */
export const BN_X = -0x4080000000000001n;
/** G1: y² = x³ + 2. */
export const CURVE_B = 2n;

// AMCL's Rust build (what clsignatures links) uses 64-bit chunks of 56 bits, NLEN = 5: its
// Montgomery constant is 2^280 mod p, and FP values are stored and printed as v·2^280 mod p.
const MONT_BITS = 280n;
const MONT = (1n << MONT_BITS) % P;

export class CurveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CurveError';
  }
}


function fpInv(a: bigint): bigint {
  if (mod(a, P) === 0n) throw new CurveError('inverse of zero');
  return modInverse(a, P);
}

/** Out of AMCL's Montgomery form: once, not per parsed point. */
const MONT_INV = modInverse(MONT, P);

/** Field operations, so the point formulas are written once for G1 (Fp) and G2 (Fp2). */
interface Field<T> {
  zero: T;
  one: T;
  add(a: T, b: T): T;
  sub(a: T, b: T): T;
  mul(a: T, b: T): T;
  sqr(a: T): T;
  neg(a: T): T;
  inv(a: T): T;
  eq(a: T, b: T): boolean;
  isZero(a: T): boolean;
  small(n: bigint): T;
}

export const Fp: Field<bigint> = {
  zero: 0n,
  one: 1n,
  add: (a, b) => (a + b) % P,
  sub: (a, b) => mod(a - b, P),
  mul: (a, b) => (a * b) % P,
  sqr: (a) => (a * a) % P,
  neg: (a) => (a === 0n ? 0n : P - a),
  inv: fpInv,
  eq: (a, b) => a === b,
  isZero: (a) => a === 0n,
  small: (n) => mod(n, P),
};

/** Fp2 = Fp[i]/(i² + 1) (p ≡ 3 mod 4), as AMCL's FP2 {a, b} = a + b·i. */
export interface Fp2Element {
  a: bigint;
  b: bigint;
}

export const Fp2: Field<Fp2Element> = {
  zero: { a: 0n, b: 0n },
  one: { a: 1n, b: 0n },
  add: (x, y) => ({ a: (x.a + y.a) % P, b: (x.b + y.b) % P }),
  sub: (x, y) => ({ a: mod(x.a - y.a, P), b: mod(x.b - y.b, P) }),
  mul: (x, y) => ({ a: mod(x.a * y.a - x.b * y.b, P), b: (x.a * y.b + x.b * y.a) % P }),
  sqr: (x) => ({ a: mod((x.a + x.b) * (x.a - x.b), P), b: (2n * x.a * x.b) % P }),
  neg: (x) => ({ a: Fp.neg(x.a), b: Fp.neg(x.b) }),
  inv: (x) => {
    const norm = (x.a * x.a + x.b * x.b) % P;
    const t = fpInv(norm);
    return { a: (x.a * t) % P, b: mod(-x.b * t, P) };
  },
  eq: (x, y) => x.a === y.a && x.b === y.b,
  isZero: (x) => x.a === 0n && x.b === 0n,
  small: (n) => ({ a: mod(n, P), b: 0n }),
};

/** G2 lives on the D-type sextic twist y² = x³ + b/ξ with ξ = 1 + i, so b' = 2/(1+i) = 1 − i. */
export const TWIST_B: Fp2Element = { a: 1n, b: P - 1n };

/** Jacobian coordinates (X/Z², Y/Z³); Z = 0 is the point at infinity. */
interface Jacobian<T> {
  x: T;
  y: T;
  z: T;
}

function jDouble<T>(F: Field<T>, p: Jacobian<T>): Jacobian<T> {
  if (F.isZero(p.z) || F.isZero(p.y)) return { x: F.zero, y: F.one, z: F.zero };
  // dbl-2009-l (a = 0)
  const a = F.sqr(p.x);
  const b = F.sqr(p.y);
  const c = F.sqr(b);
  const t = F.add(p.x, b);
  const d = F.sub(F.sub(F.sqr(t), a), c);
  const d2 = F.add(d, d);
  const e = F.add(F.add(a, a), a);
  const f = F.sqr(e);
  const x3 = F.sub(f, F.add(d2, d2));
  const c8 = F.small(8n);
  const y3 = F.sub(F.mul(e, F.sub(d2, x3)), F.mul(c8, c));
  const yz = F.mul(p.y, p.z);
  return { x: x3, y: y3, z: F.add(yz, yz) };
}

function jAdd<T>(F: Field<T>, p: Jacobian<T>, q: Jacobian<T>): Jacobian<T> {
  if (F.isZero(p.z)) return q;
  if (F.isZero(q.z)) return p;
  // add-2007-bl
  const z1z1 = F.sqr(p.z);
  const z2z2 = F.sqr(q.z);
  const u1 = F.mul(p.x, z2z2);
  const u2 = F.mul(q.x, z1z1);
  const s1 = F.mul(F.mul(p.y, q.z), z2z2);
  const s2 = F.mul(F.mul(q.y, p.z), z1z1);
  const h = F.sub(u2, u1);
  const rr = F.sub(s2, s1);
  if (F.isZero(h)) {
    if (F.isZero(rr)) return jDouble(F, p);
    return { x: F.zero, y: F.one, z: F.zero };
  }
  const h2 = F.add(h, h);
  const i = F.sqr(h2);
  const j = F.mul(h, i);
  const r2 = F.add(rr, rr);
  const v = F.mul(u1, i);
  const x3 = F.sub(F.sub(F.sqr(r2), j), F.add(v, v));
  const s1j = F.mul(s1, j);
  const y3 = F.sub(F.mul(r2, F.sub(v, x3)), F.add(s1j, s1j));
  const z3 = F.mul(F.sub(F.sub(F.sqr(F.add(p.z, q.z)), z1z1), z2z2), h);
  return { x: x3, y: y3, z: z3 };
}

/** An affine point; `inf` marks the point at infinity (then x, y are zero). */
export interface AffinePoint<T> {
  x: T;
  y: T;
  inf: boolean;
}

export type G1Point = AffinePoint<bigint>;
export type G2Point = AffinePoint<Fp2Element>;

function toJacobian<T>(F: Field<T>, p: AffinePoint<T>): Jacobian<T> {
  return p.inf ? { x: F.zero, y: F.one, z: F.zero } : { x: p.x, y: p.y, z: F.one };
}

function toAffine<T>(F: Field<T>, p: Jacobian<T>): AffinePoint<T> {
  if (F.isZero(p.z)) return { x: F.zero, y: F.zero, inf: true };
  const zi = F.inv(p.z);
  const zi2 = F.sqr(zi);
  return { x: F.mul(p.x, zi2), y: F.mul(p.y, F.mul(zi2, zi)), inf: false };
}

const SCALAR_BITS = 256;

function ladder<T>(F: Field<T>, p: AffinePoint<T>, k: bigint): AffinePoint<T> {
  const e = mod(k, R);
  let r0: Jacobian<T> = { x: F.zero, y: F.one, z: F.zero };
  let r1 = toJacobian(F, p);
  for (let i = SCALAR_BITS - 1; i >= 0; i--) {
    const bit = (e >> BigInt(i)) & 1n;
    // Same two operations whichever the bit; only which register receives which differs.
    const sum = jAdd(F, r0, r1);
    if (bit === 1n) {
      r0 = sum;
      r1 = jDouble(F, r1);
    } else {
      r1 = sum;
      r0 = jDouble(F, r0);
    }
  }
  return toAffine(F, r0);
}

function onCurve<T>(F: Field<T>, b: T, p: AffinePoint<T>): boolean {
  if (p.inf) return true;
  return F.eq(F.sqr(p.y), F.add(F.mul(F.sqr(p.x), p.x), b));
}

const B1 = CURVE_B;

export const G1 = {
  generator: { x: P - 1n, y: 1n, inf: false } as G1Point,
  infinity: { x: 0n, y: 0n, inf: true } as G1Point,
  add: (p: G1Point, q: G1Point): G1Point => toAffine(Fp, jAdd(Fp, toJacobian(Fp, p), toJacobian(Fp, q))),
  double: (p: G1Point): G1Point => toAffine(Fp, jDouble(Fp, toJacobian(Fp, p))),
  neg: (p: G1Point): G1Point => (p.inf ? p : { x: p.x, y: Fp.neg(p.y), inf: false }),
  sub: (p: G1Point, q: G1Point): G1Point => G1.add(p, G1.neg(q)),
  mul: (p: G1Point, k: bigint): G1Point => ladder(Fp, p, k),
  eq: (p: G1Point, q: G1Point): boolean => p.inf === q.inf && p.x === q.x && p.y === q.y,
  /** G1 has cofactor 1, so on the curve means in the group. */
  isValid: (p: G1Point): boolean =>
    p.inf || (p.x >= 0n && p.x < P && p.y >= 0n && p.y < P && onCurve(Fp, B1, p)),
};

export const G2 = {
  generator: {
    x: {
      a: 0x061a10bb519eb62feb8d8c7e8c61edb6a4648bbb4898bf0d91ee4224c803fb2bn,
      b: 0x0516aaf9ba737833310aa78c5982aa5b1f4d746bae3784b70d8c34c1e7d54cf3n,
    },
    y: {
      a: 0x021897a06baf93439a90e096698c822329bd0ae6bdbe09bd19f0e07891cd2b9an,
      b: 0x0ebb2b0e7c8b15268f6d4456f5f38d37b09006ffd739c9578a2d1aec6b3ace9bn,
    },
    inf: false,
  } as G2Point,
  infinity: { x: Fp2.zero, y: Fp2.zero, inf: true } as G2Point,
  add: (p: G2Point, q: G2Point): G2Point => toAffine(Fp2, jAdd(Fp2, toJacobian(Fp2, p), toJacobian(Fp2, q))),
  double: (p: G2Point): G2Point => toAffine(Fp2, jDouble(Fp2, toJacobian(Fp2, p))),
  neg: (p: G2Point): G2Point => (p.inf ? p : { x: p.x, y: Fp2.neg(p.y), inf: false }),
  sub: (p: G2Point, q: G2Point): G2Point => G2.add(p, G2.neg(q)),
  mul: (p: G2Point, k: bigint): G2Point => ladder(Fp2, p, k),
  eq: (p: G2Point, q: G2Point): boolean => p.inf === q.inf && Fp2.eq(p.x, q.x) && Fp2.eq(p.y, q.y),
  onCurve: (p: G2Point): boolean => onCurve(Fp2, TWIST_B, p),
  /** On the twist and in the order-r subgroup (the twist has a large cofactor). */
  isValid: (p: G2Point): boolean => {
    if (p.inf) return true;
    const inRange = [p.x.a, p.x.b, p.y.a, p.y.b].every((v) => v >= 0n && v < P);
    if (!inRange || !onCurve(Fp2, TWIST_B, p)) return false;
    // r·P via plain double-and-add on the public point (no secret involved).
    let acc: Jacobian<Fp2Element> = { x: Fp2.zero, y: Fp2.one, z: Fp2.zero };
    const base = toJacobian(Fp2, p);
    for (let i = 255; i >= 0; i--) {
      acc = jDouble(Fp2, acc);
      if ((R >> BigInt(i)) & 1n) acc = jAdd(Fp2, acc, base);
    }
    return Fp2.isZero(acc.z);
  },
};

// ---- fixed-base G2 multiplication (the tails file) ------------------------------------------
// Hand-written like the rest of this file. Values here are always reduced (< p), so additions and
// subtractions reduce by one conditional step instead of a division, and Fp2 products use three
// BigInt multiplications (Karatsuba) instead of four.

const addP = (a: bigint, b: bigint): bigint => {
  const s = a + b;
  return s >= P ? s - P : s;
};
const subP = (a: bigint, b: bigint): bigint => {
  const d = a - b;
  return d < 0n ? d + P : d;
};
const add2 = (x: Fp2Element, y: Fp2Element): Fp2Element => ({ a: addP(x.a, y.a), b: addP(x.b, y.b) });
const sub2 = (x: Fp2Element, y: Fp2Element): Fp2Element => ({ a: subP(x.a, y.a), b: subP(x.b, y.b) });
const mul2 = (x: Fp2Element, y: Fp2Element): Fp2Element => {
  const t0 = x.a * y.a;
  const t1 = x.b * y.b;
  return { a: mod(t0 - t1, P), b: ((x.a + x.b) * (y.a + y.b) - t0 - t1) % P };
};
const sqr2 = (x: Fp2Element): Fp2Element => ({ a: mod((x.a + x.b) * (x.a - x.b), P), b: (2n * x.a * x.b) % P });

/** Jacobian + affine (madd-2007-bl, 7M + 4S); `q` is neither infinity nor ±`p` in the uses below, but both are handled. */
function jAddAffine2(p: Jacobian<Fp2Element>, q: G2Point): Jacobian<Fp2Element> {
  if (q.inf) return p;
  if (Fp2.isZero(p.z)) return toJacobian(Fp2, q);
  const z1z1 = sqr2(p.z);
  const u2 = mul2(q.x, z1z1);
  const s2 = mul2(q.y, mul2(p.z, z1z1));
  const h = sub2(u2, p.x);
  const r = add2(sub2(s2, p.y), sub2(s2, p.y));
  if (Fp2.isZero(h)) return Fp2.isZero(r) ? jDouble(Fp2, p) : { x: Fp2.zero, y: Fp2.one, z: Fp2.zero };
  const hh = sqr2(h);
  const i = add2(add2(hh, hh), add2(hh, hh));
  const j = mul2(h, i);
  const v = mul2(p.x, i);
  const x3 = sub2(sub2(sqr2(r), j), add2(v, v));
  const yj = mul2(p.y, j);
  const y3 = sub2(mul2(r, sub2(v, x3)), add2(yj, yj));
  const z3 = sub2(sub2(sqr2(add2(p.z, h)), z1z1), hh);
  return { x: x3, y: y3, z: z3 };
}

/** Jacobian → affine for many points with one field inversion (Montgomery's trick). */
function batchToAffine2(ps: readonly Jacobian<Fp2Element>[]): G2Point[] {
  const prefix: Fp2Element[] = [];
  let acc = Fp2.one;
  for (const p of ps) {
    prefix.push(acc);
    if (!Fp2.isZero(p.z)) acc = mul2(acc, p.z);
  }
  let inv = Fp2.inv(acc);
  const out: G2Point[] = new Array<G2Point>(ps.length);
  for (let i = ps.length - 1; i >= 0; i--) {
    const p = ps[i]!;
    if (Fp2.isZero(p.z)) {
      out[i] = G2.infinity;
      continue;
    }
    const zi = mul2(inv, prefix[i]!);
    inv = mul2(inv, p.z);
    const zi2 = sqr2(zi);
    out[i] = { x: mul2(p.x, zi2), y: mul2(p.y, mul2(zi2, zi)), inf: false };
  }
  return out;
}

/** The window (bits per digit) that minimises table additions plus additions for `count` scalars; at most 10 (a 26 × 1,023-point table). */
function fixedBaseWindow(count: number): number {
  let best = 4;
  let bestCost = Infinity;
  for (let w = 4; w <= 10; w++) {
    const rows = Math.ceil(SCALAR_BITS / w);
    const cost = rows * ((1 << w) - 1) + count * rows;
    if (cost < bestCost) [best, bestCost] = [w, cost];
  }
  return best;
}

/** Converted a few hundred points at a time: one inversion each, bounded memory. */
const BATCH = 512;

export interface G2FixedBase {
  (k: bigint): G2Point;
  /** The same for many scalars, cheaper per scalar (wider table, one inversion per batch). */
  many(ks: readonly bigint[]): G2Point[];
}

/**
 * Multiplication of one fixed G2 point by many scalars (the tails file: g'·γ^k for every k): a table
 * of p·d·2^(w·j) (d < 2^w) in affine form, built once, then one mixed addition per w-bit digit of the
 * scalar (32 for w = 8) instead of the ladder's 256 doublings and 256 additions; `many` picks w for
 * the number of scalars. Table lookups are indexed by the scalar's digits and zero digits are
 * skipped, so this is further from constant time than the ladder; it is used only where the results
 * are published anyway (docs/anoncreds.md).
 */
export function g2FixedBase(p: G2Point): G2FixedBase {
  const tables = new Map<number, G2Point[][]>();
  const table = (w: number): G2Point[][] => {
    const known = tables.get(w);
    if (known) return known;
    const rows = Math.ceil(SCALAR_BITS / w);
    const size = 1 << w;
    const flat: Jacobian<Fp2Element>[] = [];
    // Each row by mixed additions of its affine base (one inversion per row): p·2^(w·j)·d.
    let base = p;
    for (let j = 0; j < rows; j++) {
      const row: Jacobian<Fp2Element>[] = [{ x: Fp2.zero, y: Fp2.one, z: Fp2.zero }, toJacobian(Fp2, base)];
      for (let d = 2; d < size; d++) row.push(jAddAffine2(row[d - 1]!, base));
      flat.push(...row);
      base = toAffine(Fp2, jAddAffine2(row[size - 1]!, base));
    }
    const affine = batchToAffine2(flat);
    const t = Array.from({ length: rows }, (_, j) => affine.slice(j * size, (j + 1) * size));
    tables.set(w, t);
    return t;
  };
  const jacobianMul = (t: G2Point[][], w: number, k: bigint): Jacobian<Fp2Element> => {
    const mask = BigInt((1 << w) - 1);
    const bw = BigInt(w);
    let e = mod(k, R);
    let acc: Jacobian<Fp2Element> = { x: Fp2.zero, y: Fp2.one, z: Fp2.zero };
    for (let j = 0; e !== 0n; j++) {
      acc = jAddAffine2(acc, t[j]![Number(e & mask)]!);
      e >>= bw;
    }
    return acc;
  };
  const mul = ((k: bigint) => batchToAffine2([jacobianMul(table(4), 4, k)])[0]!) as G2FixedBase;
  mul.many = (ks) => {
    const w = fixedBaseWindow(ks.length);
    const t = table(w);
    const out: G2Point[] = [];
    for (let i = 0; i < ks.length; i += BATCH) {
      out.push(...batchToAffine2(ks.slice(i, i + BATCH).map((k) => jacobianMul(t, w, k))));
    }
    return out;
  };
  return mul;
}

// ---- AMCL hex serialization -------------------------------------------------------------------
// Rust amcl's `FP::to_hex` prints "<excess> <BIG hex>": the excess counter, then the internal
// Montgomery residue (v·2^280 mod p, 64 upper-case hex digits). `ECP::to_hex` prints x, y, z of its
// homogeneous projective point, `ECP2::to_hex` x.a x.b y.a y.b z.a z.b. Points clsignatures emits
// are affine; amcl's `FP::one()` (the z it sets, and y of infinity) carries excess 2, every other
// coordinate excess 1 — as in anoncreds-rs output (test/helpers/anoncreds-vectors/). Older
// clsignatures mocks print excess 1 for z; parsing accepts any positive excess.

function fpToHex(v: bigint, excess: 1 | 2 = 1): string {
  return `${excess} ${((v * MONT) % P).toString(16).toUpperCase().padStart(64, '0')}`;
}

const ONE_HEX = fpToHex(1n, 2);

/** Parse "<excess> <hex>" pairs; returns the field values (out of Montgomery form). */
function parseFps(s: unknown, count: number): bigint[] {
  if (typeof s !== 'string') throw new CurveError('point must be a string');
  const parts = s.split(/[ \t\n\r\f]+/).filter((t) => t.length > 0);
  if (parts.length !== count * 2) throw new CurveError(`point must have ${count} coordinates`);
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const xes = parts[2 * i]!;
    const hex = parts[2 * i + 1]!;
    // Excess: a positive u32, as clsignatures' pre_validate_point demands.
    if (!/^[0-9]{1,10}$/.test(xes) || Number(xes) === 0 || Number(xes) > 0xffffffff) {
      throw new CurveError('invalid coordinate excess');
    }
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new CurveError('coordinate must be 64 hex digits');
    // AMCL prints unreduced residues after additions (values ≥ p; anoncreds-clsignatures'
    // `deserialize_works_for_big_sum`), so the residue is taken modulo p, as AMCL itself does.
    out.push(((BigInt(`0x${hex}`) % P) * MONT_INV) % P);
  }
  return out;
}

export function g1ToString(p: G1Point): string {
  // AMCL's infinity: x = 0, y = 1, z = 0.
  if (p.inf) return `${fpToHex(0n)} ${ONE_HEX} ${fpToHex(0n)}`;
  return `${fpToHex(p.x)} ${fpToHex(p.y)} ${ONE_HEX}`;
}

export function g2ToString(p: G2Point): string {
  const fp2 = (v: Fp2Element) => `${fpToHex(v.a)} ${fpToHex(v.b)}`;
  const one = `${ONE_HEX} ${fpToHex(0n)}`;
  if (p.inf) return `${fp2(Fp2.zero)} ${one} ${fp2(Fp2.zero)}`;
  return `${fp2(p.x)} ${fp2(p.y)} ${one}`;
}

/** Parses AMCL's G1 hex (any projective z); refuses points off the curve and, unless allowed, infinity. */
export function g1FromString(s: unknown, opts: { allowInfinity?: boolean } = {}): G1Point {
  const [x, y, z] = parseFps(s, 3) as [bigint, bigint, bigint];
  // Homogeneous projective check, as clsignatures' is_valid_ecp: y²z = x³ + b·z³.
  if ((y * y % P) * z % P !== (x * x % P * x + B1 * (z * z % P) * z) % P) {
    throw new CurveError('point is not on G1');
  }
  if (z === 0n) {
    if (!opts.allowInfinity) throw new CurveError('point is infinity');
    return G1.infinity;
  }
  const zi = fpInv(z);
  return { x: (x * zi) % P, y: (y * zi) % P, inf: false };
}

/** Parses AMCL's G2 hex; refuses points off the twist, outside the order-r subgroup and, unless allowed, infinity. */
export function g2FromString(s: unknown, opts: { allowInfinity?: boolean } = {}): G2Point {
  const v = parseFps(s, 6);
  const x = { a: v[0]!, b: v[1]! };
  const y = { a: v[2]!, b: v[3]! };
  const z = { a: v[4]!, b: v[5]! };
  const F = Fp2;
  const lhs = F.mul(F.sqr(y), z);
  const rhs = F.add(F.mul(F.sqr(x), x), F.mul(TWIST_B, F.mul(F.sqr(z), z)));
  if (!F.eq(lhs, rhs)) throw new CurveError('point is not on G2');
  if (F.isZero(z)) {
    if (!opts.allowInfinity) throw new CurveError('point is infinity');
    return G2.infinity;
  }
  const zi = F.inv(z);
  const p = { x: F.mul(x, zi), y: F.mul(y, zi), inf: false };
  if (!G2.isValid(p)) throw new CurveError('point is not in the G2 subgroup');
  return p;
}

/** AMCL `GroupOrderElement` hex (BIG::to_hex of a value < r: 64 upper-case hex digits). */
export function scalarToString(k: bigint): string {
  return mod(k, R).toString(16).toUpperCase().padStart(64, '0');
}

export function scalarFromString(s: unknown): bigint {
  if (typeof s !== 'string' || !/^[0-9a-fA-F]{64}$/.test(s)) throw new CurveError('scalar must be 64 hex digits');
  const v = BigInt(`0x${s}`);
  if (v >= R) throw new CurveError('scalar not reduced modulo the group order');
  return v;
}
