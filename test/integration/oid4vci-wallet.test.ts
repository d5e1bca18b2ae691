/**
 * OID4VCI INTEROP SUITE: the service's issuer driven end to end by an independent wallet.
 *
 * The wallet (test/helpers/spec-wallet.ts) was written from the OpenID4VCI 1.0 text alone, without
 * the @openid4vc libraries the issuer is built on, so that two readings of the standard meet here.
 * It knows nothing of the service but the offer URI the admin API hands out; everything else
 * (metadata, token, nonce, credential and notification endpoints) it discovers as any wallet would.
 * What was issued is checked by an outside verifier (@sd-jwt/sd-jwt-vc, jose) against the issuer
 * key resolved from the DID document the service publishes.
 *
 * Written ahead of the issuer against its planned API: `POST /api/v1/oid4vci/issue` takes `pin`
 * (→ the offer's `tx_code`) and answers `credential_offer` (by value) and `credential_offer_uri`
 * (by reference). "§" numbers are OpenID4VCI 1.0's.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { startTestApi, type TestApi } from '../helpers/runtime';
import {
  accessTokenHash,
  DPOP_TYP,
  jwkOfDidJwk,
  jwkOfDidKey,
  parseOfferUri,
  signCompactJws,
  PRE_AUTHORIZED_CODE_GRANT,
  SpecWallet,
  summarizeOffer,
  wellKnownUrls,
  type Binding,
  type HolderAlg,
  type HolderKey,
  type HttpResult,
  type PublicJwk,
  type RequestShape,
} from '../helpers/spec-wallet';
import { issuerKeyResolver, verifyJwtVc, verifySdJwtVc } from '../helpers/issued-credentials';

const SD_ID = 'IdentityCredential_SD';
const JWT_ID = 'UniversityDegree_JWT';
const VCT = 'https://credentials.example.com/identity_credential';
const VC_TYPES = ['VerifiableCredential', 'UniversityDegreeCredential'];
const VC_CONTEXT = ['https://www.w3.org/2018/credentials/v1'];
const SD_SUBJECT = { given_name: 'Erika', family_name: 'Mustermann', address: { street: 'Heidestraße 17', locality: 'Köln' } };
const JWT_SUBJECT = { name: 'Ada Lovelace', degree: 'BSc Mathematics' };
/** Issued-but-not-yet-accepted states, and the ones where nothing was issued. */

interface Issuer {
  apiKey: string;
  walletId: number;
  did: string;
  kid: string;
  /** supported_cred_id of each configuration. */
  sd: string;
  jwt: string;
  credentialIssuer: string;
}

interface Created {
  offer: any;
  credential_offer: string;
  credential_offer_uri: string;
  exchange: { exchange_id: string; state: string; [k: string]: unknown };
}

let api: TestApi;
const issuers: Record<'web' | 'key', Issuer> = {} as never;

