/**
 * OID4VP INTEROP SUITE: the service's verifier answered by an independent wallet.
 *
 * The wallet (test/helpers/spec-vp-wallet.ts) was written from the OpenID4VP 1.0 text (plus JAR,
 * RFC 9901 and the draft-era Presentation Exchange form) with plain HTTP, node:crypto and jose,
 * without the @openid4vc / dcql / pex libraries the verifier is built on, so that two readings of
 * the standard meet here. Its SD-JWT VCs come from the service's own OpenID4VCI issuer through the
 * OID4VCI spec wallet (test/helpers/spec-wallet.ts); one expired credential is made with
 * `@sd-jwt/core` from a did:jwk issuer key of the test's own.
 *
 * The wallet knows nothing of the service but the `request_uri` the admin API hands out: it fetches
 * the signed request object, checks its `typ`, client id and did:key signature, and answers over
 * direct_post. Every outcome is read back through `GET /api/v1/oid4vp/presentations/{id}`; every
 * bad answer is refused with HTTP 400 `invalid_request` and recorded with exactly one reason code.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs';
import { getListFromStatusListJWT, getStatusListFromJWT } from '@sd-jwt/jwt-status-list';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { generateHolderKey, jwkOfDidKey, SpecWallet, type HolderKey, type HttpResult } from '../helpers/spec-wallet';
import {
  answerDcql,
  answerPresentationDefinition,
  DID_PREFIX,
  forgeDisclosure,
  parseAuthorizationRequestUri,
  postDirectPost,
  presentJwtVp,
  REQUEST_OBJECT_TYP,
  resolveAuthorizationRequest,
  tamperDisclosure,
  type AnswerOptions,
  type VerifiedRequest,
} from '../helpers/spec-vp-wallet';
import { FAMILY_NAME_AND_BIRTHDATE, IDENTITY_SUBJECT, IDENTITY_VCT, identityConfiguration, sdJwtVpFormats } from '../helpers/identity-credential';

const VCT = IDENTITY_VCT;
const SUBJECT = IDENTITY_SUBJECT;
const SD_JWT_FORMATS = sdJwtVpFormats('dc+sd-jwt');
/** Given name and locality: two selectively disclosable claims, one of them nested. */
const DCQL = { credentials: [{ id: 'identity', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }] }] };
const PRES_DEF = FAMILY_NAME_AND_BIRTHDATE;

interface Tenant {
  key: string;
  walletId: number;
  publicRef: string;
  did: string;
}
interface Issuer extends Tenant {
  sd: string;
}
/** A credential in the holder's hands, and the key it is bound to. */
interface Held {
  credential: string;
  key: HolderKey;
  exchangeId: string;
}
interface Created {
  request_uri: string;
  request_uri_draft?: string;
  request: any;
  presentation: any;
}

let api: TestApi;
let rx: Receiver;
let issuer: Issuer;
let verifier: Tenant;
let other: Tenant;
let held: Held;
let defId: string;



/** A did:key issuer with a dc+sd-jwt configuration (every claim selectively disclosable); optionally with a status list. */
async function newIssuer(withStatusList = false): Promise<Issuer> {
  const t = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'p256' } });
  const sd = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: t.key, body: identityConfiguration() }),
    'sd-jwt configuration',
  );
  if (withStatusList) await ok(api.call('POST', '/api/v1/status-list/defs', { key: t.key, body: { supported_cred_id: sd.supported_cred_id } }), 'status list def');
  return { ...t, sd: sd.supported_cred_id };
}

/** The OID4VCI spec wallet takes an offer of `from`: an SD-JWT VC bound (cnf.jwk) to a fresh ES256 key. */
async function issueTo(from: Issuer): Promise<Held> {
  const offer = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: from.key, body: { supported_cred_id: from.sd, credential_subject: SUBJECT } }), 'issue');
  const received = await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offer.credential_offer);
  return { credential: received.credentials[0]!, key: received.holderKeys[0]!, exchangeId: offer.exchange.exchange_id };
}

/** The verifier's trusted-issuers setting, replaced: credentials from other issuers are refused (untrusted_issuer). */
async function trustIssuers(...issuers: string[]): Promise<void> {
  await ok(api.call('PUT', '/api/v1/settings/trusted-issuers', { key: verifier.key, body: { issuers } }), 'trusted issuers');
}

