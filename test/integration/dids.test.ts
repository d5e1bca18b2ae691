import bs58 from 'bs58';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamoDbLocal } from '../../infra/local/emulators';
import { ensureTable, LOCAL_TAA } from '../../infra/local/runtime';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.rt.stop();
});

async function acceptTaa(key: string) {
  const res = await api.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } });
  expect(res.status).toBe(200);
}

describe('create-did (contract 4.9)', () => {
  test('no body: a did:sov on an Ed25519 key, exactly the contract shape', async () => {
    const w = await api.newWallet();
    const res = await api.call('POST', '/api/v1/create-did', { key: w.apiKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['did']);
    expect(res.body.did).toEqual({
      did: expect.any(String),
      verkey: expect.any(String),
      posture: 'wallet_only',
      key_type: 'ed25519',
      method: 'sov',
      metadata: { kid: `did:sov:${res.body.did.did}#key-1`, public_jwk: { kty: 'OKP', crv: 'Ed25519', x: expect.any(String) }, created_at: expect.any(String) },
    });
    // The verkey is the key in base58, the DID its first 16 bytes (compared as bytes: a key with leading
    // zero bytes encodes shorter than the usual 44 and 22 characters).
    const key = Buffer.from(res.body.did.metadata.public_jwk.x, 'base64url');
    expect(Buffer.from(bs58.decode(res.body.did.verkey))).toEqual(key);
    expect(Buffer.from(bs58.decode(res.body.did.did))).toEqual(key.subarray(0, 16));
  });

  test.each([
    [{ method: 'key', options: { key_type: 'p256' } }, /^did:key:zDn/],
    [{ method: 'key' }, /^did:key:z6Mk/],
    [{ method: 'jwk', options: { key_type: 'p256' } }, /^did:jwk:ey/],
    [{ method: 'web' }, /^did:web:127\.0\.0\.1%3A\d+:dids:[1-9A-HJ-NP-Za-km-z]+$/],
    [{ method: 'indy' }, /^did:indy:credential-service:[1-9A-HJ-NP-Za-km-z]{21,22}$/],
  ])('%j', async (body, pattern) => {
    const w = await api.newWallet();
    const res = await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body });
    expect(res.status).toBe(200);
    expect(res.body.did.did).toMatch(pattern);
    expect(res.body.did.method).toBe(body.method);
  });

  test.each([
    [{ method: 'ethr' }, 'validation_failed'],
    [{ method: 'sov', options: { key_type: 'p256' } }, 'unsupported_key_type'],
    [{ options: { key_type: 'rsa' } }, 'validation_failed'],
    [{ seed: '000000000000000000000000Steward1' }, 'validation_failed'],
  ])('%j is a 400 and creates nothing', async (body, code) => {
    const w = await api.newWallet();
    expectError(await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body }), 400, code);
    expect((await api.call('GET', '/api/v1/dids', { key: w.apiKey })).body).toEqual([]);
  });

  test('POST /api/v1/did/indy returns {did} with the documented namespace', async () => {
    const w = await api.newWallet();
    const res = await api.call('POST', '/api/v1/did/indy', { key: w.apiKey });
    expect(res).toMatchObject({ status: 200, body: { did: expect.stringMatching(/^did:indy:credential-service:/) } });
    expect(Object.keys(res.body)).toEqual(['did']);
  });

  test('list and get show only this wallet’s DIDs; another wallet’s is a 404', async () => {
    const a = await api.newWallet();
    const b = await api.newWallet();
    const da = (await api.call('POST', '/api/v1/create-did', { key: a.apiKey })).body.did;
    await api.call('POST', '/api/v1/create-did', { key: a.apiKey, body: { method: 'key' } });
    const list = (await api.call('GET', '/api/v1/dids', { key: a.apiKey })).body;
    expect(list).toHaveLength(2);
    expect((await api.call('GET', '/api/v1/dids?method=sov', { key: a.apiKey })).body).toEqual([da]);
    expect((await api.call('GET', `/api/v1/dids/${da.did}`, { key: a.apiKey })).body).toEqual(da);
    expect((await api.call('GET', `/api/v1/dids/did:sov:${da.did}`, { key: a.apiKey })).body).toEqual(da);
    expectError(await api.call('GET', `/api/v1/dids/${da.did}`, { key: b.apiKey }), 404, 'did_not_found');
    expect((await api.call('GET', '/api/v1/dids', { key: b.apiKey })).body).toEqual([]);
  });
});

