import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';

const SUPPORTED = '/api/v1/oid4vci/credentials-supported';
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

let api: TestApi;
let ddb: DynamoDBDocumentClient;
beforeAll(async () => {
  api = await startTestApi();
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
});
afterAll(async () => {
  ddb?.destroy();
  await api?.rt.stop();
});

const table = () => process.env.TABLE_NAME!;
const item = async (walletId: number, SK: string) => (await ddb.send(new GetCommand({ TableName: table(), Key: { PK: `W#${walletId}`, SK } }))).Item;
const events = async (walletId: number, type: string) => {
  const out = await ddb.send(
    new QueryCommand({ TableName: table(), KeyConditionExpression: 'PK = :p AND begins_with(SK, :e)', ExpressionAttributeValues: { ':p': `W#${walletId}`, ':e': 'EVT#' }, ConsistentRead: true }),
  );
  return (out.Items ?? []).map((i) => i.event).filter((e) => e.type === type);
};

/** A wallet with a public did:sov DID (the TAA accepted first). */
async function issuerWallet() {
  const w = await api.newWallet();
  const did = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey })).body.did;
  expect((await api.call('POST', '/api/v1/accept-taa', { key: w.apiKey, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } })).status).toBe(200);
  expect((await api.call('POST', `/api/v1/set-public-did?DID=${did.did}`, { key: w.apiKey })).status).toBe(200);
  return { ...w, did };
}

const SD_BODY = {
  id: 'IdentityCredential',
  vct: 'https://credentials.example.com/identity_credential',
  claims: {
    given_name: { mandatory: true, value_type: 'string', display: [{ name: 'Given name', locale: 'en-US' }] },
    family_name: { mandatory: true, value_type: 'string' },
    birthdate: { value_type: 'date' },
    address: { street_address: { value_type: 'string' }, locality: { value_type: 'string' }, geo: { lat: { value_type: 'number' } } },
    nationalities: { '0': { value_type: 'string' }, '1': { value_type: 'string' } },
  },
  sd_list: ['/given_name', '/family_name', '/address/street_address', '/address', '/nationalities/0'],
  order: ['given_name', 'family_name'],
  cryptographic_binding_methods_supported: ['jwk', 'did:key'],
  cryptographic_suites_supported: ['ES256', 'EdDSA'],
  display: [{ name: 'Identity Credential', locale: 'en-US', background_color: '#12107c', text_color: '#FFFFFF', logo: { url: 'https://example.com/logo.png', alt_text: 'logo' } }],
};

const JWT_BODY = {
  id: 'UniversityDegreeCredential',
  type: ['VerifiableCredential', 'UniversityDegreeCredential'],
  '@context': ['https://www.w3.org/2018/credentials/v1', 'https://www.w3.org/2018/credentials/examples/v1'],
  credentialSubject: { given_name: { display: [{ name: 'Given Name', locale: 'en-US' }] }, degree: { mandatory: true } },
  order: ['given_name', 'degree'],
  cryptographic_binding_methods_supported: ['did:key'],
  cryptographic_suites_supported: ['EdDSA'],
  display: [{ name: 'University Credential', locale: 'en-US' }],
};