async function createRequest(body: Record<string, unknown>, key = verifier.key): Promise<Created> {
  return ok(api.call('POST', '/api/v1/oid4vp/request', { key, body: { vp_formats: SD_JWT_FORMATS, ...body } }), 'request');
}

async function presentation(id: string, key = verifier.key) {
  return ok(api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key }), 'presentation');
}

/** A fresh DCQL request, its request object fetched and checked by the wallet. */
async function fetchedDcqlRequest(dcql_query: Record<string, unknown> = DCQL): Promise<{ created: Created; req: VerifiedRequest }> {
  const created = await createRequest({ dcql_query });
  return { created, req: await resolveAuthorizationRequest(created.request_uri) };
}

/** The refusal the response endpoint answers (OpenID4VP §8.5 error response). */
function expectInvalidRequest(res: HttpResult): void {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 400, error: 'invalid_request' });
  expect(typeof res.body.error_description).toBe('string');
}

/** The record ends presentation-invalid with exactly this one reason. */
async function expectRefused(created: Created, res: HttpResult, code: string): Promise<void> {
  expectInvalidRequest(res);
  const p = await presentation(created.presentation.presentation_id);
  expect(p).toMatchObject({ state: 'presentation-invalid', verified: false, matched_credentials: null });
  expect(p.errors.map((e: any) => e.code)).toEqual([code]);
}

/** A DCQL request answered with the held credential, bent by `opts`; refused with `code`. */
async function dcqlRefusal(code: string, opts: AnswerOptions, credential = held.credential, key = held.key): Promise<void> {
  const { created, req } = await fetchedDcqlRequest();
  const res = await answerDcql(req.payload, { identity: credential }, key, opts);
  await expectRefused(created, res, code);
}

const requestUrlOf = (created: Created) => parseAuthorizationRequestUri(created.request_uri).requestUri!;
const responseUrlOf = (created: Created) => requestUrlOf(created).replace('/request/', '/response/');

/** Moves a presentation's request lifetime into the past, straight in DynamoDB Local. */
async function expireInStore(presentationId: string): Promise<void> {
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
  await ddb.send(
    new UpdateCommand({
      TableName: api.rt.tableName,
      Key: { PK: `W#${verifier.walletId}`, SK: `VPX#${presentationId}` },
      UpdateExpression: 'SET expires_at = :t',
      ExpressionAttributeValues: { ':t': Date.now() - 1000 },
    }),
  );
}

beforeAll(async () => {
  [api, rx] = await Promise.all([startTestApi(), startReceiver()]);
  issuer = await newIssuer();
  held = await issueTo(issuer);
  verifier = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'ed25519' } });
  other = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'ed25519' } });
  // The issuer is another tenant: the verifier lists it, as a relying party lists the issuers it accepts.
  await trustIssuers(issuer.did);
  await ok(api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: verifier.key, body: { urls: [`${rx.url}/verifier`] } }), 'webhook targets');
  defId = (await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def: PRES_DEF } }), 'definition')).pres_def_id;
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.rt.stop(), rx?.close()]);
});

