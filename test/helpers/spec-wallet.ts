/**
 * An independent OpenID4VCI test wallet (pre-authorized code flow), written from the specification
 * text alone: OpenID for Verifiable Credential Issuance 1.0 (errata 1 editor's draft, the copy in
 * /work/shared/reference/openid4vci-1_0.md; "§" numbers below are that document's), with the
 * draft 13 and draft 11 request shapes wallets in the field still send, RFC 9449 (DPoP), RFC 8414
 * (AS metadata), RFC 6749/6750 and the SD-JWT / SD-JWT VC texts.
 *
 * It deliberately uses nothing but node:crypto and fetch (no @openid4vc, @credo-ts or @sd-jwt), so
 * that it is a second reading of the standard next to the issuer's library-based one. JWS signing
 * is hand-rolled too, so tests can sign whatever header they like (wrong typ, alg, key).
 */
import { createHash, ECDH, generateKeyPairSync, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';

export type HolderAlg = 'ES256' | 'EdDSA';
export type Binding = 'jwk' | 'did:key' | 'did:jwk';
export type RequestShape = 'v1' | 'draft13' | 'draft11';

export const PRE_AUTHORIZED_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
/** Appendix F.1: the explicit type of a key proof JWT. */
export const PROOF_TYP = 'openid4vci-proof+jwt';
/** RFC 9449 §4.2. */
export const DPOP_TYP = 'dpop+jwt';

export interface PublicJwk {
  kty: 'EC' | 'OKP';
  crv: 'P-256' | 'Ed25519';
  x: string;
  y?: string;
}

export interface HolderKey {
  readonly alg: HolderAlg;
  readonly privateKey: KeyObject;
  readonly publicJwk: PublicJwk;
  /** did:key of the public key, and its DID URL (`did#<multibase>`). */
  readonly didKey: string;
  readonly didKeyUrl: string;
  /** did:jwk of the public key, and its DID URL (`did#0`). */
  readonly didJwk: string;
  readonly didJwkUrl: string;
}

export interface HttpResult<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface CredentialOffer {
  credential_issuer: string;
  /** 1.0 / draft 13 (§4.1.1). */
  credential_configuration_ids?: string[];
  /** Draft 11: ids, or (older) inline objects. */
  credentials?: unknown[];
  grants?: Record<string, any>;
  [k: string]: unknown;
}

export interface OfferSummary {
  readonly credentialIssuer: string;
  readonly configurationIds: string[];
  readonly preAuthorizedCode: string | null;
  /** The `tx_code` object (§4.1.1), `{}` for a draft-11 `user_pin_required: true`, null when none is expected. */
  readonly txCode: Record<string, unknown> | null;
  readonly authorizationServer: string | null;
}

export interface WalletOptions {
  alg: HolderAlg;
  binding: Binding;
  shape: RequestShape;
  dpop?: boolean;
  fetch?: typeof fetch;
}

// ---------------------------------------------------------------------------------------------
// Encoding helpers

const b64u = (data: Buffer | Uint8Array | string): string => Buffer.from(data).toString('base64url');
const b64uJson = (value: unknown): string => b64u(JSON.stringify(value));
export const sha256b64u = (ascii: string): string => createHash('sha256').update(ascii, 'ascii').digest('base64url');

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58btcEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58_ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

export function base58btcDecode(text: string): Uint8Array {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  let n = 0n;
  for (const ch of text) {
    const v = B58_ALPHABET.indexOf(ch);
    if (v < 0) throw new Error(`not base58btc: ${JSON.stringify(ch)}`);
    n = n * 58n + BigInt(v);
  }
  const body: number[] = [];
  while (n > 0n) {
    body.unshift(Number(n % 256n));
    n /= 256n;
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body]);
}

// ---------------------------------------------------------------------------------------------
// DIDs: did:key (W3C CCG did:key method) and did:jwk

/** Multicodec prefixes as unsigned varints: ed25519-pub 0xed, p256-pub 0x1200. */
const ED25519_PREFIX = Uint8Array.from([0xed, 0x01]);
const P256_PREFIX = Uint8Array.from([0x80, 0x24]);

/** The multibase (base58btc, `z`) value of a did:key: multicodec prefix + raw / compressed public key. */
export function multibaseOfJwk(jwk: PublicJwk): string {
  const x = Buffer.from(jwk.x, 'base64url');
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    if (x.length !== 32) throw new Error('Ed25519 x must be 32 bytes');
    return `z${base58btcEncode(Buffer.concat([ED25519_PREFIX, x]))}`;
  }
  if (jwk.kty === 'EC' && jwk.crv === 'P-256' && jwk.y) {
    const y = Buffer.from(jwk.y, 'base64url');
    if (x.length !== 32 || y.length !== 32) throw new Error('P-256 coordinates must be 32 bytes');
    // SEC 1 §2.3.3 compressed point: 0x02 for even y, 0x03 for odd y.
    const compressed = Buffer.concat([Buffer.from([0x02 | (y[31]! & 1)]), x]);
    return `z${base58btcEncode(Buffer.concat([P256_PREFIX, compressed]))}`;
  }
  throw new Error(`no did:key encoding for ${jwk.kty}/${jwk.crv}`);
}

