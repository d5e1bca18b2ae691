import { comparableDid } from '../../store/keys';
import type { TrustReason } from './types';

/**
 * Which issuers a verifier accepts credentials from (docs/oid4vp.md, "Which issuers are trusted").
 * A signature proves who issued a credential, not that the verifier should believe them: anyone can
 * sign a credential of any `vct` under a fresh did:jwk. So an issuer must be trusted, in this order:
 * pinned by the request, listed in the wallet's trusted-issuers setting, a DID of the wallet itself,
 * or accepted because the setting is the single value `"*"` (any issuer: the opt-out).
 */

/** The setting's opt-out: any issuer is trusted (dangerous: docs/oid4vp.md). */
export const ANY_ISSUER = '*';
/** At most this many entries in the setting, each at most this long (DIDs: the service's DID bound). */
export const MAX_TRUSTED_ISSUERS = 100;
export const MAX_TRUSTED_ISSUER_LENGTH = 1000;

/** Issuers compare as strings (RFC 3986 simple comparison, as SD-JWT VC's `iss`), DIDs in their keyed form (did:web percent-decoded). */
export const comparableIssuer = (issuer: string): string => (issuer.startsWith('did:') ? comparableDid(issuer) : issuer);

// W3C DID Core: did:<method>:<method-specific-id>, idchar = ALPHA / DIGIT / . / - / _ / pct-encoded, ':' between; no path, query or fragment.
const DID = /^did:[a-z0-9]+:(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2}|:)*(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})$/;

const isLoopbackHost = (hostname: string) => {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
};

/**
 * Why a value cannot be an entry of the trusted-issuers setting, or null: a DID, or an https issuer
 * URL (an SD-JWT VC `iss` resolved through its JWT VC Issuer Metadata) without credentials, query or
 * fragment. `allowLoopbackHttp`: the local runtime, where issuers on loopback serve plain http.
 */
export function trustedIssuerProblem(value: string, opts: { readonly allowLoopbackHttp: boolean }): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_TRUSTED_ISSUER_LENGTH) return `longer than ${MAX_TRUSTED_ISSUER_LENGTH} characters`;
  if (value.startsWith('did:')) return DID.test(value) ? null : 'is not a DID (did:<method>:<id>, without path, query or fragment)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a DID or an https issuer URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be a DID or an https issuer URL';
  if (/\s/.test(value)) return 'must not contain whitespace';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.search || value.includes('?')) return 'must not have a query';
  if (url.hash || value.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && opts.allowLoopbackHttp && isLoopbackHost(url.hostname)) return null;
  return opts.allowLoopbackHttp ? 'must use https (http only for loopback hosts)' : 'must use https';
}

/** What a wallet trusts, read once per response. */
export interface TrustPolicy {
  /** The setting's entries, in comparable form. */
  readonly listed: ReadonlySet<string>;
  /** The setting is `["*"]`. */
  readonly anyIssuer: boolean;
  /** Whether the DID is an active DID of the wallet (one read of its record). */
  readonly isOwnDid: (did: string) => Promise<boolean>;
}

/** The policy of a setting's stored entries. */
export function trustPolicy(entries: readonly string[], isOwnDid: (did: string) => Promise<boolean>): TrustPolicy {
  const anyIssuer = entries.length === 1 && entries[0] === ANY_ISSUER;
  return { listed: new Set(anyIssuer ? [] : entries.map(comparableIssuer)), anyIssuer, isOwnDid };
}

/**
 * Why `issuer` is trusted, or null: pinned by the request (`pins`: the values the credential's query
 * allows for `iss`), then the setting's list, then the wallet's own DIDs, then `"*"`. The first
 * that holds is the reason recorded; only the own-DID check reads anything.
 */
export async function trustOf(issuer: string, pins: ReadonlySet<string> | undefined, policy: TrustPolicy): Promise<TrustReason | null> {
  const key = comparableIssuer(issuer);
  if (pins?.has(key)) return 'pinned_by_request';
  if (policy.listed.has(key)) return 'trusted_issuers_setting';
  if (issuer.startsWith('did:') && (await policy.isOwnDid(issuer))) return 'own_did';
  if (policy.anyIssuer) return 'any_issuer';
  return null;
}