describe('OID4VP interop (spec wallet): presentations that verify', () => {
  test('DCQL: the wallet checks the signed request object and discloses only what was asked; the record is presentation-valid with exactly those claims', async () => {
    const created = await createRequest({ dcql_query: DCQL });
    expect(created.presentation.state).toBe('request-created');
    const ref = parseAuthorizationRequestUri(created.request_uri);
    expect(ref.clientId).toBe(`${DID_PREFIX}${verifier.did}`);

    const req = await resolveAuthorizationRequest(created.request_uri);
    // §5: typ; §5.9.3: the decentralized_identifier prefix and a signature by the DID's key.
    expect(req.header.typ).toBe(REQUEST_OBJECT_TYP);
    expect(req.header.kid.split('#')[0]).toBe(verifier.did);
    expect(req.did).toBe(verifier.did);
    expect(req.verificationJwk).toEqual(jwkOfDidKey(verifier.did));
    const p = req.payload;
    expect(p.client_id).toBe(`${DID_PREFIX}${verifier.did}`);
    expect(p).toMatchObject({ response_type: 'vp_token', response_mode: 'direct_post', response_uri: responseUrlOf(created), dcql_query: DCQL });
    // §14.1: a nonce of at least 128 bits (22 base64url characters).
    expect(p.nonce).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(typeof p.state).toBe('string');
    expect(p.state!.length).toBeGreaterThan(0);
    expect(p.client_metadata?.vp_formats_supported?.['dc+sd-jwt']).toEqual(expect.objectContaining({ 'sd-jwt_alg_values': expect.any(Array), 'kb-jwt_alg_values': expect.any(Array) }));
    expect((await presentation(created.presentation.presentation_id)).state).toBe('request-retrieved');

    const res = await answerDcql(p, { identity: held.credential }, held.key);
    expect(res.status).toBe(200);
    const disclosed = (JSON.parse(res.fields.vp_token!).identity as string[])[0]!.split('~').length - 2;
    expect(disclosed).toBe(2);

    const record = await presentation(created.presentation.presentation_id);
    expect(record).toMatchObject({ state: 'presentation-valid', verified: true, errors: null, pres_def_id: null });
    expect(Object.keys(record.matched_credentials)).toEqual(['identity']);
    const m = record.matched_credentials.identity;
    expect(m).toMatchObject({ format: 'dc+sd-jwt', issuer: issuer.did, vct: VCT, issuer_trust: 'trusted_issuers_setting' });
    expect(m.claims.given_name).toBe('Erika');
    expect(m.claims.address).toEqual({ locality: 'Köln' });
    for (const hidden of ['family_name', 'birthdate']) expect(m.claims[hidden]).toBeUndefined();
    expect([...m.disclosed].sort()).toEqual(['/address/locality', '/given_name']);
  }, 60_000);

  test('a definition-made request answered in draft form (bare DID client id, presentation_definition, presentation_submission)', async () => {
    const created = await createRequest({ pres_def_id: defId });
    expect(created.request_uri_draft).toEqual(expect.stringContaining('profile%3Ddraft'));
    expect(parseAuthorizationRequestUri(created.request_uri_draft!).clientId).toBe(verifier.did);

    const req = await resolveAuthorizationRequest(created.request_uri_draft!);
    expect(req.header.typ).toBe(REQUEST_OBJECT_TYP);
    expect(req.did).toBe(verifier.did);
    expect(req.payload.client_id).toBe(verifier.did);
    expect(req.payload.presentation_definition).toEqual(PRES_DEF);
    expect(req.payload.dcql_query).toBeUndefined();

    const res = await answerPresentationDefinition(req.payload, held.credential, held.key);
    expect(res.status).toBe(200);
    const record = await presentation(created.presentation.presentation_id);
    expect(record).toMatchObject({ state: 'presentation-valid', verified: true, errors: null, pres_def_id: defId });
    expect(Object.keys(record.matched_credentials)).toEqual(['identity']);
    const m = record.matched_credentials.identity;
    expect(m).toMatchObject({ issuer: issuer.did, vct: VCT, claims: { family_name: 'Mustermann', birthdate: '1964-08-12' } });
    expect(m.claims.given_name).toBeUndefined();
    expect([...m.disclosed].sort()).toEqual(['/birthdate', '/family_name']);
  }, 60_000);
});

