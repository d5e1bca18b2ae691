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
  const expiresAt = new Date(Date.now() + 1500);
  const k = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: String(w.walletId), roles: ['admin'], expires_at: expiresAt.toISOString() } });
  expect(k.status).toBe(200);
  expect((await api.call('GET', '/api/v1/wallet', { key: k.body.api_key })).status).toBe(200); // decision cached for 3 s
  await sleep(expiresAt.getTime() - Date.now() + 100);
  const after = await api.call('GET', '/api/v1/wallet', { key: k.body.api_key });
  // The function refused it (its message names the expiry), not a fresh authorizer run.
  expect(after).toMatchObject({ status: 401, body: { code: 'unauthorized', error: `This credential expired at ${expiresAt.toISOString()}` } });
});

// Last: it replaces the base key.
test('refusals are not cached: the same key is refused, then accepted once it exists', async () => {
  const key = generateApiKey();
  expect((await api.call('GET', '/api/subwallets', { key })).status).toBe(401);
  const deps = buildDeps('bootstrap', { secrets: macSecrets });
  await new BaseKeys(deps.store, deps.secrets).install(key);
  expect((await api.call('GET', '/api/subwallets', { key })).status).toBe(200);
});
