import { createHash, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { decodeSdJwt as libDecodeSdJwt, getClaims } from '@sd-jwt/decode';
import { compactVerify, CompactSign, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { didJwkOfJwk, didKeyOfJwk, generateHolderKey, jwkOfDidKey, signCompactJws, type HolderKey, type PublicJwk } from '../helpers/spec-wallet';
import {
  answerDcql,
  answerPresentationDefinition,
  claimPathOf,
  fetchRequestObject,
  forgeDisclosure,
  parseAuthorizationRequestUri,
  postDirectPost,
  presentJwtVp,
  presentSdJwt,
  resolveAuthorizationRequest,
  selectClaimPaths,
  tamperDisclosure,
  verifyRequestObject,
  type RequestObject,
} from '../helpers/spec-vp-wallet';

// ---------------------------------------------------------------------------------------------
// A loopback server with settable routes, recording what it receives

type Route = (req: IncomingMessage, body: string) => { status?: number; type?: string; body?: string; headers?: Record<string, string> };

const routes = new Map<string, Route>();
const received: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      received.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      const route = routes.get(`${req.method} ${path}`);
      const out = route ? route(req, body) : { status: 404, type: 'application/json', body: '{"error":"not_found"}' };
      res.writeHead(out.status ?? 200, { ...(out.type ? { 'content-type': out.type } : {}), ...(out.headers ?? {}) });
      res.end(out.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  routes.clear();
  received.length = 0;
});

const serveJwt = (path: string, jwt: string, type = 'application/oauth-authz-req+jwt') => routes.set(`GET ${path}`, () => ({ type, body: jwt }));

// ---------------------------------------------------------------------------------------------
// Verifier side of the test: request objects signed with jose

interface VerifierKey {
  did: string;
  kid: string;
  alg: 'ES256' | 'EdDSA';
  privateKey: KeyObject;
  publicJwk: PublicJwk;
}

function verifierKey(method: 'did:key' | 'did:jwk', alg: 'ES256' | 'EdDSA' = 'ES256'): VerifierKey {
  const k = generateHolderKey(alg);
  return method === 'did:key'
    ? { did: k.didKey, kid: k.didKeyUrl, alg, privateKey: k.privateKey, publicJwk: k.publicJwk }
    : { did: k.didJwk, kid: k.didJwkUrl, alg, privateKey: k.privateKey, publicJwk: k.publicJwk };
}

const dcqlQuery = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['https://example.org/pid'] },
      claims: [{ path: ['given_name'] }, { path: ['address', 'street'] }, { path: ['degrees', null, 'type'] }],
    },
  ],
};

function requestPayload(clientId: string, extra: Record<string, unknown> = {}): RequestObject {
  return {
    client_id: clientId,
    response_type: 'vp_token',
    response_mode: 'direct_post',
    response_uri: `${base}/response`,
    nonce: 'n-0S6_WzA2Mj',
    state: 'st-abc123',
    dcql_query: dcqlQuery as RequestObject['dcql_query'],
    client_metadata: { vp_formats_supported: { 'dc+sd-jwt': { 'kb-jwt_alg_values': ['ES256', 'EdDSA'] } } },
    aud: 'https://self-issued.me/v2',
    iat: Math.floor(Date.now() / 1000),
    ...extra,
  };
}

async function signRequest(payload: Record<string, unknown>, key: VerifierKey, header: Record<string, unknown> = {}): Promise<string> {
  return new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader({ alg: key.alg, typ: 'oauth-authz-req+jwt', kid: key.kid, ...header }).sign(key.privateKey);
}

// ---------------------------------------------------------------------------------------------

