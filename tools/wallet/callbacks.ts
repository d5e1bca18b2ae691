import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { HashAlgorithm, clientAuthenticationAnonymous, preAuthorizedCodeGrantIdentifier, type CallbackContext, type Jwk, type JwtSigner } from '@openid4vc/oauth2';
import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from 'jose';
import { selfResolve } from '../../lib/resolver/resolver';
import { messageOf, WalletError } from './errors';
import { didUrlOf, publicOnly, signJwt, type StoredKey } from './keys';

/** Per request; a wallet waits on a person's terminal, not on a hung server. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Documents and offers are small; a larger answer is refused rather than read into memory. */
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

const HASHES: Record<HashAlgorithm, string> = { [HashAlgorithm.Sha256]: 'sha256', [HashAlgorithm.Sha384]: 'sha384', [HashAlgorithm.Sha512]: 'sha512' };

/** 127.0.0.0/8, ::1 and localhost: the only hosts plain http may reach (the local runtime). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

function urlOf(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * The wallet's only way out: https anywhere, http only to loopback (the local runtime serves plain http
 * on 127.0.0.1), no redirects (a URL the wallet checked is the URL it reads), a deadline and a size cap.
 */
export const walletFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const href = urlOf(input);
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new WalletError('network_error', `not a URL: ${href}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new WalletError('network_error', `refusing ${url.protocol}//${url.host}: only https, or http to this machine (127.0.0.1, localhost, ::1)`);
  }
  let res: Response;
  try {
    res = await fetch(input, { ...init, redirect: 'manual', signal: init?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    const cause = messageOf((err as { cause?: unknown } | null)?.cause ?? err);
    throw new WalletError('network_error', `${init?.method ?? 'GET'} ${url.origin}${url.pathname} failed: ${cause}`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_RESPONSE_BYTES) throw new WalletError('network_error', `${url.origin}${url.pathname} answered ${length} bytes (more than ${MAX_RESPONSE_BYTES})`);
  if (res.status >= 300 && res.status < 400) throw new WalletError('network_error', `${url.origin}${url.pathname} redirects (${res.status}); the wallet does not follow redirects`);
  return res;
}) as typeof fetch;

/** did:web method spec §3.2: `did:web:host%3Aport:a:b` → `https://host:port/a/b/did.json` (http on loopback). */
export function didWebUrl(did: string): string {
  const [host, ...path] = did.slice('did:web:'.length).split(':').map(decodeURIComponent);
  if (!host) throw new WalletError('invalid_request', `not a did:web DID: ${did}`);
  const scheme = isLoopbackHost(host.replace(/:\d+$/, '')) ? 'http' : 'https';
  return path.length ? `${scheme}://${host}/${path.join('/')}/did.json` : `${scheme}://${host}/.well-known/did.json`;
}

type Document = { id?: unknown; verificationMethod?: unknown; [k: string]: unknown };

/** A DID document: did:key and did:jwk decoded here, did:web fetched; other methods are not resolved. */
export async function resolveDid(did: string): Promise<Document> {
  const local = selfResolve(did);
  if (local) return local as unknown as Document;
  if (!did.startsWith('did:web:')) throw new WalletError('unsupported', `cannot resolve ${did}: the wallet resolves did:key, did:jwk and did:web`);
  const url = didWebUrl(did);
  const res = await walletFetch(url, { headers: { accept: 'application/did+json, application/json' } });
  if (res.status !== 200) throw new WalletError('network_error', `resolving ${did}: ${url} answered ${res.status}`);
  const doc = (await res.json().catch(() => null)) as Document | null;
  if (!doc || typeof doc !== 'object' || doc.id !== did) throw new WalletError('invalid_request', `resolving ${did}: ${url} is not its DID document`);
  return doc;
}

/** The public JWK of a DID URL's verification method (a bare did:key / did:jwk names its only key). */
export async function didUrlKey(didUrl: string): Promise<JWK> {
  const did = didUrl.split('#')[0]!;
  const doc = await resolveDid(did);
  const abs = (id: string) => (id.startsWith('#') ? `${did}${id}` : id);
  const methods = (Array.isArray(doc.verificationMethod) ? doc.verificationMethod : []) as { id: string; publicKeyJwk?: JWK }[];
  const method = didUrl.includes('#') ? methods.find((m) => abs(m.id) === didUrl) : methods.length === 1 ? methods[0] : undefined;
  if (!method?.publicKeyJwk) throw new WalletError('invalid_request', `${didUrl} names no public key in the document of ${did}`);
  return method.publicKeyJwk;
}

async function verifies(compact: string, jwk: JWK, alg: string): Promise<boolean> {
  try {
    await compactVerify(compact, await importJWK(jwk, alg), { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

/** A compact JWS verified with the key its header names: `kid` a DID URL (or `iss` a DID), else nothing. */
export async function verifyWithDidKey(compact: string, header: Record<string, unknown>, iss?: string): Promise<{ verified: boolean; didUrl: string }> {
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const didUrl = kid?.startsWith('did:') ? kid : iss?.startsWith('did:') ? (kid?.startsWith('#') ? `${iss}${kid}` : iss) : undefined;
  if (!didUrl) throw new WalletError('unsupported', `the signer names no DID key (kid ${String(kid)}); the wallet checks DID-signed JWTs only`);
  const alg = String(header.alg);
  return { verified: await verifies(compact, await didUrlKey(didUrl), alg), didUrl };
}

/**
 * The holder's side of the libraries' CallbackContext: it signs only with keys handed to it (by
 * thumbprint or DID URL), verifies JWTs on the key the signer descriptor names, and reaches the
 * network only through walletFetch.
 */
export class HolderCallbacks {
  private readonly byThumbprint = new Map<string, StoredKey>();
  private readonly byDidUrl = new Map<string, StoredKey>();

  add(key: StoredKey): void {
    this.byThumbprint.set(key.id, key);
    for (const method of ['did:key', 'did:jwk'] as const) this.byDidUrl.set(didUrlOf(key, method), key);
  }

  private async keyFor(signer: JwtSigner): Promise<StoredKey> {
    let key: StoredKey | undefined;
    if (signer.method === 'jwk') key = this.byThumbprint.get(await calculateJwkThumbprint(publicOnly(signer.publicJwk as JWK) as JWK));
    if (signer.method === 'did') key = this.byDidUrl.get(signer.didUrl);
    if (!key) throw new Error(`the wallet holds no key for this ${signer.method} signer`);
    return key;
  }

  context(): Omit<CallbackContext, 'encryptJwe' | 'decryptJwe'> {
    return {
      fetch: walletFetch,
      hash: (data, alg) => createHash(HASHES[alg]).update(data).digest(),
      generateRandom: (n) => randomBytes(n),
      signJwt: async (signer, jwt) => {
        const key = await this.keyFor(signer);
        return { jwt: await signJwt(key, jwt.header, jwt.payload), signerJwk: key.publicJwk as Jwk };
      },
      verifyJwt: async (signer, jwt) => {
        const alg = String(signer.alg ?? jwt.header.alg);
        let jwk: JWK | undefined;
        if (signer.method === 'jwk') jwk = signer.publicJwk as JWK;
        else if (signer.method === 'did') jwk = await didUrlKey(signer.didUrl);
        if (!jwk) return { verified: false };
        return (await verifies(jwt.compact, jwk, alg)) ? { verified: true, signerJwk: jwk as Jwk } : { verified: false, signerJwk: jwk as Jwk };
      },
      // The pre-authorized code flow needs no client authentication (the service advertises anonymous access).
      clientAuthentication: (options) => {
        if (options.body.grant_type === preAuthorizedCodeGrantIdentifier) return clientAuthenticationAnonymous()(options);
        throw new WalletError('unsupported', 'the wallet only does the pre-authorized code flow');
      },
    };
  }
}