async function ok<T = any>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await p;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A tenant with a published DID and both credential configurations. */
async function newIssuer(didBody: Record<string, unknown>): Promise<Issuer> {
  const w = await api.newWallet();
  const key = w.apiKey;
  await ok(api.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } }), 'accept-taa');
  const d = (await ok(api.call('POST', '/api/v1/create-did', { key, body: didBody }), 'create-did')).did;
  await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(d.did)}`, { key }), 'set-public-did');
  const bindings = ['jwk', 'did:key', 'did:jwk'];
  const sd = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', {
      key,
      body: {
        id: SD_ID,
        format: 'vc+sd-jwt',
        vct: VCT,
        claims: {
          given_name: { mandatory: true, value_type: 'string' },
          family_name: { value_type: 'string' },
          address: { street: { value_type: 'string' }, locality: { value_type: 'string' } },
        },
        sd_list: ['/given_name', '/address/street'],
        cryptographic_binding_methods_supported: bindings,
      },
    }),
    'sd-jwt configuration',
  );
  const jwt = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/jwt', {
      key,
      body: { id: JWT_ID, format: 'jwt_vc_json', type: VC_TYPES, '@context': VC_CONTEXT, credentialSubject: { name: {}, degree: {} }, cryptographic_binding_methods_supported: bindings },
    }),
    'jwt configuration',
  );
  return { apiKey: key, walletId: w.walletId, did: d.did, kid: d.metadata.kid, sd: sd.supported_cred_id, jwt: jwt.supported_cred_id, credentialIssuer: `${api.rt.url}/oid4vci/${w.publicRef}` };
}

async function createOffer(issuer: Issuer, format: 'sd' | 'jwt', pin?: string): Promise<Created> {
  const body = {
    supported_cred_id: format === 'sd' ? issuer.sd : issuer.jwt,
    credential_subject: format === 'sd' ? SD_SUBJECT : JWT_SUBJECT,
    did: issuer.did,
    verification_method: issuer.kid,
    ...(pin === undefined ? {} : { pin }),
  };
  return ok(api.call('POST', '/api/v1/oid4vci/issue', { key: issuer.apiKey, body }), 'issue');
}

async function exchangeState(issuer: Issuer, id: string): Promise<string> {
  return (await ok(api.call('GET', `/api/v1/oid4vci/exchanges/${id}`, { key: issuer.apiKey }), 'exchange')).state;
}

/** A refusal leaves the exchange where it was: `offer` at the token endpoint, `redeemed` at the credential endpoint. */
async function expectNothingIssued(issuer: Issuer, created: Created, state: 'offer' | 'redeemed'): Promise<void> {
  expect(await exchangeState(issuer, created.exchange.exchange_id)).toBe(state);
}

/** An OAuth-style error answer (RFC 6749 §5.2, RFC 6750 §3, §8.3.1): exactly this status and code. */
function expectOAuthError(res: HttpResult, status: number, code: string): void {
  // RFC 6750 §3 puts the code in WWW-Authenticate; a body may repeat it.
  const error = res.body?.error ?? /error="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
  expect({ status: res.status, error }).toEqual({ status, error: code });
  if ('credentials' in res) expect((res as { credentials: unknown[] }).credentials).toEqual([]);
}

/** The key a credential is bound to: `cnf.jwk`, or a DID URL in `cnf.kid`, or the `sub` DID of a JWT VC. */
function boundKey(holder: { cnf?: any; sub?: unknown }): PublicJwk | undefined {
  const ref = holder.cnf?.jwk ?? holder.cnf?.kid ?? holder.sub;
  if (ref && typeof ref === 'object') return ref as PublicJwk;
  if (typeof ref !== 'string') return undefined;
  if (ref.startsWith('did:key:')) return jwkOfDidKey(ref.split('#')[0]!);
  if (ref.startsWith('did:jwk:')) return jwkOfDidJwk(ref.split('#')[0]!);
  return undefined;
}

function expectBoundTo(holder: { cnf?: any; sub?: unknown }, key: HolderKey): void {
  const { kty, crv, x, y } = boundKey(holder) ?? ({} as PublicJwk);
  expect(JSON.parse(JSON.stringify({ kty, crv, x, y }))).toEqual(key.publicJwk);
}

/** Redeems an offer by hand, for the tests that then misbehave. */
async function redeem(wallet: SpecWallet, created: Created, txCode?: string) {
  const { summary, metadata, as } = await wallet.discover(await wallet.resolveOffer(created.credential_offer));
  const token = await wallet.token({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode!, txCode });
  return { summary, metadata, as, token, accessToken: token.access_token as string, configurationId: summary.configurationIds[0]! };
}

beforeAll(async () => {
  api = await startTestApi();
  // A did:web issuer on Ed25519 and a did:key issuer on P-256: both published, both resolvable.
  issuers.web = await newIssuer({ method: 'web' });
  issuers.key = await newIssuer({ method: 'key', options: { key_type: 'p256' } });
}, 60_000);
afterAll(async () => {
  await api?.rt.stop();
});

describe('OID4VCI interop (spec wallet): discovery and the offer', () => {
  test('the issue response carries the contract offer (draft 11 fields) and 1.0’s, by value and by reference', async () => {
    const issuer = issuers.web;
    for (const pin of [undefined, '493536']) {
      const created = await createOffer(issuer, 'sd', pin);
      expect(created.exchange.state).toBe('created');
      const grant = created.offer.grants[PRE_AUTHORIZED_CODE_GRANT];
      expect(Object.keys(created.offer.grants)).toEqual([PRE_AUTHORIZED_CODE_GRANT]);
      expect(created.offer).toMatchObject({ credential_issuer: issuer.credentialIssuer, credentials: [SD_ID], credential_configuration_ids: [SD_ID] });
      expect(grant).toMatchObject({ 'pre-authorized_code': expect.any(String), user_pin_required: pin !== undefined });
      // §4.1.1: tx_code present (an object) exactly when a code is required.
      if (pin) expect(grant.tx_code).toEqual(expect.any(Object));
      else expect(grant.tx_code).toBeUndefined();

      expect(created.credential_offer).toMatch(/^openid-credential-offer:\/\/\?credential_offer=/);
      expect(parseOfferUri(created.credential_offer)).toEqual({ offer: created.offer });
      const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
      const byRef = await wallet.resolveOffer(created.credential_offer_uri);
      expect(summarizeOffer(byRef)).toEqual(summarizeOffer(created.offer));
    }
  });

  test('issuer metadata at the 1.0 well-known location (path inserted after the host), AS metadata per RFC 8414', async () => {
    const issuer = issuers.web;
    const [inserted] = wellKnownUrls(issuer.credentialIssuer, 'openid-credential-issuer');
    const res = await fetch(inserted);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const metadata: any = await res.json();
    expect(metadata).toMatchObject({
      credential_issuer: issuer.credentialIssuer,
      credential_endpoint: expect.any(String),
      nonce_endpoint: expect.any(String),
      notification_endpoint: expect.any(String),
      batch_credential_issuance: { batch_size: expect.any(Number) },
    });
    const configs = metadata.credential_configurations_supported;
    expect(Object.keys(configs).sort()).toEqual([JWT_ID, SD_ID].sort());
    expect(configs[SD_ID]).toMatchObject({ format: expect.stringMatching(/^(dc|vc)\+sd-jwt$/), vct: VCT });
    expect(configs[JWT_ID]).toMatchObject({ format: 'jwt_vc_json', credential_definition: { type: VC_TYPES } });
    for (const c of Object.values<any>(configs)) {
      expect(c.cryptographic_binding_methods_supported).toEqual(expect.arrayContaining(['jwk', 'did:key', 'did:jwk']));
      expect(c.proof_types_supported.jwt.proof_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA']));
    }

    const asId = metadata.authorization_servers?.[0] ?? issuer.credentialIssuer;
    const asRes = await fetch(wellKnownUrls(asId, 'oauth-authorization-server')[0]);
    expect(asRes.status).toBe(200);
    const as: any = await asRes.json();
    expect(as).toMatchObject({ issuer: asId, token_endpoint: expect.any(String) });
    if (as.grant_types_supported) expect(as.grant_types_supported).toContain(PRE_AUTHORIZED_CODE_GRANT);
    // §12.3: the wallet sends no client_id, so anonymous pre-authorized access must be advertised (default false).
    expect(as['pre-authorized_grant_anonymous_access_supported']).toBe(true);
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA']));
  });

  test('the nonce endpoint answers a fresh c_nonce, uncacheable (§7.2: Cache-Control no-store)', async () => {
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    await wallet.fetchIssuerMetadata(issuers.web.credentialIssuer);
    const res = await wallet.requestNonce();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ c_nonce: expect.any(String) }));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toMatch(/\bno-store\b/);
  });
});

interface Row {
  format: 'sd' | 'jwt';
  issuer: 'web' | 'key';
  alg: HolderAlg;
  binding: Binding;
  shape: RequestShape;
  by: 'value' | 'reference';
  pin: boolean;
  dpop: boolean;
}

// A covering set (every value of every axis, most pairs) rather than the full product, to stay fast.
const ROWS: Row[] = [
  { format: 'sd', issuer: 'web', alg: 'ES256', binding: 'jwk', shape: 'v1', by: 'value', pin: false, dpop: false },
  { format: 'sd', issuer: 'key', alg: 'EdDSA', binding: 'did:key', shape: 'v1', by: 'reference', pin: true, dpop: true },
  { format: 'sd', issuer: 'web', alg: 'EdDSA', binding: 'jwk', shape: 'draft13', by: 'value', pin: true, dpop: false },
  { format: 'sd', issuer: 'key', alg: 'ES256', binding: 'did:key', shape: 'draft11', by: 'reference', pin: false, dpop: false },
  { format: 'sd', issuer: 'web', alg: 'ES256', binding: 'did:jwk', shape: 'v1', by: 'value', pin: false, dpop: true },
  { format: 'jwt', issuer: 'web', alg: 'EdDSA', binding: 'did:key', shape: 'v1', by: 'value', pin: true, dpop: false },
  { format: 'jwt', issuer: 'key', alg: 'ES256', binding: 'jwk', shape: 'v1', by: 'reference', pin: false, dpop: true },
  { format: 'jwt', issuer: 'web', alg: 'ES256', binding: 'did:key', shape: 'draft13', by: 'reference', pin: false, dpop: true },
  { format: 'jwt', issuer: 'key', alg: 'EdDSA', binding: 'jwk', shape: 'draft11', by: 'value', pin: true, dpop: false },
];

const label = (r: Row) =>
  `${r.format === 'sd' ? 'SD-JWT VC' : 'jwt_vc_json'} from a did:${r.issuer} issuer, ${r.alg} holder, ${r.binding} binding, ${r.shape} request, offer by ${r.by}, ${r.pin ? 'with' : 'without'} PIN, DPoP ${r.dpop ? 'on' : 'off'}`;

describe('OID4VCI interop (spec wallet): issuance end to end', () => {
  test.each(ROWS.map((r) => [label(r), r] as const))('%s', async (_name, row) => {
    const issuer = issuers[row.issuer];
    const pin = row.pin ? '493536' : undefined;
    const created = await createOffer(issuer, row.format, pin);
    const wallet = new SpecWallet({ alg: row.alg, binding: row.binding, shape: row.shape, dpop: row.dpop });
    const got = await wallet.receive(row.by === 'value' ? created.credential_offer : created.credential_offer_uri, { txCode: pin });

    expect(got.configurationId).toBe(row.format === 'sd' ? SD_ID : JWT_ID);
    expect(got.tokenResponse.token_type.toLowerCase()).toBe(row.dpop ? 'dpop' : 'bearer');
    expect(got.credentials).toHaveLength(1);
    const [credential] = got.credentials;
    const [holder] = got.holderKeys;
    const resolveIssuerKey = issuerKeyResolver(api.rt.url);

    if (row.format === 'sd') {
      const v = await verifySdJwtVc(credential!, { resolveIssuerKey });
      expect(v.header.kid).toBe(issuer.kid);
      expect(v.payload).toMatchObject({ iss: issuer.did, vct: VCT, iat: expect.any(Number), ...SD_SUBJECT });
      // Exactly the sd_list claims are selectively disclosable; the rest are plain.
      expect(v.disclosedPaths).toEqual(['/address/street', '/given_name']);
      expect(v.decoded.payload.family_name).toBe(SD_SUBJECT.family_name);
      expect(v.decoded.payload.address.locality).toBe(SD_SUBJECT.address.locality);
      expectBoundTo(v.payload, holder!);
      if (row.binding !== 'jwk' && v.cnf?.kid) expect(v.cnf.kid).toBe(row.binding === 'did:key' ? holder!.didKeyUrl : holder!.didJwkUrl);
    } else {
      const { header, payload } = await verifyJwtVc(credential!, { resolveIssuerKey });
      const now = Math.floor(Date.now() / 1000);
      expect(header.kid).toBe(issuer.kid);
      expect(payload.iss).toBe(issuer.did);
      expect(payload.jti).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(payload.nbf).toBeLessThanOrEqual(now + 5);
      expect(payload.exp).toBeGreaterThan(now);
      expect(payload.vc).toMatchObject({ '@context': expect.arrayContaining(VC_CONTEXT), type: VC_TYPES, credentialSubject: JWT_SUBJECT });
      const holderDid = wallet.holderDid(holder!);
      if (holderDid) {
        expect(payload.sub).toBe(holderDid);
        expect(payload.vc.credentialSubject.id).toBe(holderDid);
      }
      expectBoundTo(payload, holder!);
    }

    const exchangeId = created.exchange.exchange_id;
    expect(await exchangeState(issuer, exchangeId)).toBe('issued');
    // Draft 11 had no notification endpoint; 1.0 and draft 13 wallets get a notification_id (§8.3).
    if (row.shape !== 'draft11') expect(got.notificationId).toEqual(expect.any(String));
    if (got.notificationId) {
      const notified = await wallet.notify({ accessToken: got.accessToken, notificationId: got.notificationId, event: 'credential_accepted' });
      expect(notified.status).toBeGreaterThanOrEqual(200);
      expect(notified.status).toBeLessThan(300);
      expect(await exchangeState(issuer, exchangeId)).toBe('accepted');
    }
  });

  test('a batch of 3 proofs (3 keys) brings 3 SD-JWT VCs, each bound to its own key, with distinct salts and digests', async () => {
    const issuer = issuers.web;
    const created = await createOffer(issuer, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const got = await wallet.receive(created.credential_offer, { batch: 3 });
    expect(got.credentials).toHaveLength(3);
    expect(new Set(got.credentials).size).toBe(3);
    const verified = await Promise.all(got.credentials.map((c) => verifySdJwtVc(c, { resolveIssuerKey: issuerKeyResolver(api.rt.url) })));
    for (const v of verified) {
      expect(v.payload).toMatchObject({ iss: issuer.did, vct: VCT, ...SD_SUBJECT });
      expect(v.disclosedPaths).toEqual(['/address/street', '/given_name']);
    }
    // §8.3: each key binds at most one credential (in no stated order): the bound keys are exactly ours.
    const bound = verified.map((v) => boundKey(v.payload)?.x);
    expect([...bound].sort()).toEqual(got.holderKeys.map((k) => k.publicJwk.x).sort());
    const disclosures = verified.flatMap((v) => v.decoded.disclosures);
    expect(disclosures).toHaveLength(6);
    expect(new Set(disclosures.map((d) => d.salt)).size).toBe(6);
    expect(new Set(disclosures.map((d) => d.digest)).size).toBe(6);

    const notified = await wallet.notify({ accessToken: got.accessToken, notificationId: got.notificationId!, event: 'credential_accepted' });
    expect(notified.status).toBeLessThan(300);
    expect(await exchangeState(issuer, created.exchange.exchange_id)).toBe('accepted');
  });

  test('notifications are idempotent (§11); an unknown notification_id is invalid_notification_id (§11.3)', async () => {
    const created = await createOffer(issuers.web, 'jwt');
    const wallet = new SpecWallet({ alg: 'EdDSA', binding: 'did:key', shape: 'v1' });
    const got = await wallet.receive(created.credential_offer);
    for (let i = 0; i < 2; i++) {
      const res = await wallet.notify({ accessToken: got.accessToken, notificationId: got.notificationId!, event: 'credential_accepted' });
      expect(res.status).toBeLessThan(300);
    }
    const unknown = await wallet.notify({ accessToken: got.accessToken, notificationId: 'no-such-notification', event: 'credential_accepted' });
    expectOAuthError(unknown, 400, 'invalid_notification_id');
    expect(await exchangeState(issuers.web, created.exchange.exchange_id)).toBe('accepted');
  });
});

describe('OID4VCI interop (spec wallet): refusals at the token endpoint (§6.3), nothing issued', () => {
  test('a pre-authorized code works once: the second token request is invalid_grant', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    expect(r.token.access_token).toEqual(expect.any(String));
    const again = await wallet.requestToken({ tokenEndpoint: r.as.token_endpoint, preAuthorizedCode: r.summary.preAuthorizedCode! });
    expectOAuthError(again, 400, 'invalid_grant');
    // RFC 6749 §5.1/§5.2: token answers are not cached.
    expect(again.headers.get('cache-control')).toMatch(/\bno-store\b/);
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('a wrong PIN is invalid_grant, and the right one still works after it', async () => {
    const created = await createOffer(issuers.web, 'sd', '123456');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const { summary, as } = await wallet.discover(created.offer);
    const wrong = await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode!, txCode: '654321' });
    expectOAuthError(wrong, 400, 'invalid_grant');
    await expectNothingIssued(issuers.web, created, 'offer');
    const right = await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode!, txCode: '123456' });
    expect(right.status).toBe(200);
  });

  test('an expired code is invalid_grant, its offer is no longer served, and the exchange reads expired', async () => {
    const created = await createOffer(issuers.web, 'sd');
    // Age the code instead of waiting (the shortest lifetime the API takes is a minute).
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
    await ddb.send(
      new UpdateCommand({ TableName: process.env.TABLE_NAME!, Key: { PK: `W#${issuers.web.walletId}`, SK: `VCX#${created.exchange.exchange_id}` }, UpdateExpression: 'SET code_expires_at = :t', ExpressionAttributeValues: { ':t': Date.now() - 1 } }),
    );
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    await expect(wallet.resolveOffer(created.credential_offer_uri)).rejects.toThrow();
    const { summary, as } = await wallet.discover(created.offer);
    expectOAuthError(await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode! }), 400, 'invalid_grant');
    expect(await exchangeState(issuers.web, created.exchange.exchange_id)).toBe('expired');
  });

  test('a missing PIN is invalid_request, a PIN nobody asked for too', async () => {
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const withPin = await createOffer(issuers.web, 'sd', '123456');
    const { summary: s1, as } = await wallet.discover(withPin.offer);
    expectOAuthError(await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: s1.preAuthorizedCode! }), 400, 'invalid_request');
    await expectNothingIssued(issuers.web, withPin, 'offer');
    const withoutPin = await createOffer(issuers.web, 'sd');
    const s2 = summarizeOffer(withoutPin.offer);
    expectOAuthError(await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: s2.preAuthorizedCode!, txCode: '123456' }), 400, 'invalid_request');
    await expectNothingIssued(issuers.web, withoutPin, 'offer');
  });

  test('wrong PINs up to the bound lock the code out (§13.6.3): then the right PIN fails too and the exchange has failed', async () => {
    const created = await createOffer(issuers.web, 'sd', '123456');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const { summary, as } = await wallet.discover(created.offer);
    let attempts = 0;
    while (attempts < 20 && (await exchangeState(issuers.web, created.exchange.exchange_id)) !== 'failed') {
      attempts++;
      expectOAuthError(await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode!, txCode: String(100000 + attempts) }), 400, 'invalid_grant');
    }
    expect(await exchangeState(issuers.web, created.exchange.exchange_id)).toBe('failed');
    // The documented bound: the fifth wrong PIN burns the code.
    expect(attempts).toBe(5);
    expectOAuthError(await wallet.requestToken({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode!, txCode: '123456' }), 400, 'invalid_grant');
  });
});

