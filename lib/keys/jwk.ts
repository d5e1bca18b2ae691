import { createPublicKey, type KeyObject } from 'node:crypto';
import type { PublicJwk } from './port';

/** SubjectPublicKeyInfo DER (what KMS GetPublicKey returns) to a public JWK, through node's parser. */
export function spkiDerToJwk(der: Uint8Array): PublicJwk {
  return keyObjectToJwk(createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' }));
}

export function keyObjectToJwk(key: KeyObject): PublicJwk {
  const jwk = key.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y?: string };
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y! };
  throw new Error(`unsupported public key ${jwk.kty}/${jwk.crv}`);
}
