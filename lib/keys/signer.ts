import type { Signer } from '@sd-jwt/types';
import type { TenantScope } from '../store/keys';
import type { KeyAlg, KeyManager } from './port';

/** One issuer key as a signing capability: what the JWT/SD-JWT code receives, never the key. */
export interface IssuerSigner {
  readonly alg: KeyAlg;
  /** The DID URL verifiers resolve to find the public key (JWS `kid`). */
  readonly kid: string;
  sign(data: Uint8Array): Promise<Uint8Array>;
}

export function issuerSigner(keyManager: KeyManager, scope: TenantScope, key: { ref: string; alg: KeyAlg }, kid: string): IssuerSigner {
  return { alg: key.alg, kid, sign: (data) => keyManager.sign(scope, key.ref, key.alg, data) };
}

/** `@sd-jwt/*` signer: the SD-JWT library hands over the JWS signing input and wants base64url back. */
export function sdJwtSigner(signer: IssuerSigner): Signer {
  return async (data: string) => Buffer.from(await signer.sign(new TextEncoder().encode(data))).toString('base64url');
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * A compact JWS (RFC 7515) signed through the key manager. jose signs only with key material it
 * holds, so the JWS is assembled here; jose verifies it (tests), as any verifier would.
 */
export async function signCompactJws(signer: IssuerSigner, header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string> {
  const input = `${b64url({ ...header, alg: signer.alg, kid: signer.kid })}.${b64url(payload)}`;
  const signature = await signer.sign(new TextEncoder().encode(input));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}
