/**
 * Interop: Credo 0.6.3's OpenID4VCI holder (test/helpers/credo-holder.ts) redeems offers from our
 * issuer (`<base>/oid4vci/<wallet_id>`) on the local runtime: by value and by reference, with and
 * without a PIN, did:key and jwk holder binding, SD-JWT VC and jwt_vc_json, issuer did:key and
 * did:web. The harness itself is proved against Credo's own issuer in credo-harness.test.ts, so a
 * failure here is a difference between our issuer and what Credo expects.
 */
import { LOCAL_TAA } from '../../infra/local/runtime';
import { createCredoHolder, type CredoHolder, type HolderAlg, type HolderBinding } from '../helpers/credo-holder';
import { startTestApi, type ApiResponse, type TestApi } from '../helpers/runtime';

let api: TestApi;
let holder: CredoHolder;

beforeAll(async () => {
  api = await startTestApi();
  holder = await createCredoHolder();
});
afterAll(async () => {
  await holder?.shutdown();
  await api?.rt.stop();
});

function ok<T = any>(res: ApiResponse<T>, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const PERSON = { given_name: 'Erika', family_name: 'Mustermann', address: { street: 'Heidestraße 17' } };
const DEGREE = { name: 'Erika Mustermann', degree: 'MSc Computer Science' };

interface Tenant {
  readonly apiKey: string;
  readonly walletId: number;
  /** What names the wallet in its public URLs (GET /api/v1/wallet). */
  readonly publicRef: string;
  readonly dids: { readonly key: string; readonly web: string };
  readonly supported: { readonly 'vc+sd-jwt': string; readonly 'dc+sd-jwt': string; readonly jwt_vc_json: string };
}

/** A wallet with a did:key (Ed25519) and a published did:web (P-256) to issue from. */
async function walletWithDids() {
  const w = await api.newWallet();
  const call = (method: string, path: string, body?: unknown) => api.call(method, path, { key: w.apiKey, body });
  const didKey = ok(await call('POST', '/api/v1/create-did', { method: 'key' }), 'create did:key').did.did as string;
  const didWeb = ok(await call('POST', '/api/v1/create-did', { method: 'web', options: { key_type: 'p256' } }), 'create did:web').did.did as string;
  // A did:web document is served (and so resolvable by the wallet) only once the DID is public.
  ok(await call('POST', '/api/v1/accept-taa', { mechanism: 'service_agreement', version: LOCAL_TAA.version }), 'accept-taa');
  ok(await call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(didWeb)}`), 'set-public-did');
  return { w, call, dids: { key: didKey, web: didWeb } };
}

/** ...and three supported credentials. */
async function newTenant(): Promise<Tenant> {
  const { w, call, dids } = await walletWithDids();

  const sdJwt = {
    id: 'IdentityCredential',
    vct: 'https://example.com/identity',
    claims: { given_name: { mandatory: true, value_type: 'string' }, family_name: { value_type: 'string' }, address: { street: { value_type: 'string' } } },
    sd_list: ['/given_name', '/address/street'],
  };
  const vcSdJwt = ok(await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', sdJwt), 'credentials-supported/sd-jwt');
  const dcSdJwt = ok(
    await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { ...sdJwt, id: 'IdentityCredentialDc', format: 'dc+sd-jwt' }),
    'credentials-supported/sd-jwt (dc+sd-jwt)',
  );
  const jwt = ok(
    await call('POST', '/api/v1/oid4vci/credentials-supported/jwt', {
      id: 'Degree',
      type: ['VerifiableCredential', 'UniversityDegreeCredential'],
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      credentialSubject: { name: {}, degree: {} },
    }),
    'credentials-supported/jwt',
  );
  return {
    apiKey: w.apiKey,
    walletId: w.walletId,
    publicRef: w.publicRef,
    dids,
    supported: { 'vc+sd-jwt': vcSdJwt.supported_cred_id, 'dc+sd-jwt': dcSdJwt.supported_cred_id, jwt_vc_json: jwt.supported_cred_id },
  };
}

let tenantPromise: Promise<Tenant> | undefined;
const tenant = () => (tenantPromise ??= newTenant());

type Format = keyof Tenant['supported'];

interface Offer {
  readonly exchangeId: string;
  readonly byValue: string;
  readonly byReference: string;
}

async function createOffer(t: Tenant, format: Format, issuer: 'key' | 'web', pin?: string): Promise<Offer> {
  const body = {
    supported_cred_id: t.supported[format],
    credential_subject: format === 'jwt_vc_json' ? DEGREE : PERSON,
    did: t.dids[issuer],
    ...(pin ? { pin } : {}),
  };
  const res = ok(await api.call('POST', '/api/v1/oid4vci/issue', { key: t.apiKey, body }), 'oid4vci/issue');
  expect(res).toMatchObject({ offer: expect.any(Object), credential_offer: expect.any(String), credential_offer_uri: expect.any(String), exchange: { state: 'created' } });
  const uri: string = res.credential_offer_uri;
  return {
    exchangeId: res.exchange.exchange_id,
    byValue: res.credential_offer,
    // Either an offer URI with credential_offer_uri=…, or the bare URL the offer is served at.
    byReference: /^https?:/.test(uri) ? `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(uri)}` : uri,
  };
}

async function exchange(t: Tenant, id: string) {
  return ok(await api.call('GET', `/api/v1/oid4vci/exchanges/${id}`, { key: t.apiKey }), 'exchange');
}

test('Credo resolves our issuer DIDs: did:web over loopback http, did:key locally, keys usable for assertions', async () => {
  const { dids } = await walletWithDids();
  for (const did of [dids.web, dids.key]) {
    const doc = await holder.agent.dids.resolveDidDocument(did);
    expect(doc.id).toBe(did);
    // Credo verifies SD-JWT VC and JWT VC issuer keys only through assertionMethod.
    const [vm] = doc.assertionMethod ?? [];
    expect(vm).toBeDefined();
    expect(doc.dereferenceKey(typeof vm === 'string' ? vm : vm!.id, ['assertionMethod'])).toBeDefined();
  }
});

describe('Credo 0.6.3 redeems our OpenID4VCI offers', () => {
  // [format, issuer DID, by, pin?, binding, alg]
  const cases: Array<[Format, 'key' | 'web', 'value' | 'reference', boolean, HolderBinding, HolderAlg]> = [
    ['vc+sd-jwt', 'key', 'value', false, 'jwk', 'ES256'],
    ['vc+sd-jwt', 'web', 'reference', true, 'did:key', 'EdDSA'],
    ['vc+sd-jwt', 'web', 'value', true, 'jwk', 'EdDSA'],
    ['dc+sd-jwt', 'key', 'reference', false, 'did:key', 'ES256'],
    ['dc+sd-jwt', 'web', 'reference', true, 'jwk', 'ES256'],
    // Credo refuses jwk binding for jwt_vc_json (OpenId4VciHolderService), so did:key only.
    ['jwt_vc_json', 'key', 'value', true, 'did:key', 'ES256'],
    ['jwt_vc_json', 'web', 'reference', false, 'did:key', 'EdDSA'],
  ];

  test.each(cases)('%s from did:%s, by %s, pin %s, %s binding (%s)', async (format, issuer, by, withPin, binding, alg) => {
    const t = await tenant();
    const pin = withPin ? '493817' : undefined;
    const offer = await createOffer(t, format, issuer, pin);

    const res = await holder.receiveOffer(by === 'value' ? offer.byValue : offer.byReference, { binding, alg, txCode: pin });

    expect(res.resolvedOffer.credentialOfferPayload.credential_issuer).toBe(`${api.rt.url}/oid4vci/${t.publicRef}`);
    expect(res.resolvedOffer.metadata.originalDraftVersion).toBe('V1');
    expect(res.credentials).toHaveLength(1);
    const [c] = res.credentials;
    expect(c!.format).toBe(format);
    expect(c!.payload.iss).toBe(t.dids[issuer]);

    if (format === 'jwt_vc_json') {
      expect(c!.payload).toMatchObject({ sub: res.holder.did, vc: { type: expect.arrayContaining(['VerifiableCredential', 'UniversityDegreeCredential']) } });
      expect(c!.claims).toEqual({ id: res.holder.did, ...DEGREE });
    } else {
      expect(c!.header.typ).toEqual(format === 'dc+sd-jwt' ? 'dc+sd-jwt' : expect.stringMatching(/^(vc|dc)\+sd-jwt$/));
      expect(c!.claims).toMatchObject({ vct: 'https://example.com/identity', ...PERSON });
      // sd_list: given_name and address.street only as disclosures; family_name in the clear.
      expect(c!.payload.family_name).toBe('Mustermann');
      expect(c!.payload.given_name).toBeUndefined();
      expect((c!.payload.address as Record<string, unknown>)?.street).toBeUndefined();
      if (binding === 'jwk') expect(c!.payload.cnf).toEqual({ jwk: expect.objectContaining({ x: res.holder.publicJwk.x }) });
      else expect((c!.payload.cnf as { kid: string }).kid).toMatch(new RegExp(`^${res.holder.did}#`));
    }

    const x = await exchange(t, offer.exchangeId);
    // The issuer always sends a notification_id, and the harness reports acceptance with it.
    expect(res.notified).toHaveLength(1);
    expect(x.state).toBe('accepted');
    expect(x.issuer_id).toBe(t.dids[issuer]);
  });

  test('the pre-authorized code works once: a second redemption of the same offer is refused', async () => {
    const t = await tenant();
    const offer = await createOffer(t, 'vc+sd-jwt', 'key');
    await holder.receiveOffer(offer.byValue, { binding: 'jwk' });
    await expect(holder.receiveOffer(offer.byValue, { binding: 'jwk' })).rejects.toThrow(/access token/i);
  });

  test('a wrong PIN is refused at the token endpoint and nothing is issued', async () => {
    const t = await tenant();
    const offer = await createOffer(t, 'vc+sd-jwt', 'key', '493817');
    await expect(holder.receiveOffer(offer.byReference, { binding: 'jwk', txCode: '000000' })).rejects.toThrow(/access token/i);
    expect((await exchange(t, offer.exchangeId)).state).toBe('offer');
  });
});