export function jwkOfMultibase(multibase: string): PublicJwk {
  if (!multibase.startsWith('z')) throw new Error('did:key values are base58btc multibase (z…)');
  const bytes = Buffer.from(base58btcDecode(multibase.slice(1)));
  if (bytes[0] === 0xed && bytes[1] === 0x01) {
    const raw = bytes.subarray(2);
    if (raw.length !== 32) throw new Error('Ed25519 did:key must carry 32 bytes');
    return { kty: 'OKP', crv: 'Ed25519', x: b64u(raw) };
  }
  if (bytes[0] === 0x80 && bytes[1] === 0x24) {
    const compressed = bytes.subarray(2);
    if (compressed.length !== 33) throw new Error('P-256 did:key must carry a 33-byte compressed point');
    // Throws for a point that is not on the curve.
    const uncompressed = Buffer.from(ECDH.convertKey(compressed, 'prime256v1', undefined, undefined, 'uncompressed') as Buffer);
    return { kty: 'EC', crv: 'P-256', x: b64u(uncompressed.subarray(1, 33)), y: b64u(uncompressed.subarray(33, 65)) };
  }
  throw new Error('unsupported did:key multicodec (only Ed25519 0xed and P-256 0x1200)');
}

export const didKeyOfJwk = (jwk: PublicJwk): string => `did:key:${multibaseOfJwk(jwk)}`;

/** did:key's single verification method is `did:key:<mb>#<mb>`. */
export const didKeyUrlOfJwk = (jwk: PublicJwk): string => {
  const mb = multibaseOfJwk(jwk);
  return `did:key:${mb}#${mb}`;
};

export function jwkOfDidKey(didOrUrl: string): PublicJwk {
  const [did, fragment] = didOrUrl.split('#');
  if (!did?.startsWith('did:key:')) throw new Error(`not a did:key: ${didOrUrl}`);
  const mb = did.slice('did:key:'.length);
  if (fragment !== undefined && fragment !== mb) throw new Error(`did:key has one method, #${mb}`);
  return jwkOfMultibase(mb);
}

/** The public members only, in lexicographic order (a stable serialisation; did:jwk fixes none). */
function publicMembers(jwk: PublicJwk): PublicJwk {
  return jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } as PublicJwk : { crv: jwk.crv, kty: jwk.kty, x: jwk.x } as PublicJwk;
}

export const didJwkOfJwk = (jwk: PublicJwk): string => `did:jwk:${b64uJson(publicMembers(jwk))}`;

export function jwkOfDidJwk(didOrUrl: string): PublicJwk {
  const [did, fragment] = didOrUrl.split('#');
  if (!did?.startsWith('did:jwk:')) throw new Error(`not a did:jwk: ${didOrUrl}`);
  if (fragment !== undefined && fragment !== '0') throw new Error('did:jwk has one method, #0');
  const jwk = JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString('utf8'));
  if (!jwk || typeof jwk !== 'object' || 'd' in jwk) throw new Error('did:jwk must hold a public JWK');
  return jwk as PublicJwk;
}

// ---------------------------------------------------------------------------------------------
// Keys and JWS

export function generateHolderKey(alg: HolderAlg): HolderKey {
  const { privateKey, publicKey } = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  const publicJwk = publicMembers(publicKey.export({ format: 'jwk' }) as PublicJwk);
  const didKey = didKeyOfJwk(publicJwk);
  const didJwk = didJwkOfJwk(publicJwk);
  return { alg, privateKey, publicJwk, didKey, didKeyUrl: didKeyUrlOfJwk(publicJwk), didJwk, didJwkUrl: `${didJwk}#0` };
}

/** Compact JWS (RFC 7515) signed with the key's own algorithm whatever `header.alg` says. */
export function signCompactJws(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64uJson(header)}.${b64uJson(payload)}`;
  const signature =
    key.asymmetricKeyType === 'ed25519'
      ? cryptoSign(null, Buffer.from(input, 'ascii'), key)
      : // JWS ES256 signatures are R || S (RFC 7518 §3.4), not DER.
        cryptoSign('sha256', Buffer.from(input, 'ascii'), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64u(signature)}`;
}

export function decodeJwtParts(compact: string): { header: Record<string, any>; payload: Record<string, any>; signature: string } {
  const [h, p, s] = compact.split('.');
  if (h === undefined || p === undefined || s === undefined) throw new Error('not a compact JWS');
  return { header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')), payload: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')), signature: s };
}

/** RFC 9449 §4.2: `ath` is the base64url SHA-256 of the ASCII access token. */
export const accessTokenHash = (accessToken: string): string => sha256b64u(accessToken);

/** RFC 9449 §4.2: `htu` is the target URI without query and fragment. */
export function htuOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

// ---------------------------------------------------------------------------------------------
// Credential Offer (§4)

/**
 * Splits an offer URI into its `credential_offer` (by value) or `credential_offer_uri` (by
 * reference). §4.1: exactly one of them. Any scheme: `openid-credential-offer://`, a wallet's
 * https Credential Offer Endpoint, or (our extension, for the API's own links) a plain URL with
 * neither parameter, taken as the reference itself.
 */
