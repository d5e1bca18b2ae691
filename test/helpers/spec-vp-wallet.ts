/**
 * An independent OpenID4VP 1.0 test wallet (holder side), written from the specification text:
 * OpenID for Verifiable Presentations 1.0 (/work/shared/reference/openid4vp-1_0.md; "§" numbers
 * below are that document's), JAR (RFC 9101), SD-JWT (RFC 9901) and the VCDM 1.1 JWT encoding.
 * Draft-era verifiers are served too: plain `did:` client ids with `client_id_scheme`, and
 * Presentation Exchange (`presentation_definition` / `presentation_submission`).
 *
 * It uses fetch, node:crypto, jose and the OID4VCI spec wallet's helpers only: nothing from lib/
 * (the service), @openid4vc/*, dcql or @animo-id/pex (the verifier's libraries), so that it is a
 * second reading of the standard next to the verifier's library-based one. Every step can be bent
 * (nonce, audience, keys, disclosures, raw bodies) so that tests can send what a bad wallet would.
 */
import { createHash, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { compactVerify, importJWK, type JWK } from 'jose';
import {
  decodeJwtParts,
  decodeSdJwt,
  jwkOfDidJwk,
  jwkOfDidKey,
  jwkOfMultibase,
  base58btcDecode,
  sha256b64u,
  signCompactJws,
  type DecodedSdJwt,
  type Disclosure,
  type HolderKey,
  type HttpResult,
  type PublicJwk,
} from './spec-wallet';

/** RFC 9101 §10.2 / §5 of OpenID4VP: the media type and `typ` of a Request Object. */
export const REQUEST_OBJECT_TYP = 'oauth-authz-req+jwt';
export const REQUEST_OBJECT_MEDIA_TYPE = 'application/oauth-authz-req+jwt';
/** RFC 9901 §4.3: the `typ` of a Key Binding JWT. */
export const KB_JWT_TYP = 'kb+jwt';
export const DID_PREFIX = 'decentralized_identifier:';

/** The signing part of a holder key (spec-wallet's HolderKey fits). */
export type SigningKey = Pick<HolderKey, 'alg' | 'privateKey'>;

export interface AuthorizationRequestRef {
  /** The `client_id` parameter exactly as in the URI. */
  readonly clientId: string | null;
  /** JAR by reference (RFC 9101 §5.2). */
  readonly requestUri?: string;
  /** §5.1 `request_uri_method`: `get` (default) or `post`. */
  readonly requestUriMethod?: string;
  /** JAR by value (RFC 9101 §5.1). */
  readonly request?: string;
  /** Every query parameter (the plain, unsigned form when neither request nor request_uri is given). */
  readonly params: Record<string, string>;
}

export interface RequestObject {
  client_id: string;
  client_id_scheme?: string;
  response_type?: string;
  response_mode?: string;
  response_uri?: string;
  redirect_uri?: string;
  nonce: string;
  state?: string;
  dcql_query?: DcqlQuery;
  presentation_definition?: PresentationDefinition;
  client_metadata?: Record<string, any>;
  [k: string]: unknown;
}

export interface VerifiedRequest {
  readonly payload: RequestObject;
  readonly header: Record<string, any>;
  /** The compact JWS as received. */
  readonly jws: string;
  /** The DID whose key verified the signature (null for an unsigned `redirect_uri:` request). */
  readonly did: string | null;
  readonly verificationJwk: PublicJwk | null;
}

export interface FetchRequestOptions {
  /** The `client_id` of the authorization request URI; the Request Object's MUST be identical (§5.10.1). */
  expectedClientId: string | null;
  /** §5.10: `post` sends wallet_metadata / wallet_nonce as a form. */
  method?: 'get' | 'post';
  walletNonce?: string;
  walletMetadata?: Record<string, unknown>;
  fetch?: typeof fetch;
  /** Content types accepted besides application/oauth-authz-req+jwt (none by default). */
  extraContentTypes?: string[];
  /** Seconds since the epoch, for `exp` / `nbf`. */
  now?: number;
}

export type ClaimPath = readonly (string | number | null)[];
/** A JSON pointer (`/address/street`), a JSONPath (`$.address.street`, `$['a'][0]`), a top-level name, or a DCQL claims path. */
export type ClaimSelector = string | ClaimPath;

export interface PresentOptions {
  claims: readonly ClaimSelector[] | 'all';
  audience: string;
  nonce: string;
  /** KB-JWT `iat` (seconds); now by default. */
  iat?: number;
  /** Put this in `sd_hash` instead of the computed value. */
  sdHashOverride?: string;
  /** No KB-JWT: the SD-JWT alone, ending in `~` (RFC 9901 §4). */
  omitKb?: boolean;
  /** Sign the KB-JWT with this key instead of the holder key. */
  kbSigningKey?: KeyObject;
  kbHeader?: Record<string, unknown>;
  /** Merged over the KB-JWT payload (undefined values delete a claim). */
  kbPayload?: Record<string, unknown>;
  /** Appended after the selected disclosures (forged or extra ones); covered by sd_hash. */
  extraDisclosures?: string[];
  /** Rewrite the final disclosure list (tampering); the result is what sd_hash covers. */
  mapDisclosures?: (encoded: string[], decoded: DecodedSdJwt) => string[];
  /** A requested path that the credential lacks is skipped instead of throwing. */
  allowMissing?: boolean;
}

export interface Presentation {
  readonly presentation: string;
  readonly disclosures: string[];
  readonly kbJwt: string | null;
  /** JSON pointers of the disclosed claims. */
  readonly disclosedPaths: string[];
}

export interface DcqlClaimsQuery {
  id?: string;
  path: ClaimPath;
  values?: (string | number | boolean)[];
}

export interface DcqlCredentialQuery {
  id: string;
  format: string;
  multiple?: boolean;
  meta?: Record<string, any>;
  require_cryptographic_holder_binding?: boolean;
  claims?: DcqlClaimsQuery[];
  claim_sets?: string[][];
  [k: string]: unknown;
}

export interface DcqlQuery {
  credentials: DcqlCredentialQuery[];
  credential_sets?: { options: string[][]; required?: boolean }[];
}

export interface AnswerOptions {
  /** POST here instead of the request's `response_uri`. */
  responseUri?: string;
  fetch?: typeof fetch;
  /** Don't POST; just build the response fields. */
  dryRun?: boolean;
  /** Overrides for every presentation (nonce, audience, KB tweaks, ...). */
  present?: Partial<PresentOptions>;
  /** Per credential query id: disclose these instead of what the query asks. */
  claimsOverride?: Record<string, readonly ClaimSelector[] | 'all'>;
  /** Skip the vct / type / format / value matching (send a credential the query does not ask for). */
  skipMatching?: boolean;
  /** Send `state` as this (null: leave it out). */
  state?: string | null;
  /** Extra or overriding form fields. */
  extraFields?: Record<string, string>;
  /** jwt_vc_json: the holder DID (default: the VC's `sub`, else the key's did:key). */
  holderDid?: string;
}

export interface AnswerResult extends HttpResult {
  readonly fields: Record<string, string>;
  readonly vpToken: unknown;
}

export interface PresentationDefinition {
  id: string;
  input_descriptors: { id: string; format?: Record<string, unknown>; constraints?: { limit_disclosure?: string; fields?: { path: string[]; optional?: boolean; filter?: unknown }[] } }[];
  format?: Record<string, unknown>;
  [k: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Authorization Request (§5)

/**
 * `openid4vp://?client_id=…&request_uri=…` (or `openid://`, `haip://`, an https wallet link).
 * RFC 9101 §5: `request` and `request_uri` are mutually exclusive.
 */
export function parseAuthorizationRequestUri(uri: string): AuthorizationRequestRef {
  const q = uri.indexOf('?');
  if (q < 0) throw new Error(`not an authorization request (no query): ${uri}`);
  const params = Object.fromEntries(new URLSearchParams(uri.slice(q + 1).split('#')[0]));
  const clientId = params.client_id ?? null;
  if (params.request !== undefined && params.request_uri !== undefined) throw new Error('RFC 9101 §5: request and request_uri MUST NOT both be present');
  // §5.1: request_uri_method only with request_uri, and only `get` or `post`.
  if (params.request_uri_method !== undefined) {
    if (params.request_uri === undefined) throw new Error('§5.1: request_uri_method MUST NOT be present without request_uri');
    if (params.request_uri_method !== 'get' && params.request_uri_method !== 'post') throw new Error(`§8.5 invalid_request_uri_method: ${params.request_uri_method}`);
  }
  const out: { -readonly [K in keyof AuthorizationRequestRef]: AuthorizationRequestRef[K] } = { clientId, params };
  if (params.request_uri !== undefined) out.requestUri = params.request_uri;
  if (params.request_uri_method !== undefined) out.requestUriMethod = params.request_uri_method;
  if (params.request !== undefined) out.request = params.request;
  return out;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** §14.7 TLS: https, but plain http to a loopback test server. */
function requireHttps(url: string, what: string): URL {
  const u = new URL(url);
  if (u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname))) return u;
  throw new Error(`${what} must be https (http only on loopback): ${url}`);
}

async function readBody(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let body: unknown = text === '' ? undefined : text;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * GET (or §5.10 POST) the Request Object and verify it: see verifyRequestObject.
 * §14.8: no HTTP redirects are followed.
 */
export async function fetchRequestObject(requestUri: string, opts: FetchRequestOptions): Promise<VerifiedRequest> {
  requireHttps(requestUri, 'request_uri');
  const doFetch = opts.fetch ?? fetch;
  const method = opts.method ?? 'get';
  const init: RequestInit = { method: method.toUpperCase(), headers: { accept: REQUEST_OBJECT_MEDIA_TYPE }, redirect: 'manual' };
  if (method === 'post') {
    const form = new URLSearchParams();
    if (opts.walletMetadata) form.set('wallet_metadata', JSON.stringify(opts.walletMetadata));
    if (opts.walletNonce) form.set('wallet_nonce', opts.walletNonce);
    init.headers = { accept: REQUEST_OBJECT_MEDIA_TYPE, 'content-type': 'application/x-www-form-urlencoded' };
    init.body = form.toString();
  }
  const res = await doFetch(requestUri, init);
  const text = await res.text();
  if (res.status >= 300 && res.status < 400) throw new Error(`§14.8: request_uri answered with a redirect (HTTP ${res.status}); not followed`);
  // §5.10.2: any HTTP error ends the process.
  if (res.status !== 200) throw new Error(`request_uri answered HTTP ${res.status}: ${text.slice(0, 200)}`);
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const accepted = [REQUEST_OBJECT_MEDIA_TYPE, ...(opts.extraContentTypes ?? [])];
  // §5.10.1: the answer has the content type application/oauth-authz-req+jwt.
  if (!accepted.includes(type)) throw new Error(`§5.10.1: request_uri content type must be ${REQUEST_OBJECT_MEDIA_TYPE}, got ${type || '(none)'}`);
  const verified = await verifyRequestObject(text.trim(), { ...opts, fetch: doFetch });
  // §5.10.1: a wallet_nonce sent MUST come back in the Request Object.
  if (method === 'post' && opts.walletNonce && verified.payload.wallet_nonce !== opts.walletNonce) throw new Error('§5.10.1: the Request Object does not carry our wallet_nonce');
  return verified;
}

/** The DID a client id names: 1.0 `decentralized_identifier:<did>`, or a draft-era plain DID. */
export function didOfClientId(clientId: string, clientIdScheme?: unknown): string | null {
  if (clientId.startsWith(DID_PREFIX)) return clientId.slice(DID_PREFIX.length);
  // Drafts 21-23 read a bare `did:` client id as the DID scheme; earlier drafts said so with `client_id_scheme: did`.
  if (clientId.startsWith('did:') && (clientIdScheme === undefined || clientIdScheme === 'did')) return clientId;
  return null;
}

/**
 * Verify a Request Object (compact JWS) the way §5 and §5.9 ask of a wallet: `typ`, `client_id`
 * identical to the URI's, and a signature by a key of the client's DID named by `kid`.
 */
export async function verifyRequestObject(jws: string, opts: Omit<FetchRequestOptions, 'method'>): Promise<VerifiedRequest> {
  const segments = jws.split('.').length;
  // An encrypted (5-part) Request Object is not supported here.
  if (segments !== 3) throw new Error(`the Request Object is not a compact JWS (${segments} parts)`);
  let header: Record<string, any>;
  let payload: RequestObject;
  try {
    const parts = decodeJwtParts(jws);
    header = parts.header;
    payload = parts.payload as RequestObject;
  } catch (e) {
    throw new Error(`the Request Object does not decode: ${(e as Error).message}`);
  }
  // §5: Wallets MUST NOT process Request Objects whose typ is absent or not oauth-authz-req+jwt.
  if (header.typ !== REQUEST_OBJECT_TYP) throw new Error(`§5: Request Object typ must be ${REQUEST_OBJECT_TYP}, got ${JSON.stringify(header.typ)}`);
  if (typeof payload.client_id !== 'string') throw new Error('§5.2: client_id is REQUIRED in the Request Object');
  // §5.10.1: identical to the client_id parameter, prefix included.
  if (opts.expectedClientId !== null && payload.client_id !== opts.expectedClientId) {
    throw new Error(`§5.10.1: Request Object client_id ${JSON.stringify(payload.client_id)} is not the request's ${JSON.stringify(opts.expectedClientId)}`);
  }
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (typeof payload.exp === 'number' && payload.exp < now - 30) throw new Error('the Request Object has expired (exp)');
  if (typeof payload.nbf === 'number' && payload.nbf > now + 30) throw new Error('the Request Object is not yet valid (nbf)');

  const clientId = payload.client_id;
  const did = didOfClientId(clientId, payload.client_id_scheme);
  let jwk: PublicJwk | null = null;
  if (did !== null) {
    // §5.9.3 decentralized_identifier: signed with a key of the DID, identified by the header kid.
    if (header.alg === 'none' || typeof header.alg !== 'string') throw new Error('§5.9.3: a decentralized_identifier request MUST be signed');
    if (typeof header.kid !== 'string') throw new Error('§5.9.3: the JOSE header kid MUST identify the DID key');
    const kidDid = header.kid.split('#')[0];
    if (kidDid !== did || !header.kid.includes('#')) throw new Error(`§5.9.3: kid ${header.kid} is not a DID URL of ${did}`);
    jwk = await resolveDidKey(header.kid, { fetch: opts.fetch });
    await verifyJws(jws, jwk, header.alg);
  } else if (clientId.startsWith('redirect_uri:')) {
    // §5.9.3 redirect_uri: cannot be signed; the response goes to the client id itself.
    if (header.alg !== 'none') throw new Error('§5.9.3: redirect_uri requests cannot be signed');
    const target = payload.response_uri ?? payload.redirect_uri;
    if (target !== undefined && target !== clientId.slice('redirect_uri:'.length)) throw new Error('§5.9.3: response_uri must be the redirect_uri client id');
  } else {
    throw new Error(`§5.9: unsupported client identifier prefix in ${JSON.stringify(clientId)} (this wallet knows decentralized_identifier and redirect_uri)`);
  }
  checkRequestParameters(payload);
  return { payload, header, jws, did, verificationJwk: jwk };
}

/** The parameter rules of §5 and §8.2 a wallet applies before answering. */
export function checkRequestParameters(p: RequestObject): void {
  if (typeof p.nonce !== 'string' || p.nonce === '') throw new Error('§5.2: nonce is REQUIRED');
  if (p.response_type !== undefined && p.response_type !== 'vp_token') throw new Error(`§5.6: only response_type vp_token is supported, got ${p.response_type}`);
  const hasDcql = p.dcql_query !== undefined;
  const hasPd = p.presentation_definition !== undefined;
  // §5.1: dcql_query or a scope, not both; Presentation Exchange is the drafts' alternative.
  if (hasDcql && p.scope !== undefined) throw new Error('§5.1: dcql_query and scope MUST NOT both be present');
  if (hasDcql && hasPd) throw new Error('dcql_query and presentation_definition both present');
  if (!hasDcql && !hasPd && p.scope === undefined) throw new Error('§8.5: no dcql_query (nor scope, nor presentation_definition)');
  if (p.response_mode === 'direct_post' || p.response_mode === 'direct_post.jwt') {
    if (typeof p.response_uri !== 'string') throw new Error('§8.2: response_uri is REQUIRED with direct_post');
    // §8.2: redirect_uri present with direct_post is an invalid_request.
    if (p.redirect_uri !== undefined) throw new Error('§8.2: redirect_uri MUST NOT be present with direct_post');
  }
  // §5.1: a wallet that does not support transaction_data MUST reject requests carrying it.
  if (p.transaction_data !== undefined) throw new Error('§5.1: transaction_data is not supported by this wallet');
  if (p.client_metadata !== undefined && (typeof p.client_metadata !== 'object' || p.client_metadata === null)) throw new Error('§5.1: client_metadata is a JSON object');
}

/** parse → fetch (or verify by value) in one step. */
export async function resolveAuthorizationRequest(uri: string, opts: Omit<FetchRequestOptions, 'expectedClientId'> = {}): Promise<VerifiedRequest> {
  const ref = parseAuthorizationRequestUri(uri);
  if (ref.requestUri !== undefined) {
    return fetchRequestObject(ref.requestUri, { ...opts, expectedClientId: ref.clientId, method: (ref.requestUriMethod as 'get' | 'post' | undefined) ?? opts.method });
  }
  if (ref.request !== undefined) return verifyRequestObject(ref.request, { ...opts, expectedClientId: ref.clientId });
  throw new Error('this wallet takes Request Objects only (request or request_uri)');
}

// ---------------------------------------------------------------------------------------------
// DID resolution (did:key, did:jwk locally; did:web over HTTPS)

/** did:web → the URL of its did.json (did:web method spec §3.2). HTTP only to 127.0.0.1. */
export function didWebUrl(did: string): string {
  if (!did.startsWith('did:web:')) throw new Error(`not a did:web: ${did}`);
  const [host, ...path] = did.slice('did:web:'.length).split(':').map((s) => decodeURIComponent(s));
  if (!host) throw new Error(`did:web without a host: ${did}`);
  const scheme = /^127\.0\.0\.1(:\d+)?$/.test(host) ? 'http' : 'https';
  return path.length > 0 ? `${scheme}://${host}/${path.join('/')}/did.json` : `${scheme}://${host}/.well-known/did.json`;
}

/** The public JWK of a verification method (publicKeyJwk, publicKeyMultibase, Ed25519 publicKeyBase58). */
export function jwkOfVerificationMethod(vm: Record<string, any>): PublicJwk {
  if (vm.publicKeyJwk && typeof vm.publicKeyJwk === 'object') {
    const { kty, crv, x, y } = vm.publicKeyJwk as PublicJwk;
    return (y === undefined ? { kty, crv, x } : { kty, crv, x, y }) as PublicJwk;
  }
  if (typeof vm.publicKeyMultibase === 'string') return jwkOfMultibase(vm.publicKeyMultibase);
  if (typeof vm.publicKeyBase58 === 'string' && /Ed25519/.test(String(vm.type))) {
    return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(base58btcDecode(vm.publicKeyBase58)).toString('base64url') };
  }
  throw new Error(`verification method ${vm.id} has no key this wallet reads`);
}

/** The key a DID URL names (§5.9.3: from the DID document's verificationMethod). */
export async function resolveDidKey(didUrl: string, opts: { fetch?: typeof fetch } = {}): Promise<PublicJwk> {
  const [did, fragment] = didUrl.split('#');
  if (!did || fragment === undefined || fragment === '') throw new Error(`${didUrl} is not a DID URL with a fragment`);
  if (did.startsWith('did:key:')) return jwkOfDidKey(didUrl);
  if (did.startsWith('did:jwk:')) return jwkOfDidJwk(didUrl);
  if (did.startsWith('did:web:')) {
    const url = didWebUrl(did);
    const res = await (opts.fetch ?? fetch)(url, { headers: { accept: 'application/did+json, application/json' }, redirect: 'manual' });
    if (res.status !== 200) throw new Error(`did:web resolution of ${did}: HTTP ${res.status} at ${url}`);
    const doc = (await res.json()) as Record<string, any>;
    // DID Core §5.1.1: the document's id is the DID resolved.
    if (doc.id !== did) throw new Error(`did:web document at ${url} has id ${doc.id}, not ${did}`);
    const methods: Record<string, any>[] = Array.isArray(doc.verificationMethod) ? doc.verificationMethod : [];
    // Method ids may be relative (`#key-1`) or absolute.
    const vm = methods.find((m) => m?.id === didUrl || m?.id === `#${fragment}`);
    if (!vm) throw new Error(`${didUrl} is not a verificationMethod of ${did}`);
    return jwkOfVerificationMethod(vm);
  }
  throw new Error(`unsupported DID method: ${did}`);
}

const SIG_ALGS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];

async function verifyJws(jws: string, jwk: PublicJwk, alg: string): Promise<void> {
  if (!SIG_ALGS.includes(alg)) throw new Error(`unsupported JWS alg ${alg}`);
  let key;
  try {
    key = await importJWK(jwk as JWK, alg);
  } catch (e) {
    throw new Error(`the DID key does not fit alg ${alg}: ${(e as Error).message}`);
  }
  try {
    await compactVerify(jws, key, { algorithms: [alg] });
  } catch (e) {
    throw new Error(`§5.9.3: the Request Object signature does not verify with the DID key (${(e as Error).message})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Claim paths

const pointerToken = (t: string | number): string => String(t).replace(/~/g, '~0').replace(/\//g, '~1');
export const pointerOf = (path: (string | number)[]): string => path.map((t) => `/${pointerToken(t)}`).join('');

/** A JSONPath of the simple kind Presentation Exchange uses: `$.a.b`, `$['a']["b"][0]`, `$.a[*]`. */
export function claimPathOfJsonPath(jsonPath: string): ClaimPath {
  if (!jsonPath.startsWith('$')) throw new Error(`not a JSONPath: ${jsonPath}`);
  const out: (string | number | null)[] = [];
  const re = /\.([A-Za-z0-9_$@-]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*(\d+)\s*\]|\[\s*\*\s*\]|\.\*/gy;
  re.lastIndex = 1;
  while (re.lastIndex < jsonPath.length) {
    const m = re.exec(jsonPath);
    if (!m) throw new Error(`unsupported JSONPath: ${jsonPath}`);
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(m[2]);
    else if (m[3] !== undefined) out.push(m[3]);
    else if (m[4] !== undefined) out.push(Number(m[4]));
    else out.push(null);
  }
  return out;
}

/** Any ClaimSelector as a DCQL claims path (§7). */
export function claimPathOf(selector: ClaimSelector): ClaimPath {
  if (typeof selector !== 'string') return selector;
  if (selector.startsWith('/')) {
    return selector
      .slice(1)
      .split('/')
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((t) => (/^(0|[1-9]\d*)$/.test(t) ? Number(t) : t));
  }
  if (selector.startsWith('$')) return claimPathOfJsonPath(selector);
  return [selector];
}

/**
 * §7.1.1 processing of a claims path pointer: the concrete paths (no nulls) it selects.
 * Throws where §7.1.1 says "abort processing and return an error" (a non-object under a key,
 * a non-array under null or an index, an empty selection).
 */
export function selectClaimPaths(root: unknown, path: ClaimPath): (string | number)[][] {
  if (!Array.isArray(path) || path.length === 0) throw new Error('§7: a claims path pointer is a non-empty array');
  let selected: { value: unknown; at: (string | number)[] }[] = [{ value: root, at: [] }];
  for (const c of path) {
    const next: typeof selected = [];
    for (const { value, at } of selected) {
      if (typeof c === 'string') {
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`§7.1.1: ${JSON.stringify(path)}: not an object at ${pointerOf(at) || '/'}`);
        if (Object.prototype.hasOwnProperty.call(value, c)) next.push({ value: (value as Record<string, unknown>)[c], at: [...at, c] });
      } else if (c === null) {
        if (!Array.isArray(value)) throw new Error(`§7.1.1: ${JSON.stringify(path)}: not an array at ${pointerOf(at) || '/'}`);
        value.forEach((v, i) => next.push({ value: v, at: [...at, i] }));
      } else if (typeof c === 'number' && Number.isInteger(c) && c >= 0) {
        if (!Array.isArray(value)) throw new Error(`§7.1.1: ${JSON.stringify(path)}: not an array at ${pointerOf(at) || '/'}`);
        if (c < value.length) next.push({ value: value[c], at: [...at, c] });
      } else {
        throw new Error(`§7.1.1: invalid path component ${JSON.stringify(c)}`);
      }
    }
    selected = next;
  }
  if (selected.length === 0) throw new Error(`§7.1.1: ${JSON.stringify(path)} selects nothing`);
  return selected.map((s) => s.at);
}

/** The selected values (for DCQL `values` matching). */
function valuesAt(root: unknown, paths: (string | number)[][]): unknown[] {
  return paths.map((p) => p.reduce<any>((v, k) => v?.[k], root));
}

// ---------------------------------------------------------------------------------------------
// SD-JWT presentations (RFC 9901 §4-§5, OpenID4VP Appendix B.3)

const isWithin = (pointer: string, ancestor: string): boolean => pointer === ancestor || pointer.startsWith(`${ancestor}/`);

/**
 * The disclosures that reveal the claims at `pointers`: for each, the disclosures on its way from
 * the root (the claim itself and every disclosable parent object or array element: without them
 * the digest of a nested claim is not reachable, RFC 9901 §7.1), and every disclosure beneath it
 * (asking for `address` asks for its sub-claims, §7.3's example).
 */
export function disclosuresFor(decoded: DecodedSdJwt, pointers: string[]): Disclosure[] {
  return decoded.disclosures.filter((d) => pointers.some((p) => isWithin(p, d.path) || isWithin(d.path, p)));
}

const b64uJson = (v: unknown): string => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');

/** Re-encode a disclosure with another value (same salt and name): its digest no longer matches. */
export function tamperDisclosure(encoded: string, value: unknown): string {
  const arr = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as unknown[];
  arr[arr.length - 1] = value;
  return b64uJson(arr);
}

/** A disclosure the issuer never signed (RFC 9901 §4.2.1 shape; `name` undefined: an array element). */
export function forgeDisclosure(name: string | undefined, value: unknown, salt: string = randomBytes(16).toString('base64url')): string {
  return b64uJson(name === undefined ? [salt, value] : [salt, name, value]);
}

/** RFC 9901 §4.3.1: sd_hash over the SD-JWT up to and including the last `~` (hash of `_sd_alg`, sha-256 here). */
export function sdHashOf(issuerJwt: string, disclosures: string[]): string {
  return sha256b64u(`${[issuerJwt, ...disclosures].join('~')}~`);
}

/** RFC 9901 §4.3: a KB-JWT over an SD-JWT (`…~`). */
export function makeKbJwt(sdJwtWithTilde: string, key: SigningKey, o: { audience: string; nonce: string; iat?: number; sdHash?: string; signingKey?: KeyObject; header?: Record<string, unknown>; payload?: Record<string, unknown> }): string {
  const header: Record<string, unknown> = { typ: KB_JWT_TYP, alg: key.alg, ...o.header };
  const payload: Record<string, unknown> = {
    iat: o.iat ?? Math.floor(Date.now() / 1000),
    aud: o.audience,
    nonce: o.nonce,
    sd_hash: o.sdHash ?? sha256b64u(sdJwtWithTilde),
    ...o.payload,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  return signCompactJws(header, payload, o.signingKey ?? key.privateKey);
}

/** The disclosures a set of selectors reveals (JSON pointers of the claims, and the encoded disclosures). */
export function selectDisclosures(decoded: DecodedSdJwt, claims: readonly ClaimSelector[] | 'all', allowMissing = false): { pointers: string[]; disclosures: Disclosure[] } {
  if (claims === 'all') return { pointers: decoded.disclosures.map((d) => d.path), disclosures: decoded.disclosures };
  const pointers: string[] = [];
  for (const sel of claims) {
    try {
      for (const p of selectClaimPaths(decoded.claims, claimPathOf(sel))) pointers.push(pointerOf(p));
    } catch (e) {
      if (!allowMissing) throw new Error(`the credential cannot disclose ${JSON.stringify(sel)}: ${(e as Error).message}`);
    }
  }
  return { pointers, disclosures: disclosuresFor(decoded, pointers) };
}

/**
 * `<issuer-jwt>~<d1>~…~<kb-jwt>` (RFC 9901 §4): the disclosures for `claims` in the issuer's order,
 * and a KB-JWT with `aud` = the client id as sent (B.3.6, §14.10), `nonce` = the request's.
 */
export function presentSdJwt(credential: string, holderKey: SigningKey, o: PresentOptions): Presentation {
  const decoded = decodeSdJwt(credential);
  if (decoded.kbJwt !== null) throw new Error('the credential already carries a KB-JWT');
  const { disclosures } = selectDisclosures(decoded, o.claims, o.allowMissing);
  let encoded = [...disclosures.map((d) => d.encoded), ...(o.extraDisclosures ?? [])];
  if (o.mapDisclosures) encoded = o.mapDisclosures(encoded, decoded);
  const sdJwt = `${[decoded.issuerJwt, ...encoded].join('~')}~`;
  const kbJwt = o.omitKb
    ? null
    : makeKbJwt(sdJwt, holderKey, { audience: o.audience, nonce: o.nonce, iat: o.iat, sdHash: o.sdHashOverride, signingKey: o.kbSigningKey, header: o.kbHeader, payload: o.kbPayload });
  return { presentation: kbJwt === null ? sdJwt : `${sdJwt}${kbJwt}`, disclosures: encoded, kbJwt, disclosedPaths: disclosures.map((d) => d.path) };
}

// ---------------------------------------------------------------------------------------------
// W3C VP as a JWT (jwt_vc_json, Appendix B.1.3.1 and VCDM 1.1 §6.3.1)

export interface JwtVpOptions {
  audience: string;
  nonce: string;
  iat?: number;
  /** Lifetime in seconds (300 by default). */
  ttl?: number;
  /** Default: the DID URL of the holder key under holderDid (did:key `#<mb>`, did:jwk `#0`). */
  kid?: string;
  context?: string[];
  signingKey?: KeyObject;
  header?: Record<string, unknown>;
  payload?: Record<string, unknown>;
}

function kidFor(key: SigningKey, holderDid: string): string {
  const k = key as Partial<HolderKey>;
  if (holderDid === k.didKey && k.didKeyUrl) return k.didKeyUrl;
  if (holderDid === k.didJwk && k.didJwkUrl) return k.didJwkUrl;
  if (holderDid.startsWith('did:key:')) return `${holderDid}#${holderDid.slice('did:key:'.length)}`;
  if (holderDid.startsWith('did:jwk:')) return `${holderDid}#0`;
  throw new Error(`no default kid for ${holderDid}: pass one`);
}

/** A VP JWT: `iss` the holder DID, `kid` its DID URL, `aud` the client id, `nonce` the request's. */
export function presentJwtVp(jwtVcs: string[], holderKey: SigningKey, holderDid: string, o: JwtVpOptions): string {
  const iat = o.iat ?? Math.floor(Date.now() / 1000);
  const header: Record<string, unknown> = { alg: holderKey.alg, typ: 'JWT', kid: o.kid ?? kidFor(holderKey, holderDid), ...o.header };
  const payload: Record<string, unknown> = {
    iss: holderDid,
    jti: `urn:uuid:${randomUUID()}`,
    aud: o.audience,
    nonce: o.nonce,
    iat,
    nbf: iat,
    exp: iat + (o.ttl ?? 300),
    vp: {
      '@context': o.context ?? ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiablePresentation'],
      holder: holderDid,
      verifiableCredential: jwtVcs,
    },
    ...o.payload,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  return signCompactJws(header, payload, o.signingKey ?? holderKey.privateKey);
}

// ---------------------------------------------------------------------------------------------
// Response (§8, §8.2 direct_post)

/** §8.2: POST the fields as application/x-www-form-urlencoded; §14.8: no redirects followed. */
export async function postDirectPost(responseUri: string, fields: Record<string, string>, opts: { fetch?: typeof fetch; contentType?: string } = {}): Promise<HttpResult> {
  requireHttps(responseUri, 'response_uri');
  const res = await (opts.fetch ?? fetch)(responseUri, {
    method: 'POST',
    headers: { 'content-type': opts.contentType ?? 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return readBody(res);
}

const isSdJwtFormat = (f: unknown): boolean => f === 'dc+sd-jwt' || f === 'vc+sd-jwt';

/** §6.4.1: the claims to disclose for one credential query (first satisfiable claim set), or an error. */
export function dcqlClaimsFor(query: DcqlCredentialQuery, claims: Record<string, unknown>, matchValues = true): ClaimPath[] {
  // §6.4.1: no `claims`: only what is mandatory to present.
  if (!query.claims) return [];
  const usable = (c: DcqlClaimsQuery): boolean => {
    let paths: (string | number)[][];
    try {
      paths = selectClaimPaths(claims, c.path);
    } catch {
      return false;
    }
    // §6.3 `values`: a claim whose value matches none is treated as absent.
    if (matchValues && c.values) return valuesAt(claims, paths).some((v) => c.values!.some((w) => w === v));
    return true;
  };
  if (!query.claim_sets) {
    const missing = query.claims.filter((c) => !usable(c));
    if (missing.length > 0) throw new Error(`§6.4.1: credential for ${query.id} lacks ${missing.map((c) => JSON.stringify(c.path)).join(', ')}`);
    return query.claims.map((c) => c.path);
  }
  const byId = new Map(query.claims.map((c) => [c.id, c]));
  for (const set of query.claim_sets) {
    const chosen = set.map((id) => byId.get(id));
    if (chosen.every((c) => c !== undefined && usable(c))) return chosen.map((c) => c!.path);
  }
  throw new Error(`§6.4.1: credential for ${query.id} satisfies none of the claim_sets`);
}

/** §6.4.2: the credential query ids to answer, given the ids the wallet has a credential for. */
export function dcqlQueryIdsToAnswer(query: DcqlQuery, available: Set<string>): string[] {
  if (!query.credential_sets) {
    const missing = query.credentials.map((c) => c.id).filter((id) => !available.has(id));
    if (missing.length > 0) throw new Error(`§6.4.2: no credential for ${missing.join(', ')}`);
    return query.credentials.map((c) => c.id);
  }
  const out = new Set<string>();
  for (const set of query.credential_sets) {
    const option = set.options.find((o) => o.every((id) => available.has(id)));
    if (option) option.forEach((id) => out.add(id));
    else if (set.required !== false) throw new Error(`§6.4.2: no option of a required credential set can be met (${JSON.stringify(set.options)})`);
  }
  return query.credentials.map((c) => c.id).filter((id) => out.has(id));
}

/** The VC `type`s of a JWT VC (VCDM 1.1 `vc.type`, or a VCDM 2.0 style top-level `type`). */
const vcTypesOfJwt = (jwt: string): string[] => {
  const { payload } = decodeJwtParts(jwt);
  const t = payload.vc?.type ?? payload.type;
  return Array.isArray(t) ? t : typeof t === 'string' ? [t] : [];
};

/** B.1.1 `type_values` without JSON-LD expansion: a relative type matches itself or an IRI ending in `#type`. */
function typeMatches(have: string[], want: string): boolean {
  return have.some((t) => t === want || want.endsWith(`#${t}`));
}

function checkDcqlMatch(q: DcqlCredentialQuery, credential: string): void {
  if (isSdJwtFormat(q.format)) {
    if (!credential.includes('~')) throw new Error(`${q.id}: format ${q.format} needs an SD-JWT`);
    const vct = decodeSdJwt(credential).payload.vct;
    const wanted = q.meta?.vct_values;
    // B.3.5: vct_values lists the accepted types.
    if (Array.isArray(wanted) && !wanted.includes(vct)) throw new Error(`${q.id}: vct ${vct} not in vct_values ${JSON.stringify(wanted)}`);
  } else if (q.format === 'jwt_vc_json') {
    const wanted = q.meta?.type_values;
    const have = vcTypesOfJwt(credential);
    if (Array.isArray(wanted) && !wanted.some((alt: string[]) => alt.every((t) => typeMatches(have, t)))) throw new Error(`${q.id}: VC type ${JSON.stringify(have)} matches no type_values`);
  } else {
    throw new Error(`${q.id}: format ${q.format} is not supported by this wallet`);
  }
}

/**
 * Answer a DCQL request over direct_post: `vp_token` = `{"<query id>": ["<presentation>", …]}`
 * (§8.1), each presentation disclosing exactly the query's claims (§6.4.1), bound to the client id
 * as sent and the request nonce.
 */
export async function answerDcql(
  request: RequestObject,
  credentials: Record<string, string | string[]>,
  holderKey: SigningKey,
  opts: AnswerOptions = {},
): Promise<AnswerResult> {
  const query = request.dcql_query;
  if (!query || !Array.isArray(query.credentials)) throw new Error('the request has no dcql_query');
  const ids = dcqlQueryIdsToAnswer(query, new Set(Object.keys(credentials)));
  const vpToken: Record<string, string[]> = {};
  for (const id of ids) {
    const q = query.credentials.find((c) => c.id === id)!;
    const given = credentials[id]!;
    const list = Array.isArray(given) ? given : [given];
    // §8.1: without `multiple`, exactly one presentation.
    if (list.length !== 1 && q.multiple !== true && !opts.skipMatching) throw new Error(`§8.1: ${id} is not multiple; one credential only`);
    vpToken[id] = list.map((credential) => {
      if (!opts.skipMatching) checkDcqlMatch(q, credential);
      if (q.format === 'jwt_vc_json' || (!credential.includes('~') && !isSdJwtFormat(q.format))) {
        const sub = decodeJwtParts(credential).payload.sub;
        const holderDid = opts.holderDid ?? (typeof sub === 'string' && sub.startsWith('did:') ? sub : (holderKey as Partial<HolderKey>).didKey);
        if (!holderDid) throw new Error('jwt_vc_json: pass opts.holderDid');
        return presentJwtVp([credential], holderKey, holderDid, { audience: opts.present?.audience ?? request.client_id, nonce: opts.present?.nonce ?? request.nonce, iat: opts.present?.iat, signingKey: opts.present?.kbSigningKey });
      }
      const decoded = decodeSdJwt(credential);
      const claims = opts.claimsOverride?.[id] ?? dcqlClaimsFor(q, decoded.claims, !opts.skipMatching);
      // B.3: an SD-JWT without KB only when the query waives holder binding and the credential has no cnf.
      const omitKb = q.require_cryptographic_holder_binding === false && decoded.payload.cnf === undefined;
      return presentSdJwt(credential, holderKey, { omitKb, ...opts.present, claims, audience: opts.present?.audience ?? request.client_id, nonce: opts.present?.nonce ?? request.nonce }).presentation;
    });
  }
  const fields: Record<string, string> = { vp_token: JSON.stringify(vpToken) };
  return send(request, fields, vpToken, opts);
}

async function send(request: RequestObject, fields: Record<string, string>, vpToken: unknown, opts: AnswerOptions): Promise<AnswerResult> {
  const state = opts.state === undefined ? request.state : opts.state;
  if (typeof state === 'string') fields.state = state;
  Object.assign(fields, opts.extraFields);
  if (opts.dryRun) return { status: 0, body: undefined, headers: new Headers(), fields, vpToken };
  const responseUri = opts.responseUri ?? request.response_uri;
  if (!responseUri) throw new Error('§8.2: no response_uri');
  if (!opts.responseUri && request.response_mode !== 'direct_post') throw new Error(`this wallet answers response_mode direct_post only, not ${request.response_mode}`);
  const res = await postDirectPost(responseUri, fields, { fetch: opts.fetch });
  return { ...res, fields, vpToken };
}

/**
 * Draft-style answer to a `presentation_definition` request: `vp_token` the bare presentation,
 * `presentation_submission` mapping the (first, or `descriptorId`) input descriptor to it at `$`.
 */
export async function answerPresentationDefinition(
  request: RequestObject,
  credential: string,
  holderKey: SigningKey,
  opts: AnswerOptions & { descriptorId?: string; format?: 'vc+sd-jwt' | 'dc+sd-jwt'; submission?: Record<string, unknown> } = {},
): Promise<AnswerResult> {
  const pd = request.presentation_definition;
  if (!pd || !Array.isArray(pd.input_descriptors)) throw new Error('the request has no presentation_definition');
  const descriptor = opts.descriptorId ? pd.input_descriptors.find((d) => d.id === opts.descriptorId) : pd.input_descriptors[0];
  if (!descriptor) throw new Error(`no input descriptor ${opts.descriptorId ?? ''}`);
  const decoded = decodeSdJwt(credential);
  let claims: readonly ClaimSelector[] | 'all';
  if (opts.claimsOverride?.[descriptor.id]) {
    claims = opts.claimsOverride[descriptor.id]!;
  } else {
    const paths: ClaimPath[] = [];
    claims = paths;
    for (const field of descriptor.constraints?.fields ?? []) {
      // PE: the first of the alternative paths that resolves.
      const hit = field.path.map(claimPathOfJsonPath).find((p) => {
        try {
          return selectClaimPaths(decoded.claims, p).length > 0;
        } catch {
          return false;
        }
      });
      if (hit) paths.push(hit);
      else if (!field.optional && !opts.skipMatching) throw new Error(`PE: the credential has none of ${JSON.stringify(field.path)}`);
    }
  }
  const formats = Object.keys(descriptor.format ?? pd.format ?? {});
  const format = opts.format ?? (formats.includes('dc+sd-jwt') && !formats.includes('vc+sd-jwt') ? 'dc+sd-jwt' : 'vc+sd-jwt');
  const presentation = presentSdJwt(credential, holderKey, { ...opts.present, claims, audience: opts.present?.audience ?? request.client_id, nonce: opts.present?.nonce ?? request.nonce }).presentation;
  const submission = opts.submission ?? { id: randomUUID(), definition_id: pd.id, descriptor_map: [{ id: descriptor.id, format, path: '$' }] };
  return send(request, { vp_token: presentation, presentation_submission: JSON.stringify(submission) }, presentation, opts);
}

/** Hash of a presentation's SD-JWT part, as a verifier recomputes it (for tests' own checks). */
export function sdHashOfPresentation(presentation: string): string {
  return createHash('sha256').update(presentation.slice(0, presentation.lastIndexOf('~') + 1), 'ascii').digest('base64url');
}
