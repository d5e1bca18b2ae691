/**
 * DIDComm v1 envelopes (Aries RFC 0019, "pack"/"unpack"): authcrypt and anoncrypt.
 *
 * Hand-written on node:crypto (Ed25519, X25519), @noble/ciphers (XSalsa20-Poly1305, HSalsa20 and
 * ChaCha20-Poly1305) and @noble/hashes (BLAKE2b) because no maintained JS library packs DIDComm v1
 * without Askar: Credo's envelope service needs Askar's key manager (the only one
 * with `ECDH-HSALSA20`, a native binary) and bundles to megabytes; libsodium-wrappers alone is ~430 KB.
 * The wire format is what ACA-Py and Credo produce:
 * - payload: IETF ChaCha20-Poly1305 with a 12-byte IV under a random content key, the protected header
 *   (its base64url text, as sent) as AAD. The header says `enc: xchacha20poly1305_ietf` all the same;
 *   a 24-byte IV (true XChaCha20) is accepted on unpack.
 * - authcrypt: the content key in `crypto_box` (X25519 of the Ed25519 keys, XSalsa20-Poly1305, the
 *   24-byte nonce as the recipient's `iv`); `sender` is `crypto_box_seal` of the sender's base58 verkey.
 * - anoncrypt: the content key in `crypto_box_seal` (ephemeral key, nonce = BLAKE2b-192(epk ‖ pk)).
 */
