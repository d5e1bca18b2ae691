import { jwtVerify, SignJWT, type JWK } from 'jose';
import { guardedFetcher, GuardedFetchError, type GuardedFetch } from '../../lib/adapters/guarded-http';
import { didDocument } from '../../lib/dids/document';
import { multibaseKey } from '../../lib/dids/methods';
import type { PublicJwk } from '../../lib/keys/port';
import { FetchCache } from '../../lib/oid4vp/verification/fetch-cache';
import { createIssuerKeyResolver, didWebUrl, type IssuerKeyResolverDeps } from '../../lib/oid4vp/verification/issuer-keys';
import { PresentationInvalidError, type IssuerKeyResolver } from '../../lib/oid4vp/verification/types';
import type { Resolved } from '../../lib/resolver/resolver';
import { ed25519Issuer, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { fenceTestNetwork, loopbackOnlyRequest } from '../helpers/loopback-only';

// Whatever the guard decides, nothing here connects outside loopback (the fence throws first).
fenceTestNetwork();

const issuer = ed25519Issuer();
const other = ed25519Issuer();
const pub = issuer.publicJwk as unknown as PublicJwk;

/** Every connection the guard makes, by the address it dials; the loopback server is the only one that answers. */
const countingRequest = loopbackOnlyRequest();
const dialled = countingRequest.dialled;
const loopbackFetch = guardedFetcher({ allowLoopback: true, allowHttp: true, timeoutMs: 2000, maxBytes: 1024 * 1024, request: countingRequest });
/** For resolutions that must not touch the network at all. */
const noNetwork: GuardedFetch = async (url) => {
  throw new Error(`unexpected fetch of ${url}`);
};
const noStore = { resolve: async (): Promise<Resolved | null> => null };

let server: DocumentServer;
beforeAll(async () => {
  server = await startDocumentServer();
});
afterAll(() => server.close());
beforeEach(() => {
  dialled.length = 0;
});

function resolver(overrides: Partial<IssuerKeyResolverDeps> = {}): IssuerKeyResolver {
  return createIssuerKeyResolver({ didResolver: noStore, fetch: loopbackFetch, httpForLoopbackHosts: true, ...overrides });
}

async function unresolvable(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PresentationInvalidError);
  expect((err as PresentationInvalidError).reason).toBe('issuer_unresolvable');
  return (err as PresentationInvalidError).detail;
}

/** The key is the issuer's if a JWT the issuer signed verifies with it. */
async function verifiesIssuerJwt(jwk: JWK, signer = issuer): Promise<boolean> {
  const jwt = await new SignJWT({ hello: 'world' }).setProtectedHeader({ alg: 'EdDSA' }).sign(signer.privateKey);
  return jwtVerify(jwt, jwk).then(
    () => true,
    () => false,
  );
}

describe('DIDs that carry their key', () => {
  test('kid a did:jwk URL, and a did:key URL, resolve without a network', async () => {
    const r = resolver({ fetch: noNetwork });
    expect(await verifiesIssuerJwt(await r({ iss: issuer.did, header: { kid: `${issuer.did}#0` } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss: undefined, header: { kid: `${issuer.did}#0` } }))).toBe(true);
    const didKey = `did:key:${multibaseKey(pub)}`;
    expect(await verifiesIssuerJwt(await r({ iss: didKey, header: { kid: `${didKey}#${multibaseKey(pub)}` } }))).toBe(true);
  });

  test('iss a DID with a relative kid, or no kid when the DID has one assertion method', async () => {
    const r = resolver({ fetch: noNetwork });
    expect(await verifiesIssuerJwt(await r({ iss: issuer.did, header: { kid: '#0' } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss: issuer.did, header: {} }))).toBe(true);
  });

  test("a kid of another DID than iss, or a fragment the DID does not have, is refused", async () => {
    const r = resolver({ fetch: noNetwork });
    expect(await unresolvable(r({ iss: issuer.did, header: { kid: `${other.did}#0` } }))).toMatch(/not a DID URL of/);
    expect(await unresolvable(r({ iss: issuer.did, header: { kid: `${issuer.did}#1` } }))).toMatch(/not an assertionMethod/);
  });

  test('a self-asserted jwk or x5c header alone is refused', async () => {
    const r = resolver({ fetch: noNetwork });
    expect(await unresolvable(r({ iss: undefined, header: { jwk: issuer.publicJwk } }))).toMatch(/self-asserted/);
    expect(await unresolvable(r({ iss: undefined, header: { x5c: ['MIIB'] } }))).toMatch(/self-asserted/);
    expect(await unresolvable(r({ iss: 'urn:example:issuer', header: { jwk: issuer.publicJwk, kid: 'k1' } }))).toMatch(/self-asserted/);
  });
});

