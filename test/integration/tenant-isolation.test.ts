import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { didContracts } from '../../lib/dids/contract';
import { didOperations } from '../../lib/dids/operations';
import { didView, type DidRecord } from '../../lib/dids/records';
import { DidService } from '../../lib/dids/service';
import { walletScope } from '../../lib/http/contract';
import { createGroupHandler } from '../../lib/http/router';
import { TaaService } from '../../lib/taa/service';
import { keys, tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { buildDeps } from '../../functions/shared/deps';
import { buildKeyManager } from '../../functions/shared/issuer-keys';
import { buildDidcommKeyVault } from '../../functions/shared/didcomm-keys';
import { PublicDidDidcomm } from '../../lib/didcomm/public-did';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { walletSessions } from '../../functions/shared/sessions';
import { startTestApi, type TestApi } from '../helpers/runtime';

/**
 * Isolation below the handler code: the same adapters the deployed DID function builds (here on
 * DynamoDB Local with the local access guard standing in for IAM) refuse another wallet's item or
 * key when the code asks for it from a wallet's session — the handler is deliberately wrong here.
 */
let api: TestApi;
let a: { walletId: number; apiKey: string };
let b: { walletId: number; apiKey: string };
let didOfB: string;

beforeAll(async () => {
  api = await startTestApi();
  a = await api.newWallet();
  b = await api.newWallet();
  const created = await api.call('POST', '/api/v1/create-did', { key: b.apiKey, body: { method: 'key' } });
  expect(created.status).toBe(200);
  didOfB = created.body.did.did;
});
afterAll(async () => {
  await api?.rt.stop();
});

const scopeOf = (w: { walletId: number }) => tenantScope(String(w.walletId));

test("the store refuses another wallet's item inside a wallet's session, and serves it in its own", async () => {
  const deps = buildDeps('dids', { sessions: walletSessions });
  const item = () => deps.store.get(keys.did(scopeOf(b), didOfB));
  await expect(inSession(scopeOf(a), item)).rejects.toMatchObject({ name: 'AccessDeniedException' });
  await expect(inSession(scopeOf(b), item)).resolves.toMatchObject({ did: didOfB });
  // And writes: a put into B's partition from A's session never lands.
  await expect(inSession(scopeOf(a), () => deps.store.write([{ type: 'put', item: { ...keys.did(scopeOf(b), 'did:key:zforged'), type: 'did' } }]))).rejects.toMatchObject({
    name: 'AccessDeniedException',
  });
  await expect(inSession(scopeOf(b), () => deps.store.get(keys.did(scopeOf(b), 'did:key:zforged')))).resolves.toBeUndefined();
});

test("the key manager refuses another wallet's key inside a wallet's session", async () => {
  const deps = buildDeps('dids', { sessions: walletSessions });
  const km = buildKeyManager(deps);
  const record = (await inSession(scopeOf(b), () => deps.store.get(keys.did(scopeOf(b), didOfB))))! as unknown as DidRecord;
  await expect(inSession(scopeOf(a), () => km.publicJwk(scopeOf(b), record.key_ref, record.alg))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  // With its own scope and B's key reference, A finds nothing: the sealed key lives in B's partition
  // (the reference names no wallet; where the key is stored does). Deployed, KMS refuses: the key's tag is B's.
  await expect(inSession(scopeOf(a), () => km.publicJwk(scopeOf(a), record.key_ref, record.alg))).rejects.toThrow(`no local ${record.alg} key ${record.key_ref} in wallet ${a.walletId}`);
  await expect(inSession(scopeOf(b), () => km.publicJwk(scopeOf(b), record.key_ref, record.alg))).resolves.toEqual(record.public_jwk);
});

test('a handler that reads the wrong wallet answers 500 and leaks nothing: the session, not the code, stopped it', async () => {
  const deps = buildDeps('dids', { sessions: walletSessions });
  const service = new DidService({ didcomm: new PublicDidDidcomm({ store: deps.store, keys: buildDidcommKeyVault(deps), refs: new PublicRefs(deps.store) }), store: deps.store, keyManager: buildKeyManager(deps), taa: new TaaService(deps.store, undefined), indyNamespace: 't', limits: { maxDids: 10, maxCreationsPerMinute: 10 } });
  const buggy = createGroupHandler({
    group: 'dids',
    contracts: didContracts,
    // The bug: getDid ignores its caller and reads wallet B.
    impls: { ...didOperations(service), getDid: async ({ caller }) => (walletScope(caller), didView(await service.get(scopeOf(b), didOfB))) },
    logger: new Logger({ logLevel: 'SILENT' }),
  });
  const event = (walletId: number) =>
    ({
      resource: '/api/v1/dids/{did}',
      path: `/api/v1/dids/${didOfB}`,
      httpMethod: 'GET',
      headers: {},
      pathParameters: { did: didOfB },
      queryStringParameters: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { requestId: 'r1', stage: 'local', domainName: 'localhost', authorizer: { principal: 'wallet', wallet_id: String(walletId), key_id: 'k', via: 'api_key', roles: 'admin', expires_at: '' } },
    }) as unknown as APIGatewayProxyEvent;
  const context = { awsRequestId: 'c1', functionName: 'dids', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  const asA = await buggy(event(a.walletId), context);
  expect(asA.statusCode).toBe(500);
  expect(asA.body).not.toContain(didOfB);
  expect(JSON.parse(asA.body)).toEqual({ error: 'Internal server error', code: 'internal_error' });
  const asB = await buggy(event(b.walletId), context);
  expect(asB.statusCode).toBe(200);
  expect(JSON.parse(asB.body).did).toBe(didOfB);
});

test("over HTTP, wallet A cannot see, publish, deactivate or resolve-as-its-own B's DID (404 like a missing one)", async () => {
  const path = `/api/v1/dids/${encodeURIComponent(didOfB)}`;
  expect((await api.call('GET', path, { key: a.apiKey })).status).toBe(404);
  expect((await api.call('POST', `${path}/deactivate`, { key: a.apiKey })).status).toBe(404);
  expect((await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(didOfB)}`, { key: a.apiKey })).status).toBe(404);
  expect((await api.call('GET', path, { key: b.apiKey })).status).toBe(200);
});

test('key operations are per function too: a function that declares no signing cannot sign, even with its own wallet\'s key', async () => {
  const deps = buildDeps('dids', { sessions: walletSessions });
  const record = (await inSession(scopeOf(b), () => deps.store.get(keys.did(scopeOf(b), didOfB))))! as unknown as DidRecord;
  for (const fn of ['dids', 'tenancy'] as const) {
    const km = buildKeyManager({ ...deps, fn });
    await expect(inSession(scopeOf(b), () => km.sign(scopeOf(b), record.key_ref, record.alg, new Uint8Array([1])))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  }
});
