import { ECDH } from 'node:crypto';
import bs58 from 'bs58';
import { comparableDid } from '../store/keys';
import type { ItemStore } from '../store/port';
import { didDocument } from './document';
import { didFromItem, publicLookup } from './records';

/** A DID as callers may write it: did:sov nyms also bare, as the contract's create-did returns them. */
export function qualify(did: string): string {
  return /^[1-9A-HJ-NP-Za-km-z]{21,22}$/.test(did) ? `did:sov:${did}` : did;
}

/** Public resolution: published DIDs of any wallet (by the public index only), and did:key / did:jwk. */
export class DidResolver {
  constructor(private readonly store: ItemStore) {}

  async resolve(did: string): Promise<Record<string, unknown> | null> {
    const qualified = qualify(did);
    const items = await this.store.query(publicLookup(qualified), { index: 'GSI1', limit: 2 });
    // did:web arrives with its port's %3A decoded when it came through a URL path: compare decoded forms.
    const item = items.find((i) => comparableDid(i.qualified as string) === comparableDid(qualified));
    if (item) {
      const d = didFromItem(item);
      return didDocument(d.qualified, d.method, d.public_jwk);
    }
    return selfResolve(qualified);
  }
}

/** did:key and did:jwk carry their key in the identifier: anyone can build the document. */
export function selfResolve(did: string): Record<string, unknown> | null {
  try {
    if (did.startsWith('did:jwk:')) {
      const jwk = JSON.parse(Buffer.from(did.slice(8), 'base64url').toString('utf8'));
      if (typeof jwk !== 'object' || jwk === null || 'd' in jwk) return null; // did:jwk must not carry a private key
      if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string') return didDocument(did, 'jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x });
      if (jwk.kty === 'EC' && jwk.crv === 'P-256' && typeof jwk.x === 'string' && typeof jwk.y === 'string') {
        return didDocument(did, 'jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y });
      }
    }
    if (did.startsWith('did:key:z')) {
      const bytes = bs58.decode(did.slice(9));
      if (bytes.length === 34 && bytes[0] === 0xed && bytes[1] === 0x01) {
        return didDocument(did, 'key', { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.subarray(2)).toString('base64url') });
      }
      if (bytes.length === 35 && bytes[0] === 0x80 && bytes[1] === 0x24) {
        const point = ECDH.convertKey(Buffer.from(bytes.subarray(2)), 'prime256v1', undefined, undefined, 'uncompressed') as Buffer;
        return didDocument(did, 'key', { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') });
      }
    }
  } catch {
    return null; // not decodable: unknown, like any other
  }
  return null;
}