describe('DIDs published by this service', () => {
  const did = 'did:web:issuer.example.test:dids:abc';
  const published = (deactivatedAt?: string) => ({
    resolve: async (d: string): Promise<Resolved | null> => (d === did ? { document: didDocument(did, 'web', pub), ...(deactivatedAt ? { deactivatedAt } : {}) } : null),
  });

  test('are read from the store, with no request', async () => {
    const r = resolver({ didResolver: published(), fetch: noNetwork });
    expect(await verifiesIssuerJwt(await r({ iss: did, header: { kid: `${did}#key-1` } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss: did, header: { kid: `${did}#key-multibase` } }))).toBe(true);
  });

  test('a deactivated DID is issuer_unresolvable', async () => {
    const r = resolver({ didResolver: published('2025-01-01T00:00:00Z'), fetch: noNetwork });
    expect(await unresolvable(r({ iss: did, header: { kid: `${did}#key-1` } }))).toMatch(/deactivated/);
  });
});

describe('did:web through the SSRF guard', () => {
  let seq = 0;
  /** A did:web on the loopback server (plain http: the local runtime's allowance), its document served. */
  function serveDid(document: (did: string) => unknown, opts: { wellKnown?: boolean; status?: number } = {}): string {
    const id = `d${++seq}`;
    const did = opts.wellKnown ? `did:web:127.0.0.1%3A${server.port}` : `did:web:127.0.0.1%3A${server.port}:tenants:t1:dids:${id}`;
    const path = opts.wellKnown ? '/.well-known/did.json' : `/tenants/t1/dids/${id}/did.json`;
    server.serve(path, { status: opts.status ?? 200, body: JSON.stringify(document(did)), headers: { 'content-type': 'application/did+json' } });
    return did;
  }
  const hitsOf = (did: string) => server.hits(new URL(didWebUrl(did, () => true)).pathname);

  test('maps did:web to its URL (colons are path segments, %3A the port)', () => {
    expect(didWebUrl('did:web:example.com')).toBe('https://example.com/.well-known/did.json');
    expect(didWebUrl('did:web:example.com%3A8443:a:b')).toBe('https://example.com:8443/a/b/did.json');
    expect(() => didWebUrl('did:web:example.com:..:x')).toThrow(PresentationInvalidError);
  });

  test('the document is fetched once, and its assertion method key returned', async () => {
    const did = serveDid((d) => ({
      '@context': ['https://www.w3.org/ns/did/v1'],
      id: d,
      verificationMethod: [
        { id: '#key-1', type: 'JsonWebKey2020', controller: d, publicKeyJwk: issuer.publicJwk },
        { id: `${d}#key-2`, type: 'Ed25519VerificationKey2020', controller: d, publicKeyMultibase: multibaseKey(other.publicJwk as unknown as PublicJwk) },
      ],
      assertionMethod: ['#key-1', `${d}#key-2`],
    }));
    const r = resolver();
    expect(await verifiesIssuerJwt(await r({ iss: did, header: { kid: `${did}#key-1` } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss: did, header: { kid: '#key-2' } }), other)).toBe(true);
    expect(hitsOf(did)).toBe(1);
    expect(server.requests.at(-1)!.headers.accept).toContain('application/did+json');
    expect(dialled).toEqual(['127.0.0.1']);
  });

  test('a DID without a path resolves from /.well-known/did.json', async () => {
    const did = serveDid((d) => didDocument(d, 'web', pub), { wellKnown: true });
    expect(await verifiesIssuerJwt(await resolver()({ iss: did, header: { kid: `${did}#key-1` } }))).toBe(true);
  });

  test('a document of another DID, a key that is no assertion method, a private key, and a 404 are refused', async () => {
    const r = resolver();
    const alien = serveDid(() => didDocument('did:web:attacker.example', 'web', pub));
    expect(await unresolvable(r({ iss: alien, header: { kid: `${alien}#key-1` } }))).toMatch(/names another DID/);
    const authOnly = serveDid((d) => ({ id: d, verificationMethod: [{ id: '#key-1', type: 'JsonWebKey2020', controller: d, publicKeyJwk: issuer.publicJwk }], authentication: ['#key-1'] }));
    expect(await unresolvable(r({ iss: authOnly, header: { kid: '#key-1' } }))).toMatch(/not an assertionMethod/);
    const leaky = serveDid((d) => ({ id: d, verificationMethod: [{ id: '#key-1', type: 'JsonWebKey2020', controller: d, publicKeyJwk: { ...issuer.publicJwk, d: 'secret' } }], assertionMethod: ['#key-1'] }));
    expect(await unresolvable(r({ iss: leaky, header: { kid: '#key-1' } }))).toMatch(/not a public key/);
    const gone = serveDid(() => ({}), { status: 404 });
    expect(await unresolvable(r({ iss: gone, header: { kid: '#key-1' } }))).toMatch(/answered 404/);
    const deactivated = serveDid((d) => ({ ...didDocument(d, 'web', pub), deactivated: true }));
    expect(await unresolvable(r({ iss: deactivated, header: { kid: '#key-1' } }))).toMatch(/deactivated/);
  });

  test.each(['169.254.169.254', '10.0.0.5'])('a did:web host resolving to %s is refused before any connection', async (address) => {
    const resolved: string[] = [];
    const fetch = guardedFetcher({
      allowLoopback: false,
      timeoutMs: 1000,
      maxBytes: 64 * 1024,
      request: countingRequest,
      resolver: async (host) => {
        resolved.push(host);
        return [{ address, family: 4 }];
      },
    });
    const r = resolver({ fetch, httpForLoopbackHosts: false });
    const did = 'did:web:issuer.example.test:dids:abc';
    expect(await unresolvable(r({ iss: did, header: { kid: `${did}#key-1` } }))).toMatch(/refused_address/);
    expect(resolved).toEqual(['issuer.example.test']);
    expect(dialled).toEqual([]);
  });

  test('a server that never answers is a timeout, not a hang', async () => {
    const did = `did:web:127.0.0.1%3A${server.port}:hangs`;
    server.serve('/hangs/did.json', { hang: true });
    const fetch = guardedFetcher({ allowLoopback: true, allowHttp: true, timeoutMs: 300, maxBytes: 64 * 1024 });
    expect(await unresolvable(resolver({ fetch })({ iss: did, header: { kid: '#key-1' } }))).toMatch(/timeout/);
  });
});