describe('OID4VP interop (spec wallet): W3C JWT VCs in a JWT VP (jwt_vp_json)', () => {
  const TYPES = ['VerifiableCredential', 'UniversityDegreeCredential'];
  const JWT_FORMATS = { jwt_vc_json: { alg: ['ES256', 'EdDSA'] }, jwt_vp_json: { alg: ['ES256', 'EdDSA'] } };
  const DEGREE_QUERY = { credentials: [{ id: 'degree', format: 'jwt_vc_json', meta: { type_values: [TYPES] }, claims: [{ path: ['credentialSubject', 'degree'] }] }] };

  /** A jwt_vc_json credential from our issuer, bound to the holder's did:key (`sub`). */
  async function heldJwtVc(): Promise<{ credential: string; key: HolderKey; did: string }> {
    const jwt = await ok(
      api.call('POST', '/api/v1/oid4vci/credentials-supported/jwt', {
        key: issuer.key,
        body: { id: `Degree_${randomBytes(4).toString('hex')}`, type: TYPES, '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { name: {}, degree: {} }, cryptographic_binding_methods_supported: ['did:key'] },
      }),
      'jwt configuration',
    );
    const offer = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: issuer.key, body: { supported_cred_id: jwt.supported_cred_id, credential_subject: { name: 'Ada Lovelace', degree: 'BSc Mathematics' } } }), 'issue');
    const received = await new SpecWallet({ alg: 'ES256', binding: 'did:key', shape: 'v1' }).receive(offer.credential_offer);
    const key = received.holderKeys[0]!;
    return { credential: received.credentials[0]!, key, did: key.didKey };
  }

  test('a VP signed by the holder DID carrying our JWT VC → presentation-valid with the VC’s claims', async () => {
    const vc = await heldJwtVc();
    const created = await createRequest({ dcql_query: DEGREE_QUERY, vp_formats: JWT_FORMATS });
    const req = await resolveAuthorizationRequest(created.request_uri);
    expect(req.payload.client_metadata!.vp_formats_supported).toEqual({ jwt_vc_json: { alg_values: ['ES256', 'EdDSA'] }, jwt_vp_json: { alg_values: ['ES256', 'EdDSA'] } });
    const res = await answerDcql(req.payload, { degree: vc.credential }, vc.key, { holderDid: vc.did });
    expect(res.status).toBe(200);
    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'presentation-valid', verified: true });
    expect(p.matched_credentials.degree).toMatchObject({ format: 'jwt_vc_json', issuer: issuer.did, types: TYPES, disclosed: [] });
    expect(p.matched_credentials.degree.claims.vc.credentialSubject).toMatchObject({ id: vc.did, degree: 'BSc Mathematics' });
  }, 60_000);

  test('a VP whose header jwk holds the holder\'s private key → malformed_presentation', async () => {
    const vc = await heldJwtVc();
    const created = await createRequest({ dcql_query: DEGREE_QUERY, vp_formats: JWT_FORMATS });
    const req = await resolveAuthorizationRequest(created.request_uri);
    // The key is named by kid (the holder's DID URL) as usual; the header also carries it, private member included.
    const vp = presentJwtVp([vc.credential], vc.key, vc.did, { audience: req.payload.client_id, nonce: req.payload.nonce, header: { jwk: vc.key.privateKey.export({ format: 'jwk' }) } });
    const res = await postDirectPost(req.payload.response_uri!, { vp_token: JSON.stringify({ degree: [vp] }), state: req.payload.state! });
    await expectRefused(created, res, 'malformed_presentation');
  }, 60_000);

  test('the VP with another nonce → wrong_nonce; signed by another holder than the VC’s subject → holder_mismatch', async () => {
    const vc = await heldJwtVc();
    const a = await createRequest({ dcql_query: DEGREE_QUERY, vp_formats: JWT_FORMATS });
    const reqA = await resolveAuthorizationRequest(a.request_uri);
    await expectRefused(a, await answerDcql(reqA.payload, { degree: vc.credential }, vc.key, { holderDid: vc.did, present: { nonce: 'not-the-nonce-not-the-nonce' } }), 'wrong_nonce');

    const stranger = generateHolderKey('ES256');
    const b = await createRequest({ dcql_query: DEGREE_QUERY, vp_formats: JWT_FORMATS });
    const reqB = await resolveAuthorizationRequest(b.request_uri);
    await expectRefused(b, await answerDcql(reqB.payload, { degree: vc.credential }, stranger, { holderDid: stranger.didKey }), 'holder_mismatch');
  }, 60_000);
});

