import { createHash } from 'node:crypto';
import type { ItemKey } from '../store/port';
import { walletPartitionKey } from '../service/resources';
import type { TenantScope } from '../store/keys';

/**
 * The OID4VCI data model shared by the admin API (lib/oid4vci/supported.ts, exchanges.ts) and the
 * public protocol endpoints (lib/oid4vci/protocol/*). Records are stored in the wallet's partition.
 */

/** Formats a supported-credential record may have. `dc+sd-jwt` is the SD-JWT VC media type since draft 06. */
export const SUPPORTED_FORMATS = ['vc+sd-jwt', 'dc+sd-jwt', 'jwt_vc_json'] as const;
export type SupportedFormat = (typeof SUPPORTED_FORMATS)[number];

export interface DisplayEntry {
  readonly name?: string;
  readonly locale?: string;
  readonly text_color?: string;
  readonly background_color?: string;
  readonly logo?: { readonly url?: string; readonly alt_text?: string; readonly uri?: string };
  readonly [k: string]: unknown;
}

/** Contract 2.1, as stored and returned. */
export interface SupportedCredentialRecord {
  readonly supported_cred_id: string;
  readonly wallet_id: string;
  readonly identifier: string;
  readonly format: SupportedFormat;
  readonly format_data: Record<string, unknown> | null;
  readonly vc_additional_data: Record<string, unknown> | null;
  readonly cryptographic_binding_methods_supported: string[] | null;
  readonly cryptographic_suites_supported: string[] | null;
  readonly display: DisplayEntry[] | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A claim leaf: `{mandatory, value_type}` (plus display). A group is an object of further claims. */
export interface ClaimLeaf {
  readonly mandatory?: boolean;
  readonly value_type?: string;
  readonly display?: readonly DisplayEntry[];
}
export type ClaimTree = { readonly [name: string]: ClaimLeaf | ClaimTree };

/**
 * What issuance and the issuer metadata need from a record, whichever create endpoint stored it
 * (the generic endpoint keeps display and binding methods inside format_data). Built by
 * `issuableConfiguration` in lib/oid4vci/supported.ts.
 */
export interface IssuableConfiguration {
  /** The record's `identifier`: the credential configuration id wallets see. */
  readonly id: string;
  readonly supportedCredId: string;
  readonly format: SupportedFormat;
  /** SD-JWT VC type. */
  readonly vct?: string;
  /** jwt_vc_json: `vc.type` and `vc['@context']` (from vc_additional_data, else format_data). */
  readonly types?: readonly string[];
  readonly context?: readonly string[];
  /** SD-JWT `claims`, or jwt_vc_json `credentialSubject`: the claims a subject may carry. */
  readonly claims: ClaimTree;
  /** JSON pointers of the selectively disclosable claims (SD-JWT only). */
  readonly sdList: readonly string[];
  readonly order: readonly string[] | null;
  readonly display: readonly DisplayEntry[] | null;
  readonly bindingMethods: readonly string[] | null;
  /** Credential signing algorithms (contract: cryptographic_suites_supported). */
  readonly signingAlgs: readonly string[] | null;
  /**
   * Whether a status-list definition was ever bound to the configuration, kept on its record (false
   * from creation; the binding sets it true in its own transaction), so that issuing a configuration
   * without status lists does not look for bindings. Undefined: a record from before the fact was
   * kept, or a configuration not read from a record; allocation then looks.
   */
  readonly statusListsBound?: boolean;
}

/**
 * Exchange states (contract 3.1 names `created` and `offer`; the rest is ours, docs/oid4vci.md, "Offers and exchanges"):
 * created (creation response only) → offer → redeemed (code traded for an access token) → issued
 * → accepted | deleted | failed (the wallet's notification); offer → expired (code lifetime passed),
 * redeemed → expired (access token lifetime passed unused); offer → failed (tx_code attempts
 * exhausted); redeemed → failed (the configuration or issuer DID went away before issuance).
 */
export const EXCHANGE_STATES = ['created', 'offer', 'redeemed', 'issued', 'accepted', 'deleted', 'failed', 'expired'] as const;
export type ExchangeState = (typeof EXCHANGE_STATES)[number];
/** The states an exchange moves into after it is stored: each has its `oid4vci.exchange.<state>` event. */
export type ExchangeTransitionState = Exclude<ExchangeState, 'created' | 'offer'>;

/** Contract 2.2 fields, plus internal ones the API never shows (see `exchangeView`). */
export interface ExchangeRecord {
  readonly exchange_id: string;
  readonly supported_cred_id: string;
  readonly wallet_id: string;
  readonly state: ExchangeState;
  readonly pin: string | null;
  readonly credential_subject: Record<string, unknown>;
  readonly verification_method: string;
  readonly issuer_id: string;
  readonly code: string;
  readonly nonce: string | null;
  readonly token: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  // Internal.
  /** Epoch ms after which the pre-authorized code is refused. */
  readonly code_expires_at: number;
  /** Unguessable id of the offer served by reference. */
  readonly offer_ref: string;
  readonly tx_code_attempts?: number;
  /** Epoch ms after which the access token (state `redeemed`) no longer works. */
  readonly token_expires_at?: number;
  readonly failure_reason?: string;
  readonly notification_id?: string;
  readonly issued_count?: number;
}

/** Sort-key prefixes in the wallet's partition `W#<wallet>`. */
export const SK = {
  supported: 'VCS#',
  /** Uniqueness of a supported credential's identifier within the wallet. */
  supportedIdentifier: 'VCSID#',
  exchange: 'VCX#',
  /** A pre-authorized code → its exchange (keyed by the code's SHA-256, base64url). */
  code: 'VCCODE#',
  /** An offer served by reference → its exchange. */
  offerRef: 'VCOFFER#',
  /** A used c_nonce or DPoP jti (single use), kept until it would have expired anyway. */
  used: 'VCUSED#',
} as const;

const pk = (s: TenantScope) => walletPartitionKey(s.walletId);

/** SHA-256, base64url: how one-time values (codes, nonces, DPoP `jti`s) appear in keys — fixed length, never the value. */
export function lookupHash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

export const oid4vciKeys = {
  supported: (s: TenantScope, id: string): ItemKey => ({ PK: pk(s), SK: `${SK.supported}${id}` }),
  supportedIdentifier: (s: TenantScope, identifier: string): ItemKey => ({ PK: pk(s), SK: `${SK.supportedIdentifier}${identifier}` }),
  exchange: (s: TenantScope, id: string): ItemKey => ({ PK: pk(s), SK: `${SK.exchange}${id}` }),
  /** Keyed by the code's hash: the table never holds a redeemable code in a key. */
  code: (s: TenantScope, code: string): ItemKey => ({ PK: pk(s), SK: `${SK.code}${lookupHash(code)}` }),
  offerRef: (s: TenantScope, ref: string): ItemKey => ({ PK: pk(s), SK: `${SK.offerRef}${ref}` }),
  used: (s: TenantScope, kind: 'nonce' | 'dpop', value: string): ItemKey => ({ PK: pk(s), SK: `${SK.used}${kind}#${lookupHash(value)}` }),
};

/**
 * Each wallet is its own credential issuer: `<base>/oid4vci/<public_ref>` (its public reference, never
 * its sequential id: lib/tenancy/public-refs.ts). Its metadata lists only its configurations, and its
 * codes and tokens are looked up only in its own partition.
 */
export function issuerUrl(baseUrl: string, publicRef: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/oid4vci/${publicRef}`;
}

export const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
