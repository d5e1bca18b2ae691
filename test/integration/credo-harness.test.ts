/**
 * Proves the Credo holder harness (test/helpers/credo-holder.ts) against Credo's own OpenID4VCI
 * issuer, run in this process on a loopback port: if these pass, a failure against our issuer is
 * our issuer's, not the harness's.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { ClaimFormat, DidDocument, JsonTransformer, W3cCredential, W3cCredentialSubject, parseDid, w3cDate } from '@credo-ts/core';
import { OpenId4VcModule, type OpenId4VciCredentialConfigurationsSupportedWithFormats, type OpenId4VciCredentialRequestToCredentialMapper } from '@credo-ts/openid4vc';
import { createCredoAgent, createCredoHolder, type CredoHolder } from '../helpers/credo-holder';
import { matches } from '../helpers/credo-support';

const VCT = 'https://example.com/identity';
const PERSON = { given_name: 'Erika', family_name: 'Mustermann', address: { street: 'Heidestraße 17', locality: 'Köln' } };

const configurations: OpenId4VciCredentialConfigurationsSupportedWithFormats = {
  IdentityCredential: {
    format: 'dc+sd-jwt',
    vct: VCT,
    cryptographic_binding_methods_supported: ['jwk', 'did:key'],
    credential_signing_alg_values_supported: ['EdDSA'],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256', 'EdDSA'] } },
    credential_metadata: { display: [{ name: 'Identity' }], claims: [{ path: ['given_name'], mandatory: true }, { path: ['family_name'] }, { path: ['address', 'street'] }] },
  },
  Degree: {
    format: 'jwt_vc_json',
    credential_definition: { type: ['VerifiableCredential', 'UniversityDegreeCredential'] },
    // jwk listed on purpose: Credo itself refuses jwk binding for jwt_vc_json.
    cryptographic_binding_methods_supported: ['did:key', 'jwk'],
    credential_signing_alg_values_supported: ['EdDSA'],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256', 'EdDSA'] } },
    credential_metadata: { display: [{ name: 'Degree' }] },
  },
};

/** Switches the tests flip to make the issuer misbehave. */
const faults = { tamperSignature: false, bindToStranger: false };

let server: Server;
let issuerAgent: Awaited<ReturnType<typeof startIssuerAgent>>;
let issuerDid: string;
let issuerDidUrl: string;
/** A did:web served by the test's own http server, like our runtime serves its did:web DIDs. */
let webDid: string;
let webDidUrl: string;
let strangerDidUrl: string;
let holder: CredoHolder;

const mapper: OpenId4VciCredentialRequestToCredentialMapper = ({ holderBinding, credentialConfigurationId, issuanceSession }) => {
  const keys = holderBinding.keys;
  const [did, didUrl] = issuanceSession.issuerId === 'web' ? [webDid, webDidUrl] : [issuerDid, issuerDidUrl];
  if (credentialConfigurationId === 'IdentityCredential') {
    return {
      type: 'credentials',
      format: ClaimFormat.SdJwtDc,
      credentials: keys.map((key) => ({
        payload: { vct: VCT, ...PERSON },
        holder: faults.bindToStranger ? { method: 'did' as const, didUrl: strangerDidUrl } : key.method === 'did' ? { method: 'did' as const, didUrl: key.didUrl } : { method: 'jwk' as const, jwk: key.jwk },
        issuer: { method: 'did' as const, didUrl },
        disclosureFrame: { _sd: ['given_name'], address: { _sd: ['street'] } },
      })),
    };
  }
  return {
    type: 'credentials',
    format: ClaimFormat.JwtVc,
    credentials: keys.map((key) => {
      if (key.method !== 'did') throw new Error('jwt_vc_json needs a DID to bind to');
      return {
        verificationMethod: didUrl,
        credential: new W3cCredential({
          context: ['https://www.w3.org/2018/credentials/v1'],
          type: ['VerifiableCredential', 'UniversityDegreeCredential'],
          issuer: did,
          issuanceDate: w3cDate(Math.floor(Date.now() / 1000) * 1000),
          credentialSubject: new W3cCredentialSubject({ id: parseDid(faults.bindToStranger ? strangerDidUrl : key.didUrl).did, claims: { name: 'Erika', degree: 'MSc' } }),
        }),
      };
    }),
  };
};

async function startIssuerAgent(app: Express, baseUrl: string) {
  return createCredoAgent({ openid4vc: new OpenId4VcModule({ app, issuer: { baseUrl, credentialRequestToCredentialMapper: mapper } }) });
}

