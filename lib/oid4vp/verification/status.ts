import { gunzipSync, inflateSync } from 'node:zlib';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { GuardedFetchError, type GuardedFetch } from '../../adapters/guarded-http';
import { cacheControlMaxAge, FetchCache } from './fetch-cache';
import { comparableIssuer } from './trust';
import { PresentationInvalidError, type IssuerKeyResolver, type StatusChecker, type StatusLookup, type StatusResult } from './types';

export interface StatusCheckerDeps {
  /** The SSRF-guarded GET (guardedFetcher). */
  readonly fetch: GuardedFetch;
  /** Resolves the list signer's key, as for credentials. */
  readonly resolveIssuerKey: IssuerKeyResolver;
  readonly now?: () => Date;
  /** The longest a fetched list is kept; its own ttl / exp / Cache-Control max-age can only shorten it. Default 300. */
  readonly ttlSeconds?: number;
  readonly cache?: FetchCache;
  /** The largest status list response accepted. Default 2 MiB. */
  readonly maxListBytes?: number;
}

/** A decompressed list is at most this large (a small compressed body must not inflate into gigabytes). */
const MAX_INFLATED_BYTES = 16 * 1024 * 1024;
/** W3C Bitstring Status List: an expanded bitstring under 16 KB is a STATUS_LIST_LENGTH_ERROR. */
const W3C_MIN_BYTES = 16 * 1024;
const ASYMMETRIC = ['EdDSA', 'Ed25519', 'ES256', 'ES384', 'ES512', 'ES256K', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

interface IetfList {
  readonly bits: number;
  readonly bytes: Buffer;
  /** Who signed it: the list's `iss`, else the DID of its `kid`. */
  readonly signer: string;
}
interface W3cList {
  readonly purposes: readonly string[];
  readonly statusSize: number;
  readonly bytes: Buffer;
  readonly signer: string;
}

const unavailable = (detail: string) => new PresentationInvalidError('status_unavailable', detail);

/**
 * Reads status entries from IETF Token Status Lists and W3C Bitstring Status Lists, fetched through
 * the SSRF guard. A list is verified once (signature, sub / id, validity, purpose) and then kept as
 * decoded bytes, so N presentations against one list cost one fetch; every failure is a
 * `status_unavailable` refusal: a credential whose status cannot be known is not accepted.
 */
export function createStatusChecker(deps: StatusCheckerDeps): StatusChecker {
  const now = deps.now ?? (() => new Date());
  const cache = deps.cache ?? new FetchCache({ maxEntries: 200, now: () => now().getTime() });
  const maxTtlMs = (deps.ttlSeconds ?? 300) * 1000;
  const maxBytes = deps.maxListBytes ?? 2 * 1024 * 1024;

  /** Fetches and signature-checks a list JWT; the caller checks its claims. */
  async function fetchSigned(url: string, accept: string, typs: readonly (string | undefined)[], signal: AbortSignal): Promise<{ payload: JWTPayload; maxAge: number | undefined; signer: string }> {
    let res;
    try {
      res = await deps.fetch(url, { accept, maxBytes, signal });
    } catch (err) {
      throw unavailable(err instanceof GuardedFetchError ? err.message : `GET ${url} failed`);
    }
    if (res.status !== 200) throw unavailable(`GET ${url} answered ${res.status}`);
    const token = res.body.toString('utf8').trim();
    let header: Record<string, unknown>;
    let unverified: JWTPayload;
    try {
      header = decodeProtectedHeader(token) as Record<string, unknown>;
      unverified = decodeJwt(token);
    } catch {
      throw unavailable(`${url} is not a JWT`);
    }
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
    if (!typs.includes(typ)) throw unavailable(`${url} has typ ${String(header.typ)}`);
    const iss = typeof unverified.iss === 'string' ? unverified.iss : issuerOf(unverified);
    let key;
    try {
      key = await deps.resolveIssuerKey({ iss, header, signal });
    } catch (err) {
      throw unavailable(`the signer of ${url}: ${(err as Error).message}`);
    }
    // The resolver bound the key to `iss` (or, without one, to the DID its `kid` names).
    const signer = iss ?? (typeof header.kid === 'string' ? header.kid.split('#')[0]! : '');
    try {
      const { payload } = await jwtVerify(token, key, { currentDate: now(), algorithms: ASYMMETRIC });
      return { payload, maxAge: cacheControlMaxAge(res.headers['cache-control']), signer };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unavailable(`${url} expired`);
      if (err instanceof joseErrors.JWTClaimValidationFailed) throw unavailable(`${url}: ${err.message}`);
      throw unavailable(`${url}: the signature does not verify`);
    }
  }

  /** How long a list may be kept: the least of our bound, its own ttl, what is left of its validity and max-age. */
  function keepMs(ttlMs: number | undefined, expiresAtMs: number | undefined, maxAge: number | undefined): number {
    const bounds = [maxTtlMs];
    if (ttlMs !== undefined && Number.isFinite(ttlMs) && ttlMs >= 0) bounds.push(ttlMs);
    if (expiresAtMs !== undefined) bounds.push(expiresAtMs - now().getTime());
    if (maxAge !== undefined) bounds.push(maxAge * 1000);
    return Math.max(0, Math.min(...bounds));
  }

  const loadIetf = (uri: string, signal: AbortSignal | undefined) =>
    cache.get<IetfList>(
      `ietf ${uri}`,
      async (loadSignal) => {
        const { payload, maxAge, signer } = await fetchSigned(uri, 'application/statuslist+jwt', ['statuslist+jwt'], loadSignal);
        if (payload.sub !== uri) throw unavailable(`the list at ${uri} has sub ${String(payload.sub)}`);
        const list = payload.status_list as { bits?: unknown; lst?: unknown } | undefined;
        if (typeof list !== 'object' || list === null || ![1, 2, 4, 8].includes(list.bits as number) || typeof list.lst !== 'string') {
          throw unavailable(`the list at ${uri} has no valid status_list`);
        }
        let bytes: Buffer;
        try {
          bytes = inflateSync(Buffer.from(list.lst, 'base64url'), { maxOutputLength: MAX_INFLATED_BYTES });
        } catch {
          throw unavailable(`the list at ${uri} does not decompress`);
        }
        const ttl = typeof payload.ttl === 'number' ? payload.ttl * 1000 : undefined;
        const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
        return { value: { bits: list.bits as number, bytes, signer }, ttlMs: keepMs(ttl, exp, maxAge) };
      },
      signal,
    );

  const loadW3c = (url: string, signal: AbortSignal | undefined) =>
    cache.get<W3cList>(
      `w3c ${url}`,
      async (loadSignal) => {
        const { payload, maxAge, signer } = await fetchSigned(url, 'application/vc+jwt', ['vc+jwt', 'vc+ld+jwt', 'jwt', undefined], loadSignal);
        // VC 2.0 (vc+jwt) is the credential itself; a VC 1.1 JWT carries it under `vc`.
        const credential = isObject(payload.vc) ? payload.vc : (payload as Record<string, unknown>);
        if (!asArray(credential.type).includes('BitstringStatusListCredential')) throw unavailable(`${url} is not a BitstringStatusListCredential`);
        const issuer = issuerOf(credential);
        if (issuer !== undefined && payload.iss !== undefined && issuer !== payload.iss) throw unavailable(`${url}: issuer and iss differ`);
        if (credential.id !== undefined && credential.id !== url) throw unavailable(`the list at ${url} has id ${String(credential.id)}`);
        const nowMs = now().getTime();
        const until = dateMs(credential.validUntil ?? credential.expirationDate);
        if (until !== undefined && until <= nowMs) throw unavailable(`${url} expired`);
        const from = dateMs(credential.validFrom);
        if (from !== undefined && from > nowMs) throw unavailable(`${url} is not valid yet`);
        const subject = Array.isArray(credential.credentialSubject) && credential.credentialSubject.length === 1 ? credential.credentialSubject[0] : credential.credentialSubject;
        if (!isObject(subject) || typeof subject.encodedList !== 'string' || !subject.encodedList.startsWith('u')) throw unavailable(`${url} has no multibase encodedList`);
        const purposes = asArray(subject.statusPurpose).filter((p): p is string => typeof p === 'string');
        const statusSize = subject.statusSize ?? 1;
        if (!validSize(statusSize)) throw unavailable(`${url} has statusSize ${String(subject.statusSize)}`);
        let bytes: Buffer;
        try {
          bytes = gunzipSync(Buffer.from(subject.encodedList.slice(1), 'base64url'), { maxOutputLength: MAX_INFLATED_BYTES });
        } catch {
          throw unavailable(`the list at ${url} does not decompress`);
        }
        if (bytes.length < W3C_MIN_BYTES) throw unavailable(`the list at ${url} is shorter than 16 KB (STATUS_LIST_LENGTH_ERROR)`);
        const ttl = typeof subject.ttl === 'number' ? subject.ttl : undefined; // milliseconds
        const exp = [until, typeof payload.exp === 'number' ? payload.exp * 1000 : undefined].filter((v): v is number => v !== undefined);
        return { value: { purposes, statusSize, bytes, signer }, ttlMs: keepMs(ttl, exp.length ? Math.min(...exp) : undefined, maxAge) };
      },
      signal,
    );

  const guarded = async (work: () => Promise<StatusResult>, signal: AbortSignal | undefined): Promise<StatusResult> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof PresentationInvalidError && (err.reason === 'status_unavailable' || err.reason === 'status_signer_mismatch')) throw err;
      // The verification's deadline ended the wait: its own reason, not the list's fault.
      if (signal?.aborted && err === signal.reason) throw err;
      throw unavailable((err as Error).message ?? String(err));
    }
  };

  /**
   * Token Status List (Security Considerations, key resolution and trust) and Bitstring Status List
   * alike: the list must come from the credential's issuer, or anyone could vouch for its status.
   */
  const sameSigner = (list: { signer: string }, lookup: StatusLookup, url: string) => {
    if (comparableIssuer(list.signer) !== comparableIssuer(lookup.issuer))
      throw new PresentationInvalidError('status_signer_mismatch', `the list at ${url} is signed by ${list.signer || 'an unnamed key'}, not by the credential's issuer ${lookup.issuer}`);
  };

  return {
    ietf: ({ uri, idx }, lookup) =>
      guarded(async () => {
        if (typeof uri !== 'string' || !Number.isSafeInteger(idx) || idx < 0) throw unavailable('the status_list reference needs a uri and a non-negative integer idx');
        const list = await loadIetf(uri, lookup.signal);
        sameSigner(list, lookup, uri);
        const { bits, bytes } = list;
        const offset = idx * bits;
        if (offset + bits > bytes.length * 8) throw unavailable(`index ${idx} is outside the list at ${uri}`);
        // IETF: index i at bits i*bits.. of the byte array, least significant first (sizes divide 8).
        const value = (bytes[offset >> 3]! >> (offset & 7)) & ((1 << bits) - 1);
        return { value, meaning: value === 0 ? 'valid' : value === 1 ? 'revoked' : value === 2 ? 'suspended' : 'other' };
      }, lookup.signal),
    w3c: (entry, lookup) =>
      guarded(async () => {
        if (!asArray(entry.type).includes('BitstringStatusListEntry')) throw unavailable(`unsupported status entry type ${String(entry.type)}`);
        const url = entry.statusListCredential;
        const purpose = entry.statusPurpose;
        const rawIndex = entry.statusListIndex;
        const index = typeof rawIndex === 'string' && /^\d{1,15}$/.test(rawIndex) ? Number(rawIndex) : rawIndex;
        const size = entry.statusSize ?? 1;
        if (typeof url !== 'string' || typeof purpose !== 'string' || typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0 || !validSize(size)) {
          throw unavailable('the BitstringStatusListEntry is malformed');
        }
        const list = await loadW3c(url, lookup.signal);
        sameSigner(list, lookup, url);
        if (!list.purposes.includes(purpose)) throw unavailable(`the list at ${url} is for ${list.purposes.join(', ')}, not ${purpose}`);
        if (list.statusSize !== size) throw unavailable(`the list at ${url} has statusSize ${list.statusSize}, the entry ${size}`);
        const start = index * size;
        if (start + size > list.bytes.length * 8) throw unavailable(`index ${index} is outside the list at ${url}`);
        // W3C: the left-most (most significant) bit of byte 0 is bit 0; an entry's bits read left to right.
        let value = 0;
        for (let bit = start; bit < start + size; bit++) value = value * 2 + ((list.bytes[bit >> 3]! >> (7 - (bit & 7))) & 1);
        const meaning = value === 0 ? 'valid' : purpose === 'revocation' ? 'revoked' : purpose === 'suspension' ? 'suspended' : 'other';
        return { value, meaning };
      }, lookup.signal),
  };
}

const validSize = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 32;

function issuerOf(credential: Record<string, unknown>): string | undefined {
  const vc = isObject(credential.vc) ? credential.vc : credential;
  const issuer = vc.issuer;
  if (typeof issuer === 'string') return issuer;
  return isObject(issuer) && typeof issuer.id === 'string' ? issuer.id : undefined;
}

function dateMs(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw unavailable(`the list has an invalid date ${JSON.stringify(v)}`);
  return ms;
}

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
