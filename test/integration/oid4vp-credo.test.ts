/**
 * OID4VP INTEROP: the service's verifier asked by a real wallet framework. Credo 0.6.3's holder
 * (`@credo-ts/openid4vc`, its own DCQL and Presentation Exchange engines) first takes SD-JWT VCs from
 * the service's OpenID4VCI issuer, then answers our signed requests over direct_post: resolving
 * the request object (checking its signature against the `decentralized_identifier:` client id),
 * choosing what to disclose, and binding the presentation to the request's nonce and client id.
 */
import { createCredoHolder, type CredoHolder } from '../helpers/credo-holder';
import { FAMILY_NAME_AND_BIRTHDATE, IDENTITY_SUBJECT, IDENTITY_VCT, identityConfiguration, sdJwtVpFormats } from '../helpers/identity-credential';
import { ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';

const VCT = IDENTITY_VCT;
const SUBJECT = IDENTITY_SUBJECT;
const SD_JWT_FORMATS = sdJwtVpFormats('vc+sd-jwt');

let api: TestApi;
let holder: CredoHolder;
let issuer: { key: string; did: string; sd: string };
let verifier: { key: string; walletId: number; did: string };



beforeAll(async () => {
  api = await startTestApi();
  holder = await createCredoHolder();
  const w = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'p256' } });
  const sd = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: w.key, body: identityConfiguration() }),
    'sd-jwt configuration',
  );
  issuer = { key: w.key, did: w.did, sd: sd.supported_cred_id };
  const offer = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: issuer.key, body: { supported_cred_id: issuer.sd, credential_subject: SUBJECT } }), 'issue');
  await holder.receiveOffer(offer.credential_offer, { binding: 'jwk' });
  verifier = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'ed25519' } });
  // The issuer is another tenant: the verifier lists it among the issuers it accepts.
  await ok(api.call('PUT', '/api/v1/settings/trusted-issuers', { key: verifier.key, body: { issuers: [issuer.did] } }), 'trusted issuers');
}, 120_000);

afterAll(async () => {
  await holder?.shutdown();
  await api?.rt.stop();
});

async function presentation(id: string) {
  return ok(api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key: verifier.key }), 'presentation');
}

describe('Credo 0.6.3 answers the service’s requests', () => {
  test('a DCQL request: Credo discloses what was asked, the record ends presentation-valid with those claims', async () => {
    const dcql_query = { credentials: [{ id: 'identity', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }] }] };
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { dcql_query, vp_formats: SD_JWT_FORMATS } }), 'request');
    expect(created.request_uri).toMatch(/^openid:\/\/\?client_id=decentralized_identifier%3Adid%3Akey%3A/);
    expect(created.presentation.state).toBe('request-created');

    const res = await holder.present(created.request_uri);
    expect(res.kind).toBe('dcql');
    expect(res.serverStatus).toBe(200);

    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'presentation-valid', verified: true, errors: null });
    const m = p.matched_credentials.identity;
    expect(m).toMatchObject({ issuer: issuer.did, vct: VCT, issuer_trust: 'trusted_issuers_setting' });
    expect(m.claims.given_name).toBe('Erika');
    expect(m.claims.address).toEqual({ locality: 'Köln' });
    expect(m.claims.family_name).toBeUndefined();
    expect([...m.disclosed].sort()).toEqual(['/address/locality', '/given_name']);
  }, 60_000);

  test('a request made from a presentation definition reaches Credo as DCQL and verifies against the definition', async () => {
    const pres_def = FAMILY_NAME_AND_BIRTHDATE;

    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { pres_def_id: def.pres_def_id, vp_formats: SD_JWT_FORMATS } }), 'request');
    expect(created.request.dcql_query.credentials[0]).toMatchObject({ id: 'identity', format: 'dc+sd-jwt', meta: { vct_values: [VCT] } });

    const res = await holder.present(created.request_uri);
    expect(res.kind).toBe('dcql');
    expect(res.serverStatus).toBe(200);
    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'presentation-valid', verified: true, pres_def_id: def.pres_def_id });
    expect(p.matched_credentials.identity.claims).toMatchObject({ family_name: 'Mustermann', birthdate: '1964-08-12' });
    expect(p.matched_credentials.identity.claims.given_name).toBeUndefined();
  }, 60_000);

  test('the draft form of the same request: Credo answers with Presentation Exchange, the record ends presentation-valid', async () => {
    const pres_def = {
      id: 'name-check',
      input_descriptors: [{ id: 'identity', format: { 'vc+sd-jwt': {} }, constraints: { limit_disclosure: 'required', fields: [{ path: ['$.vct'], filter: { type: 'string', const: VCT } }, { path: ['$.given_name'] }] } }],
    };
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { pres_def_id: def.pres_def_id, vp_formats: SD_JWT_FORMATS } }), 'request');
    expect(created.request_uri_draft).toMatch(/^openid:\/\/\?client_id=did%3Akey%3A/);

    const res = await holder.present(created.request_uri_draft);
    expect(res.kind).toBe('pex');
    expect(res.request).toMatchObject({ client_id: verifier.did, presentation_definition: pres_def });
    expect(res.serverStatus).toBe(200);
    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'presentation-valid', verified: true });
    expect(p.matched_credentials.identity.claims.given_name).toBe('Erika');
    expect(p.matched_credentials.identity.disclosed).toEqual(['/given_name']);
  }, 60_000);
});
