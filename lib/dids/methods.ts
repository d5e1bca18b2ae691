import bs58 from 'bs58';
import type { KeyAlg, PublicJwk } from '../keys/port';

/** DID methods the service creates. sov/indy are Indy-style identifiers without a ledger (docs/dids.md). */
export type DidMethod = 'sov' | 'indy' | 'key' | 'jwk' | 'web';
export const DID_METHODS: readonly DidMethod[] = ['sov', 'indy', 'key', 'jwk', 'web'];

/** Key types as the contract names them. */
export type KeyType = 'ed25519' | 'p256';
export const KEY_TYPE_ALG: Record<KeyType, KeyAlg> = { ed25519: 'EdDSA', p256: 'ES256' };

/** Which key types each method supports: Indy identifiers are Ed25519 only. */
export const METHOD_KEY_TYPES: Record<DidMethod, readonly KeyType[]> = {
  sov: ['ed25519'],
  indy: ['ed25519'],
  key: ['ed25519', 'p256'],
  jwk: ['ed25519', 'p256'],
  web: ['ed25519', 'p256'],
};

export function rawPublicKey(jwk: PublicJwk): Uint8Array {
  const x = Buffer.from(jwk.x, 'base64url');
  if (jwk.kty === 'OKP') return x;
  // did:key uses the compressed P-256 point: 0x02/0x03 by the parity of y, then x.
  const y = Buffer.from(jwk.y!, 'base64url');
  return Buffer.concat([Buffer.from([y[y.length - 1]! & 1 ? 0x03 : 0x02]), x]);
}

/** Indy: the identifier is base58 of the first 16 bytes of the Ed25519 verkey; the verkey is base58 of all 32. */
export function indyIdentifier(jwk: PublicJwk): { nym: string; verkey: string } {
  if (jwk.crv !== 'Ed25519') throw new Error('Indy identifiers need an Ed25519 key');
  const raw = rawPublicKey(jwk);
  return { nym: bs58.encode(raw.subarray(0, 16)), verkey: bs58.encode(raw) };
}

/** Multicodec varint prefixes: ed25519-pub 0xed, x25519-pub 0xec, p256-pub 0x1200 (compressed point). */
export type MulticodecKeyType = 'Ed25519' | 'X25519' | 'P-256';
const MULTICODEC: Record<MulticodecKeyType, Uint8Array> = {
  Ed25519: Uint8Array.of(0xed, 0x01),
  X25519: Uint8Array.of(0xec, 0x01),
  'P-256': Uint8Array.of(0x80, 0x24),
};
const RAW_KEY_LENGTH: Record<MulticodecKeyType, number> = { Ed25519: 32, X25519: 32, 'P-256': 33 };

/** The base58btc multibase ("z…") multicodec form of a raw public key (did:key, publicKeyMultibase, did:peer). */
export function multibaseRawKey(type: MulticodecKeyType, raw: Uint8Array): string {
  return `z${bs58.encode(Buffer.concat([MULTICODEC[type], raw]))}`;
}

/** The base58btc multibase ("z…") multicodec public key of did:key and publicKeyMultibase. */
export function multibaseKey(jwk: PublicJwk): string {
  return multibaseRawKey(jwk.crv, rawPublicKey(jwk));
}

/** The key in a base58btc multicodec multibase value, or undefined for anything else (another codec, a wrong length). */
export function decodeMultibaseKey(multibase: string): { type: MulticodecKeyType; raw: Uint8Array } | undefined {
  if (!/^z[1-9A-HJ-NP-Za-km-z]+$/.test(multibase)) return undefined;
  const bytes = bs58.decode(multibase.slice(1));
  for (const type of Object.keys(MULTICODEC) as MulticodecKeyType[]) {
    const prefix = MULTICODEC[type];
    if (bytes[0] === prefix[0] && bytes[1] === prefix[1] && bytes.length === prefix.length + RAW_KEY_LENGTH[type]) {
      return { type, raw: bytes.subarray(prefix.length) };
    }
  }
  return undefined;
}

/** did:jwk: base64url of the JWK's JSON, members in lexicographic order (as RFC 7638 orders them). */
export function didJwk(jwk: PublicJwk): string {
  const ordered = jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return `did:jwk:${Buffer.from(JSON.stringify(ordered)).toString('base64url')}`;
}

/** did:web for `https://<host>[/<base path>]/dids/<id>/did.json`: colons separate path segments; a port's colon is %3A. */
export function didWeb(publicBaseUrl: string, id: string): string {
  const url = new URL(publicBaseUrl);
  const host = encodeURIComponent(url.host); // host[:port] -> host%3Aport
  const path = url.pathname.split('/').filter(Boolean);
  return ['did', 'web', host, ...path, 'dids', id].join(':');
}

/** The verification method's fragment that signers put in `kid`. */
export function primaryFragment(method: DidMethod, jwk: PublicJwk): string {
  if (method === 'key') return multibaseKey(jwk);
  if (method === 'jwk') return '0';
  return 'key-1';
}