describe('parseAuthorizationRequestUri', () => {
  test.each(['openid://', 'openid4vp://', 'haip://', 'https://wallet.example/authorize'])('%s with client_id and request_uri', (prefix) => {
    const uri = `${prefix}?client_id=${encodeURIComponent('decentralized_identifier:did:key:z6Mk')}&request_uri=${encodeURIComponent('https://v.example/r/1')}`;
    expect(parseAuthorizationRequestUri(uri)).toMatchObject({ clientId: 'decentralized_identifier:did:key:z6Mk', requestUri: 'https://v.example/r/1' });
  });

  test('a request by value, request_uri_method, and the refusals', () => {
    expect(parseAuthorizationRequestUri('openid4vp://?client_id=x&request=a.b.c')).toMatchObject({ clientId: 'x', request: 'a.b.c' });
    expect(parseAuthorizationRequestUri('openid4vp://?client_id=x&request_uri=https%3A%2F%2Fv%2Fr&request_uri_method=post').requestUriMethod).toBe('post');
    expect(() => parseAuthorizationRequestUri('openid4vp://?client_id=x&request=a.b.c&request_uri=https%3A%2F%2Fv')).toThrow(/MUST NOT both/);
    expect(() => parseAuthorizationRequestUri('openid4vp://?client_id=x&request_uri=https%3A%2F%2Fv&request_uri_method=put')).toThrow(/invalid_request_uri_method/);
    expect(() => parseAuthorizationRequestUri('openid4vp://?client_id=x&request_uri_method=get')).toThrow(/without request_uri/);
  });
});