describe('OID4VP interop (spec wallet): refusals, each recorded with exactly its reason', () => {
  test('a key-binding JWT with another nonce → wrong_nonce', async () => {
    await dcqlRefusal('wrong_nonce', { present: { nonce: randomBytes(32).toString('base64url') } });
  });

  test('a key-binding JWT addressed to another verifier → wrong_audience', async () => {
    await dcqlRefusal('wrong_audience', { present: { audience: `${DID_PREFIX}${other.did}` } });
  });

  test('a disclosure altered after issuance → unreferenced_disclosure', async () => {
    await dcqlRefusal('unreferenced_disclosure', { present: { mapDisclosures: (encoded) => [tamperDisclosure(encoded[0]!, 'Eve'), ...encoded.slice(1)] } });
  });

  test('a disclosure the issuer never signed → unreferenced_disclosure', async () => {
    await dcqlRefusal('unreferenced_disclosure', { present: { extraDisclosures: [forgeDisclosure('nationality', 'DE')] } });
  });

  test('an issuer JWT whose signature was altered → invalid_issuer_signature', async () => {
    const [issuerJwt, ...rest] = held.credential.split('~');
    const [h, p, s] = issuerJwt!.split('.');
    const i = 10;
    const broken = `${h}.${p}.${s!.slice(0, i)}${s![i] === 'A' ? 'B' : 'A'}${s!.slice(i + 1)}`;
    await dcqlRefusal('invalid_issuer_signature', {}, [broken, ...rest].join('~'));
  });

  test('a key-binding JWT signed by another key than cnf → invalid_key_binding', async () => {
    await dcqlRefusal('invalid_key_binding', { present: { kbSigningKey: generateHolderKey('ES256').privateKey } });
  });

  test('a key-binding JWT whose header jwk holds the holder\'s private key → malformed_presentation', async () => {
    await dcqlRefusal('malformed_presentation', { present: { kbHeader: { jwk: held.key.privateKey.export({ format: 'jwk' }) } } });
  });

  test('a credential whose cnf.jwk holds the holder\'s private key (did:jwk issuer) → malformed_presentation', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    const did = `did:jwk:${Buffer.from(JSON.stringify({ kty, crv, x, y })).toString('base64url')}`;
    const sdjwt = new SDJwtInstance({ signer: await ES256.getSigner(privateKey.export({ format: 'jwk' })), signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
    const now = Math.floor(Date.now() / 1000);
    // Signed and bound correctly (the key-binding JWT verifies with the public members), but the private key travels along.
    const credential = await sdjwt.issue(
      { iss: did, vct: VCT, iat: now, exp: now + 3600, cnf: { jwk: held.key.privateKey.export({ format: 'jwk' }) }, given_name: 'Erika', address: { street: 'Heidestraße 17', locality: 'Köln' } },
      { _sd: ['given_name'], address: { _sd: ['street', 'locality'] } } as never,
      { header: { typ: 'dc+sd-jwt', kid: `${did}#0` } },
    );
    await dcqlRefusal('malformed_presentation', {}, credential);
  });

  test('an expired credential (did:jwk issuer, exp in the past) → credential_expired', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    const did = `did:jwk:${Buffer.from(JSON.stringify({ kty, crv, x, y })).toString('base64url')}`;
    // Trusted, so that what is refused is the expiry.
    await trustIssuers(issuer.did, did);
    const sdjwt = new SDJwtInstance({ signer: await ES256.getSigner(privateKey.export({ format: 'jwk' })), signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
    const now = Math.floor(Date.now() / 1000);
    const credential = await sdjwt.issue(
      { iss: did, vct: VCT, iat: now - 7200, exp: now - 3600, cnf: { jwk: held.key.publicJwk }, given_name: 'Erika', address: { street: 'Heidestraße 17', locality: 'Köln' } },
      { _sd: ['given_name'], address: { _sd: ['street', 'locality'] } } as never,
      { header: { typ: 'dc+sd-jwt', kid: `${did}#0` } },
    );
    await dcqlRefusal('credential_expired', {}, credential);
  });

  test('a credential revoked through the status-list API → credential_revoked', async () => {
    // Its own issuer and list: the verifier caches a fetched list, and this one is first fetched revoked.
    const revIssuer = await newIssuer(true);
    await trustIssuers(issuer.did, revIssuer.did);
    const revoked = await issueTo(revIssuer);
    const ref = getStatusListFromJWT(revoked.credential.split('~')[0]!);
    expect(ref.uri).toMatch(/\/status-lists\//);
    await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${revoked.exchangeId}`, { key: revIssuer.key }), 'revoke');
    await eventually(
      async () => {
        const res = await fetch(ref.uri, { headers: { accept: 'application/statuslist+jwt' } });
        if (res.status !== 200) return undefined;
        return getListFromStatusListJWT(await res.text()).getStatus(ref.idx) === 1 ? true : undefined;
      },
      15_000,
      'the published list shows the revocation',
    );
    await dcqlRefusal('credential_revoked', {}, revoked.credential, revoked.key);
  }, 60_000);

  test('a credential whose issuer DID was deactivated after issuance → issuer_unresolvable', async () => {
    // Issued under the issuer's public did:key; then another DID becomes public (a public DID cannot be
    // deactivated) and the first is deactivated. A did:key resolves by itself: what refuses it is the
    // service's published record saying it was deactivated.
    const from = await newIssuer();
    const gone = await issueTo(from);
    expect(JSON.parse(Buffer.from(gone.credential.split('.')[1]!, 'base64url').toString()).iss).toBe(from.did);
    await trustIssuers(issuer.did, from.did);
    const next = (await ok(api.call('POST', '/api/v1/create-did', { key: from.key, body: { method: 'key', options: { key_type: 'p256' } } }), 'create-did')).did.did as string;
    await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(next)}`, { key: from.key }), 'set-public-did');
    await ok(api.call('POST', `/api/v1/dids/${encodeURIComponent(from.did)}/deactivate`, { key: from.key }), 'deactivate');
    await dcqlRefusal('issuer_unresolvable', {}, gone.credential, gone.key);
  }, 60_000);

  test('a requested claim withheld → constraints_not_met', async () => {
    await dcqlRefusal('constraints_not_met', { claimsOverride: { identity: ['/given_name'] } });
  });

  test('more disclosed than a limit_disclosure: required definition lists → extra_disclosure (draft and 1.0 forms)', async () => {
    const draft = await createRequest({ pres_def_id: defId });
    const draftReq = await resolveAuthorizationRequest(draft.request_uri_draft!);
    const draftRes = await answerPresentationDefinition(draftReq.payload, held.credential, held.key, { claimsOverride: { identity: ['$.family_name', '$.birthdate', '$.given_name'] } });
    await expectRefused(draft, draftRes, 'extra_disclosure');

    const v1 = await createRequest({ pres_def_id: defId });
    const v1Req = await resolveAuthorizationRequest(v1.request_uri);
    const v1Res = await answerDcql(v1Req.payload, { identity: held.credential }, held.key, { claimsOverride: { identity: ['/family_name', '/birthdate', '/given_name'] } });
    await expectRefused(v1, v1Res, 'extra_disclosure');
  });
});

describe('OID4VP interop (spec wallet): replays and races change nothing', () => {
  test('the same response posted again → 400, the record unchanged', async () => {
    const { created, req } = await fetchedDcqlRequest();
    const first = await answerDcql(req.payload, { identity: held.credential }, held.key);
    expect(first.status).toBe(200);
    const before = await presentation(created.presentation.presentation_id);
    expect(before.state).toBe('presentation-valid');
    expectInvalidRequest(await postDirectPost(req.payload.response_uri!, first.fields));
    expect(await presentation(created.presentation.presentation_id)).toEqual(before);
  });

  test('the request object is handed out once', async () => {
    const { created } = await fetchedDcqlRequest();
    const again = await fetch(requestUrlOf(created), { headers: { accept: 'application/oauth-authz-req+jwt' } });
    expect(again.status).toBe(400);
    expect(((await again.json()) as any).error).toBe('invalid_request');
    expect((await presentation(created.presentation.presentation_id)).state).toBe('request-retrieved');
  });

  test('a response to a request whose object was never fetched → 400, still request-created', async () => {
    const { req } = await fetchedDcqlRequest();
    const unfetched = await createRequest({ dcql_query: DCQL });
    const res = await answerDcql(req.payload, { identity: held.credential }, held.key, { responseUri: responseUrlOf(unfetched) });
    expectInvalidRequest(res);
    expect((await presentation(unfetched.presentation.presentation_id)).state).toBe('request-created');
  });

  test('a wrong state → 400 and nothing recorded; the right answer is still taken', async () => {
    const { created, req } = await fetchedDcqlRequest();
    const before = await presentation(created.presentation.presentation_id);
    expectInvalidRequest(await answerDcql(req.payload, { identity: held.credential }, held.key, { state: randomBytes(32).toString('base64url') }));
    expectInvalidRequest(await answerDcql(req.payload, { identity: held.credential }, held.key, { state: null }));
    expect(await presentation(created.presentation.presentation_id)).toEqual(before);
    expect((await answerDcql(req.payload, { identity: held.credential }, held.key)).status).toBe(200);
    expect((await presentation(created.presentation.presentation_id)).state).toBe('presentation-valid');
  });

  test('a response without vp_token → 400 and nothing recorded; a wallet that declines (error) → presentation-invalid wallet_error', async () => {
    const { created, req } = await fetchedDcqlRequest();
    const before = await presentation(created.presentation.presentation_id);
    expectInvalidRequest(await postDirectPost(req.payload.response_uri!, { state: req.payload.state! }));
    expect(await presentation(created.presentation.presentation_id)).toEqual(before);
    // OpenID4VP §8.5: the wallet sends an error response to the response_uri; the verifier learns the holder said no.
    const declined = await postDirectPost(req.payload.response_uri!, { error: 'access_denied', error_description: 'the holder declined', state: req.payload.state! });
    expect(declined.status).toBe(200);
    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'presentation-invalid', verified: false, errors: [{ code: 'wallet_error', detail: 'access_denied: the holder declined' }] });
  });

  test('the draft form of a DCQL request, or a request whose verifier DID was deactivated meanwhile → 400, still request-created', async () => {
    const dcql = await createRequest({ dcql_query: DCQL });
    const draftOfDcql = await fetch(`${requestUrlOf(dcql)}?profile=draft`);
    expect([draftOfDcql.status, ((await draftOfDcql.json()) as any).error]).toEqual([400, 'invalid_request']);
    expect((await presentation(dcql.presentation.presentation_id)).state).toBe('request-created');

    // A second did:key of the verifier (the public one cannot be deactivated), named by `did`.
    const did = (await ok(api.call('POST', '/api/v1/create-did', { key: verifier.key, body: { method: 'key' } }), 'create-did')).did.did as string;
    const made = await createRequest({ dcql_query: DCQL, did });
    await ok(api.call('POST', `/api/v1/dids/${encodeURIComponent(did)}/deactivate`, { key: verifier.key }), 'deactivate');
    await expect(resolveAuthorizationRequest(made.request_uri)).rejects.toThrow(/HTTP 400/);
    expect((await presentation(made.presentation.presentation_id)).state).toBe('request-created');
  });

  test('a presentation made for request A, posted to request B → B presentation-invalid (wrong_nonce), A untouched', async () => {
    const a = await fetchedDcqlRequest();
    const b = await fetchedDcqlRequest();
    expect(b.req.payload.nonce).not.toBe(a.req.payload.nonce);
    const res = await answerDcql(a.req.payload, { identity: held.credential }, held.key, { responseUri: b.req.payload.response_uri!, state: b.req.payload.state! });
    await expectRefused(b.created, res, 'wrong_nonce');
    expect((await presentation(a.created.presentation.presentation_id)).state).toBe('request-retrieved');
  });

  test('an expired request: its response and its request object → 400, the record reads expired', async () => {
    const { created, req } = await fetchedDcqlRequest();
    await expireInStore(created.presentation.presentation_id);
    expectInvalidRequest(await answerDcql(req.payload, { identity: held.credential }, held.key));
    const p = await presentation(created.presentation.presentation_id);
    expect(p).toMatchObject({ state: 'expired', matched_credentials: null, verified: null, errors: null });

    const unfetched = await createRequest({ dcql_query: DCQL });
    await expireInStore(unfetched.presentation.presentation_id);
    const res = await fetch(requestUrlOf(unfetched));
    expect(res.status).toBe(400);
    expect((await presentation(unfetched.presentation.presentation_id)).state).toBe('expired');
  });
});

