import { generateKeyPairSync, sign } from 'node:crypto';
import { decodeSdJwt, getClaims } from '@sd-jwt/decode';
import { createHash } from 'node:crypto';
import { disclosureFrame, issueCredential, issueJwtVcJson, issueSdJwtVc } from '../../lib/oid4vci/protocol/formats';
import { es256Sign, IssuerSecretSource, mintNonce, nonceExpiry } from '../../lib/oid4vci/protocol/issuer-secrets';
import { Oauth2AuthorizationServer } from '@openid4vc/oauth2';
import { Openid4vciIssuer } from '@openid4vc/openid4vci';
import { oid4vcCallbacks } from '../../lib/oid4vc/callbacks';
import { authorizationServerMetadata, claimsDescription, credentialIssuerMetadata } from '../../lib/oid4vci/protocol/metadata';
import type { IssuableConfiguration } from '../../lib/oid4vci/records';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';

const hasher = (data: string | ArrayBuffer) => new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest());

function edSigner() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signer: { alg: 'EdDSA' as const, kid: 'did:key:z6Mkissuer#z6Mkissuer', sign: async (d: Uint8Array) => new Uint8Array(sign(null, d, privateKey)) },
    jwk: publicKey.export({ format: 'jwk' }),
  };
}

const sdConfig: IssuableConfiguration = {
  id: 'Identity',
  supportedCredId: 's1',
  format: 'vc+sd-jwt',
  vct: 'https://example.com/identity',
  claims: { given_name: { mandatory: true, value_type: 'string' }, address: { street: { value_type: 'string' }, city: { value_type: 'string' } }, grades: { '1': { value_type: 'number' }, '2': { value_type: 'number' } } },
  sdList: ['/given_name', '/address/street', '/grades/1', '/nickname'],
  order: null,
  display: null,
  bindingMethods: null,
  signingAlgs: null,
};
const holder = { jwk: { kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43) } };

describe('the disclosure frame built from sd_list pointers', () => {
  it('marks top-level, nested and numeric-keyed claims, escaping ~1 and ~0 as RFC 6901 says', () => {
    expect(disclosureFrame(['/given_name', '/address/street', '/grades/1', '/a~1b/c~0d'], {})).toEqual({
      _sd: ['given_name'],
      address: { _sd: ['street'] },
      grades: { _sd: ['1'] },
      'a/b': { _sd: ['c~d'] },
    });
  });
});

