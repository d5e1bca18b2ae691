import { vcIssuer } from './jwt-vp';
import { decodeJwt } from './sd-jwt';
import { PresentationInvalidError } from './types';

/**
 * What a presented token will make the verifier fetch, read before anything is verified: each
 * credential's issuer (the identity its signature will be checked against, taken exactly as the
 * verifiers take it) and the status lists it names. The response endpoint bounds these and checks the
 * issuers are trusted before a single request leaves; nothing here is believed until verified.
 */
export interface CredentialOutline {
  readonly issuer: string;
  readonly statusLists: readonly string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const malformed = (detail: string): never => {
  throw new PresentationInvalidError('malformed_presentation', detail);
};

/** An SD-JWT VC (`<issuer-jwt>~…`): one credential. */
function sdJwtOutline(token: string): CredentialOutline[] {
  const { payload } = decodeJwt(token.split('~')[0]!, 'issuer-signed JWT');
  if (typeof payload.iss !== 'string' || payload.iss === '') return malformed('the credential has no iss');
  const status = isObject(payload.status) ? payload.status.status_list : undefined;
  const uri = isObject(status) && typeof status.uri === 'string' ? status.uri : undefined;
  return [{ issuer: payload.iss, statusLists: uri ? [uri] : [] }];
}

/** A JWT VP: each VC-JWT it carries. */
function jwtVpOutline(token: string): CredentialOutline[] {
  const { payload } = decodeJwt(token, 'VP');
  if (!isObject(payload.vp)) return malformed('the VP JWT has no vp object');
  if (payload.vp.verifiableCredential === undefined) return malformed('the VP has no verifiableCredential');
  return asArray(payload.vp.verifiableCredential).map((entry, i) => {
    if (typeof entry !== 'string') throw new PresentationInvalidError('unsupported_format', `credential ${i} is embedded as an object, not a VC-JWT`);
    const vc = decodeJwt(entry, `credential ${i}`).payload;
    const issuer = vcIssuer(vc);
    if (!issuer) return malformed(`credential ${i} has no issuer`);
    const lists = isObject(vc.vc) ? asArray(vc.vc.credentialStatus) : [];
    const statusLists = lists.flatMap((e) => (isObject(e) && e.type === 'BitstringStatusListEntry' && typeof e.statusListCredential === 'string' ? [e.statusListCredential] : []));
    return { issuer, statusLists };
  });
}

export function outlineToken(token: string, family: 'sd-jwt' | 'jwt'): CredentialOutline[] {
  return family === 'sd-jwt' ? sdJwtOutline(token) : jwtVpOutline(token);
}
