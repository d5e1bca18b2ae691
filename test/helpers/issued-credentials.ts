/**
 * The verifier side for credentials the service issued over OpenID4VCI: SD-JWT VCs checked with
 * @sd-jwt/sd-jwt-vc and JWT VCs with jose, each against the issuer key resolved from the DID
 * document the service publishes. The SD-JWT is decoded a second time by the spec wallet's own
 * decoder (test/helpers/spec-wallet.ts) and both readings must agree.
 */
import { createHash } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { decodeSdJwt, jwkOfDidJwk, jwkOfDidKey, jwkOfMultibase, base58btcDecode, type DecodedSdJwt } from './spec-wallet';

export type IssuerKeyResolver = (kid: string, header: Record<string, unknown>) => Promise<JWK>;

export interface ResolvedIssuerKey {
  readonly did: string;
  readonly jwk: JWK;
  readonly document: any;
  readonly method: any;
}

const loopback = (host: string) => /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host);

/** did:web method spec §3.2: `did:web:host%3Aport:a:b` → `https://host:port/a/b/did.json` (http on loopback). */
export function didWebUrl(did: string): string {
  const [host, ...path] = did.slice('did:web:'.length).split(':').map(decodeURIComponent);
  if (!host) throw new Error(`bad did:web ${did}`);
  const scheme = loopback(host) ? 'http' : 'https';
  return path.length ? `${scheme}://${host}/${path.join('/')}/did.json` : `${scheme}://${host}/.well-known/did.json`;
}

function jwkOfMethod(method: any): JWK {
  if (method.publicKeyJwk) return method.publicKeyJwk as JWK;
  if (typeof method.publicKeyMultibase === 'string') return jwkOfMultibase(method.publicKeyMultibase) as JWK;
  if (typeof method.publicKeyBase58 === 'string' && /Ed25519/.test(method.type)) {
    return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(base58btcDecode(method.publicKeyBase58)).toString('base64url') };
  }
  throw new Error(`no public key in verification method ${method.id}`);
}

/**
 * The issuer's key for a JOSE `kid` that is a DID URL: did:key and did:jwk decoded locally; did:web
 * fetched from its did:web location; any other DID (did:sov, did:indy) through the service's public
 * resolver `GET {base}/1.0/identifiers/{did}`. The method is picked by id and must be an
 * assertionMethod (what issuing credentials uses, DID Core §5.3.2).
 */
