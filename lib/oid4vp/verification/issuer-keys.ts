import type { JWK } from 'jose';
import { privateJwkMembers } from '../../oid4vc/jwk';
import { GuardedFetchError, type GuardedFetch } from '../../adapters/guarded-http';
import type { Resolved } from '../../resolver/resolver';
import { selfResolve } from '../../resolver/resolver';
import { comparableDid } from '../../store/keys';
import { cacheControlMaxAge, FetchCache } from './fetch-cache';
import { PresentationInvalidError, type IssuerKeyResolver } from './types';

export interface IssuerKeyResolverDeps {
  /** DIDs this service publishes (read from the store, no network), did:key and did:jwk. */
  readonly didResolver: { resolve(did: string): Promise<Resolved | null> };
  /** The SSRF-guarded GET (guardedFetcher), for other did:web documents and JWT VC issuer metadata. */
  readonly fetch: GuardedFetch;
  readonly cache?: FetchCache;
  /** How long fetched documents are kept at most (a shorter Cache-Control max-age wins). Default 300. */
  readonly cacheSeconds?: number;
  /** Local runtime only: did:web and issuer URLs on loopback hosts are fetched over plain http. */
  readonly httpForLoopbackHosts?: boolean;
}

const MAX_DOCUMENT_BYTES = 256 * 1024;

const unresolvable = (detail: string) => new PresentationInvalidError('issuer_unresolvable', detail);

/**
 * The issuer key of a credential's (or status list's) JWS. `kid` a DID URL, or `iss` a DID (with
 * `kid` its fragment): the DID's verification method, which must be an assertionMethod. `iss` an
 * https URL: its SD-JWT VC JWT VC Issuer Metadata, the key picked by `kid`. A `jwk` or `x5c` header
 * alone is refused: a self-asserted key proves nothing about the issuer.
 */
export function createIssuerKeyResolver(deps: IssuerKeyResolverDeps): IssuerKeyResolver {
  const cache = deps.cache ?? new FetchCache({ maxEntries: 200 });
  const maxCacheMs = (deps.cacheSeconds ?? 300) * 1000;

  async function fetchJson(url: string, accept: string, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    return cache.get(
      `json ${url}`,
      async (loadSignal) => {
        let res;
        try {
          res = await deps.fetch(url, { accept, maxBytes: MAX_DOCUMENT_BYTES, signal: loadSignal });
        } catch (err) {
          throw unresolvable(err instanceof GuardedFetchError ? err.message : `GET ${url} failed`);
        }
        if (res.status !== 200) throw unresolvable(`GET ${url} answered ${res.status}`);
        let value: unknown;
        try {
          value = JSON.parse(res.body.toString('utf8'));
        } catch {
          throw unresolvable(`GET ${url}: not JSON`);
        }
        if (!isObject(value)) throw unresolvable(`GET ${url}: not a JSON object`);
        const maxAge = cacheControlMaxAge(res.headers['cache-control']);
        return { value, ttlMs: Math.min(maxCacheMs, maxAge === undefined ? Infinity : maxAge * 1000) };
      },
      signal,
    );
  }

  const httpAllowed = (host: string) => deps.httpForLoopbackHosts === true && isLoopbackHost(host);

  async function didKey(did: string, kid: string | undefined, signal: AbortSignal | undefined): Promise<JWK> {
    let document: Record<string, unknown> | null = null;
    const published = await deps.didResolver.resolve(did);
    if (published?.deactivatedAt) throw unresolvable(`${did} was deactivated`);
    if (published) document = published.document;
    else document = selfResolve(did);
    if (!document && did.startsWith('did:web:')) document = await fetchJson(didWebUrl(did, httpAllowed), 'application/did+json, application/json', signal);
    if (!document) throw unresolvable(`${did} cannot be resolved`);
    if (document.deactivated === true) throw unresolvable(`${did} was deactivated`);
    if (typeof document.id !== 'string' || comparableDid(document.id) !== comparableDid(did)) throw unresolvable(`the document of ${did} names another DID`);
    return assertionKey(did, document, kid);
  }

  async function metadataKey(iss: string, kid: string | undefined, signal: AbortSignal | undefined): Promise<JWK> {
    const url = new URL(iss);
    if (url.search || url.hash || url.username || url.password) throw unresolvable(`issuer ${iss} has a query, fragment or credentials`);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed(url.hostname))) throw unresolvable(`issuer ${iss} is not an https URL`);
    const path = url.pathname.replace(/\/+$/, '');
    const metadata = await fetchJson(`${url.origin}/.well-known/jwt-vc-issuer${path}`, 'application/json', signal);
    if (metadata.issuer !== iss) throw unresolvable(`the JWT VC issuer metadata names ${String(metadata.issuer)}, not ${iss}`);
    if (metadata.jwks !== undefined && metadata.jwks_uri !== undefined) throw unresolvable('the JWT VC issuer metadata has both jwks and jwks_uri');
    let jwks: unknown = metadata.jwks;
    if (typeof metadata.jwks_uri === 'string') jwks = await fetchJson(metadata.jwks_uri, 'application/jwk-set+json, application/json', signal);
    const keys = isObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys.filter(isObject) : null;
    if (!keys) throw unresolvable(`the JWT VC issuer metadata of ${iss} has no JWK set`);
    const candidates = kid === undefined ? keys : keys.filter((k) => k.kid === kid);
    if (candidates.length !== 1) throw unresolvable(kid === undefined ? `no kid, and ${iss} has ${keys.length} keys` : `${iss} has no single key ${kid}`);
    return publicJwk(candidates[0]!, `${iss} key ${kid ?? ''}`);
  }

  return async ({ iss, header, signal }) => {
    const kid = typeof header.kid === 'string' && header.kid ? header.kid : undefined;
    if (iss !== undefined && typeof iss !== 'string') throw unresolvable('iss is not a string');
    if (iss?.startsWith('did:') || (iss === undefined && kid?.startsWith('did:'))) {
      const ref = didUrl(iss, kid);
      if (!ref) throw unresolvable(`kid ${String(kid)} is not a DID URL of ${iss ?? 'a DID'}`);
      return didKey(ref.did, ref.kid, signal);
    }
    if (iss && /^https?:\/\//.test(iss)) {
      if (kid?.startsWith('did:')) throw unresolvable(`kid ${kid} is a DID URL but iss ${iss} is not a DID`);
      return metadataKey(iss, kid, signal);
    }
    if (header.jwk !== undefined || header.x5c !== undefined) throw unresolvable('only a self-asserted key (jwk / x5c) names the issuer');
    throw unresolvable(`neither a DID nor an https issuer: iss ${String(iss)}, kid ${String(kid)}`);
  };
}