import { createHash, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, randomBytes as nodeRandomBytes, sign, verify } from 'node:crypto';
import { chacha20poly1305, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hsalsa, xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { blake2b } from '@noble/hashes/blake2.js';
import bs58 from 'bs58';
import { decodeMultibaseKey, multibaseRawKey } from '../dids/methods';

export interface Ed25519KeyPair {
  /** 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  /** 32-byte Ed25519 seed (RFC 8032 private key). */
  seed: Uint8Array;
}

export type EnvelopeErrorCode =
  | 'malformed'
  | 'too_large'
  | 'too_many_recipients'
  | 'unsupported'
  | 'not_for_us'
  | 'decrypt_failed';

export class EnvelopeError extends Error {
  constructor(
    readonly code: EnvelopeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

/** At most this many recipients per envelope, packed or unpacked (bounded work per message). */
export const MAX_RECIPIENTS = 20;
/** Default bound on an envelope's serialized size; callers pass their own with `maxBytes`. */
export const DEFAULT_MAX_ENVELOPE_BYTES = 256 * 1024;

export interface EnvelopeLimits {
  /** Refuse an envelope larger than this many bytes (UTF-8 JSON). Default 256 KiB. */
  maxBytes?: number;
}

export interface UnpackedMessage {
  message: Record<string, unknown>;
  /** The sender's verkey (authcrypt only). */
  senderVerkey?: string;
  /** Which of our keys it was packed for. */
  recipientVerkey: string;
}

const ENC = 'xchacha20poly1305_ietf';
const TYP = 'JWM/1.0';
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

// ---------------------------------------------------------------------------------------------
// Keys

export function verkeyFromPublicKey(pk: Uint8Array): string {
  if (!(pk instanceof Uint8Array) || pk.length !== 32) throw new EnvelopeError('malformed', 'an Ed25519 public key has 32 bytes');
  return bs58.encode(pk);
}

export function publicKeyFromVerkey(verkey: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(verkey);
  } catch {
    throw new EnvelopeError('malformed', 'verkey is not base58');
  }
  if (bytes.length !== 32) throw new EnvelopeError('malformed', 'verkey is not a 32-byte key');
  return bytes;
}

export function didKeyFromVerkey(verkey: string): string {
  return `did:key:${multibaseRawKey('Ed25519', publicKeyFromVerkey(verkey))}`;
}

/**
 * The verkey a key reference names by itself, without a document: an Ed25519 `did:key` (a fragment
 * allowed), or a plain verkey, any base58 text of a 32-byte key — usually 43 or 44 characters, fewer
 * for about 1 key in 450,000 (at most 44, checked before decoding). Anything else names none.
 */
export function verkeyOfReference(ref: string): string | undefined {
  try {
    if (ref.startsWith('did:key:')) return verkeyFromDidKey(ref);
    if (ref.length > 44 || ref.startsWith('did:')) return undefined;
    publicKeyFromVerkey(ref);
    return ref;
  } catch {
    return undefined;
  }
}

/** The verkey of an Ed25519 `did:key` (a `#fragment` is allowed, as in recipientKeys references). */
export function verkeyFromDidKey(did: string): string {
  const match = /^did:key:(z[1-9A-HJ-NP-Za-km-z]+)(?:#z[1-9A-HJ-NP-Za-km-z]+)?$/.exec(did);
  if (!match) throw new EnvelopeError('malformed', 'not a did:key');
  const key = decodeMultibaseKey(match[1]!);
  if (key?.type !== 'Ed25519') throw new EnvelopeError('malformed', 'not an Ed25519 did:key');
  return bs58.encode(key.raw);
}

/** A fresh Ed25519 key pair. */
export function generateKeyPair(): Ed25519KeyPair {
  const seed = randomBytes(32);
  return { seed, publicKey: ed25519PublicKey(seed) };
}

/** The key pair of a 32-byte seed. */
export function keyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (seed.length !== 32) throw new EnvelopeError('malformed', 'an Ed25519 seed has 32 bytes');
  return { seed, publicKey: ed25519PublicKey(seed) };
}

const randomBytes = (n: number) => new Uint8Array(nodeRandomBytes(n));

// Ed25519 and X25519 run in node:crypto (OpenSSL): pure JavaScript took about 1 ms per scalar
// multiplication, several per envelope (docs/benchmarks.md, "DIDComm v1 envelopes"). Raw keys go in
// and out through their fixed DER prefixes (RFC 8410).
const DER = {
  ed25519Pkcs8: Buffer.from('302e020100300506032b657004220420', 'hex'),
  ed25519Spki: Buffer.from('302a300506032b6570032100', 'hex'),
  x25519Pkcs8: Buffer.from('302e020100300506032b656e04220420', 'hex'),
  x25519Spki: Buffer.from('302a300506032b656e032100', 'hex'),
};
const rawTail = (der: Buffer) => new Uint8Array(der.subarray(der.length - 32));
const ed25519PrivateKey = (seed: Uint8Array) => createPrivateKey({ key: Buffer.concat([DER.ed25519Pkcs8, seed]), format: 'der', type: 'pkcs8' });

function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return rawTail(createPublicKey(ed25519PrivateKey(seed)).export({ format: 'der', type: 'spki' }));
}

/** An Ed25519 signature (RFC 8032, pure EdDSA) by the key of `seed`. */
export function ed25519Sign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, ed25519PrivateKey(seed)));
}

/** Whether `signature` over `message` verifies with the raw public key (false for a malformed key or signature). */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return verify(null, message, createPublicKey({ key: Buffer.concat([DER.ed25519Spki, publicKey]), format: 'der', type: 'spki' }), signature);
  } catch {
    return false;
  }
}

// The Ed25519 → X25519 maps (libsodium's crypto_sign_ed25519_{pk,sk}_to_curve25519), which node:crypto
// does not offer: a field inversion and a square-root test on BigInt.
const P = 2n ** 255n - 19n;
function modPow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = base % P;
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}
/** The inverse mod P (extended Euclid: a fraction of an exponentiation's cost). */
function inv(a: bigint): bigint {
  let [t, nextT, r, nextR] = [0n, 1n, P, ((a % P) + P) % P];
  while (nextR !== 0n) {
    const q = r / nextR;
    [t, nextT] = [nextT, t - q * nextT];
    [r, nextR] = [nextR, r - q * nextR];
  }
  return t < 0n ? t + P : t;
}
const D = ((P - 121665n) * inv(121666n)) % P;