describe('Credo 0.6.3 checks our status lists', () => {
  test('an SD-JWT VC verifies while valid, and fails Credo’s status check once revoked (IETF Token Status List)', async () => {
    const t = await newTenant();
    // The list is signed by the public did:web, the same issuer as the credential: Credo verifies it with the credential issuer's key.
    const def = ok(await api.call('POST', '/api/v1/status-list/defs', { key: t.apiKey, body: { supported_cred_id: t.supported['dc+sd-jwt'] } }), 'status-list def');
    const offer = await createOffer(t, 'dc+sd-jwt', 'web');
    const res = await holder.receiveOffer(offer.byReference, { binding: 'jwk' });
    const [c] = res.credentials;
    expect(c!.payload.status).toEqual({ status_list: { idx: expect.any(Number), uri: `${api.rt.url}/status-lists/${t.publicRef}/${def.id}/0/ietf` } });

    const before = await holder.agent.sdJwtVc.verify({ compactSdJwtVc: c!.compact });
    expect(before.isValid).toBe(true);

    ok(await api.call('PATCH', `/api/v1/status-list/entries/revoke/${offer.exchangeId}`, { key: t.apiKey }), 'revoke');
    // No publish call: the list follows by itself within seconds.
    const deadline = Date.now() + 20_000;
    let after = await holder.agent.sdJwtVc.verify({ compactSdJwtVc: c!.compact });
    while (after.isValid && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await holder.agent.sdJwtVc.verify({ compactSdJwtVc: c!.compact });
    }
    expect(after.isValid).toBe(false);
    expect(String((after as { error?: Error }).error?.message)).toMatch(/status/i);
  }, 60_000);
});