describe('OID4VCI interop (spec wallet): refusals at the credential endpoint (§8.3.1), nothing issued', () => {
  type BadProof = (w: SpecWallet, o: { aud: string; nonce: string; key: HolderKey }) => string;
  const cases: [string, BadProof, string][] = [
    ['a proof for another audience', (w, o) => w.makeProof({ ...o, aud: 'https://someone-else.example/issuer' }), 'invalid_proof'],
    ['a proof with a nonce the issuer never gave', (w, o) => w.makeProof({ ...o, nonce: 'not-a-nonce-from-this-issuer' }), 'invalid_nonce'],
    // §8.3.1.2 invalid_proof (3): a key proof without a c_nonce.
    ['a proof without a nonce', (w, o) => w.makeProof({ ...o, nonce: null }), 'invalid_proof'],
    ['a proof signed by another key than its header names', (w, o) => w.makeProof({ ...o, signingKey: w.newHolderKey().privateKey }), 'invalid_proof'],
    ['a proof typed JWT instead of openid4vci-proof+jwt', (w, o) => w.makeProof({ ...o, typ: 'JWT' }), 'invalid_proof'],
    // Appendix F.1: iat is required; a proof from before its nonce could exist, or from the future, is stale.
    ['a proof made an hour ago', (w, o) => w.makeProof({ ...o, iat: Math.floor(Date.now() / 1000) - 3600 }), 'invalid_proof'],
    ['a proof dated in the future', (w, o) => w.makeProof({ ...o, iat: Math.floor(Date.now() / 1000) + 3600 }), 'invalid_proof'],
    // Appendix F.4: the header must not contain a private key (the holder's own, or any private member).
    ['a proof whose jwk header holds the private key too (d)', (w, o) => w.makeProof({ ...o, header: { jwk: o.key.privateKey.export({ format: 'jwk' }) } }), 'invalid_proof'],
    ['a proof whose jwk header carries a private member of another key type (p)', (w, o) => w.makeProof({ ...o, header: { jwk: { ...o.key.publicJwk, p: 'AQAB' } } }), 'invalid_proof'],
    ['a proof with alg none', (_w, o) => `${Buffer.from(JSON.stringify({ typ: 'openid4vci-proof+jwt', alg: 'none', jwk: o.key.publicJwk })).toString('base64url')}.${Buffer.from(JSON.stringify({ aud: o.aud, iat: Math.floor(Date.now() / 1000), nonce: o.nonce })).toString('base64url')}.`, 'invalid_proof'],
  ];

  test.each(cases)('%s is refused', async (_name, makeBad, code) => {
    const issuer = issuers.web;
    const created = await createOffer(issuer, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    const nonce = await wallet.nonce();
    const proof = makeBad(wallet, { aud: r.summary.credentialIssuer, nonce, key: wallet.newHolderKey() });
    const res = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof] });
    expectOAuthError(res, 400, code);
    await expectNothingIssued(issuer, created, 'redeemed');
  });

  test('a nonce already spent on another issuance is refused; a fresh one then works', async () => {
    const issuer = issuers.web;
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const first = await redeem(wallet, await createOffer(issuer, 'sd'));
    const spent = await wallet.nonce();
    const good = await wallet.requestCredential({ accessToken: first.accessToken, configurationId: first.configurationId, proofs: [wallet.makeProof({ aud: first.summary.credentialIssuer, nonce: spent, key: wallet.newHolderKey() })] });
    expect(good.status).toBe(200);

    const created = await createOffer(issuer, 'sd');
    const second = await redeem(wallet, created);
    const replayedNonce = await wallet.requestCredential({ accessToken: second.accessToken, configurationId: second.configurationId, proofs: [wallet.makeProof({ aud: second.summary.credentialIssuer, nonce: spent, key: wallet.newHolderKey() })] });
    expectOAuthError(replayedNonce, 400, 'invalid_nonce');
    await expectNothingIssued(issuer, created, 'redeemed');
    const fresh = await wallet.requestCredential({ accessToken: second.accessToken, configurationId: second.configurationId, proofs: [wallet.makeProof({ aud: second.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() })] });
    expect(fresh.status).toBe(200);
    expect(fresh.credentials).toHaveLength(1);
  });

  test('the same credential request sent again is invalid_nonce; a new one with the same token, invalid_token', async () => {
    const wallet = new SpecWallet({ alg: 'EdDSA', binding: 'did:key', shape: 'v1' });
    const r = await redeem(wallet, await createOffer(issuers.web, 'jwt'));
    const proof = wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    const request = { accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof] };
    expect((await wallet.requestCredential(request)).status).toBe(200);
    const replay = await wallet.requestCredential(request);
    expectOAuthError(replay, 400, 'invalid_nonce');
    const another = await wallet.requestCredential({ ...request, proofs: [wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() })] });
    expectOAuthError(another, 401, 'invalid_token');
  });

  test('an unknown credential_configuration_id is unknown_credential_configuration', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    const proof = wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    expectOAuthError(await wallet.requestCredential({ accessToken: r.accessToken, configurationId: 'NoSuchConfiguration', proofs: [proof] }), 400, 'unknown_credential_configuration');
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('a token for one offered configuration does not get another configuration of the same issuer', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    const proof = wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    const res = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: JWT_ID, proofs: [proof] });
    expectOAuthError(res, 400, 'unknown_credential_configuration');
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('one tenant’s code, offer and nonce are worthless at another tenant’s issuer', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const summary = summarizeOffer(created.offer);
    const otherAs = await wallet.fetchAuthorizationServerMetadata(issuers.key.credentialIssuer);
    // The code, at the other tenant's token endpoint.
    expectOAuthError(await wallet.requestToken({ tokenEndpoint: otherAs.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode! }), 400, 'invalid_grant');
    // The offer reference, under the other tenant's issuer.
    const ref = decodeURIComponent(created.credential_offer_uri.split('credential_offer_uri=')[1]!).split('/offers/')[1]!;
    expect((await fetch(`${issuers.key.credentialIssuer}/offers/${ref}`)).status).toBe(404);
    // A nonce of the other tenant, in a proof for this one.
    const r = await redeem(wallet, created);
    const foreignNonce = await wallet.nonce(`${issuers.key.credentialIssuer}/nonce`);
    const proof = wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: foreignNonce, key: wallet.newHolderKey() });
    expectOAuthError(await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof] }), 400, 'invalid_nonce');
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('a token from one issuer (tenant) is invalid_token at another issuer’s credential endpoint', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const walletA = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(walletA, created);
    const walletB = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const metadataB = await walletB.fetchIssuerMetadata(issuers.key.credentialIssuer);
    const proof = walletB.makeProof({ aud: issuers.key.credentialIssuer, nonce: await walletB.nonce(), key: walletB.newHolderKey() });
    const res = await walletB.requestCredential({ accessToken: r.accessToken, configurationId: SD_ID, proofs: [proof], credentialEndpoint: metadataB.credential_endpoint });
    expectOAuthError(res, 401, 'invalid_token');
    // RFC 6750 §3: a Bearer challenge (an RS that also takes DPoP may offer both).
    expect(res.headers.get('www-authenticate')).toMatch(/\bBearer\b/i);
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('no access token, or a made-up one, is a 401 with WWW-Authenticate (RFC 6750 §3)', async () => {
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const metadata = await wallet.fetchIssuerMetadata(issuers.web.credentialIssuer);
    const proof = wallet.makeProof({ aud: metadata.credential_issuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    const none = await wallet.requestCredential({ accessToken: null, configurationId: SD_ID, proofs: [proof] });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^(Bearer|DPoP)\b/i);
    expect(none.credentials).toEqual([]);
    const madeUp = await wallet.requestCredential({ accessToken: 'bm90LWEtdG9rZW4', configurationId: SD_ID, proofs: [proof] });
    expectOAuthError(madeUp, 401, 'invalid_token');
    expect(madeUp.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const notify = await wallet.notify({ accessToken: 'bm90LWEtdG9rZW4', notificationId: 'x', event: 'credential_accepted' });
    expect(notify.status).toBe(401);
  });
});

describe('OID4VCI interop (spec wallet): DPoP-bound tokens (RFC 9449)', () => {
  async function dpopRedeemed() {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', dpop: true });
    const r = await redeem(wallet, created);
    expect(r.token.token_type.toLowerCase()).toBe('dpop');
    const proof = wallet.makeProof({ aud: r.summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    return { created, wallet, r, proof };
  }

  test('a DPoP-bound token presented as a Bearer token (no proof) is refused (§7.1)', async () => {
    const { created, wallet, r, proof } = await dpopRedeemed();
    const res = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof], authorization: `Bearer ${r.accessToken}`, dpopProof: null });
    expect(res.status).toBe(401);
    expect(res.credentials).toEqual([]);
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('a DPoP proof whose ath is another token’s hash, or signed by another key, is refused', async () => {
    const { created, wallet, r, proof } = await dpopRedeemed();
    const url = wallet.issuerMetadata.credential_endpoint;
    const wrongAth = wallet.makeDpopProof({ htm: 'POST', htu: url, accessToken: `${r.accessToken}x`, nonce: wallet.rsDpopNonce });
    const res1 = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof], dpopProof: wrongAth });
    // RFC 9449 §7.1: a resource refuses a bad proof with 401 and the DPoP challenge.
    expectOAuthError(res1, 401, 'invalid_dpop_proof');
    expect(res1.headers.get('www-authenticate')).toMatch(/^DPoP /);
    const stranger = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', dpop: true });
    const otherKey = stranger.makeDpopProof({ htm: 'POST', htu: url, accessToken: r.accessToken, nonce: wallet.rsDpopNonce });
    const res2 = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof], dpopProof: otherKey });
    expectOAuthError(res2, 401, 'invalid_dpop_proof');
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('a DPoP proof whose jwk holds the private key is refused at the token (400) and credential (401) endpoints; nothing is spent', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', dpop: true });
    const { summary, as } = await wallet.discover(await wallet.resolveOffer(created.credential_offer));
    // RFC 9449 §4.3 (7): a proof signed by the key it names, but naming it with its private member.
    const privateJwk = wallet.dpopKey.privateKey.export({ format: 'jwk' });
    const leaky = (htu: string, extra: Record<string, unknown> = {}) =>
      signCompactJws({ typ: DPOP_TYP, alg: wallet.dpopKey.alg, jwk: privateJwk }, { jti: randomUUID(), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000), ...extra }, wallet.dpopKey.privateKey);
    const form = new URLSearchParams({ grant_type: PRE_AUTHORIZED_CODE_GRANT, 'pre-authorized_code': summary.preAuthorizedCode! });
    const tokenRes = await fetch(as.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: leaky(as.token_endpoint) }, body: form });
    expect({ status: tokenRes.status, error: ((await tokenRes.json()) as { error: string }).error }).toEqual({ status: 400, error: 'invalid_dpop_proof' });
    await expectNothingIssued(issuers.web, created, 'offer');

    // The code was not spent: the same wallet, with a proper proof, redeems it.
    const token = await wallet.token({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: summary.preAuthorizedCode! });
    const accessToken = token.access_token as string;
    const configurationId = summary.configurationIds[0]!;
    const proof = wallet.makeProof({ aud: summary.credentialIssuer, nonce: await wallet.nonce(), key: wallet.newHolderKey() });
    const url = wallet.issuerMetadata.credential_endpoint;
    const res = await wallet.requestCredential({ accessToken, configurationId, proofs: [proof], dpopProof: leaky(url, { ath: accessTokenHash(accessToken), ...(wallet.rsDpopNonce ? { nonce: wallet.rsDpopNonce } : {}) }) });
    expectOAuthError(res, 401, 'invalid_dpop_proof');
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    await expectNothingIssued(issuers.web, created, 'redeemed');
    // Neither the token nor the key proof's nonce was spent.
    expect((await wallet.requestCredential({ accessToken, configurationId, proofs: [proof] })).status).toBe(200);
  });

  test('a DPoP proof sent twice is refused the second time (its jti is single use), and nothing is issued', async () => {
    const { wallet, r, proof } = await dpopRedeemed();
    const url = wallet.issuerMetadata.credential_endpoint;
    const dpop = wallet.makeDpopProof({ htm: 'POST', htu: url, accessToken: r.accessToken, nonce: wallet.rsDpopNonce });
    // First use issues; the proof's jti is spent with it.
    const first = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof], dpopProof: dpop });
    expect(first.status).toBe(200);
    const again = await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs: [proof], dpopProof: dpop });
    expectOAuthError(again, 401, 'invalid_dpop_proof');
    expect(again.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
  });
});