/** Peers' keys recur (one per connection): the map's results, bounded. */
const montgomeryCache = new Map<string, Uint8Array>();
const MONTGOMERY_CACHE_SIZE = 1024;

/** u = (1 + y) / (1 − y) (RFC 7748 §4.1) of an Ed25519 public key, refusing an encoding that is not a curve point. */
export function x25519PublicFromEd25519(edPublicKey: Uint8Array): Uint8Array {
  if (edPublicKey.length !== 32) throw new EnvelopeError('malformed', 'not an Ed25519 public key');
  const cacheKey = Buffer.from(edPublicKey).toString('base64');
  const cached = montgomeryCache.get(cacheKey);
  if (cached) return cached;
  const u = montgomeryU(edPublicKey);
  if (montgomeryCache.size >= MONTGOMERY_CACHE_SIZE) montgomeryCache.delete(montgomeryCache.keys().next().value!);
  montgomeryCache.set(cacheKey, u);
  return u;
}

function montgomeryU(edPublicKey: Uint8Array): Uint8Array {
  const xIsOdd = edPublicKey[31]! >> 7;
  const y = BigInt(`0x${Buffer.from(edPublicKey).reverse().toString('hex')}`) & ((1n << 255n) - 1n);
  const y2 = (y * y) % P;
  const x2 = (((y2 - 1n + P) % P) * inv((D * y2 + 1n) % P)) % P; // x² = (y² − 1) / (d·y² + 1)
  const onCurve = y < P && (x2 === 0n ? xIsOdd === 0 : modPow(x2, (P - 1n) / 2n) === 1n);
  if (!onCurve || y === 1n) throw new EnvelopeError('malformed', 'not an Ed25519 public key');
  const u = ((1n + y) * inv((1n - y + P) % P)) % P;
  return Uint8Array.from(Buffer.from(u.toString(16).padStart(64, '0'), 'hex').reverse());
}

/** The X25519 secret of an Ed25519 seed: the clamped first half of SHA-512(seed) (RFC 8032 §5.1.5). */
function x25519SecretFromSeed(seed: Uint8Array): Uint8Array {
  const h = new Uint8Array(createHash('sha512').update(seed).digest().subarray(0, 32));
  h[0]! &= 248;
  h[31]! &= 127;
  h[31]! |= 64;
  return h;
}

