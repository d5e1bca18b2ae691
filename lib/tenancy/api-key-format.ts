import { randomBytes, timingSafeEqual, createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `cisk_` + 43 base62 characters (256 random bits) + 6 base62 characters of CRC32.
 * The fixed prefix lets secret scanners find leaked keys; the checksum lets them (and the authorizer)
 * reject typos and random strings offline, without a database read. Same idea as GitHub's tokens.
 */
export const API_KEY_PREFIX = 'cisk_';
const BODY_LEN = 43;
const CHECK_LEN = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

function base62(bytes: Uint8Array, length: number): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(length, '0');
}

function checksum(body: string): string {
  const c = crc32(body) >>> 0;
  return base62(Buffer.from(c.toString(16).padStart(8, '0'), 'hex'), CHECK_LEN);
}

export function generateApiKey(): string {
  const body = base62(randomBytes(32), BODY_LEN);
  return `${API_KEY_PREFIX}${body}${checksum(body)}`;
}

export function isWellFormedApiKey(value: string): boolean {
  if (!API_KEY_PATTERN.test(value)) return false;
  const body = value.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LEN);
  return checksum(body) === value.slice(API_KEY_PREFIX.length + BODY_LEN);
}

/**
 * Values worth a lookup: our own keys with a valid checksum, or an operator-chosen base key
 * (BASE_API_KEY in the local runtime) of 32–256 visible ASCII characters. Anything else is refused
 * without I/O.
 */
export const LOOKUP_PATTERN = /^[\x21-\x7e]{32,256}$/;

export function isLookupCandidate(value: string): boolean {
  if (value.startsWith(API_KEY_PREFIX)) return isWellFormedApiKey(value);
  return LOOKUP_PATTERN.test(value);
}

/** HMAC-SHA256 of a key under the derived server-side secret; the only form a key is stored in. */
export function macApiKey(secret: Uint8Array, apiKey: string): string {
  return createHmac('sha256', secret).update(apiKey).digest('hex');
}

export function macEquals(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
