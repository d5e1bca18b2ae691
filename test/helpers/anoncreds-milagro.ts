// Reference BN254 arithmetic from milagro-crypto-js (Miracl AMCL, same curve as anoncreds-clsignatures),
// used only by tests to check lib/anoncreds/bn254.ts. Converts between its objects and plain BigInts.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const CTX = require('milagro-crypto-js') as new (curve: string) => Any;
export const ctx: Any = new CTX('BN254');

const hex32 = (v: bigint) => v.toString(16).padStart(64, '0');
export const fromBytesHex = (h: string): bigint => BigInt(`0x${h}`);

/** AMCL limb array (ROM) to BigInt. */
export function romToBigint(limbs: number[]): bigint {
  let v = 0n;
  for (let i = limbs.length - 1; i >= 0; i--) v = (v << BigInt(ctx.BIG.BASEBITS)) + BigInt(limbs[i]!);
  return v;
}

export function big(v: bigint): Any {
  return ctx.BIG.fromBytes(Array.from(Buffer.from(hex32(v), 'hex')));
}

export function g1Generator(): Any {
  const x = new ctx.BIG(0);
  const y = new ctx.BIG(0);
  x.rcopy(ctx.ROM_CURVE.CURVE_Gx);
  y.rcopy(ctx.ROM_CURVE.CURVE_Gy);
  const g = new ctx.ECP();
  g.setxy(x, y);
  return g;
}

export function g2Generator(): Any {
  const a = new ctx.BIG(0);
  const b = new ctx.BIG(0);
  const qx = new ctx.FP2(0);
  const qy = new ctx.FP2(0);
  a.rcopy(ctx.ROM_CURVE.CURVE_Pxa);
  b.rcopy(ctx.ROM_CURVE.CURVE_Pxb);
  qx.bset(a, b);
  a.rcopy(ctx.ROM_CURVE.CURVE_Pya);
  b.rcopy(ctx.ROM_CURVE.CURVE_Pyb);
  qy.bset(a, b);
  const q = new ctx.ECP2();
  q.setxy(qx, qy);
  return q;
}

/** Affine coordinates of a milagro ECP as BigInts (via its uncompressed byte form). */
export function g1Coords(p: Any): { x: bigint; y: bigint } {
  const b: number[] = [];
  p.toBytes(b, false);
  const h = Buffer.from(b).toString('hex');
  return { x: fromBytesHex(h.slice(2, 66)), y: fromBytesHex(h.slice(66, 130)) };
}

export function g2Coords(p: Any): { x: { a: bigint; b: bigint }; y: { a: bigint; b: bigint } } {
  const b: number[] = [];
  p.toBytes(b);
  const h = Buffer.from(b).toString('hex');
  const part = (i: number) => fromBytesHex(h.slice(64 * i, 64 * (i + 1)));
  return { x: { a: part(0), b: part(1) }, y: { a: part(2), b: part(3) } };
}

/** A milagro ECP from affine BigInt coordinates. */
export function g1ToMilagro(p: { x: bigint; y: bigint }): Any {
  const q = new ctx.ECP();
  q.setxy(big(p.x), big(p.y));
  return q;
}

/** A milagro ECP2 from affine BigInt coordinates. */
export function g2ToMilagro(p: { x: { a: bigint; b: bigint }; y: { a: bigint; b: bigint } }): Any {
  const x = new ctx.FP2(0);
  const y = new ctx.FP2(0);
  x.bset(big(p.x.a), big(p.x.b));
  y.bset(big(p.y.a), big(p.y.b));
  const q = new ctx.ECP2();
  q.setxy(x, y);
  return q;
}

/** milagro's e(P, Q) (ate then fexp), as its 12 coordinates in AMCL order (a.a.a, a.a.b, … c.b.b). */
export function milagroPairing(p: Any, q: Any): bigint[] {
  const f = ctx.PAIR.fexp(ctx.PAIR.ate(q, p));
  const b: number[] = [];
  f.toBytes(b);
  const h = Buffer.from(b).toString('hex');
  return Array.from({ length: 12 }, (_, i) => fromBytesHex(h.slice(64 * i, 64 * (i + 1))));
}