/** Our own X25519 public key, from its secret (the same point as the map of our Ed25519 key, natively). */
function x25519PublicFromSecret(secret: Uint8Array): Uint8Array {
  return rawTail(createPublicKey(createPrivateKey({ key: Buffer.concat([DER.x25519Pkcs8, secret]), format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' }));
}

/** X25519 (RFC 7748; OpenSSL refuses an all-zero result, as libsodium does). */
function x25519SharedSecret(mySecret: Uint8Array, theirPublic: Uint8Array): Uint8Array {
  const privateKey = createPrivateKey({ key: Buffer.concat([DER.x25519Pkcs8, mySecret]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey({ key: Buffer.concat([DER.x25519Spki, theirPublic]), format: 'der', type: 'spki' });
  const shared = new Uint8Array(diffieHellman({ privateKey, publicKey }));
  if (shared.every((b) => b === 0)) throw new Error('all-zero X25519 shared secret');
  return shared;
}

function x25519KeyPair(): { secretKey: Uint8Array; publicKey: Uint8Array } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return { secretKey: rawTail(privateKey.export({ format: 'der', type: 'pkcs8' })), publicKey: rawTail(publicKey.export({ format: 'der', type: 'spki' })) };
}

const x25519Public = x25519PublicFromEd25519;

// ---------------------------------------------------------------------------------------------
// NaCl crypto_box and crypto_box_seal (libsodium's construction)

const SIGMA = new Uint32Array(utf8.encode('expand 32-byte k').buffer);

/** crypto_box_beforenm: HSalsa20 of the X25519 shared secret with a zero input. */
function boxKey(theirPublic: Uint8Array, mySecret: Uint8Array): Uint8Array {
  let shared: Uint8Array;
  try {
    shared = x25519SharedSecret(mySecret, theirPublic);
  } catch {
    throw new EnvelopeError('decrypt_failed', 'X25519 key agreement failed');
  }
  const out = new Uint32Array(8);
  hsalsa(SIGMA, new Uint32Array(shared.buffer, shared.byteOffset, 8), new Uint32Array(4), out);
  shared.fill(0);
  return new Uint8Array(out.buffer);
}

function box(message: Uint8Array, nonce: Uint8Array, theirPublic: Uint8Array, mySecret: Uint8Array): Uint8Array {
  return xsalsa20poly1305(boxKey(theirPublic, mySecret), nonce).encrypt(message);
}

function boxOpen(ciphertext: Uint8Array, nonce: Uint8Array, theirPublic: Uint8Array, mySecret: Uint8Array): Uint8Array {
  if (ciphertext.length < 16) throw new EnvelopeError('decrypt_failed', 'box too short');
  try {
    return xsalsa20poly1305(boxKey(theirPublic, mySecret), nonce).decrypt(ciphertext);
  } catch (error) {
    if (error instanceof EnvelopeError) throw error;
    throw new EnvelopeError('decrypt_failed', 'box authentication failed');
  }
}

function sealNonce(ephemeralPublic: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  const input = new Uint8Array(64);
  input.set(ephemeralPublic);
  input.set(recipientPublic, 32);
  return blake2b(input, { dkLen: 24 });
}

function seal(message: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  const { secretKey, publicKey } = x25519KeyPair();
  const sealed = box(message, sealNonce(publicKey, recipientPublic), recipientPublic, secretKey);
  secretKey.fill(0);
  const out = new Uint8Array(32 + sealed.length);
  out.set(publicKey);
  out.set(sealed, 32);
  return out;
}

function sealOpen(sealed: Uint8Array, recipientPublic: Uint8Array, recipientSecret: Uint8Array): Uint8Array {
  if (sealed.length < 48) throw new EnvelopeError('decrypt_failed', 'sealed box too short');
  const ephemeralPublic = sealed.subarray(0, 32);
  return boxOpen(sealed.subarray(32), sealNonce(ephemeralPublic, recipientPublic), ephemeralPublic, recipientSecret);
}

// ---------------------------------------------------------------------------------------------
// base64url (unpadded out; padded or unpadded, url or standard alphabet in)

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

function fromB64(value: unknown, what: string): Uint8Array {
  // Buffer.from(..., 'base64') skips junk silently; check the alphabet and length first.
  if (typeof value !== 'string' || !/^(?:[A-Za-z0-9_-]*|[A-Za-z0-9+/]*)={0,2}$/.test(value) || value.replace(/=+$/, '').length % 4 === 1) {
    throw new EnvelopeError('malformed', `${what} is not base64url`);
  }
  return new Uint8Array(Buffer.from(value, 'base64'));
}

// ---------------------------------------------------------------------------------------------
// Pack

/**
 * Packs `message` for each recipient verkey: authcrypt when `sender` is given, else anoncrypt.
 * Returns the envelope's JSON as UTF-8.
 */
export function packMessage(message: Record<string, unknown>, recipientVerkeys: string[], sender?: Ed25519KeyPair): Uint8Array {
  if (recipientVerkeys.length === 0) throw new EnvelopeError('malformed', 'no recipients');
  if (recipientVerkeys.length > MAX_RECIPIENTS) throw new EnvelopeError('too_many_recipients', `at most ${MAX_RECIPIENTS} recipients`);
  const cek = randomBytes(32);
  const senderSecret = sender ? x25519SecretFromSeed(sender.seed) : undefined;
  const senderVerkey = sender ? verkeyFromPublicKey(sender.publicKey) : undefined;

  const recipients = recipientVerkeys.map((verkey) => {
    const recipientPublic = x25519Public(publicKeyFromVerkey(verkey));
    if (!senderSecret || !senderVerkey) {
      return { encrypted_key: b64url(seal(cek, recipientPublic)), header: { kid: verkey } };
    }
    const nonce = randomBytes(24);
    return {
      encrypted_key: b64url(box(cek, nonce, recipientPublic, senderSecret)),
      header: { kid: verkey, sender: b64url(seal(utf8.encode(senderVerkey), recipientPublic)), iv: b64url(nonce) },
    };
  });
  senderSecret?.fill(0);

  const protectedHeader = b64url(utf8.encode(JSON.stringify({ enc: ENC, typ: TYP, alg: sender ? 'Authcrypt' : 'Anoncrypt', recipients })));
  const iv = randomBytes(12);
  const sealed = chacha20poly1305(cek, iv, utf8.encode(protectedHeader)).encrypt(utf8.encode(JSON.stringify(message)));
  cek.fill(0);
  return utf8.encode(
    JSON.stringify({
      protected: protectedHeader,
      iv: b64url(iv),
      ciphertext: b64url(sealed.subarray(0, sealed.length - 16)),
      tag: b64url(sealed.subarray(sealed.length - 16)),
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Parse and unpack

interface RecipientEntry {
  encrypted_key: string;
  header: { kid: string; sender?: string; iv?: string };
}

interface ParsedEnvelope {
  protectedText: string;
  alg: 'Authcrypt' | 'Anoncrypt';
  recipients: RecipientEntry[];
  iv: string;
  ciphertext: string;
  tag: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(bytesOrText: Uint8Array | string, what: string): unknown {
  try {
    return JSON.parse(typeof bytesOrText === 'string' ? bytesOrText : fromUtf8.decode(bytesOrText));
  } catch {
    throw new EnvelopeError('malformed', `${what} is not JSON`);
  }
}

function envelopeSize(envelope: unknown): number {
  if (typeof envelope === 'string') return Buffer.byteLength(envelope);
  if (envelope instanceof Uint8Array) return envelope.length;
  return Buffer.byteLength(JSON.stringify(envelope) ?? '');
}

function parseEnvelope(envelope: unknown, limits: EnvelopeLimits = {}): ParsedEnvelope {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_ENVELOPE_BYTES;
  if (envelopeSize(envelope) > maxBytes) throw new EnvelopeError('too_large', `envelope over ${maxBytes} bytes`);
  const outer = typeof envelope === 'string' || envelope instanceof Uint8Array ? parseJson(envelope, 'envelope') : envelope;
  if (!isObject(outer)) throw new EnvelopeError('malformed', 'envelope is not a JSON object');
  const { protected: protectedText, iv, ciphertext, tag } = outer;
  if (typeof protectedText !== 'string' || typeof iv !== 'string' || typeof ciphertext !== 'string' || typeof tag !== 'string') {
    throw new EnvelopeError('malformed', 'envelope needs protected, iv, ciphertext and tag');
  }
  const header = parseJson(fromB64(protectedText, 'protected'), 'protected header');
  if (!isObject(header)) throw new EnvelopeError('malformed', 'protected header is not an object');
  if (header.enc !== ENC) throw new EnvelopeError('unsupported', `enc ${String(header.enc)} is not ${ENC}`);
  if (header.alg !== 'Authcrypt' && header.alg !== 'Anoncrypt') throw new EnvelopeError('unsupported', `alg ${String(header.alg)} is not Authcrypt or Anoncrypt`);
  const { recipients } = header;
  if (!Array.isArray(recipients) || recipients.length === 0) throw new EnvelopeError('malformed', 'no recipients');
  if (recipients.length > MAX_RECIPIENTS) throw new EnvelopeError('too_many_recipients', `more than ${MAX_RECIPIENTS} recipients`);
  for (const r of recipients) {
    if (!isObject(r) || typeof r.encrypted_key !== 'string' || !isObject(r.header) || typeof r.header.kid !== 'string') {
      throw new EnvelopeError('malformed', 'a recipient needs encrypted_key and header.kid');
    }
    for (const field of ['sender', 'iv'] as const) {
      if (r.header[field] !== undefined && typeof r.header[field] !== 'string') throw new EnvelopeError('malformed', `recipient header ${field} is not a string`);
    }
  }
  return { protectedText, alg: header.alg, recipients: recipients as RecipientEntry[], iv, ciphertext, tag };
}

/** The recipient verkeys (`kid`) an envelope names; throws EnvelopeError on a malformed one. */
export function envelopeRecipients(envelope: unknown, limits?: EnvelopeLimits): string[] {
  return parseEnvelope(envelope, limits).recipients.map((r) => r.header.kid);
}

/**
 * Unpacks an envelope (the JSON as bytes, text or parsed) addressed to `recipient`. Throws
 * EnvelopeError: `too_large`, `malformed`, `too_many_recipients`, `unsupported` (alg/enc),
 * `not_for_us` (no entry for our key), `decrypt_failed` (any authentication failure).
 */
export function unpackMessage(envelope: unknown, recipient: Ed25519KeyPair, limits?: EnvelopeLimits): UnpackedMessage {
  const parsed = parseEnvelope(envelope, limits);
  const recipientVerkey = verkeyFromPublicKey(recipient.publicKey);
  const entry = parsed.recipients.find((r) => r.header.kid === recipientVerkey);
  if (!entry) throw new EnvelopeError('not_for_us', 'no recipient entry for this key');

  const encryptedKey = fromB64(entry.encrypted_key, 'encrypted_key');
  const iv = fromB64(parsed.iv, 'iv');
  const ciphertext = fromB64(parsed.ciphertext, 'ciphertext');
  const tag = fromB64(parsed.tag, 'tag');
  if (iv.length !== 12 && iv.length !== 24) throw new EnvelopeError('malformed', 'iv is neither 12 nor 24 bytes');
  if (tag.length !== 16) throw new EnvelopeError('malformed', 'tag is not 16 bytes');

  const ourSecret = x25519SecretFromSeed(recipient.seed);
  const ourPublic = x25519PublicFromSecret(ourSecret);
  try {
    let cek: Uint8Array;
    let senderVerkey: string | undefined;
    if (parsed.alg === 'Authcrypt') {
      if (entry.header.sender === undefined || entry.header.iv === undefined) throw new EnvelopeError('malformed', 'authcrypt needs sender and iv');
      const nonce = fromB64(entry.header.iv, 'recipient iv');
      if (nonce.length !== 24) throw new EnvelopeError('malformed', 'recipient iv is not 24 bytes');
      const senderBytes = sealOpen(fromB64(entry.header.sender, 'sender'), ourPublic, ourSecret);
      let senderText: string;
      try {
        senderText = fromUtf8.decode(senderBytes);
      } catch {
        throw new EnvelopeError('malformed', 'sender is not a verkey');
      }
      const senderPublic = publicKeyFromVerkey(senderText);
      senderVerkey = senderText;
      cek = boxOpen(encryptedKey, nonce, x25519Public(senderPublic), ourSecret);
    } else {
      cek = sealOpen(encryptedKey, ourPublic, ourSecret);
    }
    if (cek.length !== 32) throw new EnvelopeError('decrypt_failed', 'content key is not 32 bytes');

    const aead = iv.length === 12 ? chacha20poly1305 : xchacha20poly1305;
    const sealed = new Uint8Array(ciphertext.length + 16);
    sealed.set(ciphertext);
    sealed.set(tag, ciphertext.length);
    let plaintext: Uint8Array;
    try {
      plaintext = aead(cek, iv, utf8.encode(parsed.protectedText)).decrypt(sealed);
    } catch {
      throw new EnvelopeError('decrypt_failed', 'payload authentication failed');
    } finally {
      cek.fill(0);
    }
    const message = parseJson(plaintext, 'message');
    if (!isObject(message)) throw new EnvelopeError('malformed', 'message is not a JSON object');
    return senderVerkey ? { message, senderVerkey, recipientVerkey } : { message, recipientVerkey };
  } finally {
    ourSecret.fill(0);
  }
}