describe('JWT VC Issuer Metadata (iss an https URL)', () => {
  let seq = 0;
  function serveIssuer(metadata: (iss: string) => Record<string, unknown>): string {
    const tenant = `t${++seq}`;
    const iss = `${server.origin}/tenants/${tenant}`;
    server.serve(`/.well-known/jwt-vc-issuer/tenants/${tenant}`, { body: JSON.stringify(metadata(iss)), headers: { 'content-type': 'application/json' } });
    return iss;
  }
  const jwks = { keys: [{ ...issuer.publicJwk, kid: 'k1' }, { ...other.publicJwk, kid: 'k2' }] };

  test('jwks_uri: fetched through the guard, the key picked by kid, both documents cached', async () => {
    const jwksPath = `/keys/${seq + 1}.json`;
    server.serve(jwksPath, { body: JSON.stringify(jwks) });
    const iss = serveIssuer((i) => ({ issuer: i, jwks_uri: `${server.origin}${jwksPath}` }));
    const r = resolver();
    expect(await verifiesIssuerJwt(await r({ iss, header: { kid: 'k1' } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss, header: { kid: 'k2' } }), other)).toBe(true);
    expect(await unresolvable(r({ iss, header: { kid: 'k3' } }))).toMatch(/no single key k3/);
    expect(await unresolvable(r({ iss, header: {} }))).toMatch(/2 keys/);
    expect(server.hits(jwksPath)).toBe(1);
    expect(server.hits(new URL(iss).pathname.replace('/tenants', '/.well-known/jwt-vc-issuer/tenants'))).toBe(1);
    expect(dialled).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  test('inline jwks', async () => {
    const iss = serveIssuer((i) => ({ issuer: i, jwks }));
    expect(await verifiesIssuerJwt(await resolver()({ iss, header: { kid: 'k1' } }))).toBe(true);
  });

  test('metadata naming another issuer, both jwks and jwks_uri, or a private key are refused', async () => {
    const r = resolver();
    const spoofed = serveIssuer(() => ({ issuer: 'https://issuer.example', jwks }));
    expect(await unresolvable(r({ iss: spoofed, header: { kid: 'k1' } }))).toMatch(/names https:\/\/issuer.example/);
    const both = serveIssuer((i) => ({ issuer: i, jwks, jwks_uri: `${server.origin}/keys/x.json` }));
    expect(await unresolvable(r({ iss: both, header: { kid: 'k1' } }))).toMatch(/both jwks and jwks_uri/);
    const secret = serveIssuer((i) => ({ issuer: i, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'k1' }] } }));
    expect(await unresolvable(r({ iss: secret, header: { kid: 'k1' } }))).toMatch(/not a public key/);
  });

  test('a jwks_uri at the metadata service address is refused without connecting to it', async () => {
    const iss = serveIssuer((i) => ({ issuer: i, jwks_uri: 'https://169.254.169.254/latest/keys' }));
    expect(await unresolvable(resolver()({ iss, header: { kid: 'k1' } }))).toMatch(/refused_address/);
    expect(dialled).toEqual(['127.0.0.1']); // the metadata only
  });

  test('an http issuer is refused unless it is loopback and the local runtime allows it; a DID kid with a URL iss is refused', async () => {
    expect(await unresolvable(resolver({ fetch: noNetwork })({ iss: 'http://issuer.example/x', header: { kid: 'k1' } }))).toMatch(/not an https URL/);
    const iss = serveIssuer((i) => ({ issuer: i, jwks }));
    expect(await unresolvable(resolver({ fetch: noNetwork, httpForLoopbackHosts: false })({ iss, header: { kid: 'k1' } }))).toMatch(/not an https URL/);
    expect(await unresolvable(resolver({ fetch: noNetwork })({ iss: 'https://issuer.example', header: { kid: `${issuer.did}#0` } }))).toMatch(/is not a DID/);
  });
});

