// Big-integer helpers for CL signatures, on BigInt and node:crypto. Hand-written because no npm
// library offers CL signatures; each helper mirrors the anoncreds-clsignatures (OpenSSL) operation
// named in its comment so that hashes over byte encodings match exactly.
//
// BigInt is not constant-time: modPow and modInverse leak timing about their operands.

import { checkPrimeSync, createHash, generatePrime, randomBytes } from 'node:crypto';

export class BignumError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BignumError';
  }
}

export function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

export function bitLength(a: bigint): number {
  return a === 0n ? 0 : (a < 0n ? -a : a).toString(2).length;
}

/** OpenSSL BN_bn2bin: minimal big-endian magnitude, zero → no bytes. */
export function toBytes(a: bigint): Buffer {
  if (a === 0n) return Buffer.alloc(0);
  const hex = (a < 0n ? -a : a).toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

export function fromBytes(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${Buffer.from(b).toString('hex')}`);
}

export function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** a⁻¹ mod m (extended Euclid); throws when not invertible. */
export function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new BignumError('value is not invertible');
  return mod(oldS, m);
}

/** base^exp mod m; a negative exponent uses the inverse (as OpenSSL's callers in clsignatures do). */
export function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  if (m <= 0n) throw new BignumError('modulus must be positive');
  if (m === 1n) return 0n;
  let b = mod(base, m);
  if (exp < 0n) {
    b = modInverse(b, m);
    exp = -exp;
  }
  // Left-to-right 4-bit fixed window: about a fifth fewer multiplications than plain binary.
  const table: bigint[] = [1n, b];
  for (let i = 2; i < 16; i++) table.push((table[i - 1]! * b) % m);
  const hex = exp.toString(16);
  let result = 1n;
  for (let i = 0; i < hex.length; i++) {
    if (i > 0) {
      result = (result * result) % m;
      result = (result * result) % m;
      result = (result * result) % m;
      result = (result * result) % m;
    }
    result = (result * table[parseInt(hex[i]!, 16)]!) % m;
  }
  return result;
}

/** OpenSSL BN_rand(bits, MAYBE_ZERO, odd = false): uniform in [0, 2^bits). */
export function randomBits(bits: number): bigint {
  const bytes = randomBytes(Math.ceil(bits / 8));
  const extra = bytes.length * 8 - bits;
  if (extra > 0) bytes[0]! &= 0xff >> extra;
  return fromBytes(bytes);
}

/** OpenSSL BN_rand_range: uniform in [0, max), by rejection sampling. */
export function randomBelow(max: bigint): bigint {
  if (max <= 0n) throw new BignumError('range must be positive');
  const bits = bitLength(max);
  for (;;) {
    const r = randomBits(bits);
    if (r < max) return r;
  }
}

/** A probable prime test: node:crypto's checkPrime (Miller–Rabin) with its default rounds. */
export function isProbablePrime(n: bigint): boolean {
  if (n < 2n) return false;
  return checkPrimeSync(n);
}

/** clsignatures `generate_safe_prime(size)` = OpenSSL generate_prime(size + 1, safe). */
export function generateSafePrime(size: number): Promise<bigint> {
  return new Promise((resolve, reject) => {
    generatePrime(size + 1, { safe: true, bigint: true }, (err, prime) => {
      if (err) reject(err);
      else resolve(prime as bigint);
    });
  });
}

/**
 * clsignatures `BigNumber::generate_prime_in_range(size_bits, range_bits)`: a prime
 * 2^size_bits + r with r odd, uniformly chosen below 2^range_bits.
 */
export function generatePrimeInRange(sizeBits: number, rangeBits: number): bigint {
  if (sizeBits < 2 || rangeBits < 2 || rangeBits > sizeBits) throw new BignumError('invalid prime range');
  const base = 1n << BigInt(sizeBits);
  for (;;) {
    const candidate = base + (randomBits(rangeBits) | 1n);
    if (isProbablePrime(candidate)) return candidate;
  }
}

/** clsignatures `random_qr(n)`: the square of a random unit modulo n. */
export function randomQuadraticResidue(n: bigint): bigint {
  for (;;) {
    const c = randomBelow(n);
    if (gcd(c, n) === 1n) return (c * c) % n;
  }
}

/** clsignatures `gen_x(p, q)`: uniform in [2, p·q − 1). */
export function genX(p: bigint, q: bigint): bigint {
  return randomBelow(p * q - 3n) + 2n;
}

/** clsignatures `hash_list_to_bignum`: SHA-256 over the concatenated byte strings, as an integer. */
export function hashListToBignum(parts: Uint8Array[]): bigint {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return fromBytes(h.digest());
}

/** SHA-256 of a string as a big integer; `little` reverses the digest first (clsignatures ByteOrder). */
export function hashToBignum(input: string, order: 'big' | 'little' = 'big'): bigint {
  const digest = createHash('sha256').update(input, 'utf8').digest();
  if (order === 'little') digest.reverse();
  return fromBytes(digest);
}

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;

/**
 * AnonCreds attribute encoding (anoncreds-rs `encode_credential_attribute`): a value that Rust's
 * `str::parse::<i32>` accepts (optional sign, decimal digits, within i32) is kept in decimal; anything else is SHA-256 of its UTF-8
 * bytes read as a big-endian integer, in decimal.
 */
export function encodeAttribute(raw: string): string {
  if (/^[+-]?[0-9]+$/.test(raw)) {
    const v = BigInt(raw);
    if (v >= INT32_MIN && v <= INT32_MAX) return v.toString();
  }
  return hashToBignum(raw, 'big').toString();
}
