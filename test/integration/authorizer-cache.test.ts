import { startTestApi, type TestApi } from '../helpers/runtime';

// The local gateway caches Allow decisions per key like the deployed TOKEN authorizer does.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ authorizerCacheTtlSeconds: 2 });
});
afterAll(async () => {
  await api?.rt.stop();
});

test('a revoked key keeps working until the authorizer cache TTL passes, then gets 401', async () => {
  const w = await api.newWallet();
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  const revoked = await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, key_id: w.keyId } });
  expect(revoked.status).toBe(200);
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  await new Promise((r) => setTimeout(r, 2200));
  expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(401);
});

test('refusals are not cached: a key is refused, then accepted once it exists', async () => {
  expect((await api.call('GET', '/api/subwallets', { key: 'x'.repeat(40) })).status).toBe(401);
  expect((await api.call('GET', '/api/subwallets', { key: api.baseKey })).status).toBe(200);
});