export function parseOfferUri(uri: string): { offer: CredentialOffer } | { offerUri: string } {
  const q = uri.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? uri.slice(q + 1).split('#')[0] : '');
  const byValue = params.get('credential_offer');
  const byRef = params.get('credential_offer_uri');
  if (byValue !== null && byRef !== null) throw new Error('§4.1: credential_offer and credential_offer_uri MUST NOT both be present');
  if (byValue !== null) return { offer: JSON.parse(byValue) as CredentialOffer };
  if (byRef !== null) return { offerUri: byRef };
  if (/^https?:\/\//i.test(uri)) return { offerUri: uri };
  throw new Error(`not a credential offer: ${uri}`);
}

/** §4.1.1, with draft 11's `credentials` and `user_pin_required` read the same way. */
export function summarizeOffer(offer: CredentialOffer): OfferSummary {
  if (typeof offer?.credential_issuer !== 'string') throw new Error('§4.1.1: credential_issuer is REQUIRED');
  let ids: string[];
  if (offer.credential_configuration_ids !== undefined) {
    ids = offer.credential_configuration_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.some((i) => typeof i !== 'string') || new Set(ids).size !== ids.length) {
      throw new Error('§4.1.1: credential_configuration_ids is a non-empty array of unique strings');
    }
  } else if (Array.isArray(offer.credentials)) {
    ids = offer.credentials.filter((c): c is string => typeof c === 'string');
  } else {
    throw new Error('§4.1.1: credential_configuration_ids is REQUIRED');
  }
  const grant = offer.grants?.[PRE_AUTHORIZED_CODE_GRANT] as Record<string, any> | undefined;
  let txCode: Record<string, unknown> | null = null;
  // §4.1.1: "a Transaction Code is required if present, even if empty".
  if (grant && grant.tx_code !== undefined && grant.tx_code !== null) txCode = grant.tx_code as Record<string, unknown>;
  else if (grant?.user_pin_required === true) txCode = {};
  return {
    credentialIssuer: offer.credential_issuer,
    configurationIds: ids,
    preAuthorizedCode: typeof grant?.['pre-authorized_code'] === 'string' ? grant['pre-authorized_code'] : null,
    txCode,
    authorizationServer: typeof grant?.authorization_server === 'string' ? grant.authorization_server : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Metadata (§12.2.2, RFC 8414 §3)

/** The well-known URL with the suffix inserted between host and path, then the appended form. */
export function wellKnownUrls(identifier: string, suffix: string): [inserted: string, appended: string] {
  const u = new URL(identifier);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '');
  return [`${u.origin}/.well-known/${suffix}${path}`, `${identifier.replace(/\/+$/, '')}/.well-known/${suffix}`];
}

/** `credential_configurations_supported` (1.0, draft 13), or draft 11's `credentials_supported` array keyed by `id`. */
export function configurationsOf(metadata: any, shape: RequestShape = 'v1'): Record<string, any> {
  // A draft-11 wallet knows only draft 11's `credentials_supported` (an array with `id`s).
  if (shape !== 'draft11' && metadata?.credential_configurations_supported && typeof metadata.credential_configurations_supported === 'object') {
    return metadata.credential_configurations_supported as Record<string, any>;
  }
  const old = metadata?.credentials_supported;
  if (Array.isArray(old)) return Object.fromEntries(old.filter((c) => typeof c?.id === 'string').map((c) => [c.id, c]));
  if (old && typeof old === 'object') return old as Record<string, any>;
  return {};
}

export const isSdJwtFormat = (format: unknown): boolean => format === 'dc+sd-jwt' || format === 'vc+sd-jwt';

/** The VC `type` array of a jwt_vc_json configuration: 1.0/draft 13 `credential_definition.type`, draft 11 `types`. */
export function vcTypesOf(configuration: any): string[] | undefined {
  return configuration?.credential_definition?.type ?? configuration?.credential_definition?.types ?? configuration?.types ?? configuration?.type;
}

// ---------------------------------------------------------------------------------------------
// Credential Request bodies (§8.2 and the drafts)

export interface CredentialRequestInput {
  shape: RequestShape;
  configurationId: string;
  /** The configuration's metadata entry (draft shapes name the format and type instead of the id). */
  configuration?: any;
  proofs: string[];
  /** Draft shapes: override the format sent. */
  format?: string;
}

export function buildCredentialRequest(input: CredentialRequestInput): Record<string, unknown> {
  const { shape, configurationId, configuration, proofs } = input;
  if (shape === 'v1') {
    // §8.2: the configuration id, and `proofs` with exactly one proof type whose value is a non-empty array.
    return { credential_configuration_id: configurationId, proofs: { jwt: proofs } };
  }
  if (!configuration) throw new Error(`the ${shape} request shape names the format and type: pass the configuration of ${configurationId}`);
  const sdJwt = isSdJwtFormat(configuration.format);
  // Draft-era wallets know SD-JWT VC as `vc+sd-jwt` (the `dc+sd-jwt` rename came with 1.0).
  const format = input.format ?? (sdJwt ? 'vc+sd-jwt' : configuration.format);
  let typeFields: Record<string, unknown>;
  if (sdJwt) typeFields = { vct: configuration.vct };
  else if (shape === 'draft13') typeFields = { credential_definition: { type: vcTypesOf(configuration) } };
  else typeFields = { types: vcTypesOf(configuration) };
  if (proofs.length === 1) return { format, ...typeFields, proof: { proof_type: 'jwt', jwt: proofs[0] } };
  // Draft 13 introduced `proofs` for batches; draft 11 had a separate batch endpoint.
  if (shape === 'draft11') throw new Error('draft 11 has no batch in the credential endpoint');
  return { format, ...typeFields, proofs: { jwt: proofs } };
}

