import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { didJwk, multibaseKey } from '../../lib/dids/methods';
import { ES256, getSigner } from '@sd-jwt/crypto-nodejs';

/** Algorithms the holder signs with (proofs, DPoP, key binding JWTs, VPs). */
export type HolderAlg = 'ES256' | 'EdDSA';
export const HOLDER_ALGS: readonly HolderAlg[] = ['ES256', 'EdDSA'];

/** A holder key as kept in the wallet folder (one file each, mode 0600). */
export interface StoredKey {
  /** The RFC 7638 thumbprint of the public key. */
  readonly id: string;
  readonly alg: HolderAlg;
  readonly publicJwk: JWK;
  readonly privateJwk: JWK;
  readonly created_at: string;
}

export interface PublicKeyJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
}

/** The public members only: what goes into headers, `cnf` and DIDs. */
export function publicOnly(jwk: JWK): PublicKeyJwk {
  const { kty, crv, x, y } = jwk;
  return { kty: kty!, ...(crv ? { crv } : {}), ...(x ? { x } : {}), ...(y ? { y } : {}) };
}

export async function generateHolderKey(alg: HolderAlg, now = new Date()): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg === 'ES256' ? 'ES256' : 'EdDSA', { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const publicJwk = publicOnly(await exportJWK(publicKey)) as JWK;
  const privateJwk = await exportJWK(privateKey);
  return { id: await calculateJwkThumbprint(publicJwk), alg, publicJwk, privateJwk, created_at: now.toISOString() };
}

/** The key as a DID URL: did:key (its multibase fragment) or did:jwk (`#0`), as their method specs define. */
export function didUrlOf(key: StoredKey, method: 'did:key' | 'did:jwk'): string {
  const jwk = key.publicJwk as never;
  if (method === 'did:key') {
    const mb = multibaseKey(jwk);
    return `did:key:${mb}#${mb}`;
  }
  return `${didJwk(jwk)}#0`;
}

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

/** A compact JWS of `payload` under `header` (whose `alg` must be the key's). */
export async function signJwt(key: StoredKey, header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string> {
  if (header.alg !== key.alg) throw new Error(`the key signs ${key.alg}, not ${String(header.alg)}`);
  const priv = await importJWK(key.privateJwk, key.alg);
  return new CompactSign(json(payload)).setProtectedHeader(header as never).sign(priv);
}

/** The @sd-jwt signer of this key (it signs the signing input the library hands over). */
export function sdJwtSigner(key: StoredKey): Promise<(data: string) => Promise<string>> {
  return key.alg === 'ES256' ? ES256.getSigner(key.privateJwk) : getSigner(key.privateJwk, { name: 'Ed25519' }, { name: 'Ed25519' });
}