describe('OID4VCI interop (spec wallet): metadata stays usable', () => {
  test('display entries a wallet would reject are left out, a claim named display stays a claim, the other configurations stay listed', async () => {
    const issuer = await newIssuer({ method: 'key' });
    const body = {
      id: 'Odd',
      vct: 'urn:odd',
      display: [
        { locale: 'en' },
        { name: 'Odd card', logo: { url: 'http://insecure.example/logo.png', alt_text: 'x' }, background_image: 'x', extra: { nested: true } },
        { name: 'Logo card', logo: { url: 'https://example.com/l.png' } },
      ],
      claims: { badge: { display: { value_type: 'string' }, level: { value_type: 'string' } } },
    };
    const created = await api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: issuer.apiKey, body });
    expect(created.status).toBe(200);
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const metadata = await wallet.fetchIssuerMetadata(issuer.credentialIssuer);
    expect(Object.keys(metadata.credential_configurations_supported).sort()).toEqual([JWT_ID, 'Odd', SD_ID].sort());
    const odd = metadata.credential_configurations_supported.Odd;
    expect(odd.credential_metadata.display).toEqual([{ name: 'Odd card' }, { name: 'Logo card', logo: { uri: 'https://example.com/l.png' } }]);
    // DynamoDB keeps no member order: compared as a set.
    const claims = (odd.credential_metadata.claims as { path: string[] }[]).map((c) => c.path.join('/')).sort();
    expect(claims).toEqual(['badge', 'badge/display', 'badge/level']);
  });
});