describe('credentials-supported (contract 2.1)', () => {
  test('/sd-jwt stores and returns the contract shape; get and list read it back exactly', async () => {
    const w = await api.newWallet();
    const res = await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: SD_BODY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      supported_cred_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      wallet_id: String(w.walletId),
      identifier: 'IdentityCredential',
      format: 'vc+sd-jwt',
      format_data: { vct: SD_BODY.vct, order: SD_BODY.order, claims: SD_BODY.claims },
      vc_additional_data: { sd_list: SD_BODY.sd_list },
      cryptographic_binding_methods_supported: ['jwk', 'did:key'],
      cryptographic_suites_supported: ['ES256', 'EdDSA'],
      display: SD_BODY.display,
      created_at: expect.any(String),
      updated_at: res.body.created_at,
    });
    expect((await api.call('GET', `${SUPPORTED}/${res.body.supported_cred_id}`, { key: w.apiKey })).body).toEqual(res.body);
    expect((await api.call('GET', SUPPORTED, { key: w.apiKey })).body).toEqual([res.body]);
    const dc = await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: { id: 'Dc', vct: 'urn:x', claims: {}, format: 'dc+sd-jwt' } });
    expect(dc.body).toMatchObject({ format: 'dc+sd-jwt', format_data: { vct: 'urn:x', order: null, claims: {} }, vc_additional_data: { sd_list: [] }, display: null, cryptographic_suites_supported: null });
  });

  test('/jwt stores format_data {order, types, context, credentialSubject} and vc_additional_data {type, @context}', async () => {
    const w = await api.newWallet();
    const res = await api.call('POST', `${SUPPORTED}/jwt`, { key: w.apiKey, body: JWT_BODY });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      identifier: 'UniversityDegreeCredential',
      format: 'jwt_vc_json',
      format_data: { order: JWT_BODY.order, types: JWT_BODY.type, context: JWT_BODY['@context'], credentialSubject: JWT_BODY.credentialSubject },
      vc_additional_data: { type: JWT_BODY.type, '@context': JWT_BODY['@context'] },
      cryptographic_binding_methods_supported: ['did:key'],
      cryptographic_suites_supported: ['EdDSA'],
      display: JWT_BODY.display,
    });
    expect(Object.keys(res.body.format_data).sort()).toEqual(['context', 'credentialSubject', 'order', 'types']);
  });

  test('generic endpoint: display and binding methods given inside format_data stay there, the top-level copies are null', async () => {
    const w = await api.newWallet();
    const format_data = {
      vct: 'urn:pid',
      claims: { given_name: { mandatory: true }, '0': { '1': { value_type: 'string' } } },
      display: [{ name: 'PID', locale: 'de-DE' }],
      cryptographic_binding_methods_supported: ['did:jwk'],
    };
    const res = await api.call('POST', SUPPORTED, { key: w.apiKey, body: { format: 'vc+sd-jwt', id: 'Pid', format_data, vc_additional_data: { sd_list: ['/0/1'] } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format_data, vc_additional_data: { sd_list: ['/0/1'] }, display: null, cryptographic_binding_methods_supported: null, cryptographic_suites_supported: null });
    expect((await api.call('GET', `${SUPPORTED}/${res.body.supported_cred_id}`, { key: w.apiKey })).body).toEqual(res.body);
    // Given top-level, they stay top-level.
    const top = await api.call('POST', SUPPORTED, {
      key: w.apiKey,
      body: { format: 'jwt_vc_json', id: 'Top', display: [{ name: 'T' }], cryptographic_binding_methods_supported: ['did:key'], format_data: { types: ['VerifiableCredential'], context: ['https://www.w3.org/2018/credentials/v1'], credentialSubject: {} } },
    });
    expect(top.body).toMatchObject({ display: [{ name: 'T' }], cryptographic_binding_methods_supported: ['did:key'], vc_additional_data: null });
  });

  test('list filters: supported_cred_id, format, identifier; a duplicate id is a 409; deleting frees it', async () => {
    const w = await api.newWallet();
    const sd = (await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: SD_BODY })).body;
    const jwt = (await api.call('POST', `${SUPPORTED}/jwt`, { key: w.apiKey, body: JWT_BODY })).body;
    const list = async (q: string) => (await api.call('GET', `${SUPPORTED}${q}`, { key: w.apiKey })).body.map((r: any) => r.identifier).sort();
    expect(await list('')).toEqual(['IdentityCredential', 'UniversityDegreeCredential']);
    expect(await list('?format=jwt_vc_json')).toEqual(['UniversityDegreeCredential']);
    expect(await list('?identifier=IdentityCredential')).toEqual(['IdentityCredential']);
    expect(await list(`?supported_cred_id=${jwt.supported_cred_id}`)).toEqual(['UniversityDegreeCredential']);
    expect(await list(`?supported_cred_id=${jwt.supported_cred_id}&format=vc%2Bsd-jwt`)).toEqual([]);
    expectError(await api.call('GET', `${SUPPORTED}?format=ldp_vc`, { key: w.apiKey }), 400, 'validation_failed');

    expectError(await api.call('POST', `${SUPPORTED}/jwt`, { key: w.apiKey, body: { ...JWT_BODY, id: 'IdentityCredential' } }), 409, 'identifier_taken');
    const del = await api.call('DELETE', `${SUPPORTED}/${sd.supported_cred_id}`, { key: w.apiKey });
    expect(del).toMatchObject({ status: 200, body: {} });
    expectError(await api.call('GET', `${SUPPORTED}/${sd.supported_cred_id}`, { key: w.apiKey }), 404, 'supported_credential_not_found');
    expectError(await api.call('DELETE', `${SUPPORTED}/${sd.supported_cred_id}`, { key: w.apiKey }), 404, 'supported_credential_not_found');
    expect((await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: SD_BODY })).status).toBe(200);
    // Another wallet may use the same id, and sees none of these.
    const other = await api.newWallet();
    expect((await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: other.apiKey, body: SD_BODY })).status).toBe(200);
    expectError(await api.call('GET', `${SUPPORTED}/${jwt.supported_cred_id}`, { key: other.apiKey }), 404, 'supported_credential_not_found');
    expectError(await api.call('DELETE', `${SUPPORTED}/${jwt.supported_cred_id}`, { key: other.apiKey }), 404, 'supported_credential_not_found');
    expect((await api.call('GET', SUPPORTED, { key: other.apiKey })).body).toHaveLength(1);
  });

  test.each([
    ['a pointer to no claim', ['/nope'], /\/nope names no claim/],
    ['iat', ['/iat'], /in the clear/],
    ['a member of cnf', ['/cnf/jwk'], /in the clear/],
    ['status', ['/status'], /in the clear/],
    ['not a pointer', ['given_name'], /not a JSON pointer/],
  ])('sd_list with %s is a 400 naming the entry', async (_what, sd_list, message) => {
    const w = await api.newWallet();
    const res = await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: { ...SD_BODY, sd_list: ['/given_name', ...sd_list] } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details).toEqual([{ path: 'sd_list.1', message: expect.stringMatching(message) }]);
    expect((await api.call('GET', SUPPORTED, { key: w.apiKey })).body).toEqual([]);
  });

  test('other invalid configurations are 400s naming the field', async () => {
    const w = await api.newWallet();
    const details = async (path: string, body: unknown) => {
      const res = await api.call('POST', `${SUPPORTED}${path}`, { key: w.apiKey, body });
      expectError(res, 400, 'validation_failed');
      return res.body.details.map((d: any) => d.path);
    };
    expect(await details('/sd-jwt', { ...SD_BODY, vct: undefined })).toEqual(['vct']);
    expect(await details('/sd-jwt', { ...SD_BODY, claims: { a: { value_type: 'colour' } }, sd_list: [] })).toEqual(['claims.a.value_type']);
    expect(await details('', { format: 'vc+sd-jwt', id: 'x', format_data: { claims: {} } })).toEqual(['format_data.vct']);
    expect(await details('/jwt', { ...JWT_BODY, type: ['UniversityDegreeCredential'] })).toEqual(['type']);
    expect(await details('/jwt', { ...JWT_BODY, '@context': ['https://example.com/ctx'] })).toEqual(['@context']);
    expect(await details('/jwt', { ...JWT_BODY, id: undefined })).toEqual(['id']);
    expect(await details('', { format: 'ldp_vc', id: 'x' })).toEqual(['format']);
    expect(await details('/sd-jwt', { ...SD_BODY, extra: 1 })).toEqual(['extra']);
    // DynamoDB cannot store an empty member name: a 400, not a 500.
    expect(await details('', { format: 'vc+sd-jwt', id: 'x', format_data: { vct: 'v', claims: {}, extra: { '': 1 } } })).toEqual(['format_data.extra.']);
  });
});

