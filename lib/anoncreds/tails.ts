// Revocation tails file (anoncreds-clsignatures `RevocationTailsGenerator`, anoncreds-rs
// `TailsFileWriter`): tails g'·γ^i for i = 0 … 2L, with index L+1 (the accumulator's secret power)
// replaced by g', each as amcl's 128-byte `ECP2::tobytes`, after a 2-byte version header (0, 2).
// The tails hash is base58(SHA-256(file)).
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { mod } from './bignum';
import { G2, R, g2FixedBase, type G2Point } from './bn254';

export class TailsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TailsError';
  }
}

const TAILS_VERSION = Buffer.from([0, 2]);
/** PointG2::BYTES_REPR_SIZE (MODBYTES · 4). */
export const TAIL_BYTES = 128;

const be32 = (v: bigint) => Buffer.from(v.toString(16).padStart(64, '0'), 'hex');

/** amcl `ECP2::tobytes`: affine x.a ‖ x.b ‖ y.a ‖ y.b, 32 big-endian bytes each. */
export function g2ToBytes(p: G2Point): Buffer {
  if (p.inf) throw new TailsError('cannot encode the point at infinity');
  return Buffer.concat([be32(p.x.a), be32(p.x.b), be32(p.y.a), be32(p.y.b)]);
}

/** The whole tails file for a registry of `maxCredNum` credentials. Uses the secret γ. */
export function generateTailsFile(gDash: G2Point, gamma: bigint, maxCredNum: number): Buffer {
  if (!Number.isInteger(maxCredNum) || maxCredNum < 1 || maxCredNum > 2 ** 24) {
    throw new TailsError('maxCredNum must be an integer in [1, 2^24]');
  }
  if (gDash.inf || !G2.isValid(gDash)) throw new TailsError('g_dash is not a valid G2 point');
  const g = mod(gamma, R);
  if (g === 0n) throw new TailsError('gamma must not be zero');
  const size = 2 * maxCredNum + 1;
  const parts: Buffer[] = [TAILS_VERSION];
  // tail[i] = g'·γ^i: the powers of γ modulo r are cheap, the point multiplications share one table.
  const powers: bigint[] = [];
  let pow = 1n;
  for (let i = 0; i < size; i++) {
    powers.push(i === maxCredNum + 1 ? 1n : pow);
    pow = (pow * g) % R;
  }
  for (const tail of g2FixedBase(gDash).many(powers)) parts.push(g2ToBytes(tail));
  return Buffer.concat(parts);
}

export function tailsHash(file: Uint8Array): string {
  return bs58.encode(createHash('sha256').update(file).digest());
}