describe('fetchRequestObject', () => {
  test.each([
    ['did:key', 'ES256'],
    ['did:key', 'EdDSA'],
    ['did:jwk', 'ES256'],
  ] as const)('accepts a %s (%s) decentralized_identifier request, with the Accept header of RFC 9101', async (method, alg) => {
    const key = verifierKey(method, alg);
    const clientId = `decentralized_identifier:${key.did}`;
    serveJwt('/req/1', await signRequest(requestPayload(clientId), key));
    const uri = `openid4vp://?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(`${base}/req/1`)}`;
    const { clientId: cid, requestUri } = parseAuthorizationRequestUri(uri);
    const got = await fetchRequestObject(requestUri!, { expectedClientId: cid });
    expect(got.did).toBe(key.did);
    expect(got.payload).toMatchObject({ client_id: clientId, nonce: 'n-0S6_WzA2Mj', state: 'st-abc123', response_uri: `${base}/response`, response_mode: 'direct_post' });
    expect(got.payload.dcql_query).toEqual(dcqlQuery);
    expect(received[0]!.headers.accept).toBe('application/oauth-authz-req+jwt');
    // And the one-step form.
    expect((await resolveAuthorizationRequest(uri)).payload.client_id).toBe(clientId);
  });

  test('accepts a draft-style plain did: client id with client_id_scheme did', async () => {
    const key = verifierKey('did:key');
    serveJwt('/req/d', await signRequest(requestPayload(key.did, { client_id_scheme: 'did' }), key));
    const got = await fetchRequestObject(`${base}/req/d`, { expectedClientId: key.did });
    expect(got.did).toBe(key.did);
  });

  test('resolves a did:web on 127.0.0.1 over http (relative verification method ids)', async () => {
    const key = verifierKey('did:key');
    const host = new URL(base).host;
    const did = `did:web:${host.replace(':', '%3A')}:verifier`;
    const vkey = { ...key, did, kid: `${did}#key-1` };
    routes.set('GET /verifier/did.json', () => ({ type: 'application/json', body: JSON.stringify({ id: did, verificationMethod: [{ id: '#key-1', type: 'JsonWebKey2020', controller: did, publicKeyJwk: key.publicJwk }] }) }));
    serveJwt('/req/w', await signRequest(requestPayload(`decentralized_identifier:${did}`), vkey));
    const got = await fetchRequestObject(`${base}/req/w`, { expectedClientId: `decentralized_identifier:${did}` });
    expect(got.verificationJwk).toEqual(key.publicJwk);
    // A kid the document does not list.
    serveJwt('/req/w2', await signRequest(requestPayload(`decentralized_identifier:${did}`), { ...vkey, kid: `${did}#key-2` }));
    await expect(fetchRequestObject(`${base}/req/w2`, { expectedClientId: `decentralized_identifier:${did}` })).rejects.toThrow(/not a verificationMethod/);
  });

  describe('refuses', () => {
    let key: VerifierKey;
    let clientId: string;
    beforeEach(() => {
      key = verifierKey('did:key');
      clientId = `decentralized_identifier:${key.did}`;
    });
    const fetchIt = (path: string, expected = clientId) => fetchRequestObject(`${base}${path}`, { expectedClientId: expected });

    test('a wrong or missing typ', async () => {
      serveJwt('/r', await signRequest(requestPayload(clientId), key, { typ: 'JWT' }));
      await expect(fetchIt('/r')).rejects.toThrow(/typ must be oauth-authz-req\+jwt/);
      const { typ, ...noTyp } = { alg: key.alg, typ: 'x', kid: key.kid };
      void typ;
      serveJwt('/r2', await new CompactSign(Buffer.from(JSON.stringify(requestPayload(clientId)))).setProtectedHeader(noTyp).sign(key.privateKey));
      await expect(fetchIt('/r2')).rejects.toThrow(/typ must be/);
    });

    test('a client_id that differs from the URI client_id (prefix included)', async () => {
      serveJwt('/r', await signRequest(requestPayload(clientId), key));
      await expect(fetchIt('/r', key.did)).rejects.toThrow(/client_id .* is not the request's/);
      await expect(fetchIt('/r', `decentralized_identifier:${verifierKey('did:key').did}`)).rejects.toThrow(/is not the request's/);
    });

    test('a bad signature: signed by another key, or a tampered payload', async () => {
      const other = verifierKey('did:key');
      serveJwt('/r', await signRequest(requestPayload(clientId), { ...key, privateKey: other.privateKey }));
      await expect(fetchIt('/r')).rejects.toThrow(/signature does not verify/);
      const good = await signRequest(requestPayload(clientId), key);
      const [h, , s] = good.split('.');
      const tampered = `${h}.${Buffer.from(JSON.stringify(requestPayload(clientId, { response_uri: 'https://evil.example/post' }))).toString('base64url')}.${s}`;
      serveJwt('/r2', tampered);
      await expect(fetchIt('/r2')).rejects.toThrow(/signature does not verify/);
    });

    test('a kid of another DID, a kid without fragment, no kid, alg none', async () => {
      const other = verifierKey('did:key');
      serveJwt('/r', await signRequest(requestPayload(clientId), key, { kid: other.kid }));
      await expect(fetchIt('/r')).rejects.toThrow(/is not a DID URL of/);
      serveJwt('/r2', await signRequest(requestPayload(clientId), key, { kid: key.did }));
      await expect(fetchIt('/r2')).rejects.toThrow(/is not a DID URL of/);
      serveJwt('/r3', signCompactJws({ alg: key.alg, typ: 'oauth-authz-req+jwt' }, requestPayload(clientId), key.privateKey));
      await expect(fetchIt('/r3')).rejects.toThrow(/kid MUST identify/);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'oauth-authz-req+jwt' })).toString('base64url')}.${Buffer.from(JSON.stringify(requestPayload(clientId))).toString('base64url')}.`;
      serveJwt('/r4', none);
      await expect(fetchIt('/r4')).rejects.toThrow(/MUST be signed/);
    });

    test('a wrong content type, an HTTP error, a redirect', async () => {
      serveJwt('/r', await signRequest(requestPayload(clientId), key), 'application/json');
      await expect(fetchIt('/r')).rejects.toThrow(/content type must be/);
      await expect(fetchIt('/missing')).rejects.toThrow(/HTTP 404/);
      routes.set('GET /redir', () => ({ status: 302, headers: { location: `${base}/r` } }));
      await expect(fetchIt('/redir')).rejects.toThrow(/redirect/);
    });

    test('request parameters a wallet must refuse', async () => {
      for (const [extra, re] of [
        [{ transaction_data: ['e30'] }, /transaction_data/],
        [{ nonce: undefined }, /nonce is REQUIRED/],
        [{ redirect_uri: `${base}/cb` }, /redirect_uri MUST NOT/],
        [{ dcql_query: undefined }, /no dcql_query/],
      ] as const) {
        const jws = await signRequest(requestPayload(clientId, extra as Record<string, unknown>), key);
        await expect(verifyRequestObject(jws, { expectedClientId: clientId })).rejects.toThrow(re);
      }
    });

    test('an unsupported client identifier prefix, and http to a non-loopback host', async () => {
      const jws = await signRequest(requestPayload('x509_san_dns:verifier.example'), key);
      await expect(verifyRequestObject(jws, { expectedClientId: 'x509_san_dns:verifier.example' })).rejects.toThrow(/unsupported client identifier prefix/);
      await expect(fetchRequestObject('http://verifier.example/r', { expectedClientId: clientId })).rejects.toThrow(/must be https/);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// SD-JWT: issued here with @sd-jwt/core, checked by an independent verifier written below

const issuerKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const issuerJwk = issuerKeys.publicKey.export({ format: 'jwk' }) as JWK;

const subject = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  address: { street: '1 Analytical Row', locality: 'London', country: 'UK' },
  degrees: [
    { type: 'Mathematics', university: 'London' },
    { type: 'Engineering', university: 'Turin' },
  ],
  nationalities: ['British', 'Italian'],
};

async function issue(holder: HolderKey): Promise<string> {
  const sdjwt = new SDJwtInstance<Record<string, unknown>>({
    signer: (data: string) => cryptoSign('sha256', Buffer.from(data), { key: issuerKeys.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const frame = {
    _sd: ['given_name', 'family_name', 'address', 'degrees'],
    address: { _sd: ['street', 'locality'] },
    degrees: { _sd: [0, 1], 0: { _sd: ['type'] }, 1: { _sd: ['type'] } },
    nationalities: { _sd: [0, 1] },
  };
  return sdjwt.issue({ iss: 'https://issuer.example', vct: 'https://example.org/pid', iat: 1700000000, cnf: { jwk: holder.publicJwk }, ...subject }, frame as never, { header: { typ: 'dc+sd-jwt' } });
}

const b64uSha256 = (s: string) => createHash('sha256').update(s, 'ascii').digest('base64url');

/**
 * A verifier's reading of RFC 9901 §7: issuer signature; each disclosure's digest reachable from the
 * payload or from another presented disclosure; KB-JWT typ, signature by cnf.jwk, aud, nonce, sd_hash.
 * Returns the processed claims.
 */
async function verifyPresentation(presentation: string, o: { aud: string; nonce: string }): Promise<Record<string, any>> {
  const parts = presentation.split('~');
  const jwt = parts[0]!;
  const kb = parts[parts.length - 1]!;
  const disclosures = parts.slice(1, -1);
  const { payload } = await jwtVerify(jwt, await importJWK(issuerJwk, 'ES256'));
  const byDigest = new Map(disclosures.map((d) => [b64uSha256(d), JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as unknown[]]));
  if (byDigest.size !== disclosures.length) throw new Error('duplicate disclosure');
  const used = new Set<string>();
  const unfold = (node: any): any => {
    if (Array.isArray(node)) {
      return node.flatMap((el) => {
        if (el && typeof el === 'object' && Object.keys(el).length === 1 && '...' in el) {
          const d = byDigest.get(el['...']);
          if (!d) return [];
          used.add(el['...']);
          return [unfold(d[1])];
        }
        return [unfold(el)];
      });
    }
    if (node && typeof node === 'object') {
      const out: Record<string, any> = {};
      for (const [k, v] of Object.entries(node)) if (k !== '_sd' && k !== '_sd_alg') out[k] = unfold(v);
      for (const dig of (node._sd ?? []) as string[]) {
        const d = byDigest.get(dig);
        if (!d) continue;
        used.add(dig);
        out[d[1] as string] = unfold(d[2]);
      }
      return out;
    }
    return node;
  };
  const claims = unfold(payload);
  for (const dig of byDigest.keys()) if (!used.has(dig)) throw new Error('a disclosure the issuer did not sign');
  if (decodeProtectedHeader(kb).typ !== 'kb+jwt') throw new Error('KB typ');
  const { payload: kbp } = await jwtVerify(kb, await importJWK((payload.cnf as { jwk: JWK }).jwk, decodeProtectedHeader(kb).alg), { audience: o.aud });
  if (kbp.nonce !== o.nonce) throw new Error('KB nonce');
  if (kbp.sd_hash !== b64uSha256(presentation.slice(0, presentation.lastIndexOf('~') + 1))) throw new Error('KB sd_hash');
  if (typeof kbp.iat !== 'number' || Math.abs(kbp.iat - Date.now() / 1000) > 300) throw new Error('KB iat');
  return claims;
}

const disclosedNames = (p: string) =>
  p
    .split('~')
    .slice(1, -1)
    .map((d) => {
      const a = JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as unknown[];
      return a.length === 3 ? a[1] : `[${JSON.stringify(a[1])}]`;
    });

describe('claim paths', () => {
  test('selectors and §7.1.1 processing', () => {
    expect(claimPathOf('/address/street')).toEqual(['address', 'street']);
    expect(claimPathOf('/degrees/1/type')).toEqual(['degrees', 1, 'type']);
    expect(claimPathOf('$.address.street')).toEqual(['address', 'street']);
    expect(claimPathOf("$['degrees'][*].type")).toEqual(['degrees', null, 'type']);
    expect(claimPathOf('given_name')).toEqual(['given_name']);
    expect(selectClaimPaths(subject, ['degrees', null, 'type'])).toEqual([['degrees', 0, 'type'], ['degrees', 1, 'type']]);
    expect(selectClaimPaths(subject, ['nationalities', 1])).toEqual([['nationalities', 1]]);
    expect(() => selectClaimPaths(subject, ['given_name', 'x'])).toThrow(/not an object/);
    expect(() => selectClaimPaths(subject, ['address', null])).toThrow(/not an array/);
    expect(() => selectClaimPaths(subject, ['nope'])).toThrow(/selects nothing/);
  });
});

describe('presentSdJwt', () => {
  const aud = 'decentralized_identifier:did:key:zVerifier';
  const nonce = 'nonce-123';
  let holder: HolderKey;
  let credential: string;
  beforeAll(async () => {
    holder = generateHolderKey('ES256');
    credential = await issue(holder);
  });

  test('the issued credential is what we think (and @sd-jwt/decode agrees)', async () => {
    const dec = await libDecodeSdJwt(credential, digest);
    expect(await getClaims(dec.jwt.payload, dec.disclosures, digest)).toMatchObject(subject);
    expect(dec.disclosures).toHaveLength(4 + 2 + 2 + 2 + 2);
  });

  test('a nested claim brings its parent object disclosure, nothing else', async () => {
    const p = presentSdJwt(credential, holder, { claims: [['address', 'street']], audience: aud, nonce });
    expect(disclosedNames(p.presentation).sort()).toEqual(['address', 'street']);
    const claims = await verifyPresentation(p.presentation, { aud, nonce });
    expect(claims.address).toEqual({ street: '1 Analytical Row', country: 'UK' });
    expect(claims.given_name).toBeUndefined();
    expect(claims.degrees).toBeUndefined();
    expect(claims.nationalities).toEqual([]);
  });

  test('null over an array: every element disclosure and the claim in each', async () => {
    const p = presentSdJwt(credential, holder, { claims: [['degrees', null, 'type'], 'given_name'], audience: aud, nonce });
    const claims = await verifyPresentation(p.presentation, { aud, nonce });
    expect(claims.degrees).toEqual([
      { type: 'Mathematics', university: 'London' },
      { type: 'Engineering', university: 'Turin' },
    ]);
    expect(claims.given_name).toBe('Ada');
    expect(disclosedNames(p.presentation)).toHaveLength(1 + 1 + 2 + 2);
  });

  test('an index, a JSON pointer, a JSONPath; a whole object brings its sub-claims', async () => {
    const one = await verifyPresentation(presentSdJwt(credential, holder, { claims: [['nationalities', 1]], audience: aud, nonce }).presentation, { aud, nonce });
    expect(one.nationalities).toEqual(['Italian']);
    const byPointer = await verifyPresentation(presentSdJwt(credential, holder, { claims: ['/degrees/1/type'], audience: aud, nonce }).presentation, { aud, nonce });
    expect(byPointer.degrees).toEqual([{ type: 'Engineering', university: 'Turin' }]);
    const whole = await verifyPresentation(presentSdJwt(credential, holder, { claims: ['$.address'], audience: aud, nonce }).presentation, { aud, nonce });
    expect(whole.address).toEqual(subject.address);
    const all = await verifyPresentation(presentSdJwt(credential, holder, { claims: 'all', audience: aud, nonce }).presentation, { aud, nonce });
    expect(all).toMatchObject(subject);
    expect(() => presentSdJwt(credential, holder, { claims: [['birthdate']], audience: aud, nonce })).toThrow(/cannot disclose/);
  });

  test('the KB-JWT: typ kb+jwt, alg of the key, aud, nonce, iat, sd_hash; EdDSA holders too', async () => {
    const ed = generateHolderKey('EdDSA');
    const cred = await issue(ed);
    const p = presentSdJwt(cred, ed, { claims: ['given_name'], audience: aud, nonce, iat: Math.floor(Date.now() / 1000) - 5 });
    expect(decodeProtectedHeader(p.kbJwt!)).toEqual({ typ: 'kb+jwt', alg: 'EdDSA' });
    await expect(verifyPresentation(p.presentation, { aud, nonce })).resolves.toMatchObject({ given_name: 'Ada' });
    // No disclosures at all: `<jwt>~<kb>`.
    const bare = presentSdJwt(cred, ed, { claims: [], audience: aud, nonce });
    expect(bare.presentation.split('~')).toHaveLength(2);
    await expect(verifyPresentation(bare.presentation, { aud, nonce })).resolves.toMatchObject({ vct: 'https://example.org/pid' });
  });

  test('the failure cases a test can produce are each caught by a verifier', async () => {
    const ok = { claims: [['address', 'street']], audience: aud, nonce } as const;
    const check = (o: Parameters<typeof presentSdJwt>[2]) => verifyPresentation(presentSdJwt(credential, holder, o).presentation, { aud, nonce });
    await expect(check({ ...ok, nonce: 'other' })).rejects.toThrow(/nonce/);
    await expect(check({ ...ok, audience: 'did:key:zVerifier' })).rejects.toThrow(/aud/);
    await expect(check({ ...ok, sdHashOverride: b64uSha256('x') })).rejects.toThrow(/sd_hash/);
    await expect(check({ ...ok, kbSigningKey: generateHolderKey('ES256').privateKey })).rejects.toThrow(/signature/);
    await expect(check({ ...ok, iat: Math.floor(Date.now() / 1000) - 3600 })).rejects.toThrow(/iat/);
    await expect(check({ ...ok, kbHeader: { typ: 'JWT' } })).rejects.toThrow(/KB typ/);
    await expect(check({ ...ok, extraDisclosures: [forgeDisclosure('given_name', 'Eve')] })).rejects.toThrow(/did not sign/);
    await expect(check({ ...ok, mapDisclosures: (ds, dec) => ds.map((d) => (d === dec.disclosures.find((x) => x.name === 'street')!.encoded ? tamperDisclosure(d, '2 Forged Lane') : d)) })).rejects.toThrow(/did not sign/);
    // Extra, genuine disclosures verify: the verifier's query check must catch them.
    const extra = presentSdJwt(credential, holder, { ...ok, extraDisclosures: [credential.split('~').slice(1, -1).find((d) => disclosedNames(`x~${d}~`)[0] === 'given_name')!] });
    expect((await verifyPresentation(extra.presentation, { aud, nonce })).given_name).toBe('Ada');
    const noKb = presentSdJwt(credential, holder, { ...ok, omitKb: true });
    expect(noKb.presentation.endsWith('~')).toBe(true);
    expect(noKb.kbJwt).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('answers over direct_post', () => {
  let holder: HolderKey;
  let credential: string;
  const verifier = verifierKey('did:key');
  const clientId = `decentralized_identifier:${verifier.did}`;
  beforeAll(async () => {
    holder = generateHolderKey('ES256');
    credential = await issue(holder);
  });
  const acceptPosts = () => routes.set('POST /response', () => ({ type: 'application/json', body: '{"redirect_uri":"https://v.example/done#response_code=1"}' }));

  test('answerDcql: a vp_token object of arrays, exactly the query claims, aud the prefixed client id, state echoed', async () => {
    acceptPosts();
    serveJwt('/req', await signRequest(requestPayload(clientId), verifier));
    const { payload } = await fetchRequestObject(`${base}/req`, { expectedClientId: clientId });
    const res = await answerDcql(payload, { pid: credential }, holder);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ redirect_uri: 'https://v.example/done#response_code=1' });
    const post = received.find((r) => r.method === 'POST')!;
    expect(post.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(post.body);
    expect(form.get('state')).toBe('st-abc123');
    const vpToken = JSON.parse(form.get('vp_token')!);
    expect(Object.keys(vpToken)).toEqual(['pid']);
    expect(vpToken.pid).toHaveLength(1);
    const claims = await verifyPresentation(vpToken.pid[0], { aud: clientId, nonce: 'n-0S6_WzA2Mj' });
    expect(claims).toMatchObject({ given_name: 'Ada', address: { street: '1 Analytical Row' } });
    expect(claims.family_name).toBeUndefined();
    expect(claims.address.locality).toBeUndefined();
    expect(claims.degrees.map((d: any) => d.type)).toEqual(['Mathematics', 'Engineering']);
  });

  test('answerDcql: claim_sets, credential_sets, values, and the refusals', async () => {
    const base0 = requestPayload(clientId);
    const q = (over: object) => ({ ...base0, dcql_query: { credentials: [{ ...dcqlQuery.credentials[0]!, ...over }] } }) as RequestObject;
    const first = await answerDcql(q({ claims: [{ id: 'a', path: ['birthdate'] }, { id: 'b', path: ['family_name'] }], claim_sets: [['a'], ['b']] }), { pid: credential }, holder, { dryRun: true });
    expect(disclosedNames((first.vpToken as any).pid[0])).toEqual(['family_name']);
    await expect(answerDcql(q({ claims: [{ path: ['given_name'], values: ['Eve'] }] }), { pid: credential }, holder, { dryRun: true })).rejects.toThrow(/lacks/);
    await expect(answerDcql(q({ meta: { vct_values: ['https://example.org/other'] } }), { pid: credential }, holder, { dryRun: true })).rejects.toThrow(/vct_values/);
    await expect(answerDcql(base0, {}, holder, { dryRun: true })).rejects.toThrow(/no credential for pid/);
    const optional = { ...base0, dcql_query: { credentials: [dcqlQuery.credentials[0]!, { id: 'other', format: 'dc+sd-jwt', meta: {} }], credential_sets: [{ options: [['pid']] }, { options: [['other']], required: false }] } } as RequestObject;
    expect(Object.keys((await answerDcql(optional, { pid: credential }, holder, { dryRun: true })).vpToken as object)).toEqual(['pid']);
    // No `claims`: only the mandatory parts.
    expect(disclosedNames(((await answerDcql(q({ claims: undefined }), { pid: credential }, holder, { dryRun: true })).vpToken as any).pid[0])).toEqual([]);
    // Test-made deviations.
    const over = await answerDcql(base0, { pid: credential }, holder, { dryRun: true, claimsOverride: { pid: 'all' }, present: { nonce: 'stale' }, state: null });
    expect(disclosedNames((over.vpToken as any).pid[0])).toHaveLength(12);
    expect(over.fields.state).toBeUndefined();
  });

  test('answerPresentationDefinition: bare vp_token and a presentation_submission', async () => {
    acceptPosts();
    const pd = {
      id: 'pd-1',
      input_descriptors: [{ id: 'pid-desc', format: { 'vc+sd-jwt': {} }, constraints: { limit_disclosure: 'required', fields: [{ path: ['$.vct'] }, { path: ['$.given_name'] }, { path: ['$.address.street'] }, { path: ['$.birthdate'], optional: true }] } }],
    };
    const draftReq = requestPayload(verifier.did, { client_id_scheme: 'did', dcql_query: undefined, presentation_definition: pd });
    const res = await answerPresentationDefinition(draftReq, credential, holder);
    expect(res.status).toBe(200);
    const form = new URLSearchParams(received.find((r) => r.method === 'POST')!.body);
    expect(JSON.parse(form.get('presentation_submission')!)).toMatchObject({ definition_id: 'pd-1', descriptor_map: [{ id: 'pid-desc', format: 'vc+sd-jwt', path: '$' }] });
    const vp = form.get('vp_token')!;
    expect(disclosedNames(vp).sort()).toEqual(['address', 'given_name', 'street']);
    await expect(verifyPresentation(vp, { aud: verifier.did, nonce: 'n-0S6_WzA2Mj' })).resolves.toMatchObject({ given_name: 'Ada' });
  });

  test('postDirectPost sends raw fields and does not follow redirects', async () => {
    routes.set('POST /response', (_req, body) => ({ status: 400, type: 'application/json', body: JSON.stringify({ error: 'invalid_request', got: body }) }));
    const res = await postDirectPost(`${base}/response`, { vp_token: 'not-json', state: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.got).toBe('vp_token=not-json&state=x');
    routes.set('POST /moved', () => ({ status: 307, headers: { location: `${base}/response` } }));
    expect((await postDirectPost(`${base}/moved`, { a: 'b' })).status).toBe(307);
    expect(received.filter((r) => r.method === 'POST')).toHaveLength(2);
  });
});

describe('presentJwtVp', () => {
  test.each(['did:key', 'did:jwk'] as const)('a VP JWT by a %s holder verifies with the key its kid names', async (method) => {
    const holder = generateHolderKey('ES256');
    const did = method === 'did:key' ? holder.didKey : holder.didJwk;
    const vp = presentJwtVp(['eyJ.vc.jwt'], holder, did, { audience: 'decentralized_identifier:did:key:zV', nonce: 'n1' });
    const header = decodeProtectedHeader(vp);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: method === 'did:key' ? holder.didKeyUrl : holder.didJwkUrl });
    const jwk = method === 'did:key' ? jwkOfDidKey(header.kid!) : (JSON.parse(Buffer.from(did.slice(8), 'base64url').toString()) as PublicJwk);
    expect(didKeyOfJwk(jwk)).toBe(holder.didKey);
    expect(didJwkOfJwk(jwk)).toBe(holder.didJwk);
    const { payload } = await compactVerify(vp, await importJWK(jwk as JWK, 'ES256'));
    const claims = JSON.parse(Buffer.from(payload).toString());
    expect(claims).toMatchObject({ iss: did, aud: 'decentralized_identifier:did:key:zV', nonce: 'n1', vp: { type: ['VerifiablePresentation'], verifiableCredential: ['eyJ.vc.jwt'] } });
    expect(claims.exp).toBeGreaterThan(claims.iat);
  });
});
