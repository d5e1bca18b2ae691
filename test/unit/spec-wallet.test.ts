import { createHash, generateKeyPairSync } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, EmbeddedJWK, importJWK, jwtVerify, type JWK } from 'jose';
import {
  accessTokenHash,
  base58btcDecode,
  base58btcEncode,
  buildCredentialRequest,
  credentialsOfResponse,
  decodeJwtParts,
  decodeSdJwt,
  didJwkOfJwk,
  didKeyOfJwk,
  generateHolderKey,
  jwkOfDidJwk,
  jwkOfDidKey,
  parseOfferUri,
  PRE_AUTHORIZED_CODE_GRANT,
  signCompactJws,
  SpecWallet,
  summarizeOffer,
  wellKnownUrls,
} from '../helpers/spec-wallet';
import { resolveIssuerKey, verifySdJwtVc, issuerKeyResolver } from '../helpers/issued-credentials';
import { fullLengthJwk, keyDidResolver } from '../helpers/key-did-resolver';

const resolver = keyDidResolver();

/** A fetch that answers from a table of handlers and records every request. */
function fakeFetch(routes: Record<string, (req: { method: string; headers: Headers; body: string; url: string }) => { status?: number; body?: unknown; headers?: Record<string, string> }>) {
  const calls: { method: string; url: string; headers: Headers; body: string }[] = [];
  const impl = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input);
    const req = { method: init.method ?? 'GET', headers: new Headers(init.headers as ConstructorParameters<typeof Headers>[0]), body: typeof init.body === 'string' ? init.body : '', url };
    calls.push(req);
    const handler = routes[`${req.method} ${url}`];
    if (!handler) return new Response(JSON.stringify({ error: 'not_found' }), { status: 404, headers: { 'content-type': 'application/json' } });
    const out = handler(req);
    return new Response(out.body === undefined ? null : JSON.stringify(out.body), { status: out.status ?? 200, headers: { 'content-type': 'application/json', ...(out.headers ?? {}) } });
  }) as typeof fetch;
  return { impl, calls };
}