describe('issue and exchanges (contract 2.2, 2.3)', () => {
  async function setup() {
    const w = await issuerWallet();
    const sd = (await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: w.apiKey, body: SD_BODY })).body;
    return { w, sd };
  }

  test('an offer under the public DID; the exchange reads back in state offer; events are staged', async () => {
    const { w, sd } = await setup();
    const subject = { given_name: 'Erika', family_name: 'Mustermann', address: { locality: 'Köln', geo: { lat: 50.9 } }, nationalities: ['DE'] };
    const res = await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { supported_cred_id: sd.supported_cred_id, credential_subject: subject } });
    expect(res.status).toBe(200);
    const issuer = `${api.rt.url}/oid4vci/${w.publicRef}`;
    const code = res.body.offer.grants[GRANT]['pre-authorized_code'];
    expect(res.body.offer).toEqual({
      credential_issuer: issuer,
      credentials: ['IdentityCredential'],
      credential_configuration_ids: ['IdentityCredential'],
      grants: { [GRANT]: { 'pre-authorized_code': code, user_pin_required: false } },
    });
    expect(res.body.credential_offer).toBe(`openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(res.body.offer))}`);
    const byRef = new URL(res.body.credential_offer_uri).searchParams.get('credential_offer_uri')!;
    expect(byRef).toMatch(new RegExp(`^${issuer.replace(/[.]/g, '\\.')}/offers/[A-Za-z0-9_-]{43}$`));
    const exchange = res.body.exchange;
    expect(exchange).toEqual({
      exchange_id: expect.any(String),
      supported_cred_id: sd.supported_cred_id,
      wallet_id: String(w.walletId),
      state: 'created',
      pin: null,
      credential_subject: subject,
      verification_method: w.did.metadata.kid,
      issuer_id: `did:sov:${w.did.did}`,
      code,
      nonce: null,
      token: null,
      created_at: expect.any(String),
      updated_at: exchange.created_at,
    });
    const read = await api.call('GET', `/api/v1/oid4vci/exchanges/${exchange.exchange_id}`, { key: w.apiKey });
    expect(read.body).toEqual({ ...exchange, state: 'offer' });

    // What the protocol endpoints read: the code (by hash) and the offer by reference.
    const hash = createHash('sha256').update(code).digest('base64url');
    expect(await item(w.walletId, `VCCODE#${hash}`)).toMatchObject({ exchange_id: exchange.exchange_id, ttl: expect.any(Number) });
    expect(await item(w.walletId, `VCOFFER#${byRef.split('/').pop()}`)).toMatchObject({ exchange_id: exchange.exchange_id, offer: res.body.offer });
    const [created] = await events(w.walletId, 'oid4vci.exchange.created');
    expect(created.data).toMatchObject({ exchange_id: exchange.exchange_id, state: 'offer', pin_required: false });
    expect(created.data.code).toBeUndefined();
  });

  test('a pin: tx_code in the offer', async () => {
    const { w, sd } = await setup();
    const res = await api.call('POST', '/api/v1/oid4vci/issue', {
      key: w.apiKey,
      body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E', family_name: 'M' }, pin: '0815' },
    });
    expect(res.body.offer.grants[GRANT]).toMatchObject({ user_pin_required: true, tx_code: { input_mode: 'numeric', length: 4 } });
    expect(res.body.exchange.pin).toBe('0815');
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { supported_cred_id: sd.supported_cred_id, pin: '12 34' } }), 400, 'validation_failed');
  });

  test('the issuer DID: given bare or full; another wallet’s, none at all → 400', async () => {
    const { w, sd } = await setup();
    const body = { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E', family_name: 'M' } };
    const key = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: { method: 'key' } })).body.did;
    const viaKey = await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { ...body, did: key.did } });
    expect(viaKey.body.exchange).toMatchObject({ issuer_id: key.did, verification_method: key.metadata.kid });
    const sov = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey })).body.did;
    for (const did of [sov.did, `did:sov:${sov.did}`]) {
      const res = await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { ...body, did, verification_method: `did:sov:${sov.did}#key-1` } });
      expect(res.body.exchange).toMatchObject({ issuer_id: `did:sov:${sov.did}`, verification_method: `did:sov:${sov.did}#key-1` });
    }
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { ...body, did: key.did, verification_method: `did:sov:${sov.did}#key-1` } }), 400, 'invalid_verification_method');

    const other = await api.newWallet();
    const theirs = (await api.call('POST', '/api/v1/create-did', { key: other.apiKey, body: { method: 'key' } })).body.did;
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { ...body, did: theirs.did } }), 400, 'unknown_did');
    // A wallet without a public DID must name one.
    const own = (await api.call('POST', `${SUPPORTED}/sd-jwt`, { key: other.apiKey, body: SD_BODY })).body;
    const none = await api.call('POST', '/api/v1/oid4vci/issue', { key: other.apiKey, body: { ...body, supported_cred_id: own.supported_cred_id } });
    expectError(none, 400, 'no_public_did');
    expect(none.body.error).toMatch(/set-public-did/);
  });

  test('the subject must fit the claims: each problem named', async () => {
    const { w, sd } = await setup();
    const res = await api.call('POST', '/api/v1/oid4vci/issue', {
      key: w.apiKey,
      body: { supported_cred_id: sd.supported_cred_id, credential_subject: { family_name: 7, nick: 'E', address: { geo: { lat: 'north' } } } },
    });
    expectError(res, 400, 'invalid_credential_subject');
    // DynamoDB keeps no key order in a map: the claims come back in any order.
    const byPath = Object.fromEntries(res.body.details.map((d: any) => [d.path, d.message]));
    expect(Object.keys(byPath).sort()).toEqual(['credential_subject/address/geo/lat', 'credential_subject/family_name', 'credential_subject/given_name', 'credential_subject/nick']);
    expect(byPath['credential_subject/given_name']).toMatch(/mandatory claim missing/);
    expect(byPath['credential_subject/family_name']).toMatch(/must be a string/);
    expect(byPath['credential_subject/address/geo/lat']).toMatch(/must be a number/);
    expect(byPath['credential_subject/nick']).toMatch(/unknown claim/);
    expect((await api.call('GET', '/api/v1/oid4vci/exchanges', { key: w.apiKey })).body).toEqual([]);
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { credential_subject: {} } }), 400, 'validation_failed');
    const empty = await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E', family_name: 'M', '': 1 } } });
    expectError(empty, 400, 'validation_failed');
    expect(empty.body.details).toEqual([{ path: 'credential_subject.', message: expect.any(String) }]);
  });

  test('list filters, another wallet’s exchange and configuration are 404, delete removes the code', async () => {
    const { w, sd } = await setup();
    const jwt = (await api.call('POST', `${SUPPORTED}/jwt`, { key: w.apiKey, body: JWT_BODY })).body;
    const issue = async (supported_cred_id: string, credential_subject: object) =>
      (await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { supported_cred_id, credential_subject } })).body.exchange;
    const a = await issue(sd.supported_cred_id, { given_name: 'A', family_name: 'B' });
    const b = await issue(jwt.supported_cred_id, { degree: 'BSc', id: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' });
    const ids = async (q: string) => (await api.call('GET', `/api/v1/oid4vci/exchanges${q}`, { key: w.apiKey })).body.map((e: any) => e.exchange_id).sort();
    expect(await ids('')).toEqual([a.exchange_id, b.exchange_id].sort());
    expect(await ids(`?supported_cred_id=${jwt.supported_cred_id}`)).toEqual([b.exchange_id]);
    expect(await ids(`?exchange_id=${a.exchange_id}`)).toEqual([a.exchange_id]);
    expect(await ids('?state=offer')).toEqual([a.exchange_id, b.exchange_id].sort());
    expect(await ids('?state=issued')).toEqual([]);
    expectError(await api.call('GET', '/api/v1/oid4vci/exchanges?state=done', { key: w.apiKey }), 400, 'validation_failed');
    const page = await api.call('GET', '/api/v1/oid4vci/exchanges?limit=1', { key: w.apiKey });
    expect(page.body).toHaveLength(1);
    expect(page.headers.get('x-next-cursor')).toEqual(expect.any(String));

    const other = await api.newWallet();
    expectError(await api.call('GET', `/api/v1/oid4vci/exchanges/${a.exchange_id}`, { key: other.apiKey }), 404, 'exchange_not_found');
    expectError(await api.call('DELETE', `/api/v1/oid4vci/exchanges/${a.exchange_id}`, { key: other.apiKey }), 404, 'exchange_not_found');
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: other.apiKey, body: { supported_cred_id: sd.supported_cred_id } }), 404, 'supported_credential_not_found');
    expect((await api.call('GET', '/api/v1/oid4vci/exchanges', { key: other.apiKey })).body).toEqual([]);

    const hash = createHash('sha256').update(a.code).digest('base64url');
    expect(await item(w.walletId, `VCCODE#${hash}`)).toBeDefined();
    expect(await api.call('DELETE', `/api/v1/oid4vci/exchanges/${a.exchange_id}`, { key: w.apiKey })).toMatchObject({ status: 200, body: {} });
    expect(await item(w.walletId, `VCCODE#${hash}`)).toBeUndefined();
    expectError(await api.call('GET', `/api/v1/oid4vci/exchanges/${a.exchange_id}`, { key: w.apiKey }), 404, 'exchange_not_found');
    expectError(await api.call('DELETE', `/api/v1/oid4vci/exchanges/${a.exchange_id}`, { key: w.apiKey }), 404, 'exchange_not_found');
    expect(await ids('')).toEqual([b.exchange_id]);
    expect((await events(w.walletId, 'oid4vci.exchange.removed')).map((e) => e.data.exchange_id)).toEqual([a.exchange_id]);
  });

  test('an exchange whose code expired reads as expired, recorded once even under concurrent reads', async () => {
    const { w, sd } = await setup();
    const res = await api.call('POST', '/api/v1/oid4vci/issue', {
      key: w.apiKey,
      body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E', family_name: 'M' }, expires_in: 60 },
    });
    const id = res.body.exchange.exchange_id;
    const stored = await item(w.walletId, `VCX#${id}`);
    expect(stored!.code_expires_at - Date.parse(res.body.exchange.created_at)).toBe(60_000);
    // As if the minute had passed.
    await ddb.send(
      new UpdateCommand({ TableName: table(), Key: { PK: `W#${w.walletId}`, SK: `VCX#${id}` }, UpdateExpression: 'SET code_expires_at = :t', ExpressionAttributeValues: { ':t': Date.now() - 1 } }),
    );
    const reads = await Promise.all([
      api.call('GET', `/api/v1/oid4vci/exchanges/${id}`, { key: w.apiKey }),
      api.call('GET', `/api/v1/oid4vci/exchanges/${id}`, { key: w.apiKey }),
      api.call('GET', '/api/v1/oid4vci/exchanges?state=expired', { key: w.apiKey }),
    ]);
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(reads[0]!.body.state).toBe('expired');
    expect(reads[1]!.body.state).toBe('expired');
    expect(reads[2]!.body.map((e: any) => e.exchange_id)).toEqual([id]);
    expect((await api.call('GET', '/api/v1/oid4vci/exchanges?state=offer', { key: w.apiKey })).body).toEqual([]);
    expect((await events(w.walletId, 'oid4vci.exchange.expired')).map((e) => e.data.exchange_id)).toEqual([id]);
    expectError(await api.call('POST', '/api/v1/oid4vci/issue', { key: w.apiKey, body: { supported_cred_id: sd.supported_cred_id, expires_in: 10 } }), 400, 'validation_failed');
  });
});