beforeAll(async () => {
  const app = express();
  // Runs before Credo's routes: corrupts the issuer's signature on demand.
  app.use((req, res, next) => {
    if (!faults.tamperSignature || !req.path.endsWith('/credential')) return next();
    // Credo answers with res.send(JSON.stringify(body)).
    const send = res.send.bind(res);
    res.send = (body: any) => {
      const parsed = typeof body === 'string' && body.startsWith('{') ? JSON.parse(body) : undefined;
      for (const entry of parsed?.credentials ?? []) {
        const [jwt = '', ...rest] = String(entry.credential).split('~');
        const [h, p, s = ''] = jwt.split('.');
        entry.credential = [`${h}.${p}.${s.slice(0, 4)}${s[4] === 'A' ? 'B' : 'A'}${s.slice(5)}`, ...rest].join('~');
      }
      return send(parsed ? JSON.stringify(parsed) : body);
    };
    next();
  });
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oid4vci`;
  issuerAgent = await startIssuerAgent(app, baseUrl);

  const created = await issuerAgent.dids.create({ method: 'key', options: { createKey: { type: { kty: 'OKP', crv: 'Ed25519' } } } });
  if (created.didState.state !== 'finished') throw new Error('issuer did');
  issuerDid = created.didState.did;
  issuerDidUrl = created.didState.didDocument.verificationMethod![0]!.id;
  const stranger = await issuerAgent.dids.create({ method: 'key', options: { createKey: { type: { kty: 'EC', crv: 'P-256' } } } });
  if (stranger.didState.state !== 'finished') throw new Error('stranger did');
  strangerDidUrl = stranger.didState.didDocument.verificationMethod![0]!.id;

  // did:web:127.0.0.1%3A<port>:dids:issuer → http://127.0.0.1:<port>/dids/issuer/did.json
  const { keyId, publicJwk } = await issuerAgent.kms.createKey({ type: { kty: 'EC', crv: 'P-256' } });
  webDid = `did:web:${encodeURIComponent(new URL(baseUrl).host)}:dids:issuer`;
  webDidUrl = `${webDid}#key-1`;
  const { kid: _kid, ...jwk } = publicJwk;
  const webDoc = {
    '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'],
    id: webDid,
    verificationMethod: [{ id: webDidUrl, type: 'JsonWebKey2020', controller: webDid, publicKeyJwk: jwk }],
    authentication: [webDidUrl],
    assertionMethod: [webDidUrl],
  };
  app.get('/dids/issuer/did.json', (_req, res) => void res.json(webDoc));
  await issuerAgent.dids.import({ did: webDid, didDocument: JsonTransformer.fromJSON(webDoc, DidDocument), keys: [{ didDocumentRelativeKeyId: '#key-1', kmsKeyId: keyId }] });

  await issuerAgent.openid4vc.issuer.createIssuer({ issuerId: 'web', credentialConfigurationsSupported: configurations });
  await issuerAgent.openid4vc.issuer.createIssuer({ issuerId: 'plain', credentialConfigurationsSupported: configurations });
  await issuerAgent.openid4vc.issuer.createIssuer({ issuerId: 'dpop', credentialConfigurationsSupported: configurations, dpopSigningAlgValuesSupported: ['ES256'] });

  holder = await createCredoHolder();
});

afterAll(async () => {
  await holder?.shutdown();
  await issuerAgent?.shutdown();
  await new Promise((resolve) => server?.close(resolve));
});

afterEach(() => {
  faults.tamperSignature = false;
  faults.bindToStranger = false;
});

async function offer(issuerId: string, configurationId: 'IdentityCredential' | 'Degree', pin = false) {
  const { credentialOffer, issuanceSession } = await issuerAgent.openid4vc.issuer.createCredentialOffer({
    issuerId,
    credentialConfigurationIds: [configurationId],
    preAuthorizedCodeFlowConfig: pin ? { txCode: { input_mode: 'numeric', length: 6 } } : {},
    version: 'v1',
  });
  const byValue = `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(issuanceSession.credentialOfferPayload))}`;
  return { byReference: credentialOffer, byValue, pin: issuanceSession.userPin };
}

