import { buildDeps } from '../../functions/shared/deps';
import { macSecrets } from '../../functions/shared/secrets';
import { generateApiKey } from '../../lib/tenancy/api-key-format';
import { BaseKeys } from '../../lib/tenancy/base-key';
import { startTestApi, type TestApi } from '../helpers/runtime';

// The local gateway caches Allow decisions per key like the deployed TOKEN authorizer does.
const TTL_SECONDS = 3;
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ authorizerCacheTtlSeconds: TTL_SECONDS });
});
afterAll(async () => {
  await api?.rt.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a revoked key keeps working until the authorizer cache TTL passes, then gets 401', async () => {
  const w = await api.newWallet();
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  const revoked = await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, key_id: w.keyId } });
  expect(revoked.status).toBe(200);
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  await sleep(TTL_SECONDS * 1000 + 200);
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(401);
});

test('expiry is exact: an expired key is refused at once, while the cached decision for it still lives', async () => {
  const w = await api.newWallet();
  const expiresAt = new Date(Date.now() + 2000); // 2 s for the create and the first GET; the check, 100 ms after expiry, is at least 0.9 s inside that GET decision's 3 s cache
  const k = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: String(w.walletId), roles: ['admin'], expires_at: expiresAt.toISOString() } });
  expect(k.status).toBe(200);
  expect((await api.call('GET', '/api/v1/wallet', { key: k.body.api_key })).status).toBe(200); // decision cached for 3 s
  await sleep(expiresAt.getTime() - Date.now() + 100);
  const after = await api.call('GET', '/api/v1/wallet', { key: k.body.api_key });
  // The function refused it (its message names the expiry), not a fresh authorizer run.
  expect(after).toMatchObject({ status: 401, body: { code: 'unauthorized', error: `This credential expired at ${expiresAt.toISOString()}` } });
});

test('authentication before authorization: an expired key is a 401 on the routes its role may not call too', async () => {
  const w = await api.newWallet();
  const expiresAt = new Date(Date.now() + 2000); // 2 s for the create and the first GET; the check, 100 ms after expiry, is at least 0.9 s inside that GET decision's 3 s cache
  const create = () => api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: String(w.walletId), roles: ['admin'], expires_at: expiresAt.toISOString() } });
  const [a, b] = [(await create()).body.api_key as string, (await create()).body.api_key as string];
  // While valid: its own route answers, a super-admin route is a 403 (both decisions now cached for 3 s).
  expect((await api.call('GET', '/api/v1/wallet', { key: a })).status).toBe(200);
  expect(await api.call('GET', '/api/subwallets', { key: b })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  await sleep(expiresAt.getTime() - Date.now() + 100);
  const expired = { status: 401, body: { code: 'unauthorized', error: `This credential expired at ${expiresAt.toISOString()}` } };
  // Either route, in either order: the function refuses the expired credential before asking what it may call.
  expect(await api.call('GET', '/api/subwallets', { key: a })).toMatchObject(expired);
  expect(await api.call('GET', '/api/v1/wallet', { key: a })).toMatchObject(expired);
  expect(await api.call('GET', '/api/v1/wallet', { key: b })).toMatchObject(expired);
  expect(await api.call('GET', '/api/subwallets', { key: b })).toMatchObject(expired);
  // Valid credentials on the wrong kind of route still get 403.
  expect(await api.call('GET', '/api/subwallets', { key: w.apiKey })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  expect(await api.call('GET', '/api/subwallets', { key: w.token })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  expect(await api.call('GET', '/api/v1/wallet', { key: api.baseKey })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
});

// Last: it replaces the base key.
test('refusals are not cached: the same key is refused, then accepted once it exists', async () => {
  const key = generateApiKey();
  expect((await api.call('GET', '/api/subwallets', { key })).status).toBe(401);
  const deps = buildDeps('bootstrap', { secrets: macSecrets });
  await new BaseKeys(deps.store, deps.secrets).install(key);
  expect((await api.call('GET', '/api/subwallets', { key })).status).toBe(200);
});
