/**
 * A second, independent RFC 0019 implementation on libsodium (the construction indy-sdk and ACA-Py
 * use), written from the RFC text, to cross-check lib/didcomm/envelope.ts both ways. Test-only.
 * It emits padded base64url, as indy-sdk did, so the module's decoder sees both forms.
 */
import sodium from 'libsodium-wrappers';

export async function sodiumReady() {
  await sodium.ready;
  return sodium;
}

const b64 = (bytes: Uint8Array) => sodium.to_base64(bytes, sodium.base64_variants.URLSAFE);
const unb64 = (text: string) => sodium.from_base64(text.replace(/=+$/, ''), sodium.base64_variants.URLSAFE_NO_PADDING);

export interface SodiumKeyPair {
  verkey: string;
  publicKey: Uint8Array;
  privateKey: Uint8Array; // 64 bytes: seed ‖ public key
  seed: Uint8Array;
}

export function sodiumKeyPair(seed = sodium.randombytes_buf(32)): SodiumKeyPair {
  const kp = sodium.crypto_sign_seed_keypair(seed);
  return { verkey: base58(kp.publicKey), publicKey: kp.publicKey, privateKey: kp.privateKey, seed };
}

// Base58 written here too, so nothing is shared with the module under test.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}
export function unbase58(text: string): Uint8Array {
  let n = 0n;
  for (const c of text) {
    const i = ALPHABET.indexOf(c);
    if (i < 0) throw new Error('bad base58');
    n = n * 58n + BigInt(i);
  }
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n % 256n));
    n /= 256n;
  }
  for (const c of text) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

/** `xchacha`: a 24-byte IV and true XChaCha20-Poly1305 for the payload (what the header's `enc` names). */
export function sodiumPack(message: unknown, recipientVerkeys: string[], sender?: SodiumKeyPair, opts: { xchacha?: boolean } = {}): string {
  const cek = sodium.crypto_aead_chacha20poly1305_ietf_keygen();
  const recipients = recipientVerkeys.map((verkey) => {
    const target = sodium.crypto_sign_ed25519_pk_to_curve25519(unbase58(verkey));
    if (!sender) return { encrypted_key: b64(sodium.crypto_box_seal(cek, target)), header: { kid: verkey } };
    const nonce = sodium.randombytes_buf(sodium.crypto_box_NONCEBYTES);
    const senderSk = sodium.crypto_sign_ed25519_sk_to_curve25519(sender.privateKey);
    return {
      encrypted_key: b64(sodium.crypto_box_easy(cek, nonce, target, senderSk)),
      header: { kid: verkey, sender: b64(sodium.crypto_box_seal(sodium.from_string(sender.verkey), target)), iv: b64(nonce) },
    };
  });
  const protectedText = b64(sodium.from_string(JSON.stringify({ enc: 'xchacha20poly1305_ietf', typ: 'JWM/1.0', alg: sender ? 'Authcrypt' : 'Anoncrypt', recipients })));
  const iv = sodium.randombytes_buf(opts.xchacha ? sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES : sodium.crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
  const encrypt = opts.xchacha ? sodium.crypto_aead_xchacha20poly1305_ietf_encrypt : sodium.crypto_aead_chacha20poly1305_ietf_encrypt;
  const sealed = encrypt(JSON.stringify(message), protectedText, null, iv, cek);
  return JSON.stringify({ protected: protectedText, iv: b64(iv), ciphertext: b64(sealed.subarray(0, sealed.length - 16)), tag: b64(sealed.subarray(sealed.length - 16)) });
}

export function sodiumUnpack(envelope: string | Uint8Array, recipient: SodiumKeyPair): { message: unknown; senderVerkey?: string } {
  const outer = JSON.parse(typeof envelope === 'string' ? envelope : sodium.to_string(envelope));
  const header = JSON.parse(sodium.to_string(unb64(outer.protected)));
  const entry = header.recipients.find((r: { header: { kid: string } }) => r.header.kid === recipient.verkey);
  if (!entry) throw new Error('not for us');
  const pk = sodium.crypto_sign_ed25519_pk_to_curve25519(recipient.publicKey);
  const sk = sodium.crypto_sign_ed25519_sk_to_curve25519(recipient.privateKey);
  let cek: Uint8Array;
  let senderVerkey: string | undefined;
  if (header.alg === 'Authcrypt') {
    senderVerkey = sodium.to_string(sodium.crypto_box_seal_open(unb64(entry.header.sender), pk, sk));
    const senderPk = sodium.crypto_sign_ed25519_pk_to_curve25519(unbase58(senderVerkey));
    cek = sodium.crypto_box_open_easy(unb64(entry.encrypted_key), unb64(entry.header.iv), senderPk, sk);
  } else {
    cek = sodium.crypto_box_seal_open(unb64(entry.encrypted_key), pk, sk);
  }
  const sealed = new Uint8Array([...unb64(outer.ciphertext), ...unb64(outer.tag)]);
  const plaintext = sodium.crypto_aead_chacha20poly1305_ietf_decrypt(null, sealed, outer.protected, unb64(outer.iv), cek);
  return { message: JSON.parse(sodium.to_string(plaintext)), senderVerkey };
}