describe('Credo holder harness against Credo’s issuer', () => {
  test('SD-JWT VC by value, jwk binding (ES256): claims disclosed, cnf is the holder key, signature verified by Credo', async () => {
    const o = await offer('plain', 'IdentityCredential');
    expect(o.byReference).toContain('credential_offer_uri=');
    const res = await holder.receiveOffer(o.byValue, { binding: 'jwk' });
    expect(res.format).toBe('dc+sd-jwt');
    expect(res.dpop).toBe(false);
    const [c] = res.credentials;
    expect(c!.header).toMatchObject({ typ: 'dc+sd-jwt', alg: 'EdDSA', kid: expect.stringMatching(/^#z6Mk/) });
    expect(c!.payload).toMatchObject({ iss: issuerDid, vct: VCT, cnf: { jwk: { kty: 'EC', crv: 'P-256', x: res.holder.publicJwk.x } } });
    expect(c!.payload.given_name).toBeUndefined(); // selectively disclosable
    expect(c!.claims).toMatchObject(PERSON);
    expect(await holder.agent.sdJwtVc.getAll()).toEqual(expect.arrayContaining([expect.objectContaining({ id: c!.record.id })]));
  });

  test('SD-JWT VC by reference with a PIN, did:key binding (EdDSA)', async () => {
    const o = await offer('plain', 'IdentityCredential', true);
    expect(o.pin).toMatch(/^\d{6}$/);
    const res = await holder.receiveOffer(o.byReference, { binding: 'did:key', alg: 'EdDSA', txCode: o.pin });
    expect(res.holder.didUrl).toMatch(/^did:key:z6Mk[^#]+#z6Mk/);
    expect(res.credentials[0]!.payload.cnf).toEqual({ kid: res.holder.didUrl });
    expect(res.credentials[0]!.claims).toMatchObject(PERSON);
  });

  test('a wrong PIN is the issuer’s refusal, thrown', async () => {
    const o = await offer('plain', 'IdentityCredential', true);
    await expect(holder.receiveOffer(o.byReference, { binding: 'jwk', txCode: '000000' === o.pin ? '111111' : '000000' })).rejects.toThrow(/access token/i);
  });

  test('DPoP when the authorization server advertises it', async () => {
    const o = await offer('dpop', 'IdentityCredential');
    const res = await holder.receiveOffer(o.byReference, { binding: 'jwk' });
    expect(res.dpop).toBe(true);
    expect(res.accessTokenResponse.token_type).toBe('DPoP');
    expect(res.credentials[0]!.claims).toMatchObject(PERSON);
  });

  test('jwt_vc_json with did:key binding; Credo refuses jwk binding for that format before asking', async () => {
    const o = await offer('plain', 'Degree');
    const res = await holder.receiveOffer(o.byValue, { binding: 'did:key' });
    expect(res.format).toBe('jwt_vc_json');
    const [c] = res.credentials;
    expect(c!.header).toMatchObject({ alg: 'EdDSA', kid: issuerDidUrl });
    expect(c!.payload).toMatchObject({ iss: issuerDid, sub: res.holder.did, vc: { type: ['VerifiableCredential', 'UniversityDegreeCredential'] } });
    expect(c!.claims).toEqual({ id: res.holder.did, name: 'Erika', degree: 'MSc' });

    const again = await offer('plain', 'Degree');
    await expect(holder.receiveOffer(again.byValue, { binding: 'jwk' })).rejects.toThrow(/JWK for credential binding is not supported for the 'jwt_vc_json' format/);
  });

  test.each([
    ['IdentityCredential', 'jwk'],
    ['Degree', 'did:key'],
  ] as const)('%s from a did:web issuer on loopback http: the key is fetched from its did.json', async (configurationId, binding) => {
    const o = await offer('web', configurationId);
    const res = await holder.receiveOffer(o.byValue, { binding });
    const [c] = res.credentials;
    expect(c!.payload.iss).toBe(webDid);
    expect(c!.header).toMatchObject({ alg: 'ES256', kid: configurationId === 'Degree' ? webDidUrl : '#key-1' });
    const { didResolutionMetadata } = await holder.agent.dids.resolve(webDid);
    expect(didResolutionMetadata).toMatchObject({ contentType: 'application/did+json', servedFromCache: false });
  });

  test.each([
    ['IdentityCredential', 'jwk'],
    ['Degree', 'did:key'],
  ] as const)('a corrupted issuer signature (%s) is thrown, not stored', async (configurationId, binding) => {
    const o = await offer('plain', configurationId);
    const before = (await holder.agent.sdJwtVc.getAll()).length + (await holder.agent.w3cCredentials.getAll()).length;
    faults.tamperSignature = true;
    await expect(holder.receiveOffer(o.byValue, { binding })).rejects.toThrow(/Failed to validate/);
    expect((await holder.agent.sdJwtVc.getAll()).length + (await holder.agent.w3cCredentials.getAll()).length).toBe(before);
  });

  test.each([
    ['IdentityCredential', /cnf .* does not name/],
    ['Degree', /do not include/],
  ] as const)('a %s bound to another DID than the one proved is thrown', async (configurationId, message) => {
    const o = await offer('plain', configurationId);
    faults.bindToStranger = true;
    await expect(holder.receiveOffer(o.byValue, { binding: 'did:key' })).rejects.toThrow(message);
  });
});

describe('in-memory storage: the Askar query semantics Credo’s repositories rely on', () => {
  const tags = { state: 'done', role: 'holder', types: ['A', 'B'], revoked: false, empty: null };
  test.each([
    [{ state: 'done' }, true],
    [{ state: 'done', role: 'issuer' }, false],
    [{ types: ['B'] }, true],
    [{ types: ['B', 'C'] }, false],
    [{ types: 'A' }, false],
    [{ revoked: false }, true],
    [{ missing: null }, true],
    [{ empty: null }, true],
    [{ state: null }, false],
    [{ state: undefined }, true],
    [{ $or: [{ state: 'x' }, { role: 'holder' }] }, true],
    [{ $or: [] }, false],
    [{ $and: [{ state: 'done' }, { $not: { role: 'holder' } }] }, false],
    [{ $not: { state: 'x' }, role: 'holder' }, true],
  ])('%j → %s', (query, expected) => {
    expect(matches(tags as never, query as never)).toBe(expected);
  });
});
