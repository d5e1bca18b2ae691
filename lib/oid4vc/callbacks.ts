import { createHash, createPublicKey, randomBytes, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { HashAlgorithm, type CallbackContext, type Jwk, type JwtSigner } from '@openid4vc/oauth2';
import { selfResolve } from '../resolver/resolver';
import { privateJwkMembers } from './jwk';

/**
 * The one place the `@openid4vc/*` libraries get their crypto and I/O (EXAMPLES.md, "Callbacks in one
 * place"): hashing and randomness from node:crypto, signatures verified on the key the JWT names (a
 * header `jwk`, or a did:key / did:jwk DID URL, which carry their key), and signing only with the
 * keys the caller hands in. The library never reaches the network: `fetch` answers only the
 * in-process JWKS of the access-token key.
 */
export interface CallbackKeys {
  /** Signs access tokens (ES256); its JWKS is served to the library in-process at `jwksUri`. */
  readonly tokenKey?: { readonly publicJwk: Jwk; readonly jwksUri: string; sign(data: Uint8Array): Uint8Array };
}

/** Algorithms we verify (what the metadata advertises for proofs and DPoP). */
export const VERIFIABLE_ALGS = ['ES256', 'EdDSA'] as const;

const HASHES: Record<HashAlgorithm, string> = { [HashAlgorithm.Sha256]: 'sha256', [HashAlgorithm.Sha384]: 'sha384', [HashAlgorithm.Sha512]: 'sha512' };

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** The public key a JWT signer descriptor names, or null when we cannot (or will not) resolve it. */
export function signerPublicJwk(signer: JwtSigner): Jwk | null {
  if (signer.method === 'jwk') return signer.publicJwk;
  if (signer.method === 'did') {
    const did = signer.didUrl.split('#')[0]!;
    const doc = selfResolve(did);
    if (!doc) return null;
    const id = signer.didUrl.includes('#') ? signer.didUrl : null;
    const vm = doc.verificationMethod.find((m) => (id ? m.id === id || `${did}${m.id}` === id : true));
    return (vm?.publicKeyJwk as Jwk | undefined) ?? null;
  }
  return null;
}

/** Verifies a compact JWS signature with node:crypto (ES256 as r‖s, EdDSA on Ed25519). */
export function verifyJws(compact: string, jwk: Jwk, alg: string): boolean {
  const [h, p, s] = compact.split('.');
  if (!h || !p || !s) return false;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: 'jwk' });
  } catch {
    return false;
  }
  const data = Buffer.from(`${h}.${p}`);
  const sig = Buffer.from(s, 'base64url');
  if (alg === 'ES256' && jwk.kty === 'EC' && jwk.crv === 'P-256') return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, sig);
  if (alg === 'EdDSA' && jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return verify(null, data, key, sig);
  return false;
}

export function oid4vcCallbacks(keys: CallbackKeys = {}) {
  return {
    hash: (data: Uint8Array, alg: HashAlgorithm) => createHash(HASHES[alg]).update(data).digest(),
    generateRandom: (n: number) => randomBytes(n),
    signJwt: async (signer: JwtSigner, jwt: { header: Record<string, unknown>; payload: Record<string, unknown> }) => {
      const tk = keys.tokenKey;
      if (!tk || signer.method !== 'jwk' || signer.publicJwk.kid !== tk.publicJwk.kid || signer.alg !== 'ES256') {
        throw new Error('no signing key for this signer');
      }
      const input = `${b64(jwt.header)}.${b64(jwt.payload)}`;
      return { jwt: `${input}.${Buffer.from(tk.sign(Buffer.from(input))).toString('base64url')}`, signerJwk: tk.publicJwk };
    },
    verifyJwt: async (signer: JwtSigner, jwt: { header: Record<string, unknown>; compact: string }) => {
      // A key that comes with private members is not a public key: never verified against (lib/oid4vc/jwk.ts).
      if (signer.method === 'jwk' && privateJwkMembers(signer.publicJwk).length > 0) return { verified: false as const };
      const jwk = signerPublicJwk(signer);
      const alg = signer.alg ?? (jwt.header.alg as string);
      if (!jwk || !(VERIFIABLE_ALGS as readonly string[]).includes(alg)) return { verified: false as const };
      return verifyJws(jwt.compact, jwk, alg) ? { verified: true as const, signerJwk: jwk } : { verified: false as const, signerJwk: jwk };
    },
    // The server side never authenticates itself as a client.
    clientAuthentication: () => {
      throw new Error('client authentication is not used by the issuer');
    },
    fetch: (async (input: string | URL | Request) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const tk = keys.tokenKey;
      if (tk && url === tk.jwksUri) {
        const { kid, kty, crv, x, y } = tk.publicJwk;
        return new Response(JSON.stringify({ keys: [{ kid, kty, crv, x, y, use: 'sig', alg: 'ES256' }] }), { headers: { 'content-type': 'application/json' } });
      }
      throw new Error(`the issuer makes no outbound requests (asked for ${url})`);
    }) as typeof fetch,
  } satisfies Omit<CallbackContext, 'decryptJwe' | 'encryptJwe'>;
}