export async function resolveIssuerKey(baseUrl: string, kid: string): Promise<ResolvedIssuerKey> {
  const hash = kid.indexOf('#');
  if (!kid.startsWith('did:') || hash < 0) throw new Error(`the issuer kid is not a DID URL: ${kid}`);
  const did = kid.slice(0, hash);
  if (did.startsWith('did:key:')) return { did, jwk: jwkOfDidKey(kid) as JWK, document: null, method: { id: kid } };
  if (did.startsWith('did:jwk:')) return { did, jwk: jwkOfDidJwk(kid) as JWK, document: null, method: { id: kid } };

  let document: any;
  if (did.startsWith('did:web:')) {
    const res = await fetch(didWebUrl(did), { headers: { accept: 'application/did+json, application/json' } });
    if (res.status !== 200) throw new Error(`${did}: ${didWebUrl(did)} answered ${res.status}`);
    document = await res.json();
  } else {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/1.0/identifiers/${encodeURIComponent(did)}`, { headers: { accept: 'application/did+json' } });
    if (res.status !== 200) throw new Error(`${did}: the resolver answered ${res.status}`);
    const body: any = await res.json();
    document = body?.didDocument ?? body;
  }
  if (document?.id !== did) throw new Error(`the document of ${did} names ${document?.id}`);
  const abs = (id: string) => (id.startsWith('#') ? `${did}${id}` : id);
  const method = (document.verificationMethod ?? []).find((m: any) => abs(m.id) === kid);
  if (!method) throw new Error(`${kid} is not a verification method of ${did}`);
  const assertion = (document.assertionMethod ?? []).map((a: any) => abs(typeof a === 'string' ? a : a.id));
  if (!assertion.includes(kid)) throw new Error(`${kid} is not an assertionMethod of ${did}`);
  return { did, jwk: jwkOfMethod(method), document, method };
}

/** A resolver bound to the service at `baseUrl`, in the shape the verify functions take. */
export const issuerKeyResolver =
  (baseUrl: string): IssuerKeyResolver =>
  async (kid) =>
    (await resolveIssuerKey(baseUrl, kid)).jwk;

const sha = (data: string | ArrayBuffer, alg: string): Uint8Array => {
  if (alg.toLowerCase() !== 'sha-256') throw new Error(`unsupported hash ${alg}`);
  return new Uint8Array(createHash('sha256').update(typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)).digest());
};

/** A JWS verifier that resolves the key of whatever `kid` the protected header names. */
function resolvingVerifier(resolve: IssuerKeyResolver) {
  return async (data: string, sig: string): Promise<boolean> => {
    const header = decodeProtectedHeader(`${data}.${sig}`);
    if (typeof header.kid !== 'string' || !header.alg || header.alg === 'none') return false;
    try {
      await compactVerify(`${data}.${sig}`, await importJWK(await resolve(header.kid, header), header.alg), { algorithms: [header.alg] });
      return true;
    } catch {
      return false;
    }
  };
}

/** @sd-jwt's dotted presentable keys ("address.street", "nationalities.0") as JSON pointers. */
const dottedToPointer = (key: string) => `/${key.split('.').map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

export interface VerifiedSdJwtVc {
  readonly header: Record<string, any>;
  /** The processed claims (disclosures applied), as the library returns them. */
  readonly payload: Record<string, any>;
  /** JSON pointers of the selectively disclosable claims (both readings agree on them). */
  readonly disclosedPaths: string[];
  readonly cnf: { jwk?: JWK; kid?: string } | undefined;
  readonly cnfJwk: JWK | undefined;
  readonly decoded: DecodedSdJwt;
}

/**
 * Verifies an issued SD-JWT VC (no key binding JWT: nothing is presented yet) with
 * @sd-jwt/sd-jwt-vc, and re-decodes it with the wallet's own decoder.
 */
export async function verifySdJwtVc(compact: string, opts: { resolveIssuerKey: IssuerKeyResolver }): Promise<VerifiedSdJwtVc> {
  const decoded = decodeSdJwt(compact);
  const { header } = decoded;
  // SD-JWT VC §3.2.1: typ `dc+sd-jwt` (`vc+sd-jwt` before draft 06, still accepted in a transition period).
  if (header.typ !== 'dc+sd-jwt' && header.typ !== 'vc+sd-jwt') throw new Error(`SD-JWT VC typ is ${header.typ}`);
  if (!header.alg || header.alg === 'none' || /^HS/.test(header.alg)) throw new Error(`SD-JWT VC alg ${header.alg}`);
  if (typeof header.kid !== 'string') throw new Error('the issuer-signed JWT names no kid');

  const sdjwt = new SDJwtVcInstance({ hasher: sha, hashAlg: 'sha-256', verifier: resolvingVerifier(opts.resolveIssuerKey) });
  const result = await sdjwt.verify(compact);
  const payload = result.payload as Record<string, any>;

  if (typeof payload.vct !== 'string') throw new Error('SD-JWT VC §3.2.2.1: vct is REQUIRED');
  if (typeof payload.iss !== 'string') throw new Error('the issued SD-JWT VC names no iss');
  // A DID-identified issuer signs with a key of that DID.
  if (payload.iss.startsWith('did:') && !header.kid.startsWith(`${payload.iss}#`)) throw new Error(`kid ${header.kid} is not a key of iss ${payload.iss}`);
  if (decoded.kbJwt !== null) throw new Error('an issued SD-JWT carries no key binding JWT');

  // The two readings: the library's processed claims and disclosable keys against ours.
  const { _sd_alg: _alg, ...libClaims } = payload;
  expectSame(libClaims, decoded.claims, 'processed claims');
  const libPaths = (await sdjwt.presentableKeys(compact)).map(dottedToPointer).sort();
  expectSame(libPaths, decoded.disclosablePaths, 'disclosable claim paths');

  const cnf = payload.cnf as VerifiedSdJwtVc['cnf'];
  return { header, payload, disclosedPaths: decoded.disclosablePaths, cnf, cnfJwk: cnf?.jwk, decoded };
}

function expectSame(a: unknown, b: unknown, what: string): void {
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as any)[k])])) : v;
  if (JSON.stringify(canon(a)) !== JSON.stringify(canon(b))) throw new Error(`@sd-jwt and the spec wallet disagree on the ${what}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

/** Verifies a jwt_vc_json credential (VCDM 1.1 §6.3.1 JWT encoding) with jose; exp and nbf are checked. */
export async function verifyJwtVc(compact: string, opts: { resolveIssuerKey: IssuerKeyResolver }): Promise<{ header: Record<string, any>; payload: JWTPayload & Record<string, any> }> {
  const header = decodeProtectedHeader(compact);
  if (typeof header.kid !== 'string' || !header.alg) throw new Error('the JWT VC names no kid/alg');
  const key = await importJWK(await opts.resolveIssuerKey(header.kid, header as Record<string, unknown>), header.alg);
  const { payload } = await jwtVerify(compact, key, { algorithms: [header.alg] });
  if (typeof payload.iss === 'string' && payload.iss.startsWith('did:') && !header.kid.startsWith(`${payload.iss}#`)) {
    throw new Error(`kid ${header.kid} is not a key of iss ${payload.iss}`);
  }
  return { header: header as Record<string, any>, payload: payload as JWTPayload & Record<string, any> };
}