describe('an SD-JWT VC issued for a configuration', () => {
  it('discloses exactly the sd_list claims present in the subject, nested ones too, and binds the holder key', async () => {
    const { signer } = edSigner();
    const now = new Date('2026-11-23T12:00:00Z');
    const subject = { given_name: 'Ada', address: { street: 'Main 1', city: 'Paris' }, grades: { '1': 5, '2': 6 } };
    const compact = await issueSdJwtVc({ config: sdConfig, subject, issuerDid: 'did:key:z6Mkissuer', signer, holder, now, validitySeconds: 3600, status: null });
    const decoded = await decodeSdJwt(compact, hasher);
    const disclosed = decoded.disclosures.map((d) => d.key).sort();
    expect(disclosed).toEqual(['1', 'given_name', 'street']);
    const payload = decoded.jwt.payload as Record<string, any>;
    expect(payload).toMatchObject({ iss: 'did:key:z6Mkissuer', vct: sdConfig.vct, iat: 1795435200, exp: 1795435200 + 3600, cnf: { jwk: holder.jwk } });
    expect(payload.address.city).toBe('Paris');
    expect(payload.given_name).toBeUndefined();
    expect(decoded.jwt.header).toMatchObject({ typ: 'vc+sd-jwt', alg: 'EdDSA', kid: signer.kid });
    expect(await getClaims(payload, decoded.disclosures, hasher)).toMatchObject(subject);
  });

  it('uses fresh salts for every credential of the same subject', async () => {
    const { signer } = edSigner();
    const input = { config: sdConfig, subject: { given_name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: null };
    const [a, b] = [await issueSdJwtVc(input), await issueSdJwtVc(input)];
    expect(a.split('~')[1]).not.toEqual(b.split('~')[1]);
  });

  it('carries the status entry the status seam supplies', async () => {
    const { signer } = edSigner();
    const status = { sdJwt: { status_list: { idx: 7, uri: 'https://example.com/sl/1' } } };
    const compact = await issueSdJwtVc({ config: sdConfig, subject: { given_name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status });
    expect(decodeJwt(compact.split('~')[0]!).status).toEqual(status.sdJwt);
  });
});

describe('a jwt_vc_json credential', () => {
  it('is a VC-JWT that jose verifies, with the holder DID as subject and a urn:uuid id', async () => {
    const { signer, jwk } = edSigner();
    const config: IssuableConfiguration = { ...sdConfig, format: 'jwt_vc_json', types: ['VerifiableCredential', 'Degree'], context: ['https://www.w3.org/2018/credentials/v1'], sdList: [] };
    const jwt = await issueJwtVcJson({ config, subject: { name: 'Ada' }, issuerDid: 'did:key:z6Mkissuer', signer, holder: { ...holder, did: 'did:key:z6Mkholder' }, now: new Date(), validitySeconds: 60, status: null });
    const { payload } = await jwtVerify(jwt, await importJWK(jwk as any, 'EdDSA'));
    expect(payload).toMatchObject({ iss: 'did:key:z6Mkissuer', sub: 'did:key:z6Mkholder', vc: { type: ['VerifiableCredential', 'Degree'], credentialSubject: { id: 'did:key:z6Mkholder', name: 'Ada' } } });
    expect(payload.jti).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(decodeProtectedHeader(jwt)).toMatchObject({ typ: 'JWT', kid: signer.kid });
  });
});

describe('a jwt_vc_json credential under the VC 2.0 context', () => {
  it('carries validFrom and validUntil instead of the 1.1 dates, and the holder DID wins over a subject id', async () => {
    const { signer } = edSigner();
    const config: IssuableConfiguration = { ...sdConfig, format: 'jwt_vc_json', types: ['VerifiableCredential'], context: ['https://www.w3.org/ns/credentials/v2'], sdList: [] };
    const jwt = await issueJwtVcJson({ config, subject: { id: 'did:example:someone-else', name: 'Ada' }, issuerDid: 'did:key:z', signer, holder: { ...holder, did: 'did:key:zholder' }, now: new Date('2026-11-23T12:00:00Z'), validitySeconds: 60, status: null });
    const { vc, sub } = decodeJwt(jwt) as { vc: Record<string, any>; sub: string };
    expect(vc).toMatchObject({ validFrom: '2026-11-23T12:00:00.000Z', validUntil: '2026-11-23T12:01:00.000Z', credentialSubject: { id: 'did:key:zholder' } });
    expect(vc.issuanceDate).toBeUndefined();
    expect(sub).toBe(vc.credentialSubject.id);
  });
});

describe('a jwt_vc_json credential for a jwk-bound holder', () => {
  it('has sub equal to the subject id the offer carries, and the key in cnf', async () => {
    const { signer } = edSigner();
    const config: IssuableConfiguration = { ...sdConfig, format: 'jwt_vc_json', types: ['VerifiableCredential'], context: ['https://www.w3.org/2018/credentials/v1'], sdList: [] };
    const jwt = await issueJwtVcJson({ config, subject: { id: 'urn:example:member:7', name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: null });
    const payload = decodeJwt(jwt) as { sub?: string; cnf?: unknown; vc: { credentialSubject: { id?: string } } };
    expect(payload.sub).toBe('urn:example:member:7');
    expect(payload.vc.credentialSubject.id).toBe(payload.sub);
    expect(payload.cnf).toEqual({ jwk: holder.jwk });
    const without = decodeJwt(await issueJwtVcJson({ config, subject: { name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: null }));
    expect(without.sub).toBeUndefined();
  });
});

describe('c_nonces', () => {
  it('verify only with the key that minted them, and carry their expiry', () => {
    const key = Buffer.alloc(32, 1);
    const nonce = mintNonce(key, 1_800_000_000);
    expect(nonceExpiry(key, nonce)).toBe(1_800_000_000);
    expect(nonceExpiry(Buffer.alloc(32, 2), nonce)).toBeNull();
    const [r, e, m] = nonce.split('.');
    expect(nonceExpiry(key, `${r}.${(1_900_000_000).toString(36)}.${m}`)).toBeNull();
    expect(nonceExpiry(key, `${r}x.${e}.${m}`)).toBeNull();
    expect(Buffer.from(r!, 'base64url').length).toBeGreaterThanOrEqual(16);
  });
});

describe("a wallet's issuer secrets", () => {
  it('are stable per wallet, different between wallets, and sign verifiable ES256', async () => {
    const source = new IssuerSecretSource({ derive: async (p) => createHash('sha256').update(p).digest() });
    const [a1, a2, b] = [await source.of('1'), await new IssuerSecretSource({ derive: async (p) => createHash('sha256').update(p).digest() }).of('1'), await source.of('2')];
    expect(a1.tokenKey.publicJwk).toEqual(a2.tokenKey.publicJwk);
    expect(a1.tokenKey.publicJwk.x).not.toEqual(b.tokenKey.publicJwk.x);
    expect(a1.nonceKey.equals(b.nonceKey)).toBe(false);
    // An ES256 JWS made with the derived key verifies with the public JWK (what the resource server checks).
    const input = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}`;
    const jws = `${input}.${es256Sign(a1.tokenKey.privateKey, Buffer.from(input)).toString('base64url')}`;
    await expect(compactVerify(jws, await importJWK({ ...a1.tokenKey.publicJwk, alg: 'ES256' }, 'ES256'))).resolves.toBeDefined();
    await expect(compactVerify(jws, await importJWK({ ...b.tokenKey.publicJwk, alg: 'ES256' }, 'ES256'))).rejects.toThrow();
  });
});

describe('the metadata documents, as the OpenID libraries read them', () => {
  it('pass the libraries\' own schemas (the service does not parse them again per request)', () => {
    const issuer = 'https://issuer.example.com/oid4vci/kQ3vX0c9Lr2mT8wYb5nE1a';
    const callbacks = oid4vcCallbacks();
    expect(() => new Oauth2AuthorizationServer({ callbacks }).createAuthorizationServerMetadata(authorizationServerMetadata(issuer) as never)).not.toThrow();
    const lib = new Openid4vciIssuer({ callbacks });
    const doc = lib.createCredentialIssuerMetadata(credentialIssuerMetadata(issuer, 'Acme', [sdConfig]) as never);
    expect(Object.keys(lib.getKnownCredentialConfigurationsSupported(doc))).toEqual(['Identity']);
  });
});

describe('the claims description of the issuer metadata', () => {
  it('lists every claim with its path, groups and numeric keys included', () => {
    expect(claimsDescription(sdConfig.claims)).toEqual([
      { path: ['given_name'], mandatory: true },
      { path: ['address'] },
      { path: ['address', 'street'] },
      { path: ['address', 'city'] },
      { path: ['grades'] },
      { path: ['grades', '1'] },
      { path: ['grades', '2'] },
    ]);
  });
});

describe('issuance details a Stryker run found unchecked', () => {
  const jwtConfig = (over: Partial<IssuableConfiguration> = {}): IssuableConfiguration => ({ ...sdConfig, format: 'jwt_vc_json', sdList: [], ...over });

  it('lists a pointer named twice once, and walks past a null claim without reading it', () => {
    expect(disclosureFrame(['/given_name', '/given_name'], {})).toEqual({ _sd: ['given_name'] });
    expect(disclosureFrame(['/a/b'], { a: null })).toEqual({ a: { _sd: ['b'] } });
  });

  it('makes disclosable only the sd_list claims the subject has: absent, null and under a non-object are left out', async () => {
    const { signer } = edSigner();
    const config = { ...sdConfig, sdList: ['/given_name', '/nickname', '/address/street', '/title/x', '/grades/1'] };
    const subject = { given_name: 'Ada', address: null, title: 'Dr', grades: { '2': 6 } };
    const decoded = await decodeSdJwt(await issueSdJwtVc({ config, subject, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: null }), hasher);
    expect(decoded.disclosures.map((d) => d.key)).toEqual(['given_name']);
    expect(await getClaims(decoded.jwt.payload as Record<string, unknown>, decoded.disclosures, hasher)).toMatchObject(subject);
  });

  it('defaults a jwt_vc_json credential to the VCDM 1.1 context and type, with the 1.1 dates equal to nbf and exp', async () => {
    const { signer } = edSigner();
    const now = new Date('2026-11-23T12:00:00Z');
    for (const over of [{}, { context: [], types: [] }]) {
      const payload = decodeJwt(await issueJwtVcJson({ config: jwtConfig(over), subject: { name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now, validitySeconds: 60, status: null })) as Record<string, any>;
      expect(payload.vc).toMatchObject({ '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiableCredential'], issuanceDate: '2026-11-23T12:00:00.000Z', expirationDate: '2026-11-23T12:01:00.000Z' });
      expect(payload.vc.validFrom).toBeUndefined();
      expect([payload.nbf, payload.exp]).toEqual([1795435200, 1795435260]);
    }
  });

  it('carries the W3C status entry, and no sub for a subject id that is not a string', async () => {
    const { signer } = edSigner();
    const w3c = { id: 'https://example.com/sl/1#7', type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '7', statusListCredential: 'https://example.com/sl/1' };
    const payload = decodeJwt(await issueJwtVcJson({ config: jwtConfig(), subject: { id: 7, name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: { w3c } as never })) as Record<string, any>;
    expect(payload.vc.credentialStatus).toEqual(w3c);
    expect('sub' in payload).toBe(false);
  });

  it('issues the format the configuration names', async () => {
    const { signer } = edSigner();
    const input = { subject: { given_name: 'Ada', name: 'Ada' }, issuerDid: 'did:key:z', signer, holder, now: new Date(), validitySeconds: 60, status: null };
    const jwt = await issueCredential({ ...input, config: jwtConfig() });
    expect(jwt.includes('~')).toBe(false);
    expect(decodeJwt(jwt).vc).toBeDefined();
    const sd = await issueCredential({ ...input, config: sdConfig });
    expect(decodeProtectedHeader(sd.split('~')[0]!).typ).toBe('vc+sd-jwt');
  });
});