/** 1.0 `credentials: [{credential}]`, draft 13 `credentials: [credential]`, drafts `credential`. */
export function credentialsOfResponse(body: any): unknown[] {
  if (Array.isArray(body?.credentials)) return body.credentials.map((c: any) => (c && typeof c === 'object' && 'credential' in c ? c.credential : c));
  if (body?.credential !== undefined) return [body.credential];
  return [];
}

// ---------------------------------------------------------------------------------------------
// SD-JWT decoding (SD-JWT, RFC 9901 §4-§7), independent of any SD-JWT library

export interface Disclosure {
  readonly encoded: string;
  /** base64url(SHA-256(ASCII(encoded))). */
  readonly digest: string;
  readonly salt: string;
  /** Absent for an array element disclosure. */
  readonly name?: string;
  readonly value: unknown;
  /** JSON pointer of the disclosed claim in the processed payload. */
  path: string;
}

export interface DecodedSdJwt {
  readonly header: Record<string, any>;
  /** The issuer-signed payload as signed (with `_sd`, `_sd_alg`, `...`). */
  readonly payload: Record<string, any>;
  /** The payload with every disclosure applied and the SD machinery removed. */
  readonly claims: Record<string, any>;
  readonly disclosures: Disclosure[];
  /** JSON pointers of the selectively disclosable claims, nested ones and array elements included, sorted. */
  readonly disclosablePaths: string[];
  readonly issuerJwt: string;
  readonly kbJwt: string | null;
}

const pointerToken = (t: string | number): string => String(t).replace(/~/g, '~0').replace(/\//g, '~1');

export function decodeSdJwt(compact: string): DecodedSdJwt {
  const parts = compact.split('~');
  const issuerJwt = parts[0]!;
  if (parts.length < 2) throw new Error('an SD-JWT has at least one ~');
  const last = parts[parts.length - 1]!;
  const kbJwt = last === '' ? null : last;
  const { header, payload } = decodeJwtParts(issuerJwt);
  const alg = payload._sd_alg ?? 'sha-256';
  if (alg !== 'sha-256') throw new Error(`unsupported _sd_alg ${alg}`);

  const byDigest = new Map<string, Disclosure>();
  for (const encoded of parts.slice(1, -1)) {
    if (encoded === '') throw new Error('empty disclosure');
    const arr = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    if (!Array.isArray(arr) || (arr.length !== 2 && arr.length !== 3) || typeof arr[0] !== 'string') throw new Error(`malformed disclosure ${encoded}`);
    const d: Disclosure =
      arr.length === 3 ? { encoded, digest: sha256b64u(encoded), salt: arr[0], name: arr[1], value: arr[2], path: '' } : { encoded, digest: sha256b64u(encoded), salt: arr[0], value: arr[1], path: '' };
    if (d.name !== undefined && (typeof d.name !== 'string' || d.name === '_sd' || d.name === '...')) throw new Error(`forbidden claim name in disclosure ${encoded}`);
    if (byDigest.has(d.digest)) throw new Error('the same disclosure twice');
    byDigest.set(d.digest, d);
  }
  const seen = new Set<string>();
  const used = new Set<string>();
  const claim = (digest: unknown): Disclosure | undefined => {
    if (typeof digest !== 'string') throw new Error('digests are strings');
    // RFC 9901 §7.1: a digest (decoys included) appears at most once.
    if (seen.has(digest)) throw new Error(`digest ${digest} appears twice`);
    seen.add(digest);
    const d = byDigest.get(digest);
    if (d) used.add(digest);
    return d;
  };

  const walk = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (const el of node) {
        if (el && typeof el === 'object' && !Array.isArray(el) && Object.keys(el).length === 1 && '...' in el) {
          const d = claim((el as Record<string, unknown>)['...']);
          if (!d) continue; // undisclosed element or decoy
          if (d.name !== undefined) throw new Error('an array element digest must point at a two-element disclosure');
          d.path = `${path}/${out.length}`;
          out.push(walk(d.value, d.path));
        } else {
          out.push(walk(el, `${path}/${out.length}`));
        }
      }
      return out;
    }
    if (node && typeof node === 'object') {
      const obj = node as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(obj)) {
        if (k === '_sd' || (k === '_sd_alg' && path === '')) continue;
        out[k] = walk(v, `${path}/${pointerToken(k)}`);
      }
      if (obj._sd !== undefined) {
        if (!Array.isArray(obj._sd)) throw new Error('_sd is an array');
        for (const digest of obj._sd) {
          const d = claim(digest);
          if (!d) continue; // decoy
          if (d.name === undefined) throw new Error('an _sd digest must point at a three-element disclosure');
          if (d.name in out) throw new Error(`claim ${d.name} both plain and disclosed`);
          d.path = `${path}/${pointerToken(d.name)}`;
          out[d.name] = walk(d.value, d.path);
        }
      }
      return out;
    }
    return node;
  };
  const claims = walk(payload, '') as Record<string, any>;
  // RFC 9901 §7.1: every disclosure must be referenced by a digest in the payload (or in another disclosure).
  for (const d of byDigest.values()) if (!used.has(d.digest)) throw new Error(`disclosure ${d.encoded} is not referenced by any digest`);
  const disclosures = [...byDigest.values()];
  return { header, payload, claims, disclosures, disclosablePaths: disclosures.map((d) => d.path).sort(), issuerJwt, kbJwt };
}

