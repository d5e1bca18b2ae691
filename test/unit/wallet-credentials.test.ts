/**
 * What the local wallet refuses to keep (tools/wallet/credentials.ts verifyReceived): credentials the
 * service's issuer never sends, so they are made here with @sd-jwt/core and jose from did:jwk issuer
 * keys (resolved without a network). The accepted case is the control: the same credential, right.
 */
import { SDJwtInstance } from '@sd-jwt/core';
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { verifyReceived } from '../../tools/wallet/credentials';
import { offerUri } from '../../tools/wallet/redeem';

async function didJwkKey() {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const pub = await exportJWK(publicKey);
  const did = `did:jwk:${Buffer.from(JSON.stringify({ crv: pub.crv, kty: pub.kty, x: pub.x, y: pub.y })).toString('base64url')}`;
  return { did, publicJwk: pub, privateJwk: await exportJWK(privateKey), privateKey };
}

async function setup() {
  const issuer = await didJwkKey();
  const holder = await didJwkKey();
  const other = await didJwkKey();
  const now = Math.floor(Date.now() / 1000);
  const sdJwt = async (opts: { signer?: typeof issuer; iss?: string; cnf?: JWK; exp?: number; typ?: string } = {}) => {
    const signer = opts.signer ?? issuer;
    const instance = new SDJwtInstance({ signer: await ES256.getSigner(signer.privateJwk), signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
    return instance.issue(
      { iss: opts.iss ?? issuer.did, vct: 'urn:test', iat: now, exp: opts.exp ?? now + 3600, cnf: { jwk: opts.cnf ?? holder.publicJwk }, given_name: 'Erika' },
      { _sd: ['given_name'] } as never,
      { header: { typ: opts.typ ?? 'dc+sd-jwt', kid: `${signer.did}#0` } },
    );
  };
  return { issuer, holder, other, now, sdJwt };
}

describe('the wallet keeps only credentials it can check', () => {
  test('an SD-JWT VC signed by its issuer’s DID key and bound to the proved key is accepted (its issuer returned)', async () => {
    const { issuer, holder, sdJwt } = await setup();
    await expect(verifyReceived('dc+sd-jwt', await sdJwt(), { key: holder.publicJwk, didUrl: null })).resolves.toBe(issuer.did);
  });

  test('bound to another key than the one the wallet proved → refused', async () => {
    const { other, holder, sdJwt } = await setup();
    await expect(verifyReceived('dc+sd-jwt', await sdJwt({ cnf: other.publicJwk }), { key: holder.publicJwk, didUrl: null })).rejects.toMatchObject({
      code: 'invalid_credential',
      message: expect.stringMatching(/not bound to the key the wallet proved/),
    });
  });

  test('signed by a key of another DID than its iss → refused', async () => {
    const { other, holder, issuer, sdJwt } = await setup();
    await expect(verifyReceived('dc+sd-jwt', await sdJwt({ signer: other, iss: issuer.did }), { key: holder.publicJwk, didUrl: null })).rejects.toMatchObject({
      code: 'invalid_credential',
      message: expect.stringMatching(/not by a key of its issuer/),
    });
  });

  test('a signature that does not verify (payload altered) → refused', async () => {
    const { holder, sdJwt } = await setup();
    const [jwt, ...rest] = (await sdJwt()).split('~');
    const [h, p, sig] = jwt!.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const tampered = [h, Buffer.from(JSON.stringify({ ...payload, vct: 'urn:other' })).toString('base64url'), sig].join('.');
    await expect(verifyReceived('dc+sd-jwt', [tampered, ...rest].join('~'), { key: holder.publicJwk, didUrl: null })).rejects.toMatchObject({
      message: expect.stringMatching(/signature does not verify/),
    });
  });

  test('expired, or not an SD-JWT VC typ → refused', async () => {
    const { holder, now, sdJwt } = await setup();
    await expect(verifyReceived('dc+sd-jwt', await sdJwt({ exp: now - 10 }), { key: holder.publicJwk, didUrl: null })).rejects.toMatchObject({ code: 'invalid_credential' });
    await expect(verifyReceived('dc+sd-jwt', await sdJwt({ typ: 'JWT' }), { key: holder.publicJwk, didUrl: null })).rejects.toMatchObject({ message: expect.stringMatching(/typ is JWT/) });
  });

  test('a JWT VC: its sub must be the holder DID the wallet proved with', async () => {
    const { issuer, holder, other } = await setup();
    const vc = (sub: string) =>
      new SignJWT({ sub, vc: { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiableCredential'], credentialSubject: { id: sub } } })
        .setProtectedHeader({ alg: 'ES256', kid: `${issuer.did}#0` })
        .setIssuer(issuer.did)
        .setIssuedAt()
        .sign(issuer.privateKey);
    await expect(verifyReceived('jwt_vc_json', await vc(holder.did), { key: holder.publicJwk, didUrl: `${holder.did}#0` })).resolves.toBe(issuer.did);
    await expect(verifyReceived('jwt_vc_json', await vc(other.did), { key: holder.publicJwk, didUrl: `${holder.did}#0` })).rejects.toMatchObject({
      message: expect.stringMatching(/not bound/),
    });
  });
});

describe('what redeem accepts as an offer', () => {
  test.each([
    ['an offer URI by reference, as is', 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fi.example%2Fo%2F1', 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fi.example%2Fo%2F1'],
    ['a bare https offer URL, by reference', 'https://i.example/o/1', 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fi.example%2Fo%2F1'],
    ['the offer JSON, by value', ' {"credential_issuer":"https://i.example"} ', `openid-credential-offer://?credential_offer=${encodeURIComponent('{"credential_issuer":"https://i.example"}')}`],
  ])('%s', (_what, input, expected) => {
    expect(offerUri(input)).toBe(expected);
  });

  test.each([['not a URI', 'hello'], ['broken JSON', '{"credential_issuer":'], ['another scheme without an offer', 'mailto:a@b.example']])('%s → invalid_offer', (_what, input) => {
    expect(() => offerUri(input)).toThrow(expect.objectContaining({ code: 'invalid_offer' }));
  });
});