/** The DID and absolute kid: a kid DID URL (whose DID must be iss when iss is one), or iss with a relative kid. */
function didUrl(iss: string | undefined, kid: string | undefined): { did: string; kid: string | undefined } | null {
  if (kid?.startsWith('did:')) {
    const hash = kid.indexOf('#');
    if (hash < 0) return null;
    const did = kid.slice(0, hash);
    if (!isDid(did) || (iss !== undefined && comparableDid(did) !== comparableDid(iss))) return null;
    return { did, kid };
  }
  if (!iss || !isDid(iss)) return null;
  if (kid === undefined) return { did: iss, kid: undefined };
  return { did: iss, kid: `${iss}#${kid.replace(/^#/, '')}` };
}

const isDid = (s: string) => /^did:[a-z0-9]+:[^#?/\s]+$/.test(s);

/** The verification method `kid` names (or the only assertionMethod, without kid); it must be an assertionMethod. */
function assertionKey(did: string, document: Record<string, unknown>, kid: string | undefined): JWK {
  // An id that is not a non-empty string names nothing: it is neither an assertion method nor matches one.
  const abs = (id: unknown) => (typeof id === 'string' && id ? comparableDid(id.startsWith('#') ? `${did}${id}` : id) : undefined);
  const methods = (Array.isArray(document.verificationMethod) ? document.verificationMethod : []).filter(isObject);
  const assertion = Array.isArray(document.assertionMethod) ? document.assertionMethod : [];
  const assertionIds = assertion.map((a) => abs(isObject(a) ? a.id : a)).filter((id) => id !== undefined);
  const embedded = assertion.filter(isObject);
  let target = kid === undefined ? undefined : comparableDid(kid);
  if (target === undefined) {
    if (assertionIds.length !== 1) throw unresolvable(`no kid, and ${did} has ${assertionIds.length} assertion methods`);
    target = assertionIds[0]!;
  }
  if (!assertionIds.includes(target)) throw unresolvable(`${kid ?? target} is not an assertionMethod of ${did}`);
  const method = [...embedded, ...methods].find((m) => abs(m.id) === target);
  if (!method) throw unresolvable(`${kid ?? target} is not a verification method of ${did}`);
  if (isObject(method.publicKeyJwk)) return publicJwk(method.publicKeyJwk, target);
  if (typeof method.publicKeyMultibase === 'string') {
    // A multibase multicodec key is exactly what did:key carries.
    const jwk = (selfResolve(`did:key:${method.publicKeyMultibase}`)?.verificationMethod[0]?.publicKeyJwk ?? null) as JWK | null;
    if (jwk) return jwk;
  }
  throw unresolvable(`${target} has no usable public key`);
}


function publicJwk(jwk: Record<string, unknown>, where: string): JWK {
  if (typeof jwk.kty !== 'string' || jwk.kty === 'oct' || privateJwkMembers(jwk).length > 0) throw unresolvable(`${where}: not a public key`);
  return { ...jwk } as JWK;
}

/** did:web method spec §3.2: `did:web:host%3Aport:a:b` → `https://host:port/a/b/did.json` (`/.well-known/did.json` without a path). */
export function didWebUrl(did: string, httpAllowed: (host: string) => boolean = () => false): string {
  let segments: string[];
  try {
    segments = did.slice('did:web:'.length).split(':').map(decodeURIComponent);
  } catch {
    throw unresolvable(`${did} is not a valid did:web`);
  }
  const [host, ...path] = segments;
  if (!host || /[/?#@\s]/.test(host) || path.some((p) => !p || /[/?#\\]/.test(p) || p === '.' || p === '..')) throw unresolvable(`${did} is not a valid did:web`);
  let url: URL;
  try {
    url = new URL(`https://${host}`);
  } catch {
    throw unresolvable(`${did} is not a valid did:web`);
  }
  const scheme = httpAllowed(url.hostname) ? 'http' : 'https';
  return `${scheme}://${url.host}/${path.length ? `${path.map(encodeURIComponent).join('/')}/did.json` : '.well-known/did.json'}`;
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