describe('OID4VP: tenant isolation', () => {
  test('another wallet’s definition, presentation and request URIs are 404 to a wallet', async () => {
    expectError(await api.call('POST', '/api/v1/oid4vp/request', { key: other.key, body: { pres_def_id: defId, vp_formats: SD_JWT_FORMATS } }), 404, 'presentation_definition_not_found');

    const created = await createRequest({ dcql_query: DCQL });
    const id = created.presentation.presentation_id;
    expectError(await api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key: other.key }), 404, 'presentation_not_found');
    expectError(await api.call('DELETE', `/api/v1/oid4vp/presentations/${id}`, { key: other.key }), 404, 'presentation_not_found');

    // The request id under another wallet's verifier path, and under the verifier's own sequential id (which names nothing public).
    expect(requestUrlOf(created)).toContain(`/oid4vp/${verifier.publicRef}/request/`);
    for (const wrong of [other.publicRef, String(verifier.walletId)]) {
      const wrongWallet = (url: string) => url.replace(`/oid4vp/${verifier.publicRef}/`, `/oid4vp/${wrong}/`);
      expect((await fetch(wrongWallet(requestUrlOf(created)))).status).toBe(404);
      expect((await postDirectPost(wrongWallet(responseUrlOf(created)), { vp_token: '{}', state: 'x' })).status).toBe(404);
    }
    expect((await presentation(id)).state).toBe('request-created');

    // Still the owner's: the wallet can fetch it, and the owner can delete it.
    await resolveAuthorizationRequest(created.request_uri);
    expect((await api.call('DELETE', `/api/v1/oid4vp/presentations/${id}`, { key: verifier.key })).status).toBe(200);
    expectError(await api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key: verifier.key }), 404, 'presentation_not_found');
  });
});