describe('OID4VCI interop (spec wallet): malformed requests get the protocol error shape', () => {
  test('a token request that is not a form, and a credential request that is not JSON or an object', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    const tokenEndpoint = `${r.summary.credentialIssuer}/token`;
    const asJson = await fetch(tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([asJson.status, await asJson.json()]).toEqual([400, { error: 'invalid_request', error_description: expect.any(String) }]);
    // RFC 6749 §3.2 and §5.2: a repeated parameter is refused, named in the characters a description may use.
    const repeated = await fetch(tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a%22%09b=1&a%22%09b=2' });
    expect([repeated.status, await repeated.json()]).toEqual([400, { error: 'invalid_request', error_description: "Parameter a' b is repeated" }]);
    const credentialEndpoint = `${r.summary.credentialIssuer}/credential`;
    for (const body of ['{not json', '[1,2]']) {
      const res = await fetch(credentialEndpoint, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${r.accessToken}` }, body });
      expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([400, 'invalid_credential_request']);
    }
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });

  test('two proofs of the same key in one batch are refused (§8.3: a key binds at most one credential)', async () => {
    const created = await createOffer(issuers.web, 'sd');
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const r = await redeem(wallet, created);
    const nonce = await wallet.nonce();
    const key = wallet.newHolderKey();
    const proofs = [wallet.makeProof({ aud: r.summary.credentialIssuer, nonce, key }), wallet.makeProof({ aud: r.summary.credentialIssuer, nonce, key })];
    expectOAuthError(await wallet.requestCredential({ accessToken: r.accessToken, configurationId: r.configurationId, proofs }), 400, 'invalid_proof');
    await expectNothingIssued(issuers.web, created, 'redeemed');
  });
});