describe('what an issuer URL and a did:web may be, and where plain http goes', () => {
  /** Records each URL asked for and answers 404: nothing is fetched for real. */
  function recording() {
    const urls: string[] = [];
    const fetch: GuardedFetch = async (url) => {
      urls.push(url);
      return { status: 404, headers: {}, body: Buffer.from('') };
    };
    return { urls, fetch };
  }

  test('an https issuer with a query, fragment or credentials is refused before any fetch', async () => {
    const r = resolver({ fetch: noNetwork });
    for (const iss of ['https://issuer.example/a?x=1', 'https://issuer.example/a#f', 'https://user@issuer.example/a', 'https://:pw@issuer.example/a']) {
      expect(await unresolvable(r({ iss, header: { kid: 'k1' } }))).toBe(`issuer ${iss} has a query, fragment or credentials`);
    }
  });

  test.each(['did:web:h::a', 'did:web:h:a%2Fb', 'did:web:h:a%3Fb', 'did:web:h:a%23b', 'did:web:h:a%5Cb', 'did:web:h:.', 'did:web:h:..', 'did:web:a%2Fb', 'did:web:a%40b', 'did:web:a%ZZ', 'did:web:a%25b', 'did:web:exa%3Cmple'])(
    'did:web path or host %s is refused',
    (did) => {
      expect(() => didWebUrl(did)).toThrow(expect.objectContaining({ reason: 'issuer_unresolvable', detail: `${did} is not a valid did:web` }));
    },
  );

  test('plain http only for 127.0.0.0/8, localhost and ::1 as the whole host, and only when allowed', async () => {
    const cases: [string, string][] = [
      ['did:web:localhost%3A8080', 'http://localhost:8080/.well-known/did.json'],
      ['did:web:%5B%3A%3A1%5D%3A8080', 'http://[::1]:8080/.well-known/did.json'],
      ['did:web:127.10.20.30', 'http://127.10.20.30/.well-known/did.json'],
      ['did:web:127.0.0.1.example', 'https://127.0.0.1.example/.well-known/did.json'],
      ['did:web:localhost.example', 'https://localhost.example/.well-known/did.json'],
      ['did:web:%5B%3A%3A2%5D', 'https://[::2]/.well-known/did.json'],
    ];
    for (const [did, url] of cases) {
      const rec = recording();
      expect(await unresolvable(resolver({ fetch: rec.fetch })({ iss: did, header: {} }))).toBe(`GET ${url} answered 404`);
      expect(rec.urls).toEqual([url]);
    }
    const rec = recording();
    await unresolvable(resolver({ fetch: rec.fetch, httpForLoopbackHosts: false })({ iss: 'did:web:localhost%3A8080', header: {} }));
    expect(rec.urls).toEqual(['https://localhost:8080/.well-known/did.json']);
    const secure = recording();
    await unresolvable(resolver({ fetch: secure.fetch })({ iss: 'https://issuer.example/tenants/a', header: { kid: 'k1' } }));
    expect(secure.urls).toEqual(['https://issuer.example/.well-known/jwt-vc-issuer/tenants/a']);
    const meta = recording();
    await unresolvable(resolver({ fetch: meta.fetch })({ iss: 'http://localhost:8080/tenants/a//', header: { kid: 'k1' } }));
    expect(meta.urls).toEqual(['http://localhost:8080/.well-known/jwt-vc-issuer/tenants/a']);
  });
});