// ---------------------------------------------------------------------------------------------
// The wallet

export interface ProofOptions {
  aud: string;
  /** The c_nonce; null or undefined leaves the claim out. */
  nonce?: string | null;
  iss?: string;
  typ?: string;
  iat?: number;
  alg?: string;
  key?: HolderKey;
  /** Override the wallet's binding for this proof. */
  binding?: Binding;
  /** Sign with this key instead (a proof whose signature does not match its header key). */
  signingKey?: KeyObject;
  header?: Record<string, unknown>;
  payload?: Record<string, unknown>;
}

export interface DpopOptions {
  htm: string;
  htu: string;
  accessToken?: string;
  nonce?: string | null;
  iat?: number;
  jti?: string;
  typ?: string;
  /** Override `ath`. */
  ath?: string;
}

export interface TokenRequestInput {
  tokenEndpoint: string;
  preAuthorizedCode: string;
  txCode?: string;
  clientId?: string;
  /** Extra or overriding form parameters. */
  extra?: Record<string, string>;
  shape?: RequestShape;
}

export interface CredentialRequestOptions {
  accessToken: string | null;
  configurationId: string;
  proofs: string[];
  shape?: RequestShape;
  configuration?: any;
  credentialEndpoint?: string;
  format?: string;
  /** Send exactly this body instead of building one. */
  body?: unknown;
  /** Send exactly this Authorization header (null: none). */
  authorization?: string | null;
  /** Send exactly this DPoP header instead of a fresh proof (null: none). */
  dpopProof?: string | null;
}

export interface CredentialResult extends HttpResult {
  readonly credentials: unknown[];
  readonly notificationId: string | undefined;
}

export interface ReceiveOptions {
  txCode?: string;
  batch?: number;
  configurationId?: string;
  clientId?: string;
}

export interface Received {
  credentials: string[];
  format: string;
  configurationId: string;
  notificationId: string | undefined;
  holderKeys: HolderKey[];
  metadata: any;
  asMetadata: any;
  tokenResponse: any;
  accessToken: string;
  offer: CredentialOffer;
  credentialResponse: CredentialResult;
  cNonce: string | undefined;
}

export class ProtocolError extends Error {
  constructor(
    readonly step: string,
    readonly result: HttpResult,
  ) {
    super(`${step}: HTTP ${result.status} ${typeof result.body === 'string' ? result.body : JSON.stringify(result.body)}`);
  }
}

/** The throwing layer: the body of a 2xx answer, else a ProtocolError carrying the answer. */
export function ensureOk<T>(result: HttpResult<T>, step: string): T {
  if (result.status < 200 || result.status > 299) throw new ProtocolError(step, result);
  return result.body;
}

