import type { KeyAlg, PublicJwk } from '../keys/port';
import type { Item } from '../store/port';
import type { DidMethod, KeyType } from './methods';

/** ACA-Py's postures: wallet_only (never published), public (the wallet's public DID), posted (was public). */
export type Posture = 'wallet_only' | 'public' | 'posted';

export interface DidRecord {
  /** As the API shows it: the bare nym for did:sov (as Indy/ACA-Py do), the full DID otherwise. */
  readonly did: string;
  /** The fully qualified DID (did:sov:<nym> for sov). */
  readonly qualified: string;
  readonly method: DidMethod;
  readonly key_type: KeyType;
  readonly alg: KeyAlg;
  readonly key_ref: string;
  readonly public_jwk: PublicJwk;
  readonly verkey: string;
  readonly kid: string;
  readonly posture: Posture;
  readonly created_at: string;
  readonly published_at?: string;
}

export function didFromItem(item: Item): DidRecord {
  return {
    did: item.did as string,
    qualified: item.qualified as string,
    method: item.method as DidMethod,
    key_type: item.key_type as KeyType,
    alg: item.alg as KeyAlg,
    key_ref: item.key_ref as string,
    public_jwk: item.public_jwk as PublicJwk,
    verkey: item.verkey as string,
    kid: item.kid as string,
    posture: item.posture as Posture,
    created_at: item.created_at as string,
    ...(item.published_at ? { published_at: item.published_at as string } : {}),
  };
}

/** The contract's DID record (2.11); `metadata` carries what a verifier or signer needs. */
export function didView(d: DidRecord) {
  return {
    did: d.did,
    verkey: d.verkey,
    posture: d.posture,
    key_type: d.key_type,
    method: d.method,
    metadata: {
      kid: d.kid,
      public_jwk: d.public_jwk,
      created_at: d.created_at,
      ...(d.published_at ? { published_at: d.published_at } : {}),
    },
  };
}

/** GSI1 value under which a published DID is found by the public resolver. */
export function publicLookup(qualified: string): string {
  if (qualified.startsWith('did:web:')) return `DIDWEB#${qualified.slice(qualified.lastIndexOf(':') + 1)}`;
  return `DID#${qualified}`;
}
