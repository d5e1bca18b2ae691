import { calculateJwkThumbprint, type JWK } from 'jose';
import {
  ACCEPTED_ALGS,
  CLOCK_SKEW_SECONDS,
  checkStatus,
  checkValidity,
  decodeJwt,
  epochSeconds,
  resolveHolderKey,
  resolveIssuerKey,
  verifySignature,
  type DecodedJwt,
} from './sd-jwt';
import { PresentationInvalidError, type InvalidReason, type StatusResult, type VerificationContext, type VerifiedCredential } from './types';

type Json = Record<string, unknown>;

const fail = (reason: InvalidReason, detail: string): never => {
  throw new PresentationInvalidError(reason, detail);
};

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const idOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : isObject(v) && typeof v.id === 'string' ? v.id : undefined);

/** The DID URL the VP names its key by: `kid` absolute, or a fragment of `iss`; did:key / did:jwk may omit it (one key). */
function holderKeyId(header: Json, holder: string): string {
  const kid = header.kid;
  if (typeof kid === 'string' && kid.startsWith('#')) return `${holder}${kid}`;
  if (typeof kid === 'string') {
    if (kid.split('#')[0] !== holder) fail('invalid_key_binding', `VP kid ${kid} is not a key of its holder ${holder}`);
    return kid;
  }
  if (holder.startsWith('did:key:') || holder.startsWith('did:jwk:')) return holder;
  return fail('invalid_key_binding', 'the VP names no key (kid)');
}

/** VCDM date-times (validFrom, expirationDate …) as epoch seconds; unparseable → malformed. */
function dateClaim(vc: Json, name: string, i: number): number | undefined {
  const v = vc[name];
  if (v === undefined) return undefined;
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) fail('malformed_presentation', `credential ${i} vc.${name} is not a date-time`);
  return Math.floor(ms / 1000);
}

interface CheckedVc {
  readonly jwt: DecodedJwt;
  readonly vc: Json;
  readonly issuer: string;
}

/**
 * Verifies a `jwt_vp_json` presentation (OpenID4VP B.1, VC-JWT): the VP signed by its holder DID,
 * addressed to us with our nonce, then each VC-JWT's issuer signature, validity and subject (the VCs
 * side by side). Status lists are read last, once each VC's signature has verified.
 */
export async function verifyJwtVpPresentation(vpJwt: string, ctx: VerificationContext): Promise<{ holder: string; credentials: VerifiedCredential[] }> {
  const vpToken = decodeJwt(vpJwt, 'VP');
  const { header, payload } = vpToken;
  const vp = payload.vp;
  if (!isObject(vp)) return fail('malformed_presentation', 'the VP JWT has no vp object');

  const vpHolder = idOf(vp.holder);
  const holder = typeof payload.iss === 'string' ? payload.iss : vpHolder;
  if (typeof holder !== 'string' || !holder.startsWith('did:')) return fail('malformed_presentation', 'the VP names no holder DID (iss)');
  if (vpHolder !== undefined && vpHolder !== holder) fail('holder_mismatch', `vp.holder ${vpHolder} is not the VP iss ${holder}`);

  const alg = header.alg;
  if (typeof alg !== 'string' || !(ACCEPTED_ALGS as readonly string[]).includes(alg)) fail('invalid_key_binding', `VP alg ${String(alg)} is not accepted`);
  const holderKey = await resolveHolderKey(holderKeyId(header, holder), ctx);
  if (!(await verifySignature(vpToken.compact, holderKey, alg as string))) fail('invalid_key_binding', `the VP is not signed by a key of ${holder}`);

  const aud = payload.aud;
  if (!asArray(aud).some((a) => typeof a === 'string' && ctx.audiences.includes(a))) fail('wrong_audience', `VP aud ${JSON.stringify(aud)} is not this verifier`);
  if (payload.nonce !== ctx.nonce) fail('wrong_nonce', 'the VP nonce is not the request nonce');

  // Wallets (Credo) often sign VPs without iat: the nonce is the freshness proof, iat is checked when present.
  const now = epochSeconds(ctx.now);
  const { iat, exp, nbf } = payload;
  if (iat !== undefined && (typeof iat !== 'number' || Math.abs(now - iat) > ctx.maxIatSkewSeconds)) fail('stale_key_binding', `VP iat ${String(iat)} is not within ${ctx.maxIatSkewSeconds}s of now`);
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_SKEW_SECONDS)) fail('stale_key_binding', `VP not valid before ${String(nbf)}`);
  if (exp !== undefined && (typeof exp !== 'number' || now >= exp)) fail('credential_expired', `the VP expired at ${String(exp)}`);

  if (vp.verifiableCredential === undefined) fail('malformed_presentation', 'the VP has no verifiableCredential');
  const entries = asArray(vp.verifiableCredential);
  entries.forEach((entry, i) => {
    if (typeof entry !== 'string') fail('unsupported_format', `credential ${i} is embedded as an object, not a VC-JWT`);
  });
  // The VCs side by side (their issuers' keys are fetched in parallel), then their lists likewise.
  const checked = await Promise.all(entries.map((entry, i) => verifyVcJwt(entry as string, i, holder, holderKey, ctx, now)));
  const statuses = await Promise.all(checked.map(({ vc, issuer }, i) => vcStatus(vc, issuer, i, ctx)));

  const credentials: VerifiedCredential[] = [];
  for (const [i, { jwt, vc, issuer }] of checked.entries()) {
    const status = statuses[i];
    const types = asArray(vc.type).filter((t): t is string => typeof t === 'string');
    credentials.push({
      format: 'jwt_vc_json',
      issuer,
      types,
      // `vc` spread at the top too, so `$.credentialSubject.x` and `$.vc.credentialSubject.x` both match; JWT claims win.
      claims: { ...vc, ...jwt.payload },
      disclosedPaths: [],
      holderBound: true,
      ...(status ? { status } : {}),
    });
  }
  return { holder, credentials };
}