describe('what a verifier is told, and what it keeps, for each failure and malformed document', () => {
  const json = (value: unknown, headers: Record<string, string> = {}) => ({ status: 200, headers, body: Buffer.from(JSON.stringify(value)) });
  /** Answers from a table by URL (404 otherwise, or throws what the table holds), and records each request. */
  function scripted(routes: Record<string, { status: number; headers: Record<string, string>; body: Buffer } | Error>) {
    const calls: { url: string; accept: string; maxBytes: number | undefined }[] = [];
    const fetch: GuardedFetch = async (url, opts) => {
      calls.push({ url, accept: opts.accept, maxBytes: opts.maxBytes });
      const route = routes[url];
      if (route instanceof Error) throw route;
      return route ?? { status: 404, headers: {}, body: Buffer.from('') };
    };
    return { calls, fetch };
  }
  const did = 'did:web:issuer.example';
  const url = 'https://issuer.example/.well-known/did.json';

  test('a failed fetch: the guard reason, no internal error text, the status, not JSON, not an object', async () => {
    const cases: [unknown, string][] = [
      [new GuardedFetchError('timeout', url), `GET ${url}: timeout`],
      [new Error('socket hang up at 10.0.0.1'), `GET ${url} failed`],
      [{ status: 500, headers: {}, body: Buffer.from('{}') }, `GET ${url} answered 500`],
      [{ status: 200, headers: {}, body: Buffer.from('<html>') }, `GET ${url}: not JSON`],
      [json([didDocument(did, 'web', pub)]), `GET ${url}: not a JSON object`],
      [json(null), `GET ${url}: not a JSON object`],
    ];
    for (const [answer, detail] of cases) {
      const { fetch } = scripted({ [url]: answer as Error });
      expect(await unresolvable(resolver({ fetch })({ iss: did, header: { kid: `${did}#key-1` } }))).toBe(detail);
    }
  });

  test('what each document is asked for: the Accept header and the size bound', async () => {
    const iss = 'https://issuer.example/tenants/a';
    const { calls, fetch } = scripted({
      [url]: json(didDocument(did, 'web', pub)),
      'https://issuer.example/.well-known/jwt-vc-issuer/tenants/a': json({ issuer: iss, jwks_uri: 'https://issuer.example/jwks' }),
      'https://issuer.example/jwks': json({ keys: [{ ...issuer.publicJwk, kid: 'k1' }] }),
    });
    const r = resolver({ fetch });
    expect(await verifiesIssuerJwt(await r({ iss: did, header: { kid: `${did}#key-1` } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss, header: { kid: 'k1' } }))).toBe(true);
    expect(calls).toEqual([
      { url, accept: 'application/did+json, application/json', maxBytes: 256 * 1024 },
      { url: 'https://issuer.example/.well-known/jwt-vc-issuer/tenants/a', accept: 'application/json', maxBytes: 256 * 1024 },
      { url: 'https://issuer.example/jwks', accept: 'application/jwk-set+json, application/json', maxBytes: 256 * 1024 },
    ]);
  });

  test('a document is kept for its max-age, at most cacheSeconds (300 s unless set), and not at all with no-store', async () => {
    let now = 1_000_000;
    const kept = async (headers: Record<string, string>, cacheSeconds: number | undefined, afterMs: number) => {
      const { calls, fetch } = scripted({ [url]: json(didDocument(did, 'web', pub), headers) });
      const cache = new FetchCache({ maxEntries: 10, now: () => now });
      const r = resolver({ fetch, cache, ...(cacheSeconds === undefined ? {} : { cacheSeconds }) });
      await r({ iss: did, header: { kid: `${did}#key-1` } });
      now += afterMs;
      await r({ iss: did, header: { kid: `${did}#key-1` } });
      return calls.length === 1;
    };
    expect(await kept({}, undefined, 299_999)).toBe(true);
    expect(await kept({}, undefined, 300_000)).toBe(false);
    expect(await kept({ 'cache-control': 'max-age=60' }, undefined, 59_999)).toBe(true);
    expect(await kept({ 'cache-control': 'max-age=60' }, undefined, 60_000)).toBe(false);
    expect(await kept({ 'cache-control': 'max-age=3600' }, undefined, 300_000)).toBe(false);
    expect(await kept({ 'cache-control': 'max-age=3600' }, 10, 9_999)).toBe(true);
    expect(await kept({ 'cache-control': 'max-age=3600' }, 10, 10_000)).toBe(false);
    expect(await kept({ 'cache-control': 'no-store' }, undefined, 0)).toBe(false);
  });

  test('JWT VC issuer metadata: entries of a JWK set that are not objects are skipped; no JWK set; a private key named with its kid', async () => {
    const iss = 'https://issuer.example/t';
    const meta = 'https://issuer.example/.well-known/jwt-vc-issuer/t';
    const withKeys = (keys: unknown) => resolver({ fetch: scripted({ [meta]: json({ issuer: iss, jwks: { keys } }) }).fetch });
    const sloppy = [null, 'k1', 7, [issuer.publicJwk], { ...issuer.publicJwk, kid: 'k1' }];
    expect(await verifiesIssuerJwt(await withKeys(sloppy)({ iss, header: { kid: 'k1' } }))).toBe(true);
    expect(await verifiesIssuerJwt(await withKeys(sloppy)({ iss, header: {} }))).toBe(true);
    expect(await unresolvable(withKeys([{ ...issuer.publicJwk, d: 'c2VjcmV0', kid: 'k1' }])({ iss, header: { kid: 'k1' } }))).toBe(`${iss} key k1: not a public key`);
    for (const metadata of [{ issuer: iss }, { issuer: iss, jwks: [] }, { issuer: iss, jwks: { keys: {} } }]) {
      const r = resolver({ fetch: scripted({ [meta]: json(metadata) }).fetch });
      expect(await unresolvable(r({ iss, header: { kid: 'k1' } }))).toBe(`the JWT VC issuer metadata of ${iss} has no JWK set`);
    }
  });

  test('the iss and kid of a request: what is read as none, and each refusal named', async () => {
    const r = resolver({ fetch: noNetwork });
    // An empty or non-string kid is no kid: the DID's one assertion method.
    expect(await verifiesIssuerJwt(await r({ iss: issuer.did, header: { kid: '' } }))).toBe(true);
    expect(await verifiesIssuerJwt(await r({ iss: issuer.did, header: { kid: 7 } }))).toBe(true);
    expect(await unresolvable(r({ iss: 7 as unknown as string, header: { kid: 'k1' } }))).toBe('iss is not a string');
    expect(await unresolvable(r({ iss: 'urn:example:https://issuer.example', header: { kid: 'k1' } }))).toBe('neither a DID nor an https issuer: iss urn:example:https://issuer.example, kid k1');
    expect(await unresolvable(r({ iss: undefined, header: {} }))).toBe('neither a DID nor an https issuer: iss undefined, kid undefined');
    expect(await unresolvable(r({ iss: undefined, header: { kid: issuer.did } }))).toBe(`kid ${issuer.did} is not a DID URL of a DID`);
    expect(await unresolvable(r({ iss: 'did:web:issuer.example/path', header: {} }))).toBe('kid undefined is not a DID URL of did:web:issuer.example/path');
    expect(await unresolvable(r({ iss: 'did:example:123', header: {} }))).toBe('did:example:123 cannot be resolved');
    // Without iss, only a DID URL kid names an issuer; with an https iss, a DID URL kid is refused as such.
    expect(await unresolvable(r({ iss: undefined, header: { kid: 'k1' } }))).toBe('neither a DID nor an https issuer: iss undefined, kid k1');
    expect(await unresolvable(r({ iss: 'https://issuer.example', header: { kid: `${issuer.did}#0` } }))).toBe(`kid ${issuer.did}#0 is a DID URL but iss https://issuer.example is not a DID`);
  });

  test('a JWK without kty, or a symmetric one even without its k, is not a public key; without kid, the refusal names no kid', async () => {
    const iss = 'https://issuer.example/t';
    const meta = 'https://issuer.example/.well-known/jwt-vc-issuer/t';
    const { kty: _kty, ...noKty } = issuer.publicJwk as Record<string, unknown>;
    for (const key of [{ ...noKty, kid: 'k1' }, { kty: 'oct', kid: 'k1' }]) {
      const r = resolver({ fetch: scripted({ [meta]: json({ issuer: iss, jwks: { keys: [key] } }) }).fetch });
      expect(await unresolvable(r({ iss, header: { kid: 'k1' } }))).toBe(`${iss} key k1: not a public key`);
      expect(await unresolvable(r({ iss, header: {} }))).toBe(`${iss} key : not a public key`);
    }
  });

  describe('a DID document that is malformed or sloppy', () => {
    const d = 'did:web:issuer.example.test:dids:x';
    const key = { type: 'JsonWebKey2020', controller: d, publicKeyJwk: issuer.publicJwk };
    const withDocument = (document: Record<string, unknown>) =>
      resolver({ fetch: noNetwork, didResolver: { resolve: async (x: string) => (x === d ? { document: { id: d, ...document } as never } : null) } });

    test('an assertion method embedded in assertionMethod, with no verificationMethod array', async () => {
      expect(await verifiesIssuerJwt(await withDocument({ assertionMethod: [{ id: '#k', ...key }] })({ iss: d, header: { kid: '#k' } }))).toBe(true);
      expect(await verifiesIssuerJwt(await withDocument({ verificationMethod: { id: '#k', ...key }, assertionMethod: [{ id: `${d}#k`, ...key }] })({ iss: d, header: {} }))).toBe(true);
    });

    test('entries that are not objects, or whose id is not a string, are skipped', async () => {
      const r = withDocument({ verificationMethod: [null, 'x', { id: 5, ...key }, { id: '#k', ...key }], assertionMethod: [null, '#k'] });
      expect(await verifiesIssuerJwt(await r({ iss: d, header: { kid: '#k' } }))).toBe(true);
      // A malformed id matches nothing, not even another malformed id.
      for (const id of [5, '']) {
        const malformed = withDocument({ verificationMethod: [{ id, ...key }], assertionMethod: [id] });
        expect(await unresolvable(malformed({ iss: d, header: {} }))).toBe(`no kid, and ${d} has 0 assertion methods`);
      }
    });

    test('without kid, exactly one assertion method', async () => {
      const two = withDocument({ verificationMethod: [{ id: '#a', ...key }, { id: '#b', ...key }], assertionMethod: ['#a', '#b'] });
      expect(await unresolvable(two({ iss: d, header: {} }))).toBe(`no kid, and ${d} has 2 assertion methods`);
      expect(await unresolvable(withDocument({ verificationMethod: [{ id: '#a', ...key }] })({ iss: d, header: {} }))).toBe(`no kid, and ${d} has 0 assertion methods`);
      expect(await unresolvable(withDocument({ verificationMethod: [{ id: '#a', ...key }], assertionMethod: '#a' })({ iss: d, header: {} }))).toBe(`no kid, and ${d} has 0 assertion methods`);
    });

    test('a kid is taken as written: only a leading # makes it relative', async () => {
      const r = withDocument({ verificationMethod: [{ id: '#k1', ...key }], assertionMethod: ['#k1'] });
      expect(await unresolvable(r({ iss: d, header: { kid: 'k#1' } }))).toBe(`${d}#k#1 is not an assertionMethod of ${d}`);
      expect(await verifiesIssuerJwt(await r({ iss: d, header: { kid: 'k1' } }))).toBe(true);
    });

    test('an assertion method without a method, or without a usable key', async () => {
      expect(await unresolvable(withDocument({ verificationMethod: [], assertionMethod: ['#k'] })({ iss: d, header: { kid: '#k' } }))).toBe(`${d}#k is not a verification method of ${d}`);
      for (const method of [{}, { publicKeyJwk: 'x' }, { publicKeyMultibase: 'z-not-a-key' }, { publicKeyMultibase: 7 }]) {
        const r = withDocument({ verificationMethod: [{ id: '#k', type: 'JsonWebKey2020', controller: d, ...method }], assertionMethod: ['#k'] });
        expect(await unresolvable(r({ iss: d, header: { kid: '#k' } }))).toBe(`${d}#k has no usable public key`);
      }
      const multibase = withDocument({ verificationMethod: [{ id: '#k', type: 'Ed25519VerificationKey2020', controller: d, publicKeyMultibase: multibaseKey(pub) }], assertionMethod: ['#k'] });
      expect(await verifiesIssuerJwt(await multibase({ iss: d, header: { kid: '#k' } }))).toBe(true);
    });

    test('a private key in a document is refused with where it was found', async () => {
      const r = withDocument({ verificationMethod: [{ id: '#k', ...key, publicKeyJwk: { ...issuer.publicJwk, d: 'c2VjcmV0' } }], assertionMethod: ['#k'] });
      expect(await unresolvable(r({ iss: d, header: { kid: '#k' } }))).toBe(`${d}#k: not a public key`);
    });

    test('a refusal names the kid as the credential wrote it, or the one assertion method when there is no kid', async () => {
      const encoded = 'did:web:issuer.example%3A8443:x';
      const r = resolver({ fetch: noNetwork, didResolver: { resolve: async (x: string) => (x === encoded ? { document: { id: encoded, verificationMethod: [{ id: '#k', ...key }], assertionMethod: ['#k'] } as never } : null) } });
      expect(await unresolvable(r({ iss: encoded, header: { kid: `${encoded}#nope` } }))).toBe(`${encoded}#nope is not an assertionMethod of ${encoded}`);
      expect(await unresolvable(withDocument({ verificationMethod: [], assertionMethod: ['#k'] })({ iss: d, header: {} }))).toBe(`${d}#k is not a verification method of ${d}`);
    });

    test('a document without an id, or naming another DID', async () => {
      expect(await unresolvable(withDocument({ id: undefined, assertionMethod: [{ id: '#k', ...key }] })({ iss: d, header: {} }))).toBe(`the document of ${d} names another DID`);
    });
  });
});
