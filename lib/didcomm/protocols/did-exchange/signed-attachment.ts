import bs58 from 'bs58';
import { didKeyFromVerkey, ed25519Sign, ed25519Verify } from '../../envelope';
import type { Attachment } from '../common';

/**
 * Signed attachments of DID Exchange (RFC 0023 `did_rotate~attach`, `did_doc~attach`): a JWS in
 * flattened form without its payload, over the attachment's base64 data, signed EdDSA with the
 * invitation's key, `kid` a did:key as ACA-Py and Credo write and check it. Hand-written on
 * node:crypto's Ed25519 (envelope.ts): a few lines, where a JOSE library would need the key as a JWK KeyObject and a
 * detached-payload mode for the same result.
 */
export interface SigningKey {
  readonly publicKey: Uint8Array;
  readonly seed: Uint8Array;
}

export class AttachmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttachmentError';
  }
}

const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
/** Attachments carry base64 or base64url (Credo writes base64url for a DID, base64 for a document). */
const fromB64 = (s: string) => Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');

export function signAttachment(data: string | Record<string, unknown>, key: SigningKey): Attachment {
  const payload = Buffer.from(typeof data === 'string' ? data : JSON.stringify(data));
  const kid = didKeyFromVerkey(bs58.encode(key.publicKey));
  const protectedHeader = b64url(JSON.stringify({ alg: 'EdDSA', kid, jwk: { kty: 'OKP', crv: 'Ed25519', x: b64url(key.publicKey), kid } }));
  const signature = ed25519Sign(Buffer.from(`${protectedHeader}.${b64url(payload)}`), key.seed);
  return {
    ...(typeof data === 'string' ? {} : { 'mime-type': 'application/json' }),
    data: { base64: typeof data === 'string' ? b64url(payload) : payload.toString('base64'), jws: { header: { kid }, protected: protectedHeader, signature: b64url(signature) } },
  };
}

/**
 * The attachment's payload, once a signature over it by one of `signers` (verkeys) verifies; throws
 * {@link AttachmentError} otherwise. The key is the one the signer names (`kid` did:key, or the
 * protected header's `jwk`) and must be one of `signers`.
 */
export function verifyAttachment(att: Attachment, signers: readonly string[]): Buffer {
  const { base64, jws } = att.data;
  if (base64 === undefined) throw new AttachmentError('attachment has no base64 data');
  if (!jws) throw new AttachmentError('attachment is not signed');
  const payload = fromB64(base64);
  const entries = jws.signatures ?? (jws.protected !== undefined && jws.signature !== undefined ? [{ header: jws.header, protected: jws.protected, signature: jws.signature }] : []);
  const allowed = new Map(signers.map((v) => [didKeyFromVerkey(v), bs58.decode(v)]));
  for (const e of entries) {
    let header: { alg?: unknown; kid?: unknown; jwk?: { x?: unknown } };
    try {
      header = JSON.parse(fromB64(e.protected).toString('utf8'));
    } catch {
      continue;
    }
    if (header.alg !== 'EdDSA') continue;
    const kid = typeof e.header?.kid === 'string' ? e.header.kid : typeof header.kid === 'string' ? header.kid : undefined;
    const byKid = kid !== undefined ? allowed.get(kid.split('#')[0]!) : undefined;
    const byJwk = typeof header.jwk?.x === 'string' ? [...allowed.values()].find((pk) => b64url(pk) === header.jwk!.x) : undefined;
    const publicKey = byKid ?? byJwk;
    if (!publicKey) continue;
    if (ed25519Verify(fromB64(e.signature), Buffer.from(`${e.protected}.${b64url(payload)}`), publicKey)) return payload;
  }
  throw new AttachmentError('no valid signature by an expected key');
}
