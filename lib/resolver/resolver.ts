import { createPublicKey, ECDH, type JsonWebKey } from 'node:crypto';
import bs58 from 'bs58';
import { didDocument, type DidDocument } from '../dids/document';
import { DIDCOMM_SERVICE_MARKER, DIDCOMM_SERVICE_METHODS, publicRefOfServiceItem, withDidcommService } from '../dids/didcomm-service';
import { didcommEndpoint } from '../didcomm/records';
import { anoncredsEndpoint, ANONCREDS_SERVICE, didWebIdOf } from '../anoncreds/identifiers';
import { decodeMultibaseKey, type DidMethod } from '../dids/methods';
import { publicLookup, qualify } from '../dids/records';
import type { PublicJwk } from '../keys/port';
import { TABLE } from '../service/resources';
import { comparableDid } from '../store/keys';
import type { Item, ItemStore } from '../store/port';

export interface Resolved {
  readonly document: DidDocument;
  /** Set when the DID was deactivated (DID Core: `deactivated: true` in the document metadata). */
  readonly deactivatedAt?: string;
}

/**
 * Public resolution: published DIDs of any wallet — read through the PublicDids index only, which
 * projects nothing but what a document needs — and did:key / did:jwk, which carry their key.
 */
export class DidResolver {
  constructor(private readonly store: ItemStore) {}

  /**
   * `baseUrl`: the service's public base URL, for the DIDComm endpoint of a public DID's service
   * (lib/dids/didcomm-service.ts); without it the document has no service (the verifier reads keys only).
   */
  async resolve(did: string, baseUrl?: string): Promise<Resolved | null> {
    const qualified = qualify(did);
    // Under one lookup value: the DID's item and, for a wallet's current public DID, its DIDComm
    // service item. did:web values name only the id (128 random bits), so more is not expected; 4 bounds the read.
    const items = await this.store.query(publicLookup(qualified), { index: TABLE.publicDids.name, limit: 4 });
    // did:web arrives with its port's %3A decoded when it came through a URL path: compare decoded forms.
    const same = (i: Item) => typeof i.qualified === 'string' && comparableDid(i.qualified) === comparableDid(qualified);
    const item = items.find((i) => same(i) && i.method !== DIDCOMM_SERVICE_MARKER);
    if (item) {
      let document = didDocument(item.qualified as string, item.method as DidMethod, item.public_jwk as PublicJwk);
      if (item.deactivated_at) return { document, deactivatedAt: item.deactivated_at as string };
      // Only a service item of the DID's own wallet (same partition key) counts.
      const service = items.find((i) => same(i) && i.method === DIDCOMM_SERVICE_MARKER && i.PK === item.PK);
      const verkey = service && serviceVerkey(service.public_jwk);
      const ref = service && publicRefOfServiceItem(service);
      if (baseUrl !== undefined && verkey && ref && DIDCOMM_SERVICE_METHODS.includes(item.method as DidMethod)) {
        document = withDidcommService(document, { verkey, endpoint: didcommEndpoint(baseUrl, ref) });
      }
      // The did:web AnonCreds method: where the DID's schemas and credential definitions resolve (lib/anoncreds/identifiers.ts).
      if (baseUrl !== undefined && item.method === 'web') {
        const service = { id: `${document.id}#${ANONCREDS_SERVICE}`, type: 'AnonCredsRegistry', serviceEndpoint: anoncredsEndpoint(baseUrl, didWebIdOf(document.id)) };
        document = { ...document, service: [...((document.service as unknown[] | undefined) ?? []), service] };
      }
      return { document };
    }
    const document = selfResolve(qualified);
    return document ? { document } : null;
  }
}

/** The base58 verkey of an Ed25519 JWK, or undefined for anything else. */
function serviceVerkey(jwk: unknown): string | undefined {
  const j = jwk as Partial<PublicJwk> | undefined;
  if (j?.kty !== 'OKP' || j.crv !== 'Ed25519' || typeof j.x !== 'string') return undefined;
  const raw = Buffer.from(j.x, 'base64url');
  return raw.length === 32 ? bs58.encode(raw) : undefined;
}

/** did:key and did:jwk carry their key in the identifier: anyone can build the document. */
export function selfResolve(did: string): DidDocument | null {
  try {
    if (did.startsWith('did:jwk:')) {
      const jwk = JSON.parse(Buffer.from(did.slice(8), 'base64url').toString('utf8'));
      if (typeof jwk !== 'object' || jwk === null || 'd' in jwk) return null; // did:jwk must not carry a private key
      const use = jwk.use === 'sig' || jwk.use === 'enc' ? { use: jwk.use as string } : {};
      if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return documentIfValid(did, 'jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, use);
      if (jwk.kty === 'EC' && jwk.crv === 'P-256') return documentIfValid(did, 'jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, use);
    }
    if (did.startsWith('did:key:z')) {
      const key = decodeMultibaseKey(did.slice(8));
      if (key?.type === 'Ed25519') {
        return documentIfValid(did, 'key', { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.raw).toString('base64url') });
      }
      if (key?.type === 'P-256') {
        // Decompressing checks that the point is on the curve (it throws otherwise).
        const point = ECDH.convertKey(Buffer.from(key.raw), 'prime256v1', undefined, undefined, 'uncompressed') as Buffer;
        return didDocument(did, 'key', { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') });
      }
    }
  } catch {
    return null; // not decodable: unknown, like any other
  }
  return null;
}

/** The document, when the key is usable: the right lengths and (P-256) a point on the curve, as node's import checks. */
function documentIfValid(did: string, method: 'key' | 'jwk', jwk: PublicJwk, use: { use?: string } = {}): DidDocument | null {
  const len = (v: unknown) => (typeof v === 'string' && /^[A-Za-z0-9_-]+$/.test(v) ? Buffer.from(v, 'base64url').length : -1);
  if (len(jwk.x) !== 32 || (jwk.kty === 'EC' && len(jwk.y) !== 32)) return null;
  try {
    createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    return null;
  }
  return didDocument(did, method, { ...jwk, ...use });
}
