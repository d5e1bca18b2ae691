import bs58 from 'bs58';
import type { KeyAlg, PublicJwk } from '../keys/port';
import { NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { Item, ItemStore } from '../store/port';
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
  /** Set by deactivation: the DID resolves as deactivated and its key is scheduled for deletion. */
  readonly deactivated_at?: string;
  readonly key_deletion_date?: string;
  /** Counted in the wallet's DID quota when created (DIDs from before the quota were not). */
  readonly quota_counted?: true;
}

/** Longest DID accepted anywhere: keys are `DID#<did>` and a DynamoDB sort key holds 1024 bytes. */
export const MAX_DID_LENGTH = 1000;

/** DID syntax (W3C DID Core: ASCII method-specific id) or a bare did:sov nym; no longer than {@link MAX_DID_LENGTH}. */
export function isDidSyntax(value: string): boolean {
  return value.length <= MAX_DID_LENGTH && (/^did:[a-z0-9]+:[!-~]+$/.test(value) || isBareNym(value));
}

/**
 * A bare did:sov nym: the base58 of a key's first 16 bytes. 21 or 22 characters is ACA-Py's pattern,
 * taken as it stands; fewer, when those bytes start small (about 1 key in 10 million), if they decode
 * to 16 bytes.
 */
const isBareNym = (value: string): boolean => /^[1-9A-HJ-NP-Za-km-z]{1,22}$/.test(value) && (value.length >= 21 || bs58.decode(value).length === 16);

/** A DID as callers may write it: did:sov nyms also bare, as the contract's create-did returns them. */
export function qualify(did: string): string {
  return isBareNym(did) ? `did:sov:${did}` : did;
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
    ...(item.deactivated_at ? { deactivated_at: item.deactivated_at as string } : {}),
    ...(item.key_deletion_date ? { key_deletion_date: item.key_deletion_date as string } : {}),
    ...(item.quota_counted === true ? { quota_counted: true as const } : {}),
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
      ...(d.deactivated_at ? { deactivated_at: d.deactivated_at } : {}),
      ...(d.key_deletion_date ? { key_deletion_date: d.key_deletion_date } : {}),
    },
  };
}

/** PublicDids index value under which a published DID is found by the public resolver. */
export function publicLookup(qualified: string): string {
  if (qualified.startsWith('did:web:')) return `DIDWEB#${qualified.slice(qualified.lastIndexOf(':') + 1)}`;
  return `DID#${qualified}`;
}

/** One of the wallet's DIDs (full or bare did:sov), read from its partition: 404 `did_not_found` if it has none. */
export async function readDid(store: ItemStore, scope: TenantScope, did: string): Promise<DidRecord> {
  const item = await store.get(keys.did(scope, qualify(did)));
  if (!item) throw new NotFoundError(`No DID ${did} in this wallet`, 'did_not_found');
  return didFromItem(item);
}

/** The wallet's public DID, or null. */
export async function readPublicDid(store: ItemStore, scope: TenantScope): Promise<DidRecord | null> {
  const pointer = await store.get(keys.publicDid(scope));
  return pointer ? readDid(store, scope, pointer.did as string) : null;
}