export class SpecWallet {
  readonly alg: HolderAlg;
  readonly binding: Binding;
  readonly shape: RequestShape;
  readonly dpop: boolean;
  readonly dpopKey: HolderKey;
  /** Every holder key this wallet generated, in order. */
  readonly holderKeys: HolderKey[] = [];
  /** The last issuer metadata fetched, and the URL it came from. */
  issuerMetadata: any;
  issuerMetadataUrl: string | undefined;
  asMetadata: any;
  /** RFC 9449 §8/§9: the latest DPoP-Nonce from the authorization server and from the resource server. */
  asDpopNonce: string | undefined;
  rsDpopNonce: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: WalletOptions) {
    this.alg = opts.alg;
    this.binding = opts.binding;
    this.shape = opts.shape;
    this.dpop = opts.dpop ?? false;
    this.fetchImpl = opts.fetch ?? fetch;
    this.dpopKey = generateHolderKey(opts.alg);
  }

  newHolderKey(alg: HolderAlg = this.alg): HolderKey {
    const k = generateHolderKey(alg);
    this.holderKeys.push(k);
    return k;
  }

  /** The DID that a credential bound with this wallet's binding names as holder (null for `jwk`). */
  holderDid(key: HolderKey, binding: Binding = this.binding): string | null {
    return binding === 'did:key' ? key.didKey : binding === 'did:jwk' ? key.didJwk : null;
  }

  // --- HTTP ---------------------------------------------------------------------------------

  private async http(url: string, init: RequestInit): Promise<HttpResult> {
    const res = await this.fetchImpl(url, init);
    const text = await res.text();
    let body: unknown = text;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
    } else {
      body = undefined;
    }
    return { status: res.status, body, headers: res.headers };
  }

  // --- Offer --------------------------------------------------------------------------------

  async resolveOffer(uri: string): Promise<CredentialOffer> {
    const parsed = parseOfferUri(uri);
    if ('offer' in parsed) return parsed.offer;
    // §4.1.3: GET the reference; the answer MUST be application/json (an unsigned offer).
    const res = await this.http(parsed.offerUri, { method: 'GET', headers: { accept: 'application/json' } });
    const body = ensureOk(res, 'credential offer by reference');
    const type = res.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) throw new Error(`§4.1.3: the offer must be application/json, got ${type}`);
    return body as CredentialOffer;
  }

  // --- Metadata -----------------------------------------------------------------------------

  /** A well-known document: the inserted location, then the appended one; `check` rejects a document naming another identifier. */
  private async fetchWellKnown(identifier: string, suffix: string, what: string, check: (body: any, url: string) => void): Promise<{ body: any; url: string }> {
    let last: HttpResult | undefined;
    for (const url of wellKnownUrls(identifier, suffix)) {
      last = await this.http(url, { method: 'GET', headers: { accept: 'application/json' } });
      if (last.status !== 200 || typeof last.body !== 'object') continue;
      check(last.body, url);
      return { body: last.body, url };
    }
    throw new ProtocolError(`${what} of ${identifier}`, last!);
  }

  async fetchIssuerMetadata(credentialIssuer: string): Promise<any> {
    const { body, url } = await this.fetchWellKnown(credentialIssuer, 'openid-credential-issuer', 'credential issuer metadata', (b, u) => {
      // §12.2.4: identical, by simple string comparison, or the data MUST NOT be used.
      if (b.credential_issuer !== credentialIssuer) throw new Error(`§12.2.4: metadata at ${u} names credential_issuer ${b.credential_issuer}, not ${credentialIssuer}`);
    });
    this.issuerMetadata = body;
    this.issuerMetadataUrl = url;
    return body;
  }

  async fetchAuthorizationServerMetadata(issuer: string): Promise<any> {
    const { body } = await this.fetchWellKnown(issuer, 'oauth-authorization-server', 'authorization server metadata', (b, u) => {
      // RFC 8414 §3.3: `issuer` MUST be identical to the identifier the well-known URI was built from.
      if (b.issuer !== issuer) throw new Error(`RFC 8414 §3.3: AS metadata at ${u} names issuer ${b.issuer}, not ${issuer}`);
    });
    this.asMetadata = body;
    return body;
  }

  /** §13.5: from an offer to the issuer's metadata and its authorization server's, as if the wallet had started the flow. */
  async discover(offer: CredentialOffer): Promise<{ summary: OfferSummary; metadata: any; as: any }> {
    const summary = summarizeOffer(offer);
    const metadata = await this.fetchIssuerMetadata(summary.credentialIssuer);
    const asId = SpecWallet.authorizationServerOf(metadata, summary);
    try {
      return { summary, metadata, as: await this.fetchAuthorizationServerMetadata(asId) };
    } catch (e) {
      // Draft 11 issuers published token_endpoint in their own metadata.
      if (!metadata.token_endpoint) throw e;
      return { summary, metadata, as: { issuer: asId, token_endpoint: metadata.token_endpoint } };
    }
  }

  // --- DPoP (RFC 9449) ------------------------------------------------------------------------

  makeDpopProof(o: DpopOptions): string {
    const header = { typ: o.typ ?? DPOP_TYP, alg: this.dpopKey.alg, jwk: this.dpopKey.publicJwk };
    const payload: Record<string, unknown> = { jti: o.jti ?? randomUUID(), htm: o.htm, htu: htuOf(o.htu), iat: o.iat ?? Math.floor(Date.now() / 1000) };
    // §4.2: `ath` when an access token is presented with the proof (resource requests).
    if (o.ath !== undefined) payload.ath = o.ath;
    else if (o.accessToken !== undefined) payload.ath = accessTokenHash(o.accessToken);
    if (o.nonce) payload.nonce = o.nonce;
    return signCompactJws(header, payload, this.dpopKey.privateKey);
  }

  private noteRsNonce(res: HttpResult): void {
    const n = res.headers.get('dpop-nonce');
    if (n) this.rsDpopNonce = n;
  }

  /** RFC 9449 §9: a resource server asks for a nonce with 401 and `WWW-Authenticate: DPoP error="use_dpop_nonce"`. */
  private static rsWantsNonce(res: HttpResult): boolean {
    return res.status === 401 && /use_dpop_nonce/.test(res.headers.get('www-authenticate') ?? '') && !!res.headers.get('dpop-nonce');
  }

  // --- Token endpoint (§6) -------------------------------------------------------------------

  async requestToken(input: TokenRequestInput): Promise<HttpResult> {
    const shape = input.shape ?? this.shape;
    const form = new URLSearchParams({ grant_type: PRE_AUTHORIZED_CODE_GRANT, 'pre-authorized_code': input.preAuthorizedCode });
    // §6.1 `tx_code`; draft 11 called it `user_pin`.
    if (input.txCode !== undefined) form.set(shape === 'draft11' ? 'user_pin' : 'tx_code', input.txCode);
    if (input.clientId !== undefined) form.set('client_id', input.clientId);
    for (const [k, v] of Object.entries(input.extra ?? {})) form.set(k, v);

    const send = async (): Promise<HttpResult> => {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      if (this.dpop) headers.dpop = this.makeDpopProof({ htm: 'POST', htu: input.tokenEndpoint, nonce: this.asDpopNonce });
      const res = await this.http(input.tokenEndpoint, { method: 'POST', headers, body: form.toString() });
      const n = res.headers.get('dpop-nonce');
      if (n) this.asDpopNonce = n;
      return res;
    };
    let res = await send();
    // RFC 9449 §8: an AS asks for a nonce with 400 `use_dpop_nonce` and a DPoP-Nonce header; retry once.
    if (this.dpop && res.status === 400 && res.body?.error === 'use_dpop_nonce' && res.headers.get('dpop-nonce')) res = await send();
    return res;
  }

  async token(input: TokenRequestInput): Promise<any> {
    return ensureOk(await this.requestToken(input), 'token request');
  }

  // --- Nonce endpoint (§7) -------------------------------------------------------------------

  async requestNonce(nonceEndpoint: string = this.issuerMetadata?.nonce_endpoint): Promise<HttpResult<{ c_nonce: string }>> {
    if (!nonceEndpoint) throw new Error('the issuer has no nonce_endpoint');
    // §7.1: a plain POST, no access token.
    const res = await this.http(nonceEndpoint, { method: 'POST', headers: { accept: 'application/json' } });
    this.noteRsNonce(res);
    return res;
  }

  async nonce(nonceEndpoint?: string): Promise<string> {
    const body = ensureOk(await this.requestNonce(nonceEndpoint), 'nonce request');
    if (typeof body?.c_nonce !== 'string') throw new Error('§7.2: c_nonce is REQUIRED');
    return body.c_nonce;
  }

  // --- Key proofs (Appendix F.1) ----------------------------------------------------------------

  makeProof(o: ProofOptions): string {
    const key = o.key ?? this.holderKeys[0] ?? this.newHolderKey();
    const binding = o.binding ?? this.binding;
    const header: Record<string, unknown> = { typ: o.typ ?? PROOF_TYP, alg: o.alg ?? key.alg };
    // F.1: `kid` (a DID URL when binding to a DID) and `jwk` are mutually exclusive.
    if (binding === 'jwk') header.jwk = key.publicJwk;
    else header.kid = binding === 'did:key' ? key.didKeyUrl : key.didJwkUrl;
    Object.assign(header, o.header);
    // F.1: `iss` is the client_id, and omitted for anonymous pre-authorized access: only when given.
    const payload: Record<string, unknown> = { aud: o.aud, iat: o.iat ?? Math.floor(Date.now() / 1000) };
    if (o.nonce) payload.nonce = o.nonce;
    if (o.iss !== undefined) payload.iss = o.iss;
    Object.assign(payload, o.payload);
    return signCompactJws(header, payload, o.signingKey ?? key.privateKey);
  }

  // --- Credential endpoint (§8) ----------------------------------------------------------------

  private authHeaders(accessToken: string | null, htm: string, url: string, o: { authorization?: string | null; dpopProof?: string | null } = {}): Record<string, string> {
    const headers: Record<string, string> = {};
    if (o.authorization !== undefined) {
      if (o.authorization !== null) headers.authorization = o.authorization;
    } else if (accessToken !== null) {
      // RFC 9449 §7.1: a DPoP-bound token goes in `Authorization: DPoP`, RFC 6750 §2.1 otherwise.
      headers.authorization = `${this.dpop ? 'DPoP' : 'Bearer'} ${accessToken}`;
    }
    if (o.dpopProof !== undefined) {
      if (o.dpopProof !== null) headers.dpop = o.dpopProof;
    }
    else if (this.dpop && accessToken !== null) headers.dpop = this.makeDpopProof({ htm, htu: url, accessToken, nonce: this.rsDpopNonce });
    return headers;
  }

  async requestCredential(o: CredentialRequestOptions): Promise<CredentialResult> {
    const url = o.credentialEndpoint ?? this.issuerMetadata?.credential_endpoint;
    if (!url) throw new Error('no credential_endpoint: fetch the issuer metadata first');
    const shape = o.shape ?? this.shape;
    const configuration = o.configuration ?? configurationsOf(this.issuerMetadata, this.shape)[o.configurationId];
    const body = o.body ?? buildCredentialRequest({ shape, configurationId: o.configurationId, configuration, proofs: o.proofs, format: o.format });
    const send = async () => {
      // §8.2: unencrypted requests are application/json.
      const headers = { 'content-type': 'application/json', accept: 'application/json', ...this.authHeaders(o.accessToken, 'POST', url, o) };
      const res = await this.http(url, { method: 'POST', headers, body: JSON.stringify(body) });
      this.noteRsNonce(res);
      return res;
    };
    let res = await send();
    if (this.dpop && o.dpopProof === undefined && SpecWallet.rsWantsNonce(res)) res = await send();
    return { ...res, credentials: res.status === 200 ? credentialsOfResponse(res.body) : [], notificationId: res.body?.notification_id };
  }

  async credential(o: CredentialRequestOptions): Promise<CredentialResult> {
    const res = await this.requestCredential(o);
    ensureOk(res, 'credential request');
    return res;
  }

  // --- Notification endpoint (§11) -------------------------------------------------------------

  async notify(o: { accessToken: string; notificationId: string; event: 'credential_accepted' | 'credential_failure' | 'credential_deleted' | string; eventDescription?: string; notificationEndpoint?: string }): Promise<HttpResult> {
    const url = o.notificationEndpoint ?? this.issuerMetadata?.notification_endpoint;
    if (!url) throw new Error('the issuer has no notification_endpoint');
    const body: Record<string, string> = { notification_id: o.notificationId, event: o.event };
    if (o.eventDescription !== undefined) body.event_description = o.eventDescription;
    const send = async () => {
      const headers = { 'content-type': 'application/json', ...this.authHeaders(o.accessToken, 'POST', url) };
      const res = await this.http(url, { method: 'POST', headers, body: JSON.stringify(body) });
      this.noteRsNonce(res);
      return res;
    };
    let res = await send();
    if (this.dpop && SpecWallet.rsWantsNonce(res)) res = await send();
    return res;
  }

  // --- The whole pre-authorized flow -----------------------------------------------------------

  /** Which authorization server to use: the offer's hint if listed (§4.1.1), else the first, else the issuer (§12.2.4). */
  static authorizationServerOf(metadata: any, summary: OfferSummary): string {
    const list: unknown = metadata.authorization_servers;
    if (Array.isArray(list) && list.length > 0) {
      if (summary.authorizationServer !== null) {
        if (!list.includes(summary.authorizationServer)) throw new Error('§12.2.4: the offer names an authorization server the metadata does not list');
        return summary.authorizationServer;
      }
      return list[0] as string;
    }
    return metadata.credential_issuer;
  }

  async receive(offerUri: string, opts: ReceiveOptions = {}): Promise<Received> {
    const batch = opts.batch ?? 1;
    const offer = await this.resolveOffer(offerUri);
    const { summary, metadata, as: asMetadata } = await this.discover(offer);
    if (!summary.preAuthorizedCode) throw new Error('the offer has no pre-authorized_code grant');
    const configurationId = opts.configurationId ?? summary.configurationIds[0];
    if (!configurationId) throw new Error('the offer names no credential configuration');
    const configuration = configurationsOf(metadata, this.shape)[configurationId];
    if (!configuration) throw new Error(`§4.1.1: ${configurationId} is not in the issuer's credential_configurations_supported`);
    if (Array.isArray(asMetadata.grant_types_supported) && !asMetadata.grant_types_supported.includes(PRE_AUTHORIZED_CODE_GRANT)) {
      throw new Error('the authorization server does not list the pre-authorized code grant');
    }
    if (summary.txCode !== null && opts.txCode === undefined) throw new Error('§6.1: the offer requires a tx_code');

    const tokenResponse = await this.token({ tokenEndpoint: asMetadata.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode, txCode: opts.txCode, clientId: opts.clientId });
    if (typeof tokenResponse?.access_token !== 'string') throw new Error('RFC 6749 §5.1: access_token is REQUIRED');
    // RFC 6749 §7.1: token_type is case insensitive.
    const tokenType = String(tokenResponse.token_type ?? '').toLowerCase();
    if (tokenType !== (this.dpop ? 'dpop' : 'bearer')) throw new Error(`expected a ${this.dpop ? 'DPoP' : 'Bearer'} token, got token_type ${tokenResponse.token_type}`);

    const proofAlgs = configuration.proof_types_supported?.jwt?.proof_signing_alg_values_supported;
    // F.1: the proof's alg MUST be one the metadata lists.
    if (Array.isArray(proofAlgs) && !proofAlgs.includes(this.alg)) throw new Error(`F.1: the issuer does not accept ${this.alg} proofs (${proofAlgs.join(', ')})`);
    const methods = configuration.cryptographic_binding_methods_supported;
    if (Array.isArray(methods) && !methods.includes(this.binding)) throw new Error(`§12.2.4: ${this.binding} binding not in ${methods.join(', ')}`);
    if (batch > 1) {
      // §12.2.4: batch_size is the maximum size of the proofs array.
      const max = metadata.batch_credential_issuance?.batch_size;
      if (typeof max !== 'number' || max < batch) throw new Error(`the issuer does not take ${batch} proofs (batch_credential_issuance: ${JSON.stringify(metadata.batch_credential_issuance)})`);
    }

    // §7: in 1.0 c_nonce comes only from the Nonce Endpoint; drafts returned it in the token response.
    let cNonce: string | undefined;
    if (this.shape !== 'v1' && typeof tokenResponse.c_nonce === 'string') cNonce = tokenResponse.c_nonce;
    else if (metadata.nonce_endpoint) cNonce = await this.nonce(metadata.nonce_endpoint);

    // §3.3.2 (batch): one key per credential, each proven by its own proof.
    const keys = Array.from({ length: batch }, () => this.newHolderKey());
    const proofs = keys.map((key) => this.makeProof({ aud: summary.credentialIssuer, nonce: cNonce, key }));
    const credentialResponse = await this.credential({ accessToken: tokenResponse.access_token, configurationId, configuration, proofs });
    const credentials = credentialResponse.credentials;
    if (credentials.some((c) => typeof c !== 'string')) throw new Error('A.1.1.4 / A.3.4: JWT VC and SD-JWT VC credentials are strings');
    return {
      credentials: credentials as string[],
      format: configuration.format,
      configurationId,
      notificationId: credentialResponse.notificationId,
      holderKeys: keys,
      metadata,
      asMetadata,
      tokenResponse,
      accessToken: tokenResponse.access_token,
      offer,
      credentialResponse,
      cNonce: credentialResponse.body?.c_nonce ?? cNonce,
    };
  }
}