describe('base58btc, did:key and did:jwk', () => {
  test('base58btc round-trips, leading zero bytes included', () => {
    for (const bytes of [new Uint8Array([]), new Uint8Array([0, 0, 1, 2, 255]), new Uint8Array(32).fill(0xab)]) {
      expect(base58btcDecode(base58btcEncode(bytes))).toEqual(bytes);
    }
    expect(base58btcEncode(Buffer.from('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
  });

  test('the did:key spec example z6MkhaXg… is the Ed25519 key key-did-resolver finds in it, and back', async () => {
    const did = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
    const jwk = jwkOfDidKey(did);
    expect(jwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: 'Lm_M42cB3HkUiODQsXRcweM6TByfzEHGO9ND274JcOY' });
    const theirs = (await resolver.resolve(did)).didDocument!.verificationMethod![0]!;
    expect(theirs.publicKeyBase58).toBe('48GdbJyVULjHDaBNS6ct9oAGtckZUS5v8asrPzvZ7R1w');
    expect(base58btcEncode(Buffer.from(jwk.x, 'base64url'))).toBe(theirs.publicKeyBase58);
    expect(didKeyOfJwk(jwk)).toBe(did);
    expect(jwkOfDidKey(`${did}#z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK`)).toEqual(jwk);
  });

  test('the P-256 vector zDnaerDa… (compressed point, multicodec 0x1200) matches key-did-resolver, and back', async () => {
    const did = 'did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169';
    const jwk = jwkOfDidKey(did);
    expect(jwk).toEqual({ kty: 'EC', crv: 'P-256', x: 'fyNYMN0976ci7xqiSdag3buk-ZCwgXU4kz9XNkBlNUI', y: 'hW2ojTNfH7Jbi8--CJUo3OCbH3y5n91g-IMA9MLMbTU' });
    expect((await resolver.resolve(did)).didDocument!.verificationMethod![0]!.publicKeyJwk).toMatchObject(jwk);
    expect(didKeyOfJwk(jwk)).toBe(did);
  });

  test.each(['ES256', 'EdDSA'] as const)('fresh %s holder keys: our did:key resolves (key-did-resolver) to our key, with our DID URL as its method id', async (alg) => {
    for (let i = 0; i < 4; i++) {
      const key = generateHolderKey(alg);
      const vm = (await resolver.resolve(key.didKey)).didDocument!.verificationMethod![0]!;
      expect(vm.id).toBe(key.didKeyUrl);
      if (alg === 'EdDSA') expect(Buffer.from(base58btcDecode(vm.publicKeyBase58!)).toString('base64url')).toBe(key.publicJwk.x);
      else expect(fullLengthJwk(vm.publicKeyJwk!)).toMatchObject(key.publicJwk);
      expect(jwkOfDidKey(key.didKeyUrl)).toEqual(key.publicJwk);
      expect(key.didKey).toMatch(alg === 'ES256' ? /^did:key:zDn/ : /^did:key:z6Mk/);
    }
  });

  test('did:key refuses points off the curve, other fragments and other codecs', () => {
    const offCurve = `did:key:z${base58btcEncode(Buffer.concat([Buffer.from([0x80, 0x24, 0x02]), Buffer.alloc(32, 0xff)]))}`;
    expect(() => jwkOfDidKey(offCurve)).toThrow();
    expect(() => jwkOfDidKey('did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK#key-1')).toThrow(/one method/);
    expect(() => jwkOfDidKey(`did:key:z${base58btcEncode(Buffer.from([0xe7, 0x01, ...Buffer.alloc(33, 2)]))}`)).toThrow(/unsupported/);
  });

  test('did:jwk is the base64url JSON of the public JWK, its one method #0; private keys are refused', () => {
    const key = generateHolderKey('ES256');
    expect(key.didJwkUrl).toBe(`${key.didJwk}#0`);
    expect(JSON.parse(Buffer.from(key.didJwk.slice('did:jwk:'.length), 'base64url').toString())).toEqual(key.publicJwk);
    expect(jwkOfDidJwk(key.didJwkUrl)).toEqual(key.publicJwk);
    expect(() => jwkOfDidJwk(`${key.didJwk}#1`)).toThrow();
    const priv = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    expect(() => jwkOfDidJwk(`did:jwk:${Buffer.from(JSON.stringify(priv)).toString('base64url')}`)).toThrow(/public/);
    expect(didJwkOfJwk({ kty: 'OKP', crv: 'Ed25519', x: 'abc' })).toBe(`did:jwk:${Buffer.from('{"crv":"Ed25519","kty":"OKP","x":"abc"}').toString('base64url')}`);
  });
});

describe('credential offer (§4.1)', () => {
  // §4.1.2's native-app example, joined.
  const specExample =
    'openid-credential-offer://?credential_offer=%7B%22credential_issuer%22:%22https://credential-issuer.example.com%22,%22credential_configuration_ids%22:%5B%22org.iso.18013.5.1.mDL%22%5D,%22grants%22:%7B%22urn:ietf:params:oauth:grant-type:pre-authorized_code%22:%7B%22pre-authorized_code%22:%22oaKazRN8I0IbtZ0C7JuMn5%22,%22tx_code%22:%7B%22input_mode%22:%22text%22,%22description%22:%22Please%20enter%20the%20serial%20number%20of%20your%20physical%20drivers%20license%22%7D%7D%7D%7D';

  test('the spec example by value parses, and its tx_code object means a code is required', () => {
    const parsed = parseOfferUri(specExample);
    expect('offer' in parsed).toBe(true);
    const summary = summarizeOffer((parsed as any).offer);
    expect(summary).toEqual({
      credentialIssuer: 'https://credential-issuer.example.com',
      configurationIds: ['org.iso.18013.5.1.mDL'],
      preAuthorizedCode: 'oaKazRN8I0IbtZ0C7JuMn5',
      txCode: { input_mode: 'text', description: 'Please enter the serial number of your physical drivers license' },
      authorizationServer: null,
    });
  });

  test('by reference: the URI, from the custom scheme, an https offer endpoint, or a bare URL', () => {
    const ref = 'https://server.example.com/credential-offer/GkurKxf5T0Y-mnPFCHqWOMiZi4VS138cQO_V7PZHAdM';
    expect(parseOfferUri(`openid-credential-offer://?credential_offer_uri=${encodeURIComponent(ref)}`)).toEqual({ offerUri: ref });
    expect(parseOfferUri(`https://wallet.example.org/offer?credential_offer_uri=${encodeURIComponent(ref)}`)).toEqual({ offerUri: ref });
    expect(parseOfferUri(ref)).toEqual({ offerUri: ref });
  });

  test('both parameters, or neither in a non-URL, is refused', () => {
    expect(() => parseOfferUri('openid-credential-offer://?credential_offer=%7B%7D&credential_offer_uri=https%3A%2F%2Fa')).toThrow(/MUST NOT/);
    expect(() => parseOfferUri('openid-credential-offer://?foo=bar')).toThrow();
  });

  test('an empty tx_code object still requires a code; none means none; draft 11 user_pin_required and credentials read the same', () => {
    const base = { credential_issuer: 'https://i.example', credential_configuration_ids: ['a'] };
    expect(summarizeOffer({ ...base, grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': 'c', tx_code: {} } } }).txCode).toEqual({});
    expect(summarizeOffer({ ...base, grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': 'c' } } }).txCode).toBeNull();
    const d11 = summarizeOffer({ credential_issuer: 'https://i.example', credentials: ['x'], grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': 'c', user_pin_required: true } } });
    expect(d11).toMatchObject({ configurationIds: ['x'], txCode: {}, preAuthorizedCode: 'c' });
    expect(summarizeOffer({ credential_issuer: 'https://i.example', credentials: ['x'], grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': 'c', user_pin_required: false } } }).txCode).toBeNull();
  });

  test('offers without an issuer, or with empty or repeated configuration ids, are refused', () => {
    expect(() => summarizeOffer({ credential_configuration_ids: ['a'] } as never)).toThrow(/credential_issuer/);
    expect(() => summarizeOffer({ credential_issuer: 'https://i', credential_configuration_ids: [] })).toThrow();
    expect(() => summarizeOffer({ credential_issuer: 'https://i', credential_configuration_ids: ['a', 'a'] })).toThrow();
  });

  test('resolveOffer GETs a reference as application/json and refuses other media types', async () => {
    const offer = { credential_issuer: 'https://i.example', credential_configuration_ids: ['a'] };
    const f = fakeFetch({ 'GET https://i.example/offer/1': () => ({ body: offer }), 'GET https://i.example/offer/2': () => ({ body: offer, headers: { 'content-type': 'application/jwt' } }) });
    const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', fetch: f.impl });
    expect(await w.resolveOffer(`openid-credential-offer://?credential_offer_uri=${encodeURIComponent('https://i.example/offer/1')}`)).toEqual(offer);
    expect(f.calls[0]).toMatchObject({ method: 'GET' });
    expect(f.calls[0]!.headers.get('accept')).toBe('application/json');
    await expect(w.resolveOffer('https://i.example/offer/2')).rejects.toThrow(/application\/json/);
  });
});

describe('metadata locations (§12.2.2, RFC 8414 §3)', () => {
  test('the well-known suffix goes between host and path, as in the spec examples; the appended form comes second', () => {
    expect(wellKnownUrls('https://issuer.example.com/tenant', 'openid-credential-issuer')).toEqual([
      'https://issuer.example.com/.well-known/openid-credential-issuer/tenant',
      'https://issuer.example.com/tenant/.well-known/openid-credential-issuer',
    ]);
    expect(wellKnownUrls('https://tenant.issuer.example.com', 'openid-credential-issuer')[0]).toBe('https://tenant.issuer.example.com/.well-known/openid-credential-issuer');
    expect(wellKnownUrls('http://127.0.0.1:3000/oid4vci/7', 'oauth-authorization-server')[0]).toBe('http://127.0.0.1:3000/.well-known/oauth-authorization-server/oid4vci/7');
  });

  test('metadata falls back to the appended form, and is refused when it names another issuer', async () => {
    const id = 'https://i.example/t';
    const f = fakeFetch({
      'GET https://i.example/t/.well-known/openid-credential-issuer': () => ({ body: { credential_issuer: id, credential_endpoint: `${id}/credential` } }),
      'GET https://i.example/.well-known/oauth-authorization-server/t': () => ({ body: { issuer: 'https://evil.example/t' } }),
    });
    const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', fetch: f.impl });
    expect((await w.fetchIssuerMetadata(id)).credential_endpoint).toBe(`${id}/credential`);
    expect(w.issuerMetadataUrl).toBe('https://i.example/t/.well-known/openid-credential-issuer');
    expect(f.calls.map((c) => c.url)).toEqual(['https://i.example/.well-known/openid-credential-issuer/t', 'https://i.example/t/.well-known/openid-credential-issuer']);
    await expect(w.fetchAuthorizationServerMetadata(id)).rejects.toThrow(/RFC 8414/);
    await expect(w.fetchIssuerMetadata('https://i.example/t/')).rejects.toThrow(/§12.2.4/);
  });
});

describe('credential request shapes (§8.2 and the drafts)', () => {
  const sd = { format: 'dc+sd-jwt', vct: 'https://example.com/Identity' };
  const jwt = { format: 'jwt_vc_json', credential_definition: { type: ['VerifiableCredential', 'UniversityDegreeCredential'] } };
  const d11Jwt = { format: 'jwt_vc_json', id: 'Degree', types: ['VerifiableCredential', 'UniversityDegreeCredential'] };

  test('1.0: the configuration id and proofs.jwt, whatever the format', () => {
    for (const configuration of [sd, jwt]) {
      expect(buildCredentialRequest({ shape: 'v1', configurationId: 'X', configuration, proofs: ['p1', 'p2'] })).toEqual({ credential_configuration_id: 'X', proofs: { jwt: ['p1', 'p2'] } });
    }
  });

  test('draft 13: format with vct or credential_definition.type, one proof as proof, several as proofs', () => {
    expect(buildCredentialRequest({ shape: 'draft13', configurationId: 'X', configuration: sd, proofs: ['p'] })).toEqual({ format: 'vc+sd-jwt', vct: sd.vct, proof: { proof_type: 'jwt', jwt: 'p' } });
    expect(buildCredentialRequest({ shape: 'draft13', configurationId: 'X', configuration: jwt, proofs: ['p'] })).toEqual({
      format: 'jwt_vc_json',
      credential_definition: { type: jwt.credential_definition.type },
      proof: { proof_type: 'jwt', jwt: 'p' },
    });
    expect(buildCredentialRequest({ shape: 'draft13', configurationId: 'X', configuration: sd, proofs: ['p', 'q'] })).toEqual({ format: 'vc+sd-jwt', vct: sd.vct, proofs: { jwt: ['p', 'q'] } });
  });

  test('draft 11: format with vct, or a top-level types array; no batches', () => {
    expect(buildCredentialRequest({ shape: 'draft11', configurationId: 'X', configuration: { ...sd, format: 'vc+sd-jwt' }, proofs: ['p'] })).toEqual({ format: 'vc+sd-jwt', vct: sd.vct, proof: { proof_type: 'jwt', jwt: 'p' } });
    for (const configuration of [jwt, d11Jwt]) {
      expect(buildCredentialRequest({ shape: 'draft11', configurationId: 'X', configuration, proofs: ['p'] })).toEqual({ format: 'jwt_vc_json', types: ['VerifiableCredential', 'UniversityDegreeCredential'], proof: { proof_type: 'jwt', jwt: 'p' } });
    }
    expect(() => buildCredentialRequest({ shape: 'draft11', configurationId: 'X', configuration: jwt, proofs: ['p', 'q'] })).toThrow();
  });

  test('responses: 1.0 objects, draft 13 bare strings, draft 11 a single credential', () => {
    expect(credentialsOfResponse({ credentials: [{ credential: 'a' }, { credential: 'b' }], notification_id: 'n' })).toEqual(['a', 'b']);
    expect(credentialsOfResponse({ credentials: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(credentialsOfResponse({ format: 'jwt_vc_json', credential: 'a', c_nonce: 'x' })).toEqual(['a']);
    expect(credentialsOfResponse({ transaction_id: 't', interval: 5 })).toEqual([]);
  });
});

describe('key proofs (Appendix F.1) and DPoP (RFC 9449)', () => {
  test.each(['ES256', 'EdDSA'] as const)('a %s jwk-bound proof: typ, alg, the public jwk only; aud, iat, nonce and no iss; it verifies with that jwk', async (alg) => {
    const w = new SpecWallet({ alg, binding: 'jwk', shape: 'v1' });
    const key = w.newHolderKey();
    const before = Math.floor(Date.now() / 1000);
    const proof = w.makeProof({ aud: 'https://i.example/t', nonce: 'n-1', key });
    const { header, payload } = decodeJwtParts(proof);
    expect(header).toEqual({ typ: 'openid4vci-proof+jwt', alg, jwk: key.publicJwk });
    expect(header.jwk.d).toBeUndefined();
    expect(payload).toEqual({ aud: 'https://i.example/t', iat: expect.any(Number), nonce: 'n-1' });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    const verified = await compactVerify(proof, EmbeddedJWK);
    expect(verified.protectedHeader.alg).toBe(alg);
  });

  test('did:key and did:jwk bindings put the DID URL in kid and no jwk; the DID resolves to the signing key', async () => {
    for (const binding of ['did:key', 'did:jwk'] as const) {
      const w = new SpecWallet({ alg: 'EdDSA', binding, shape: 'v1' });
      const key = w.newHolderKey();
      const proof = w.makeProof({ aud: 'a', nonce: 'n', key });
      const header = decodeProtectedHeader(proof);
      expect(header.jwk).toBeUndefined();
      expect(header.kid).toBe(binding === 'did:key' ? key.didKeyUrl : key.didJwkUrl);
      const resolved = await resolveIssuerKey('http://unused.invalid', header.kid!);
      await compactVerify(proof, await importJWK(resolved.jwk, 'EdDSA'));
    }
  });

  test('overrides make the bad proofs tests need: another typ, aud, iat, an iss, no nonce, a signature by another key', async () => {
    const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const key = w.newHolderKey();
    const other = generateHolderKey('ES256');
    const bad = w.makeProof({ aud: 'wrong', typ: 'JWT', iat: 1000, iss: 'client', key, nonce: null, signingKey: other.privateKey });
    const { header, payload } = decodeJwtParts(bad);
    expect(header.typ).toBe('JWT');
    expect(payload).toEqual({ aud: 'wrong', iat: 1000, iss: 'client' });
    await expect(compactVerify(bad, EmbeddedJWK)).rejects.toThrow();
  });

  test('ath is base64url(SHA-256(token)): the RFC 9449 §7.1 example', () => {
    expect(accessTokenHash('Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU')).toBe('fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo');
  });

  test('a DPoP proof: typ dpop+jwt, the public jwk, jti/htm/htu without query/iat, ath with a token, nonce when given', async () => {
    const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', dpop: true });
    const proof = w.makeDpopProof({ htm: 'POST', htu: 'https://i.example/credential?x=1#f', accessToken: 'tok', nonce: 'srv' });
    const { header, payload } = decodeJwtParts(proof);
    expect(header).toEqual({ typ: 'dpop+jwt', alg: 'ES256', jwk: w.dpopKey.publicJwk });
    expect(payload).toEqual({ jti: expect.any(String), htm: 'POST', htu: 'https://i.example/credential', iat: expect.any(Number), ath: accessTokenHash('tok'), nonce: 'srv' });
    await compactVerify(proof, EmbeddedJWK);
    expect(decodeJwtParts(w.makeDpopProof({ htm: 'POST', htu: 'https://i.example/token' })).payload.ath).toBeUndefined();
  });

  test('token requests are form-encoded with tx_code (user_pin for draft 11) and retry once on use_dpop_nonce', async () => {
    let n = 0;
    const f = fakeFetch({
      'POST https://as.example/token': (req) => {
        n++;
        const dpop = decodeJwtParts(req.headers.get('dpop')!).payload;
        if (!dpop.nonce) return { status: 400, body: { error: 'use_dpop_nonce' }, headers: { 'dpop-nonce': 'N1' } };
        return { body: { access_token: 'at', token_type: 'DPoP', nonce: dpop.nonce } };
      },
    });
    const w = new SpecWallet({ alg: 'EdDSA', binding: 'jwk', shape: 'v1', dpop: true, fetch: f.impl });
    const res = await w.requestToken({ tokenEndpoint: 'https://as.example/token', preAuthorizedCode: 'c o/de', txCode: '1234' });
    expect(res.status).toBe(200);
    expect(n).toBe(2);
    expect(res.body.nonce).toBe('N1');
    const sent = f.calls[1]!;
    expect(sent.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent.body))).toEqual({ grant_type: PRE_AUTHORIZED_CODE_GRANT, 'pre-authorized_code': 'c o/de', tx_code: '1234' });
    expect(decodeJwtParts(sent.headers.get('dpop')!).payload).toMatchObject({ htm: 'POST', htu: 'https://as.example/token' });

    const g = fakeFetch({ 'POST https://as.example/token': () => ({ status: 400, body: { error: 'invalid_grant' } }) });
    const w11 = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'draft11', fetch: g.impl });
    const refused = await w11.requestToken({ tokenEndpoint: 'https://as.example/token', preAuthorizedCode: 'c', txCode: '1' });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(new URLSearchParams(g.calls[0]!.body).get('user_pin')).toBe('1');
    expect(g.calls[0]!.headers.get('dpop')).toBeNull();
    await expect(w11.token({ tokenEndpoint: 'https://as.example/token', preAuthorizedCode: 'c' })).rejects.toThrow(/invalid_grant/);
  });
});

describe('SD-JWT digests (RFC 9901), recomputed by the wallet', () => {
  // Disclosures from RFC 9901's examples (hashed as sent: the JSON inside has spaces).
  const familyName = 'WyI2cU1RdlJMNWhhaiIsICJmYW1pbHlfbmFtZSIsICJNw7ZiaXVzIl0'; // ["6qMQvRL5haj", "family_name", "Möbius"]
  const fr = 'WyJsa2x4RjVqTVlsR1RQVW92TU5JdkNBIiwgIkZSIl0'; // ["lklxF5jMYlGTPUovMNIvCA", "FR"]
  const street = disclosure(['salt-street', 'street', 'Main St 1']);
  const given = disclosure(['salt-given', 'given_name', 'Erika']);

  test('the RFC vectors: digest = base64url(SHA-256(ASCII disclosure)), for a claim and an array element', () => {
    const payload = { _sd: ['uutlBuYeMDyjLLTpf6Jxi7yNkEF35jdyWMn9U7b_RYY'], nationalities: [{ '...': 'w0I8EKcdCtUPkGCNUrfwVp2xEgNjtoIDlOxc9-PlOhs' }, 'DE'], _sd_alg: 'sha-256' };
    const decoded = decodeSdJwt(`${signedJwt(payload)}~${familyName}~${fr}~`);
    expect(decoded.claims).toEqual({ family_name: 'Möbius', nationalities: ['FR', 'DE'] });
    expect(decoded.disclosablePaths).toEqual(['/family_name', '/nationalities/0']);
    expect(decoded.disclosures.map((d) => d.digest)).toEqual(['uutlBuYeMDyjLLTpf6Jxi7yNkEF35jdyWMn9U7b_RYY', 'w0I8EKcdCtUPkGCNUrfwVp2xEgNjtoIDlOxc9-PlOhs']);
    expect(decoded.kbJwt).toBeNull();
  });

  test('nested: a disclosable claim inside a disclosable object and inside a plain one; decoys are ignored', () => {
    const address = disclosure(['salt-address', 'address', { _sd: [digest(street), digest('a decoy')], locality: 'Berlin' }]);
    const payload = { iss: 'did:example:1', vct: 'V', _sd_alg: 'sha-256', _sd: [digest(given), digest(address)], plain: { keep: 1 } };
    const decoded = decodeSdJwt(`${signedJwt(payload)}~${given}~${address}~${street}~`);
    expect(decoded.claims).toEqual({ iss: 'did:example:1', vct: 'V', given_name: 'Erika', address: { street: 'Main St 1', locality: 'Berlin' }, plain: { keep: 1 } });
    expect(decoded.disclosablePaths).toEqual(['/address', '/address/street', '/given_name']);
    const inPlain = { vct: 'V', address: { _sd: [digest(street)], locality: 'Berlin' }, _sd: [digest(given)] };
    expect(decodeSdJwt(`${signedJwt(inPlain)}~${given}~${street}~`).disclosablePaths).toEqual(['/address/street', '/given_name']);
  });

  test('unreferenced disclosures, repeated digests and a claim both plain and disclosed are refused', () => {
    expect(() => decodeSdJwt(`${signedJwt({ _sd: [] })}~${given}~`)).toThrow(/not referenced/);
    expect(() => decodeSdJwt(`${signedJwt({ _sd: [digest(given)], a: { _sd: [digest(given)] } })}~${given}~`)).toThrow(/twice/);
    expect(() => decodeSdJwt(`${signedJwt({ _sd: [digest(given)], given_name: 'x' })}~${given}~`)).toThrow(/both/);
  });

  test('@sd-jwt/sd-jwt-vc and the wallet agree on a signed SD-JWT VC; the issuer key comes from the kid (did:key)', async () => {
    const issuer = generateHolderKey('EdDSA');
    const holder = generateHolderKey('ES256');
    const payload = { iss: issuer.didKey, vct: 'V', iat: Math.floor(Date.now() / 1000), cnf: { jwk: holder.publicJwk }, _sd_alg: 'sha-256', _sd: [digest(given)], address: { _sd: [digest(street)], locality: 'Berlin' } };
    const header = { typ: 'dc+sd-jwt', alg: 'EdDSA', kid: issuer.didKeyUrl };
    const resolve = issuerKeyResolver('http://unused.invalid');
    const v = await verifySdJwtVc(`${signCompactJws(header, payload, issuer.privateKey)}~${given}~${street}~`, { resolveIssuerKey: resolve });
    expect(v.disclosedPaths).toEqual(['/address/street', '/given_name']);
    expect(v.cnfJwk).toEqual(holder.publicJwk);
    expect(v.payload).toMatchObject({ given_name: 'Erika', address: { street: 'Main St 1', locality: 'Berlin' } });
    const forged = `${signCompactJws(header, payload, generateHolderKey('EdDSA').privateKey)}~${given}~${street}~`;
    await expect(verifySdJwtVc(forged, { resolveIssuerKey: resolve })).rejects.toThrow();
  });
});

describe('receive(): the whole pre-authorized flow against a scripted issuer', () => {
  const ISSUER = 'https://issuer.example/oid4vci/7';
  function scriptedIssuer(opts: { dpop: boolean; expectTxCode?: string }) {
    const seen: { token?: URLSearchParams; credential?: any; credentialHeaders?: Headers; nonceHeaders?: Headers; notification?: any; notificationHeaders?: Headers } = {};
    const f = fakeFetch({
      'GET https://issuer.example/offers/abc': () => ({ body: { credential_issuer: ISSUER, credential_configuration_ids: ['Id'], grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': 'code', ...(opts.expectTxCode ? { tx_code: { length: 4 } } : {}) } } } }),
      'GET https://issuer.example/.well-known/openid-credential-issuer/oid4vci/7': () => ({
        body: {
          credential_issuer: ISSUER,
          credential_endpoint: `${ISSUER}/credential`,
          nonce_endpoint: `${ISSUER}/nonce`,
          notification_endpoint: `${ISSUER}/notification`,
          batch_credential_issuance: { batch_size: 5 },
          credential_configurations_supported: { Id: { format: 'dc+sd-jwt', vct: 'V', cryptographic_binding_methods_supported: ['jwk', 'did:key'], proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256', 'EdDSA'] } } } },
        },
      }),
      'GET https://issuer.example/.well-known/oauth-authorization-server/oid4vci/7': () => ({ body: { issuer: ISSUER, token_endpoint: `${ISSUER}/token` } }),
      [`POST ${ISSUER}/token`]: (req) => {
        seen.token = new URLSearchParams(req.body);
        return { body: { access_token: 'AT', token_type: opts.dpop ? 'DPoP' : 'Bearer' }, headers: { 'cache-control': 'no-store' } };
      },
      [`POST ${ISSUER}/nonce`]: (req) => {
        seen.nonceHeaders = req.headers;
        return { body: { c_nonce: 'CN' }, headers: { 'cache-control': 'no-store' } };
      },
      [`POST ${ISSUER}/notification`]: (req) => {
        seen.notification = JSON.parse(req.body);
        seen.notificationHeaders = req.headers;
        return { status: 204 };
      },
      [`POST ${ISSUER}/credential`]: (req) => {
        seen.credential = JSON.parse(req.body);
        seen.credentialHeaders = req.headers;
        return { body: { credentials: seen.credential.proofs.jwt.map((_: string, i: number) => ({ credential: `cred-${i}~` })), notification_id: 'NID' } };
      },
    });
    return { f, seen };
  }

  test.each([
    [false, 'jwk'],
    [true, 'did:key'],
  ] as const)('dpop %s, %s binding: offer by reference → metadata → token → nonce → a batch of 2 → notification', async (dpop, binding) => {
    const { f, seen } = scriptedIssuer({ dpop, expectTxCode: '1234' });
    const w = new SpecWallet({ alg: 'ES256', binding, shape: 'v1', dpop, fetch: f.impl });
    const got = await w.receive('openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffers%2Fabc', { txCode: '1234', batch: 2 });
    expect(got).toMatchObject({ credentials: ['cred-0~', 'cred-1~'], format: 'dc+sd-jwt', configurationId: 'Id', notificationId: 'NID', accessToken: 'AT', cNonce: 'CN' });
    expect(seen.token!.get('tx_code')).toBe('1234');
    expect(seen.credential.credential_configuration_id).toBe('Id');
    const proofs: string[] = seen.credential.proofs.jwt;
    expect(new Set(proofs.map((p) => JSON.stringify(decodeJwtParts(p).header))).size).toBe(2);
    for (const [i, p] of proofs.entries()) {
      const key = got.holderKeys[i]!;
      const pub = binding === 'jwk' ? decodeJwtParts(p).header.jwk : jwkOfDidKey(decodeJwtParts(p).header.kid);
      expect(pub).toEqual(key.publicJwk);
      const { payload } = await jwtVerify(p, await importJWK(pub as JWK, 'ES256'), { audience: ISSUER, typ: 'openid4vci-proof+jwt' });
      expect(payload.nonce).toBe('CN');
    }
    const auth = seen.credentialHeaders!.get('authorization');
    expect(auth).toBe(dpop ? 'DPoP AT' : 'Bearer AT');
    if (dpop) expect(decodeJwtParts(seen.credentialHeaders!.get('dpop')!).payload).toMatchObject({ htm: 'POST', htu: `${ISSUER}/credential`, ath: accessTokenHash('AT') });
    else expect(seen.credentialHeaders!.get('dpop')).toBeNull();
    // §7.1: the nonce endpoint is not a protected resource.
    expect(seen.nonceHeaders!.get('authorization')).toBeNull();

    // §11.1: JSON with notification_id and event, under the same access token.
    const notified = await w.notify({ accessToken: got.accessToken, notificationId: got.notificationId!, event: 'credential_accepted' });
    expect(notified.status).toBe(204);
    expect(seen.notification).toEqual({ notification_id: 'NID', event: 'credential_accepted' });
    expect(seen.notificationHeaders!.get('content-type')).toBe('application/json');
    expect(seen.notificationHeaders!.get('authorization')).toBe(dpop ? 'DPoP AT' : 'Bearer AT');
    if (dpop) expect(decodeJwtParts(seen.notificationHeaders!.get('dpop')!).payload).toMatchObject({ htu: `${ISSUER}/notification`, ath: accessTokenHash('AT') });
  });

  test('an offer that wants a tx_code is not redeemed without one; a batch larger than batch_size is not sent', async () => {
    const { f } = scriptedIssuer({ dpop: false, expectTxCode: '1' });
    const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', fetch: f.impl });
    await expect(w.receive('https://issuer.example/offers/abc')).rejects.toThrow(/tx_code/);
    await expect(w.receive('https://issuer.example/offers/abc', { txCode: '1', batch: 6 })).rejects.toThrow(/proofs/);
  });
});

// Helpers for the hand-built SD-JWTs.
const testKey = generateHolderKey('ES256');
function signedJwt(payload: Record<string, unknown>): string {
  return signCompactJws({ typ: 'dc+sd-jwt', alg: 'ES256' }, payload, testKey.privateKey);
}
function disclosure(arr: unknown[]): string {
  return Buffer.from(JSON.stringify(arr)).toString('base64url');
}
function digest(encoded: string): string {
  return createHash('sha256').update(encoded, 'ascii').digest('base64url');
}
