import {
  DEFAULT_MAX_ENVELOPE_BYTES,
  EnvelopeError,
  didKeyFromVerkey,
  envelopeRecipients,
  generateKeyPair,
  keyPairFromSeed,
  packMessage,
  publicKeyFromVerkey,
  unpackMessage,
  verkeyFromDidKey,
  verkeyFromPublicKey,
  verkeyOfReference,
  type Ed25519KeyPair,
} from '../../lib/didcomm/envelope';
import { base58, sodiumKeyPair, sodiumPack, sodiumReady, sodiumUnpack, type SodiumKeyPair } from '../helpers/sodium-envelope';

const message = { '@type': 'https://didcomm.org/basicmessage/1.0/message', '@id': 'a1', content: 'héllo ✓', sent_time: '2026-11-25T00:00:00Z' };

function ours(kp: SodiumKeyPair): Ed25519KeyPair {
  return { publicKey: kp.publicKey, seed: kp.seed };
}

function decodeJson(text: string) {
  return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
}
function encodeJson(value: unknown) {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function expectCode(fn: () => unknown, code: string) {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(EnvelopeError);
  expect((caught as EnvelopeError).code).toBe(code);
}

beforeAll(async () => {
  await sodiumReady();
});

describe('DIDComm v1 envelope against libsodium', () => {
  test.each([['authcrypt'], ['anoncrypt']])('%s: ours packs, libsodium unpacks (every recipient)', (mode) => {
    const sender = sodiumKeyPair();
    const alice = sodiumKeyPair();
    const bob = sodiumKeyPair();
    const packed = packMessage(message, [alice.verkey, bob.verkey], mode === 'authcrypt' ? ours(sender) : undefined);
    for (const r of [alice, bob]) {
      const out = sodiumUnpack(packed, r);
      expect(out.message).toEqual(message);
      expect(out.senderVerkey).toBe(mode === 'authcrypt' ? sender.verkey : undefined);
    }
    const header = decodeJson(JSON.parse(Buffer.from(packed).toString()).protected);
    expect(header).toMatchObject({ enc: 'xchacha20poly1305_ietf', typ: 'JWM/1.0', alg: mode === 'authcrypt' ? 'Authcrypt' : 'Anoncrypt' });
    expect(Buffer.from(JSON.parse(Buffer.from(packed).toString()).iv, 'base64url')).toHaveLength(12);
    if (mode === 'authcrypt') expect(Buffer.from(header.recipients[0].header.iv, 'base64url')).toHaveLength(24);
    else expect(header.recipients[0].header).toEqual({ kid: alice.verkey });
  });

  test.each([['authcrypt'], ['anoncrypt']])('%s: libsodium packs, ours unpacks', (mode) => {
    const sender = sodiumKeyPair();
    const alice = sodiumKeyPair();
    const bob = sodiumKeyPair();
    const packed = sodiumPack(message, [alice.verkey, bob.verkey], mode === 'authcrypt' ? sender : undefined);
    expect(packed).toContain('='); // padded base64url, as indy-sdk emits
    for (const r of [alice, bob]) {
      const out = unpackMessage(packed, ours(r));
      expect(out.message).toEqual(message);
      expect(out.recipientVerkey).toBe(r.verkey);
      expect(out.senderVerkey).toBe(mode === 'authcrypt' ? sender.verkey : undefined);
    }
    expect(envelopeRecipients(packed)).toEqual([alice.verkey, bob.verkey]);
    // Parsed object and bytes are accepted as well as text.
    expect(unpackMessage(JSON.parse(packed), ours(alice)).message).toEqual(message);
    expect(unpackMessage(new TextEncoder().encode(packed), ours(alice)).message).toEqual(message);
  });

  test('a 24-byte IV (XChaCha20-Poly1305 payload) is accepted on unpack', () => {
    const alice = sodiumKeyPair();
    const packed = sodiumPack(message, [alice.verkey], sodiumKeyPair(), { xchacha: true });
    expect(Buffer.from(JSON.parse(packed).iv, 'base64url')).toHaveLength(24);
    expect(unpackMessage(packed, ours(alice)).message).toEqual(message);
  });

  test('ours round-trips and derives the same public key as libsodium from a seed', () => {
    const s = sodiumKeyPair();
    expect(Buffer.from(keyPairFromSeed(s.seed).publicKey)).toEqual(Buffer.from(s.publicKey));
    const a = generateKeyPair();
    const b = generateKeyPair();
    const out = unpackMessage(packMessage(message, [verkeyFromPublicKey(b.publicKey)], a), b);
    expect(out).toEqual({ message, senderVerkey: verkeyFromPublicKey(a.publicKey), recipientVerkey: verkeyFromPublicKey(b.publicKey) });
  });
});

describe('refusals', () => {
  const sender = generateKeyPair();
  const recipient = generateKeyPair();
  const recipientVerkey = verkeyFromPublicKey(recipient.publicKey);
  const packedObject = (anon = false) => JSON.parse(Buffer.from(packMessage(message, [recipientVerkey], anon ? undefined : sender)).toString());

  function flip(b64: string, at = 0) {
    const bytes = Buffer.from(b64, 'base64url');
    bytes[at] = bytes[at]! ^ 1;
    return bytes.toString('base64url');
  }

  test.each([['ciphertext'], ['tag'], ['iv']])('a tampered %s fails authentication', (field) => {
    const env = packedObject();
    env[field] = flip(env[field]);
    expectCode(() => unpackMessage(env, recipient), 'decrypt_failed');
  });

  test('a tampered protected header fails (it is the AAD), even when it still parses', () => {
    const env = packedObject();
    const header = decodeJson(env.protected);
    header.typ = 'JWM/1.1';
    env.protected = encodeJson(header);
    expectCode(() => unpackMessage(env, recipient), 'decrypt_failed');
  });

  test.each([['encrypted_key'], ['sender'], ['iv']])('a tampered recipient %s fails', (field) => {
    const env = packedObject();
    const header = decodeJson(env.protected);
    const r = header.recipients[0];
    if (field === 'encrypted_key') r.encrypted_key = flip(r.encrypted_key, 20);
    else r.header[field] = flip(r.header[field], 5);
    env.protected = encodeJson(header);
    expectCode(() => unpackMessage(env, recipient), 'decrypt_failed');
  });

  test('a tampered anoncrypt key fails', () => {
    const env = packedObject(true);
    const header = decodeJson(env.protected);
    header.recipients[0].encrypted_key = flip(header.recipients[0].encrypted_key, 40);
    env.protected = encodeJson(header);
    expectCode(() => unpackMessage(env, recipient), 'decrypt_failed');
  });

  test('a sender entry naming another key than the one that boxed the content key fails', () => {
    const mallory = generateKeyPair();
    const env = packedObject();
    const forged = JSON.parse(Buffer.from(packMessage(message, [recipientVerkey], mallory)).toString());
    const header = decodeJson(env.protected);
    header.recipients[0].header.sender = decodeJson(forged.protected).recipients[0].header.sender;
    env.protected = encodeJson(header);
    expectCode(() => unpackMessage(env, recipient), 'decrypt_failed');
  });

  test('another recipient is not_for_us; a kid swapped onto our entry fails to decrypt', () => {
    const other = generateKeyPair();
    expectCode(() => unpackMessage(packedObject(), other), 'not_for_us');
    const env = packedObject();
    const header = decodeJson(env.protected);
    header.recipients[0].header.kid = verkeyFromPublicKey(other.publicKey);
    env.protected = encodeJson(header);
    expectCode(() => unpackMessage(env, other), 'decrypt_failed');
  });

  test('more than 20 recipients is refused on pack and on unpack; 20 is fine', () => {
    const keys = Array.from({ length: 21 }, () => verkeyFromPublicKey(generateKeyPair().publicKey));
    expectCode(() => packMessage(message, keys), 'too_many_recipients');
    const twenty = packMessage(message, [...keys.slice(0, 19), recipientVerkey]);
    expect(unpackMessage(twenty, recipient).message).toEqual(message);
    const env = JSON.parse(Buffer.from(twenty).toString());
    const header = decodeJson(env.protected);
    header.recipients.push(header.recipients[0]);
    env.protected = encodeJson(header);
    expectCode(() => envelopeRecipients(env), 'too_many_recipients');
    expectCode(() => unpackMessage(env, recipient), 'too_many_recipients');
  });

  test('size bound: the caller’s maxBytes and the default', () => {
    const packed = packMessage(message, [recipientVerkey], sender);
    expectCode(() => unpackMessage(packed, recipient, { maxBytes: packed.length - 1 }), 'too_large');
    expect(unpackMessage(packed, recipient, { maxBytes: packed.length }).message).toEqual(message);
    const big = packMessage({ content: 'x'.repeat(DEFAULT_MAX_ENVELOPE_BYTES) }, [recipientVerkey]);
    expectCode(() => unpackMessage(big, recipient), 'too_large');
    expectCode(() => envelopeRecipients(big), 'too_large');
    expectCode(() => unpackMessage(JSON.parse(Buffer.from(big).toString()), recipient), 'too_large');
  });

  test.each<[string, (env: Record<string, unknown>) => unknown]>([
    ['not JSON', () => '{nope'],
    ['an array', () => []],
    ['missing tag', (env) => ({ ...env, tag: undefined })],
    ['bad base64 ciphertext', (env) => ({ ...env, ciphertext: 'a*b' })],
    ['base64 of impossible length', (env) => ({ ...env, iv: 'abcde' })],
    ['bad base64 protected', (env) => ({ ...env, protected: '!!' })],
    ['protected not JSON', (env) => ({ ...env, protected: Buffer.from('x').toString('base64url') })],
    ['no recipients', (env) => ({ ...env, protected: encodeJson({ ...decodeJson(env.protected as string), recipients: [] }) })],
    ['recipient without kid', (env) => ({ ...env, protected: encodeJson({ ...decodeJson(env.protected as string), recipients: [{ encrypted_key: 'AA' }] }) })],
    ['short iv', (env) => ({ ...env, iv: 'AAAA' })],
    ['short tag', (env) => ({ ...env, tag: 'AAAA' })],
  ])('malformed: %s', (_name, mutate) => {
    expectCode(() => unpackMessage(mutate(packedObject()), recipient), 'malformed');
  });

  test('authcrypt without sender/iv is malformed; unknown alg or enc is unsupported', () => {
    const env = packedObject();
    const header = decodeJson(env.protected);
    delete header.recipients[0].header.sender;
    expectCode(() => unpackMessage({ ...env, protected: encodeJson(header) }, recipient), 'malformed');
    expectCode(() => unpackMessage({ ...env, protected: encodeJson({ ...decodeJson(env.protected), alg: 'ECDH-1PU' }) }, recipient), 'unsupported');
    expectCode(() => unpackMessage({ ...env, protected: encodeJson({ ...decodeJson(env.protected), enc: 'A256GCM' }) }, recipient), 'unsupported');
  });

  test('a payload that is not a JSON object is refused', () => {
    const s = sodiumKeyPair();
    const packed = sodiumPack('just a string', [s.verkey]);
    expectCode(() => unpackMessage(packed, ours(s)), 'malformed');
  });
});

describe('verkeys and did:key', () => {
  test('verkey ↔ public key ↔ did:key agree with an independent base58', () => {
    const kp = generateKeyPair();
    const verkey = verkeyFromPublicKey(kp.publicKey);
    expect(verkey).toBe(base58(kp.publicKey));
    expect(Buffer.from(publicKeyFromVerkey(verkey))).toEqual(Buffer.from(kp.publicKey));
    const did = didKeyFromVerkey(verkey);
    expect(did).toBe(`did:key:z${base58(Uint8Array.from([0xed, 0x01, ...kp.publicKey]))}`);
    expect(did.startsWith('did:key:z6Mk')).toBe(true);
    expect(verkeyFromDidKey(did)).toBe(verkey);
    expect(verkeyFromDidKey(`${did}#${did.slice(8)}`)).toBe(verkey);
  });

  test('the did:key of RFC 0360 / the did:key spec test vector', () => {
    // did:key spec, Ed25519 example; its verkey is the base58 of the 32-byte key.
    const did = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
    const verkey = verkeyFromDidKey(did);
    expect(publicKeyFromVerkey(verkey)).toHaveLength(32);
    expect(didKeyFromVerkey(verkey)).toBe(did);
  });

  test.each([['not base58 0OIl'], ['3mJr7AoUXx2Wqd'], ['']])('verkey %p is refused', (v) => {
    expectCode(() => publicKeyFromVerkey(v), 'malformed');
  });

  test.each([['did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme'], ['did:web:example.com'], ['did:key:z6Mk!']])('did:key %p is refused', (d) => {
    expectCode(() => verkeyFromDidKey(d), 'malformed');
  });

  test('a key reference names a verkey by itself: a did:key, or base58 of 32 bytes of any length that has (41 characters here)', () => {
    const verkey = verkeyFromPublicKey(generateKeyPair().publicKey);
    const did = didKeyFromVerkey(verkey);
    // About 1 key in 450,000 encodes to fewer than 43 characters; ten leading zero bytes make 41.
    const short = base58(Uint8Array.from([...Buffer.alloc(10), 0xff, ...generateKeyPair().publicKey.slice(0, 21)]));
    expect(short).toHaveLength(41);
    expect([verkey, did, `${did}#${did.slice(8)}`, short].map(verkeyOfReference)).toEqual([verkey, verkey, verkey, short]);
    // 31 or 33 bytes, over 44 characters, not base58, a fragment, another method, a broken did:key: none.
    const none = [base58(new Uint8Array(31).fill(7)), base58(new Uint8Array(33).fill(7)), '1'.repeat(45), 'not base58 0OIl', '#key-1', 'did:web:example.com', 'did:key:z6Mk!'];
    expect(none.map(verkeyOfReference)).toEqual(none.map(() => undefined));
  });
});

describe('Ed25519 → X25519 and Ed25519 signatures (node:crypto and BigInt)', () => {
  test('the X25519 public key of 50 Ed25519 keys is libsodium\'s; non-points and the identity are refused', async () => {
    const { x25519PublicFromEd25519 } = await import('../../lib/didcomm/envelope');
    const sodium = (await import('libsodium-wrappers')).default;
    for (let i = 0; i < 50; i++) {
      const kp = sodiumKeyPair();
      expect(Buffer.from(x25519PublicFromEd25519(kp.publicKey)).equals(Buffer.from(sodium.crypto_sign_ed25519_pk_to_curve25519(kp.publicKey)))).toBe(true);
    }
    // y = 2 is no point of the curve (x² = 3/(4d + 1) has no root); y = 1 is the identity; 31 bytes is no key.
    const y2 = new Uint8Array(32);
    y2[0] = 2;
    let nonPoint: unknown;
    try {
      sodium.crypto_sign_ed25519_pk_to_curve25519(y2);
    } catch (e) {
      nonPoint = e;
    }
    expect(nonPoint).toBeDefined(); // libsodium refuses it too
    expectCode(() => x25519PublicFromEd25519(y2), 'malformed');
    const identity = new Uint8Array(32);
    identity[0] = 1;
    expectCode(() => x25519PublicFromEd25519(identity), 'malformed');
    expectCode(() => x25519PublicFromEd25519(new Uint8Array(31)), 'malformed');
  });

  test('signatures verify both ways with libsodium; a changed message or another key does not', async () => {
    const { ed25519Sign, ed25519Verify } = await import('../../lib/didcomm/envelope');
    const sodium = (await import('libsodium-wrappers')).default;
    const kp = sodiumKeyPair();
    const other = sodiumKeyPair();
    const msg = Buffer.from('did_rotate~attach');
    const ours = ed25519Sign(msg, kp.seed);
    expect(sodium.crypto_sign_verify_detached(ours, msg, kp.publicKey)).toBe(true);
    const theirs = sodium.crypto_sign_detached(msg, sodium.crypto_sign_seed_keypair(kp.seed).privateKey);
    expect(ed25519Verify(theirs, msg, kp.publicKey)).toBe(true);
    expect(ed25519Verify(theirs, Buffer.from('did_rotate~attacH'), kp.publicKey)).toBe(false);
    expect(ed25519Verify(theirs, msg, other.publicKey)).toBe(false);
    expect(ed25519Verify(theirs.subarray(0, 63), msg, kp.publicKey)).toBe(false);
  });
});
