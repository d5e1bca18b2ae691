import { createHash } from 'node:crypto';
import { compactVerify, importJWK, type JWK } from 'jose';
import { privateJwkMembers } from '../../oid4vc/jwk';
import { selfResolve } from '../../resolver/resolver';
import { PresentationInvalidError, type InvalidReason, type StatusResult, type VerificationContext, type VerifiedCredential } from './types';

/** Signature algorithms we accept, for issuers and holders alike (what our metadata advertises). */
export const ACCEPTED_ALGS = ['ES256', 'EdDSA'] as const;

/** Tolerated clock difference for `nbf` / `iat` in the future (issuer and wallet clocks drift). */
export const CLOCK_SKEW_SECONDS = 60;

const SD_JWT_FORMATS = ['dc+sd-jwt', 'vc+sd-jwt'] as const;
type SdJwtFormat = (typeof SD_JWT_FORMATS)[number];

/** IANA "Named Information Hash Algorithm" names an `_sd_alg` may carry, as node:crypto names them. */
const HASH_ALGS: Record<string, string> = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' };

/** SD-JWT VC §3.2.2.2: these claims must be plain in the issuer-signed payload (a hidden `exp` could be withheld). */
const NEVER_DISCLOSED = new Set(['iss', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status']);

type Json = Record<string, unknown>;
type Path = readonly (string | number)[];

const fail = (reason: InvalidReason, detail: string): never => {
  throw new PresentationInvalidError(reason, detail);
};

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An own property even for `__proto__` (a JSON claim name must not reach the prototype). */
const setOwn = (o: Json, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

export const epochSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

export interface DecodedJwt {
  readonly compact: string;
  readonly header: Json;
  readonly payload: Json;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(segment: string): unknown {
  if (!B64URL.test(segment)) throw new Error('not base64url');
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
}

/** A compact JWS with JSON object header and payload; anything else → malformed_presentation. */
export function decodeJwt(compact: string, what: string): DecodedJwt {
  const parts = compact.split('.');
  if (parts.length !== 3 || !parts[0] || !parts[1] || !parts[2]) fail('malformed_presentation', `${what} is not a compact JWS`);
  let header: unknown;
  let payload: unknown;
  try {
    header = decodeSegment(parts[0]!);
    payload = decodeSegment(parts[1]!);
  } catch {
    return fail('malformed_presentation', `${what} header or payload is not base64url JSON`);
  }
  if (!isObject(header) || !isObject(payload)) fail('malformed_presentation', `${what} header or payload is not a JSON object`);
  // A key sent in a header or a cnf must be public (lib/oid4vc/jwk.ts): refused before it is used or recorded.
  const cnf = (payload as Json).cnf;
  const exposed = new Set([...privateJwkMembers((header as Json).jwk), ...privateJwkMembers(isObject(cnf) ? cnf.jwk : undefined)]);
  if (exposed.size > 0) fail('malformed_presentation', `${what} carries private key members (${[...exposed].join(', ')}) in its header jwk or cnf.jwk`);
  return { compact, header: header as Json, payload: payload as Json };
}

/** The JWS signature verifies with this public key and algorithm (jose; private members dropped). */
export async function verifySignature(compact: string, jwk: JWK, alg: string): Promise<boolean> {
  if (!(ACCEPTED_ALGS as readonly string[]).includes(alg)) return false;
  try {
    const { kty, crv, x, y } = jwk;
    const key = await importJWK({ kty, crv, x, ...(y !== undefined ? { y } : {}) }, alg);
    await compactVerify(compact, key, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

/** The issuer's key via the context: its own refusals pass through, anything else is issuer_unresolvable. */
export async function resolveIssuerKey(ctx: VerificationContext, iss: string | undefined, header: Json): Promise<JWK> {
  try {
    return await ctx.resolveIssuerKey({ iss, header, signal: ctx.signal });
  } catch (e) {
    if (e instanceof PresentationInvalidError) throw e;
    return fail('issuer_unresolvable', `no key for ${String(header.kid ?? iss)}: ${(e as Error).message}`);
  }
}

/**
 * A holder's key from a DID URL: did:key / did:jwk carry it (resolved here, no I/O), any other DID
 * through the context's resolver. Any failure is invalid_key_binding: the binding cannot be proven.
 */
export async function resolveHolderKey(didUrl: string, ctx: VerificationContext): Promise<JWK> {
  const did = didUrl.split('#')[0]!;
  if (!did.startsWith('did:')) return fail('invalid_key_binding', `holder key id ${didUrl} is not a DID URL`);
  if (did.startsWith('did:key:') || did.startsWith('did:jwk:')) {
    const doc = selfResolve(did);
    const fragment = didUrl.includes('#') ? didUrl : null;
    const vm = doc?.verificationMethod.find((m) => (fragment ? m.id === fragment || `${did}${m.id}` === fragment : true));
    const jwk = vm?.publicKeyJwk as JWK | undefined;
    return jwk ?? fail('invalid_key_binding', `holder key ${didUrl} does not resolve`);
  }
  try {
    return await ctx.resolveIssuerKey({ iss: undefined, header: { kid: didUrl }, signal: ctx.signal });
  } catch (e) {
    return fail('invalid_key_binding', `holder key ${didUrl} does not resolve: ${(e as Error).message}`);
  }
}

const numberClaim = (payload: Json, name: string, what: string): number | undefined => {
  const v = payload[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail('malformed_presentation', `${what} ${name} is not a number`);
  return v as number;
};

/** `exp` past → credential_expired; `nbf` / `iat` in the future beyond the skew → credential_not_yet_valid. */
export function checkValidity(payload: Json, now: number, what: string): void {
  const exp = numberClaim(payload, 'exp', what);
  const nbf = numberClaim(payload, 'nbf', what);
  const iat = numberClaim(payload, 'iat', what);
  if (exp !== undefined && now >= exp) fail('credential_expired', `${what} expired at ${exp}`);
  if (nbf !== undefined && nbf > now + CLOCK_SKEW_SECONDS) fail('credential_not_yet_valid', `${what} not valid before ${nbf}`);
  if (iat !== undefined && iat > now + CLOCK_SKEW_SECONDS) fail('credential_not_yet_valid', `${what} issued in the future (${iat})`);
}

/** The status list's answer mapped to a refusal; a checker's failure that is not a refusal is status_unavailable. */
export async function checkStatus(lookup: () => Promise<StatusResult>, what: string): Promise<StatusResult> {
  let result: StatusResult;
  try {
    result = await lookup();
  } catch (e) {
    if (e instanceof PresentationInvalidError) throw e;
    return fail('status_unavailable', `${what}: ${(e as Error).message}`);
  }
  if (result.meaning === 'revoked') fail('credential_revoked', `${what} is revoked`);
  if (result.meaning === 'suspended') fail('credential_suspended', `${what} is suspended`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Disclosures (RFC 9901 §4.2, §7.1)

export interface Disclosure {
  readonly encoded: string;
  readonly digest: string;
  readonly salt: string;
  /** Absent for an array element disclosure. */
  readonly name?: string;
  readonly value: unknown;
}

const hashB64 = (alg: string, data: string) => createHash(alg).update(data, 'ascii').digest('base64url');

/** One disclosure decoded and hashed over its ASCII form, as presented. */
export function decodeDisclosure(encoded: string, hashAlg: string): Disclosure {
  let decoded: unknown;
  try {
    decoded = decodeSegment(encoded);
  } catch {
    return fail('invalid_disclosure', `disclosure ${encoded.slice(0, 16)}… is not base64url JSON`);
  }
  if (!Array.isArray(decoded) || (decoded.length !== 2 && decoded.length !== 3) || typeof decoded[0] !== 'string') {
    return fail('invalid_disclosure', `disclosure ${encoded.slice(0, 16)}… is not [salt, (name,) value]`);
  }
  const digest = hashB64(hashAlg, encoded);
  if (decoded.length === 2) return { encoded, digest, salt: decoded[0], value: decoded[1] };
  const name = decoded[1];
  if (typeof name !== 'string') return fail('invalid_disclosure', `disclosure ${digest} has a non-string claim name`);
  if (name === '_sd' || name === '...') fail('invalid_disclosure', `disclosure ${digest} names the reserved claim ${name}`);
  return { encoded, digest, salt: decoded[0], name, value: decoded[2] };
}

/**
 * RFC 9901 §7.1 step 3: the disclosed claims put in place of their digests, recursively (a disclosed
 * value may itself hold digests); undisclosed digests (decoys, withheld claims) dropped. Every digest
 * may appear once; every disclosure must be reached by a digest. Our own check: `@sd-jwt/core`'s
 * verify silently drops disclosures nothing references.
 */
export function reconstructClaims(payload: Json, disclosures: readonly Disclosure[]): { claims: Json; disclosedPaths: Path[] } {
  const byDigest = new Map<string, Disclosure>();
  for (const d of disclosures) {
    if (byDigest.has(d.digest)) fail('invalid_disclosure', `disclosure ${d.digest} is presented twice`);
    byDigest.set(d.digest, d);
  }
  const seen = new Set<string>();
  const used = new Set<string>();
  const disclosedPaths: Path[] = [];

  const take = (digest: unknown, path: Path): Disclosure | undefined => {
    if (typeof digest !== 'string') return fail('invalid_disclosure', `a digest at /${path.join('/')} is not a string`);
    if (seen.has(digest)) fail('invalid_disclosure', `digest ${digest} appears more than once`);
    seen.add(digest);
    const d = byDigest.get(digest);
    if (d) used.add(digest);
    return d;
  };

  const walk = (value: unknown, path: Path): unknown => {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const element of value) {
        if (isObject(element) && '...' in element) {
          if (Object.keys(element).length !== 1) fail('invalid_disclosure', `an array element digest at /${path.join('/')} has other keys`);
          const d = take(element['...'], path);
          if (!d) continue; // undisclosed (or decoy): removed
          if (d.name !== undefined) fail('invalid_disclosure', `disclosure ${d.digest} of claim ${d.name} is referenced as an array element`);
          const at = [...path, out.length];
          disclosedPaths.push(at);
          out.push(walk(d.value, at));
        } else {
          out.push(walk(element, [...path, out.length]));
        }
      }
      return out;
    }
    if (!isObject(value)) return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '_sd' || (k === '_sd_alg' && path.length === 0)) continue;
      setOwn(out, k, walk(v, [...path, k]));
    }
    const sd = value._sd;
    if (sd === undefined) return out;
    if (!Array.isArray(sd)) return fail('invalid_disclosure', `_sd at /${path.join('/')} is not an array`);
    for (const digest of sd) {
      const d = take(digest, path);
      if (!d) continue;
      if (d.name === undefined) fail('invalid_disclosure', `array element disclosure ${d.digest} is referenced from an _sd array`);
      const name = d.name!;
      if (Object.hasOwn(out, name)) fail('invalid_disclosure', `disclosed claim ${name} already exists at /${path.join('/')}`);
      if (path.length === 0 && NEVER_DISCLOSED.has(name)) fail('invalid_disclosure', `${name} must not be selectively disclosable`);
      const at = [...path, name];
      disclosedPaths.push(at);
      setOwn(out, name, walk(d.value, at));
    }
    return out;
  };

  const claims = walk(payload, []) as Json;
  for (const d of disclosures) {
    if (!used.has(d.digest)) fail('unreferenced_disclosure', `disclosure ${d.digest} is referenced by no digest of the credential`);
  }
  return { claims, disclosedPaths };
}

// ---------------------------------------------------------------------------------------------

/** `<issuer-jwt>~<disclosure>~…~<kb-jwt?>`: the parts, and what the KB-JWT's `sd_hash` covers. */
function splitPresentation(presentation: string) {
  const parts = presentation.split('~');
  if (parts.length < 2) fail('malformed_presentation', 'an SD-JWT has at least one ~');
  const kb = parts[parts.length - 1]!;
  const disclosures = parts.slice(1, -1);
  if (disclosures.some((d) => d === '')) fail('malformed_presentation', 'empty disclosure (~~)');
  return { issuerJwt: parts[0]!, disclosures, kbJwt: kb === '' ? undefined : kb, hashed: presentation.slice(0, presentation.length - kb.length) };
}

/**
 * Verifies one SD-JWT VC presentation (RFC 9901 §7, SD-JWT VC, OpenID4VP B.3). Order: parse → format
 * → issuer signature → validity → disclosures → key binding → status, so a refusal names the first
 * thing that is wrong. Disclosures come after the signature (only signed digests mean anything) and
 * before the KB-JWT: a disclosure altered after issuance has another digest, so it is
 * `unreferenced_disclosure` rather than the less telling `sd_hash_mismatch`.
 */
export async function verifySdJwtPresentation(
  presentation: string,
  ctx: VerificationContext,
  opts: { requireKeyBinding: boolean; allowedFormats?: readonly SdJwtFormat[] },
): Promise<VerifiedCredential> {
  const parts = splitPresentation(presentation);
  const jwt = decodeJwt(parts.issuerJwt, 'issuer-signed JWT');
  const { header, payload } = jwt;

  const allowed = opts.allowedFormats ?? SD_JWT_FORMATS;
  const typ = header.typ;
  if (typeof typ !== 'string' || !(allowed as readonly string[]).includes(typ)) {
    fail('unsupported_format', `typ ${String(typ)} is not one of ${allowed.join(', ')}`);
  }
  const format = typ as SdJwtFormat;
  const alg = header.alg;
  if (typeof alg !== 'string' || !(ACCEPTED_ALGS as readonly string[]).includes(alg)) {
    fail('invalid_issuer_signature', `issuer alg ${String(alg)} is not accepted`);
  }
  const iss = payload.iss;
  if (typeof iss !== 'string' || iss === '') fail('malformed_presentation', 'the credential has no iss');

  const issuerKey = await resolveIssuerKey(ctx, iss as string, header);
  if (!(await verifySignature(jwt.compact, issuerKey, alg as string))) fail('invalid_issuer_signature', `signature of ${String(iss)} does not verify`);

  const now = epochSeconds(ctx.now);
  checkValidity(payload, now, 'the credential');

  const sdAlg = payload._sd_alg ?? 'sha-256';
  const hashAlg = typeof sdAlg === 'string' ? HASH_ALGS[sdAlg] : undefined;
  if (!hashAlg) return fail('malformed_presentation', `_sd_alg ${String(sdAlg)} is not supported`);
  const disclosures = parts.disclosures.map((d) => decodeDisclosure(d, hashAlg));
  const { claims, disclosedPaths } = reconstructClaims(payload, disclosures);

  let holderBound = false;
  if (parts.kbJwt !== undefined) {
    await verifyKeyBinding(parts.kbJwt, payload, hashB64(hashAlg, parts.hashed), ctx, now);
    holderBound = true;
  } else if (opts.requireKeyBinding) {
    fail('missing_key_binding', 'the SD-JWT has no key-binding JWT');
  }

  let status: StatusResult | undefined;
  const statusList = isObject(payload.status) ? payload.status.status_list : undefined;
  if (payload.status !== undefined && !isObject(payload.status)) fail('malformed_presentation', 'status is not an object');
  if (statusList !== undefined) {
    if (!isObject(statusList) || typeof statusList.uri !== 'string' || !Number.isSafeInteger(statusList.idx) || (statusList.idx as number) < 0) {
      fail('malformed_presentation', 'status.status_list is not {idx, uri}');
    }
    const ref = { uri: (statusList as Json).uri as string, idx: (statusList as Json).idx as number };
    status = await checkStatus(() => ctx.status.ietf(ref, { issuer: iss as string, signal: ctx.signal }), 'the credential');
  }

  return {
    format,
    issuer: iss as string,
    ...(typeof payload.vct === 'string' ? { vct: payload.vct } : {}),
    claims,
    disclosedPaths,
    holderBound,
    ...(status ? { status } : {}),
  };
}

/** RFC 9901 §7.3: the KB-JWT is signed by the `cnf` key and addressed to us, for this nonce, now, over these disclosures. */
async function verifyKeyBinding(kbJwt: string, payload: Json, expectedSdHash: string, ctx: VerificationContext, now: number): Promise<void> {
  const kb = decodeJwt(kbJwt, 'key-binding JWT');
  if (kb.header.typ !== 'kb+jwt') fail('invalid_key_binding', `key-binding JWT typ is ${String(kb.header.typ)}, not kb+jwt`);
  const alg = kb.header.alg;
  if (typeof alg !== 'string' || !(ACCEPTED_ALGS as readonly string[]).includes(alg)) fail('invalid_key_binding', `key-binding alg ${String(alg)} is not accepted`);

  const cnf = payload.cnf;
  let holderKey: JWK;
  if (isObject(cnf) && isObject(cnf.jwk)) holderKey = cnf.jwk as JWK;
  else if (isObject(cnf) && typeof cnf.kid === 'string') holderKey = await resolveHolderKey(cnf.kid, ctx);
  else return fail('invalid_key_binding', 'the credential has no cnf.jwk or cnf.kid to bind to');
  if (!(await verifySignature(kb.compact, holderKey, alg as string))) fail('invalid_key_binding', 'the key-binding JWT is not signed by the cnf key');

  const aud = kb.payload.aud;
  const auds = Array.isArray(aud) ? aud : [aud];
  if (!auds.some((a) => typeof a === 'string' && ctx.audiences.includes(a))) fail('wrong_audience', `aud ${JSON.stringify(aud)} is not this verifier`);
  if (kb.payload.nonce !== ctx.nonce) fail('wrong_nonce', 'the key-binding JWT nonce is not the request nonce');
  const iat = kb.payload.iat;
  if (typeof iat !== 'number' || Math.abs(now - iat) > ctx.maxIatSkewSeconds) fail('stale_key_binding', `key-binding iat ${String(iat)} is not within ${ctx.maxIatSkewSeconds}s of now`);
  if (kb.payload.sd_hash !== expectedSdHash) fail('sd_hash_mismatch', 'sd_hash is not the hash of the presented SD-JWT');
}