/** A VC's `BitstringStatusListEntry`s, read in turn (other list kinds are not readable here); the first that is not valid wins. */
async function vcStatus(vc: Json, issuer: string, i: number, ctx: VerificationContext): Promise<StatusResult | undefined> {
  let status: StatusResult | undefined;
  for (const entry of asArray(vc.credentialStatus)) {
    if (!isObject(entry)) fail('malformed_presentation', `credential ${i} credentialStatus is not an object`);
    if ((entry as Json).type !== 'BitstringStatusListEntry') continue;
    const result = await checkStatus(() => ctx.status.w3c(entry as Json, { issuer, signal: ctx.signal }), `credential ${i}`);
    if (!status || status.meaning === 'valid') status = result;
  }
  return status;
}

/** A VC-JWT's issuer: `iss`, else `vc.issuer` (its id); the key that signed it must be this issuer's. */
export function vcIssuer(payload: Json): string | undefined {
  const vc = payload.vc;
  return typeof payload.iss === 'string' ? payload.iss : isObject(vc) ? idOf(vc.issuer) : undefined;
}

async function verifyVcJwt(compact: string, i: number, holder: string, holderKey: JWK, ctx: VerificationContext, now: number): Promise<CheckedVc> {
  const jwt = decodeJwt(compact, `credential ${i}`);
  const { header, payload } = jwt;
  const vc = payload.vc;
  if (!isObject(vc)) return fail('unsupported_format', `credential ${i} is not a VC-JWT (no vc claim)`);
  const issuer = vcIssuer(payload);
  if (!issuer) return fail('malformed_presentation', `credential ${i} has no issuer`);

  const alg = header.alg;
  if (typeof alg !== 'string' || !(ACCEPTED_ALGS as readonly string[]).includes(alg)) fail('invalid_issuer_signature', `credential ${i} alg ${String(alg)} is not accepted`);
  const key = await resolveIssuerKey(ctx, issuer, header);
  if (!(await verifySignature(compact, key, alg as string))) fail('invalid_issuer_signature', `credential ${i}: the signature of ${issuer} does not verify`);

  checkValidity(payload, now, `credential ${i}`);
  const validUntil = dateClaim(vc, 'validUntil', i) ?? dateClaim(vc, 'expirationDate', i);
  const validFrom = dateClaim(vc, 'validFrom', i) ?? dateClaim(vc, 'issuanceDate', i);
  if (validUntil !== undefined && now >= validUntil) fail('credential_expired', `credential ${i} expired at ${String(vc.validUntil ?? vc.expirationDate)}`);
  if (validFrom !== undefined && validFrom > now + CLOCK_SKEW_SECONDS) fail('credential_not_yet_valid', `credential ${i} not valid before ${String(vc.validFrom ?? vc.issuanceDate)}`);

  if (!(await boundToHolder(payload, vc, holder, holderKey))) fail('holder_mismatch', `credential ${i} was not issued to ${holder}`);
  return { jwt, vc, issuer };
}

/**
 * The VC's subject is the VP's holder: `sub` (else every `credentialSubject.id`) equals the holder DID,
 * or — a credential we bound to a plain key (`cnf.jwk`, formats.ts) — the VP is signed by that key.
 */
async function boundToHolder(payload: Json, vc: Json, holder: string, holderKey: JWK): Promise<boolean> {
  const ids = typeof payload.sub === 'string' ? [payload.sub] : asArray(vc.credentialSubject).map(idOf);
  if (ids.length > 0 && ids.every((id) => id === holder)) return true;
  const cnf = payload.cnf;
  if (!isObject(cnf) || !isObject(cnf.jwk)) return false;
  try {
    return (await calculateJwkThumbprint(cnf.jwk as JWK)) === (await calculateJwkThumbprint(holderKey));
  } catch {
    return false;
  }
}