describe('OID4VP: admin API refusals', () => {
  test('an invalid definition → 400 invalid_presentation_definition naming the path', async () => {
    const pres_def = { id: 'broken', input_descriptors: [{ id: 'identity', constraints: { fields: [{ path: '$.family_name' }] } }] };
    const res = await api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } });
    expectError(res, 400, 'invalid_presentation_definition');
    expect(res.body.details.map((d: any) => d.path).join(' ')).toMatch(/input_descriptors.*fields/);
  });

  test('a definition with no DCQL equivalent (submission_requirements) → 400 untranslatable_presentation_definition', async () => {
    const pres_def = {
      id: 'pick-one',
      submission_requirements: [{ name: 'one', rule: 'pick', count: 1, from: 'A' }],
      input_descriptors: [
        { id: 'identity', group: ['A'], format: { 'vc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.family_name'] }] } },
        { id: 'identity2', group: ['A'], format: { 'vc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.birthdate'] }] } },
      ],
    };
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    expectError(await api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { pres_def_id: def.pres_def_id, vp_formats: SD_JWT_FORMATS } }), 400, 'untranslatable_presentation_definition');
  });

  test('a did:sov verifier DID → 400 unresolvable_verifier_did', async () => {
    const sov = (await ok(api.call('POST', '/api/v1/create-did', { key: verifier.key, body: {} }), 'create-did')).did;
    expect(sov.method).toBe('sov');
    expectError(await api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { dcql_query: DCQL, vp_formats: SD_JWT_FORMATS, did: sov.did } }), 400, 'unresolvable_verifier_did');
  });

  test('vp_formats with only RS256 → 400 unsupported_vp_formats', async () => {
    const vp_formats = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['RS256'], 'kb-jwt_alg_values': ['RS256'] } };
    expectError(await api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { dcql_query: DCQL, vp_formats } }), 400, 'unsupported_vp_formats');
  });

  test('neither or both of pres_def_id and dcql_query → 400', async () => {
    for (const body of [{ vp_formats: SD_JWT_FORMATS }, { pres_def_id: defId, dcql_query: DCQL, vp_formats: SD_JWT_FORMATS }]) {
      const res = await api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toEqual(expect.any(String));
    }
  });
});

