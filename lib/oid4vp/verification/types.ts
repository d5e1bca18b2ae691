import type { JWK } from 'jose';

/**
 * The seams of OID4VP response verification. The presentation verifiers (sd-jwt.ts, jwt-vp.ts) are
 * pure: what they need from the outside world (issuer keys, status lists, the clock) comes in here,
 * so tests inject real keys and lists without a network.
 */

/** Formats a presented credential may have. */
export type PresentedFormat = 'dc+sd-jwt' | 'vc+sd-jwt' | 'jwt_vc_json';

/**
 * Why a presentation is refused: one machine-readable code each, recorded on the presentation
 * (`presentation-invalid`) with a human-readable detail.
 */
export const INVALID_REASONS = {
  malformed_presentation: 'The vp_token, a credential or the presentation_submission could not be parsed',
  unsupported_format: 'The credential format is not one the request allows',
  issuer_unresolvable: "The issuer's key could not be resolved",
  invalid_issuer_signature: "The issuer's signature does not verify",
  credential_expired: 'The credential is past its exp',
  credential_not_yet_valid: 'The credential is before its nbf (or iat in the future)',
  missing_key_binding: 'No key-binding JWT (or VP signature) although holder binding is required',
  invalid_key_binding: 'The key-binding JWT or VP is not signed by the key the credential is bound to',
  wrong_nonce: 'The key-binding JWT or VP carries another nonce than the request',
  wrong_audience: 'The key-binding JWT or VP is addressed to another client_id',
  stale_key_binding: 'The key-binding JWT iat is too old or in the future',
  sd_hash_mismatch: 'The key-binding JWT sd_hash is not the hash of the presented SD-JWT',
  invalid_disclosure: 'A disclosure is malformed, or its digest appears more than once',
  unreferenced_disclosure: 'A disclosure is not referenced by any digest of the issuer-signed JWT (RFC 9901 §7.1)',
  credential_revoked: 'The status list marks the credential as revoked',
  credential_suspended: 'The status list marks the credential as suspended',
  status_unavailable: "The credential's status list could not be fetched or verified",
  status_signer_mismatch: "The status list is signed by another issuer than the credential's",
  untrusted_issuer: 'The issuer is not trusted: not a DID of this wallet, not in its trusted-issuers setting, not pinned by the request',
  limits_exceeded: 'The response holds more credentials, issuers or status lists than one response may (docs/oid4vp.md, "Bounded verification")',
  verification_timeout: 'Fetching issuer keys and status lists did not finish within the verification deadline',
  holder_mismatch: 'The VP holder is not the subject the credentials were issued to',
  constraints_not_met: 'The disclosed claims do not satisfy the requested constraints (a field missing or failing its filter)',
  extra_disclosure: 'More claims were disclosed than requested under limit_disclosure: required',
  missing_credential: 'A requested credential (input descriptor or DCQL query) was not presented',
  invalid_submission: 'The presentation_submission does not match the definition or the vp_token',
} as const;
export type InvalidReason = keyof typeof INVALID_REASONS;

/** A refusal: thrown by the verifiers, recorded by the service. */
export class PresentationInvalidError extends Error {
  constructor(
    readonly reason: InvalidReason,
    readonly detail: string,
    /** The DCQL credential id or input descriptor id it concerns, when there is one. */
    readonly credentialId?: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'PresentationInvalidError';
  }
}

/**
 * Resolves the issuer's public key for a credential's JWS (kid a DID URL, or iss a URL for JWT VC
 * issuer metadata). `signal`: the verification's deadline, which cancels fetches in flight.
 */
export type IssuerKeyResolver = (input: { readonly iss: string | undefined; readonly header: Readonly<Record<string, unknown>>; readonly signal?: AbortSignal | undefined }) => Promise<JWK>;

/** Why a credential's issuer was trusted (docs/oid4vp.md, "Which issuers are trusted"). */
export const TRUST_REASONS = ['own_did', 'trusted_issuers_setting', 'pinned_by_request', 'any_issuer'] as const;
export type TrustReason = (typeof TRUST_REASONS)[number];

/** The status a credential's status list entry holds: the value (0 = valid) and what that value means. */
export interface StatusResult {
  readonly value: number;
  /** revocation / suspension / message …: the list's purpose (IETF: 1 = revoked, 2 = suspended). */
  readonly meaning: 'valid' | 'revoked' | 'suspended' | 'other';
}

/** What a status lookup needs besides the entry: whose list it must be, and the verification's deadline. */
export interface StatusLookup {
  /** The credential's issuer: the list must be signed by it (`status_signer_mismatch` otherwise). */
  readonly issuer: string;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Reads a credential's status entry: the IETF `status.status_list {idx, uri}` or a W3C
 * `BitstringStatusListEntry`. Fetches through the SSRF guard with a timeout and a cache; throws
 * PresentationInvalidError('status_unavailable') when the list cannot be fetched or verified, and
 * 'status_signer_mismatch' when another issuer than the credential's signed it.
 */
export interface StatusChecker {
  ietf(ref: { readonly uri: string; readonly idx: number }, lookup: StatusLookup): Promise<StatusResult>;
  w3c(entry: Readonly<Record<string, unknown>>, lookup: StatusLookup): Promise<StatusResult>;
}

/** A credential whose signatures, binding and status all verified: what the query matching reads. */
export interface VerifiedCredential {
  readonly format: PresentedFormat;
  readonly issuer: string;
  /** SD-JWT VC `vct`. */
  readonly vct?: string;
  /** jwt_vc_json `vc.type`. */
  readonly types?: readonly string[];
  /**
   * The claims as a verifier sees them. SD-JWT VC: the issuer-signed payload with the disclosed
   * claims in place (no `_sd`, `_sd_alg`, `...`). jwt_vc_json: the JWT payload with `vc` (PE paths
   * like `$.vc.credentialSubject.x` and `$.credentialSubject.x` both work: `vc` is also spread at top).
   */
  readonly claims: Readonly<Record<string, unknown>>;
  /** SD-JWT only: the paths (keys and array indexes) of the claims the holder chose to disclose. */
  readonly disclosedPaths: readonly (readonly (string | number)[])[];
  /** The holder key binding was proven (KB-JWT or VP signature). */
  readonly holderBound: boolean;
  readonly status?: StatusResult;
  /** Why its issuer is trusted: set by the response endpoint, which checks trust before verifying. */
  readonly issuerTrust?: TrustReason;
}

export interface VerificationContext {
  /** Our client_id as the wallet must address it (`aud`): the 1.0 prefixed form, or the draft form a draft wallet used. */
  readonly audiences: readonly string[];
  readonly nonce: string;
  readonly now: Date;
  /** How far a KB-JWT/VP `iat` may be from now, in seconds. */
  readonly maxIatSkewSeconds: number;
  readonly resolveIssuerKey: IssuerKeyResolver;
  readonly status: StatusChecker;
  /** The verification's deadline: aborted, it cancels the fetches in flight. */
  readonly signal?: AbortSignal | undefined;
}