describe('TAA (contract 4.11) and set-public-did', () => {
  test('fetch-taa shows the agreement, its mechanisms and no acceptance; accept-taa records one', async () => {
    const w = await api.newWallet();
    const fetched = await api.call('POST', '/api/v1/fetch-taa', { key: w.apiKey });
    expect(fetched.status).toBe(200);
    expect(fetched.body.taa).toEqual({
      taa_required: true,
      taa_record: { text: LOCAL_TAA.text, version: LOCAL_TAA.version, digest: expect.stringMatching(/^[0-9a-f]{64}$/) },
      aml_record: { version: '1.0', aml: LOCAL_TAA.aml },
      taa_accepted: null,
    });
    const accepted = await api.call('POST', '/api/v1/accept-taa', { key: w.apiKey, body: { mechanism: 'on_file', text: LOCAL_TAA.text, version: LOCAL_TAA.version } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.taa.taa_accepted).toEqual({ mechanism: 'on_file', time: expect.any(Number), version: LOCAL_TAA.version, digest: fetched.body.taa.taa_record.digest });
    expect(accepted.body.taa.taa_accepted.time % 86400).toBe(0);
  });

  test.each([
    [{}, 'validation_failed'],
    [{ mechanism: 'telepathy' }, 'unknown_mechanism'],
    [{ mechanism: 'on_file', version: '0.9' }, 'taa_mismatch'],
    [{ mechanism: 'on_file', text: 'something else' }, 'taa_mismatch'],
  ])('accept-taa %j is a 400 and records nothing', async (body, code) => {
    const w = await api.newWallet();
    expectError(await api.call('POST', '/api/v1/accept-taa', { key: w.apiKey, body }), 400, code);
    expect((await api.call('POST', '/api/v1/fetch-taa', { key: w.apiKey })).body.taa.taa_accepted).toBeNull();
  });

  test('set-public-did: 409 before acceptance, then public and resolvable by anyone without a key', async () => {
    const w = await api.newWallet();
    const d = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey })).body.did;
    expectError(await api.call('POST', `/api/v1/set-public-did?DID=${d.did}`, { key: w.apiKey }), 409, 'taa_not_accepted');
    expect((await api.call('GET', `/1.0/identifiers/did:sov:${d.did}`)).status).toBe(404);
    await acceptTaa(w.apiKey);
    const set = await api.call('POST', `/api/v1/set-public-did?DID=${d.did}`, { key: w.apiKey });
    expect(set.status).toBe(200);
    expect(set.body.result).toMatchObject({ did: d.did, posture: 'public', metadata: { published_at: expect.any(String) } });
    expect((await api.call('GET', '/api/v1/public-did', { key: w.apiKey })).body.result.did).toBe(d.did);

    const resolved = await api.call('GET', `/1.0/identifiers/did:sov:${d.did}`);
    expect(resolved.status).toBe(200);
    const doc = resolved.body.didDocument;
    expect(doc.id).toBe(`did:sov:${d.did}`);
    expect(doc.verificationMethod).toEqual([
      { id: d.metadata.kid, type: 'JsonWebKey2020', controller: doc.id, publicKeyJwk: d.metadata.public_jwk },
      { id: `${doc.id}#key-multibase`, type: 'Ed25519VerificationKey2020', controller: doc.id, publicKeyMultibase: expect.stringMatching(/^z6Mk/) },
      // The public DID's DIDComm key (docs/didcomm.md): another key than the DID's own.
      { id: `${doc.id}#didcomm-1`, type: 'Ed25519VerificationKey2018', controller: doc.id, publicKeyBase58: expect.not.stringMatching(`^${d.verkey}$`) },
    ]);
    expect(doc.assertionMethod).toContain(d.metadata.kid);
    expect(doc.assertionMethod).not.toContain(`${doc.id}#didcomm-1`);
    expect(doc.authentication).not.toContain(`${doc.id}#didcomm-1`);
    // The bare nym resolves too.
    expect((await api.call('GET', `/1.0/identifiers/${d.did}`)).body.didDocument.id).toBe(doc.id);
  });

  test('a did:web DID, once public, is served at its did:web path', async () => {
    const w = await api.newWallet();
    await acceptTaa(w.apiKey);
    const d = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: { method: 'web', options: { key_type: 'p256' } } })).body.did;
    const id = d.did.split(':').pop();
    expect((await api.call('GET', `/dids/${id}/did.json`)).status).toBe(404);
    await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(d.did)}`, { key: w.apiKey });
    const doc = await api.call('GET', `/dids/${id}/did.json`);
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({
      id: d.did,
      verificationMethod: [{ id: `${d.did}#key-1`, publicKeyJwk: { kty: 'EC', crv: 'P-256' } }, { id: `${d.did}#didcomm-1`, type: 'Ed25519VerificationKey2018' }],
      service: [
        { type: 'did-communication', serviceEndpoint: `${api.rt.url}/didcomm/${w.publicRef}` },
        // The did:web AnonCreds method's registry service (docs/anoncreds.md).
        { id: `${d.did}#anoncreds`, type: 'AnonCredsRegistry', serviceEndpoint: `${api.rt.url}/dids/${id}/anoncreds` },
      ],
    });
    // did:web resolution rule: did:web:<host%3Aport>:dids:<id> -> http(s)://<host:port>/dids/<id>/did.json
    const url = `http://${decodeURIComponent(d.did.split(':')[2])}/${d.did.split(':').slice(3).join('/')}/did.json`;
    const fetched = await fetch(url);
    expect(await fetched.json()).toEqual(doc.body);
    // The DID in a URL path: its port's %3A may arrive decoded (a plain ':'), or encoded once more.
    expect(d.did).toContain('%3A');
    for (const inPath of [d.did, encodeURIComponent(d.did), decodeURIComponent(d.did)]) {
      expect((await api.call('GET', `/1.0/identifiers/${inPath}`)).body.didDocument).toEqual(doc.body);
      expect((await api.call('GET', `/api/v1/dids/${inPath}`, { key: w.apiKey })).body).toMatchObject({ did: d.did, posture: 'public' });
    }
  });

  test('unknown DID or another wallet’s DID: 404; missing DID: 400', async () => {
    const a = await api.newWallet();
    const b = await api.newWallet();
    await acceptTaa(b.apiKey);
    const da = (await api.call('POST', '/api/v1/create-did', { key: a.apiKey })).body.did;
    expectError(await api.call('POST', `/api/v1/set-public-did?DID=${da.did}`, { key: b.apiKey }), 404, 'did_not_found');
    expectError(await api.call('POST', '/api/v1/set-public-did?DID=did:sov:NotARealDidAtAll12345', { key: b.apiKey }), 404, 'did_not_found');
    expectError(await api.call('POST', '/api/v1/set-public-did', { key: b.apiKey }), 400, 'validation_failed');
    expect((await api.call('GET', `/api/v1/dids/${da.did}`, { key: a.apiKey })).body.posture).toBe('wallet_only');
  });

  test('the resolver answers unknown DIDs in the DID Resolution error shape, and resolves any did:key', async () => {
    const res = await api.call('GET', '/1.0/identifiers/did:sov:NotARealDidAtAll12345');
    expect(res).toMatchObject({ status: 404, body: { didDocument: null, didResolutionMetadata: { error: 'notFound' } } });
    const key = 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp';
    expect((await api.call('GET', `/1.0/identifiers/${key}`)).body.didDocument.id).toBe(key);
  });

  test('the resolver negotiates like a Universal Resolver driver and any web page may read it (CORS)', async () => {
    const key = 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp';
    const result = await api.call('GET', `/1.0/identifiers/${key}`, { headers: { accept: 'application/ld+json;profile="https://w3id.org/did-resolution"' } });
    expect(result.headers.get('content-type')).toBe('application/ld+json;profile="https://w3id.org/did-resolution";charset=utf-8');
    expect(result.body).toMatchObject({ didDocument: { id: key }, didResolutionMetadata: { contentType: 'application/did+ld+json' } });
    for (const type of ['application/did+ld+json', 'application/did+json']) {
      const doc = await api.call('GET', `/1.0/identifiers/${key}`, { headers: { accept: `${type}, application/json;q=0.5` } });
      expect(doc.headers.get('content-type')).toBe(type);
      expect(doc.body).toEqual(result.body.didDocument);
    }
    expect(result.headers.get('access-control-allow-origin')).toBe('*');
    const missing = await api.call('GET', '/1.0/identifiers/did:sov:NotARealDidAtAll12345');
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
    expect((await api.call('GET', '/dids/NotARealDidAtAll12345/did.json')).headers.get('access-control-allow-origin')).toBe('*');
    // Authenticated API routes do not open themselves to other origins.
    const w = await api.newWallet();
    expect((await api.call('GET', '/api/v1/dids', { key: w.apiKey })).headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('limits, deactivation and oversized DIDs', () => {
  test('DIDs longer than a table key can hold are a 400 naming the field, not a 500; the resolver answers invalidDid', async () => {
    const w = await api.newWallet();
    const long = `did:key:z${'a'.repeat(1100)}`;
    const get = await api.call('GET', `/api/v1/dids/${long}`, { key: w.apiKey });
    expectError(get, 400, 'validation_failed');
    expect(get.body.details).toEqual([expect.objectContaining({ path: 'path.did' })]);
    expectError(await api.call('POST', `/api/v1/set-public-did?DID=${long}`, { key: w.apiKey }), 400, 'validation_failed');
    expectError(await api.call('POST', `/api/v1/dids/${long}/deactivate`, { key: w.apiKey }), 400, 'validation_failed');
    const resolved = await api.call('GET', `/1.0/identifiers/${long}`);
    expect(resolved.status).toBe(400);
    expect(resolved.body.didResolutionMetadata).toEqual({ error: 'invalidDid' });
  });

  test('a deactivated DID resolves as deactivated (410 Gone, deactivated: true), also at its did:web path; its key is scheduled for deletion', async () => {
    const w = await api.newWallet();
    await acceptTaa(w.apiKey);
    const web = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: { method: 'web' } })).body.did.did as string;
    const other = (await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: { method: 'key' } })).body.did.did as string;
    expect((await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(web)}`, { key: w.apiKey })).status).toBe(200);
    expectError(await api.call('POST', `/api/v1/dids/${encodeURIComponent(web)}/deactivate`, { key: w.apiKey }), 409, 'did_is_public');
    expect((await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(other)}`, { key: w.apiKey })).status).toBe(200);
    const done = await api.call('POST', `/api/v1/dids/${encodeURIComponent(web)}/deactivate`, { key: w.apiKey });
    expect(done.status).toBe(200);
    expect(done.body.metadata).toMatchObject({ deactivated_at: expect.any(String), key_deletion_date: expect.any(String) });
    const resolved = await api.call('GET', `/1.0/identifiers/${encodeURIComponent(web)}`);
    expect(resolved.status).toBe(410);
    expect(resolved.body).toMatchObject({ didDocument: { id: web }, didDocumentMetadata: { deactivated: true } });
    const id = web.slice(web.lastIndexOf(':') + 1);
    expect((await api.call('GET', `/dids/${id}/did.json`)).status).toBe(410);
    expectError(await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(web)}`, { key: w.apiKey }), 409, 'did_deactivated');
  });

  test('creating DIDs faster than the per-wallet rate is a 429 with Retry-After, and only for that wallet', async () => {
    const w = await api.newWallet();
    const other = await api.newWallet();
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof api.call>> | undefined;
    // The default limit is 10 in each clock minute. These requests take well under a minute, so they meet at
    // most two windows (the minute may turn meanwhile, more likely on a loaded machine): the 21st is refused.
    const minuteBefore = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < 21 && !refused; i++) {
      const res = await api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: { method: 'key' } });
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    const admitted = statuses.filter((s) => s === 200).length;
    // Within one minute, exactly the limit; across a turn, the rest of the first window and up to ten more.
    if (Math.floor(Date.now() / 60_000) === minuteBefore) expect(admitted).toBe(10);
    else expect(admitted).toBeGreaterThanOrEqual(10);
    expect(refused).toBeDefined();
    expectError(refused!, 429, 'rate_limited');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api.call('POST', '/api/v1/create-did', { key: other.apiKey, body: { method: 'key' } })).status).toBe(200);
  });
});

test("an older data folder's table gains the PublicDids index at start, and DIDs it published are found through it", async () => {
  // A DynamoDB Local of its own, as a data folder's runtime has: in the run's shared one, with other
  // tables busy, DynamoDB Local did not finish building the added index within 30 s.
  const ddb = await startDynamoDbLocal(null);
  try {
    const client = new DynamoDBClient({ endpoint: ddb.endpoint });
    const doc = DynamoDBDocumentClient.from(client);
    const table = `legacy-${Date.now()}`;
    // The table as the previous version created it: GSI1 only, a published DID under its GSI1 lookup value.
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['PK', 'SK', 'GSI1PK', 'GSI1SK'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
        KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }, { AttributeName: 'SK', KeyType: 'RANGE' }],
        GlobalSecondaryIndexes: [{ IndexName: 'GSI1', KeySchema: [{ AttributeName: 'GSI1PK', KeyType: 'HASH' }, { AttributeName: 'GSI1SK', KeyType: 'RANGE' }], Projection: { ProjectionType: 'ALL' } }],
      }),
    );
    const did = 'did:sov:WRfXPg8dantKVubE3HX8pw';
    const key = { PK: 'W#5', SK: `DID#${did}` };
    await doc.send(new PutCommand({ TableName: table, Item: { ...key, type: 'did', qualified: did, method: 'sov', GSI1PK: `DID#${did}`, GSI1SK: 'DID' } }));
    await ensureTable(client, table);
    const found = await doc.send(
      new QueryCommand({ TableName: table, IndexName: 'PublicDids', KeyConditionExpression: 'PDID = :p', ExpressionAttributeValues: { ':p': `DID#${did}` } }),
    );
    expect(found.Items).toEqual([expect.objectContaining({ qualified: did })]);
    expect((await doc.send(new GetCommand({ TableName: table, Key: key }))).Item!.GSI1PK).toBeUndefined();
    await ensureTable(client, table); // a second start changes nothing
    client.destroy();
  } finally {
    await ddb.stop();
  }
});