// Last, after presentations whose events hold empty maps (`address: {}` when no address claim was
// disclosed): DynamoDB Local 3.x drops their type tag in stream records, and the local relay reads
// such items back from the table (infra/local/pollers.ts) instead of retrying them for ever.
describe('OID4VP: events', () => {
  test('request_created, request_retrieved and valid / invalid reach the verifier’s webhook', async () => {
    const good = await fetchedDcqlRequest();
    expect((await answerDcql(good.req.payload, { identity: held.credential }, held.key)).status).toBe(200);
    const byDefinition = await createRequest({ pres_def_id: defId });
    const draft = await resolveAuthorizationRequest(byDefinition.request_uri_draft!);
    expect((await answerPresentationDefinition(draft.payload, held.credential, held.key)).status).toBe(200);
    const bad = await fetchedDcqlRequest();
    expectInvalidRequest(await answerDcql(bad.req.payload, { identity: held.credential }, held.key, { present: { nonce: 'not-the-nonce-not-the-nonce' } }));

    const typesOf = (presentationId: string) =>
      rx
        .received('/verifier')
        .map((r) => JSON.parse(r.body))
        .filter((e) => e.data?.presentation_id === presentationId)
        .map((e) => e.type as string)
        .sort();
    const expected = (last: string) => ['oid4vp.presentation.request_created', 'oid4vp.presentation.request_retrieved', `oid4vp.presentation.${last}`].sort();
    for (const [c, last] of [
      [good.created, 'valid'],
      [byDefinition, 'valid'],
      [bad.created, 'invalid'],
    ] as const) {
      const id = c.presentation.presentation_id;
      await eventually(async () => (typesOf(id).length >= 3 ? true : undefined), 20_000, `events of ${id}`);
      expect(typesOf(id)).toEqual(expected(last));
    }
    const valid = rx
      .received('/verifier')
      .map((r) => JSON.parse(r.body))
      .find((e) => e.type === 'oid4vp.presentation.valid' && e.data.presentation_id === byDefinition.presentation.presentation_id);
    expect(valid.data.matched_credentials.identity.claims.address).toEqual({});
  }, 60_000);
});
