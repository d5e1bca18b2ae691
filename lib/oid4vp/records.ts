import { walletPartitionKey } from '../service/resources';
import type { TenantScope } from '../store/keys';
import type { Item, ItemKey } from '../store/port';
import type { MatchedCredentials } from './query';
import type { InvalidReason } from './verification/types';

/**
 * The OID4VP data model shared by the admin API (lib/oid4vp/service.ts) and the public verifier
 * endpoints (lib/oid4vp/protocol/*). Records live in the wallet's partition.
 */

/** Contract 2.4. */
export interface PresentationDefinitionRecord {
  readonly pres_def_id: string;
  readonly wallet_id: string;
  readonly pres_def: Record<string, unknown>;
  readonly created_at: string;
  readonly updated_at: string;
}

/**
 * Presentation states (contract 3.2 names `request-created`; the rest is ours, docs/oid4vp.md, "Presentation states"):
 * request-created → request-retrieved (the wallet fetched the signed request object) →
 * presentation-valid | presentation-invalid (the wallet's response, verified); request-created or
 * request-retrieved → expired (no response within the request's lifetime).
 */
export const PRESENTATION_STATES = ['request-created', 'request-retrieved', 'presentation-valid', 'presentation-invalid', 'expired'] as const;
export type PresentationState = (typeof PRESENTATION_STATES)[number];

/** Each state a presentation moves into has its event. */
export const PRESENTATION_EVENTS = {
  'request-created': 'oid4vp.presentation.request_created',
  'request-retrieved': 'oid4vp.presentation.request_retrieved',
  'presentation-valid': 'oid4vp.presentation.valid',
  'presentation-invalid': 'oid4vp.presentation.invalid',
  expired: 'oid4vp.presentation.expired',
} as const satisfies Record<PresentationState, string>;

/** Request lifetime in seconds: default and bounds of `expires_in` (not in the contract). */
export const REQUEST_LIFETIME = { default: 600, min: 60, max: 86400 } as const;

/** Formats a request may ask for (vp_formats keys): SD-JWT VC, and W3C JWT VCs inside JWT VPs. */
export const VP_FORMATS = ['vc+sd-jwt', 'dc+sd-jwt', 'jwt_vc_json', 'jwt_vp_json'] as const;
export type VpFormat = (typeof VP_FORMATS)[number];
/** Algorithms we verify. */
export const VP_ALGS = ['ES256', 'EdDSA'] as const;

/** Contract 2.5: keys per format as the contract names them (SD-JWT: sd-jwt_alg_values, kb-jwt_alg_values). */
export type VpFormats = Partial<Record<VpFormat, Record<string, readonly string[]>>>;

/** What the request asks for: a stored definition (PE v2, served as DCQL to 1.0 wallets), or a DCQL query. */
export type RequestQuery =
  | { readonly kind: 'pe'; readonly definition: Record<string, unknown>; readonly dcql: Record<string, unknown> }
  | { readonly kind: 'dcql'; readonly dcql: Record<string, unknown> };

/** One reason a presentation was refused. */
export interface InvalidReasonEntry {
  readonly code: InvalidReason | 'wallet_error';
  readonly detail: string;
  readonly credential_id?: string;
}

/** Contract 2.6 fields, the request (2.5) and the protocol state the API never shows. */
export interface PresentationRecord {
  readonly presentation_id: string;
  readonly pres_def_id: string | null;
  readonly request_id: string;
  readonly wallet_id: string;
  readonly state: PresentationState;
  readonly matched_credentials: MatchedCredentials | null;
  readonly errors: readonly InvalidReasonEntry[] | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly vp_formats: VpFormats;
  /** Epoch ms after which the request is no longer answered. */
  readonly expires_at: number;
  // Internal.
  readonly query: RequestQuery;
  /** The verifier's DID, its signing key and verification method (request object `kid`). */
  readonly verifier_did: string;
  readonly verification_method: string;
  readonly nonce: string;
  /** The OAuth `state` the wallet echoes. */
  readonly oauth_state: string;
  /** Which form of the request object the wallet retrieved: OpenID4VP 1.0 (DCQL), or the draft form (PE). */
  readonly retrieved_as?: 'v1' | 'draft';
}

export const VP_SK = {
  definition: 'VPD#',
  presentation: 'VPX#',
} as const;

const pk = (s: TenantScope) => walletPartitionKey(s.walletId);

export const oid4vpKeys = {
  definition: (s: TenantScope, id: string): ItemKey => ({ PK: pk(s), SK: `${VP_SK.definition}${id}` }),
  presentation: (s: TenantScope, id: string): ItemKey => ({ PK: pk(s), SK: `${VP_SK.presentation}${id}` }),
  /** The wallet's trusted-issuers setting (lib/oid4vp/trusted-issuers.ts). */
  trustedIssuers: (s: TenantScope): ItemKey => ({ PK: pk(s), SK: 'SETTINGS#TRUSTED_ISSUERS' }),
};

export function definitionFromItem(item: Item): PresentationDefinitionRecord {
  const { PK: _pk, SK: _sk, type: _type, ...rest } = item;
  return rest as unknown as PresentationDefinitionRecord;
}

export function presentationFromItem(item: Item): PresentationRecord {
  const { PK: _pk, SK: _sk, type: _type, ttl: _ttl, ...rest } = item;
  return rest as unknown as PresentationRecord;
}

/**
 * Each wallet is its own verifier: `<base>/oid4vp/<public_ref>` (its public reference, never its
 * sequential id: lib/tenancy/public-refs.ts), with each presentation's request object and response
 * endpoint beneath, named by the presentation id (its record's key: one read per call).
 */
export function verifierUrl(baseUrl: string, publicRef: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/oid4vp/${publicRef}`;
}
export const requestObjectUrl = (verifier: string, presentationId: string) => `${verifier}/request/${presentationId}`;
export const responseUrl = (verifier: string, presentationId: string) => `${verifier}/response/${presentationId}`;
