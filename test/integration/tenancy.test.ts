import { buildDeps } from '../../functions/shared/deps';
import { macSecrets } from '../../functions/shared/secrets';
import { registrySessions, walletSessions } from '../../functions/shared/sessions';
import { observeGuardDecisions, type GuardDecision } from '../../lib/adapters/access-guard';
import { localUsageKeys } from '../../lib/adapters/local-usage-keys';
import { walletUsageKey } from '../../lib/service/usage-keys';
import { keys, tenantScope } from '../../lib/store/keys';
import type { ItemStore, WriteOp } from '../../lib/store/port';
import { inRegistrySession, inSession } from '../../lib/store/session';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { TenancyService } from '../../lib/tenancy/service';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.rt.stop();
});

describe('subwallets (contract 4.6)', () => {
  test('create returns a numeric wallet_id and a token; list and get show it', async () => {
    const created = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'acme', label: 'Acme Corp' } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['token', 'wallet_id']);
    expect(typeof created.body.wallet_id).toBe('number');

    const list = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    expect(list.status).toBe(200);
    const entry = list.body.find((w: any) => w.wallet_id === created.body.wallet_id);
    expect(entry).toEqual({ wallet_id: created.body.wallet_id, token: expect.any(String), label: 'Acme Corp' });

    const one = await api.call('GET', `/api/subwallets/${created.body.wallet_id}`, { key: api.baseKey });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ wallet_id: created.body.wallet_id, token: expect.any(String), label: 'Acme Corp' });
  });

  test('label defaults to the wallet name', async () => {
    const created = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'no-label' } });
    const one = await api.call('GET', `/api/subwallets/${created.body.wallet_id}`, { key: api.baseKey });
    expect(one.body.label).toBe('no-label');
  });

  test('missing wallet_name is a 400 naming the field, and creates nothing', async () => {
    const before = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    const res = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { label: 'x' } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'wallet_name' })]));
    const after = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    expect(after.body).toHaveLength(before.body.length);
  });

  test('an empty body is a 400 for the missing wallet_name', async () => {
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey }), 400, 'validation_failed');
  });

  test('a duplicate wallet_name is a 409 that spends no wallet id and registers no throttling key', async () => {
    const first = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'dup-wallet' } });
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'dup-wallet' } }), 409, 'wallet_name_taken');
    const next = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'after-dup-wallet' } });
    expect(next.body.wallet_id).toBe(first.body.wallet_id + 1);
    expect(localUsageKeys.planOf(walletUsageKey('credential-service', String(next.body.wallet_id)))).toBe('tenants');
  });

  test('an unknown wallet is a 404; a non-numeric id a 400', async () => {
    expectError(await api.call('GET', '/api/subwallets/999999', { key: api.baseKey }), 404, 'wallet_not_found');
    expectError(await api.call('GET', '/api/subwallets/abc', { key: api.baseKey }), 400, 'validation_failed');
  });

  test('wrong types and unknown fields are 400s', async () => {
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 42 } }), 400, 'validation_failed');
    const unknown = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'x-unknown', colour: 'red' } });
    expectError(unknown, 400, 'validation_failed');
    expect(unknown.body.details).toEqual([{ path: 'colour', message: 'unknown field' }]);
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: ['wallet_name'] }), 400, 'validation_failed');
  });
});

describe('API keys (contract 4.6)', () => {
  let walletId: number;
  beforeAll(async () => {
    walletId = (await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'keys-wallet' } })).body.wallet_id;
  });

  test('the variant with name and expires_at returns all fields; the key works', async () => {
    const expiresAt = new Date(Date.now() + 86400_000).toISOString();
    const res = await api.call('POST', '/api/apikey/create', {
      key: api.baseKey,
      body: { wallet_id: String(walletId), roles: ['admin'], name: 'ci', expires_at: expiresAt },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ api_key: expect.stringMatching(/^cisk_[0-9A-Za-z]{49}$/), key_id: expect.any(String), name: 'ci', status: expect.any(String), expires_at: expiresAt });
    const me = await api.call('GET', '/api/v1/wallet', { key: res.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ wallet_id: walletId, wallet_name: 'keys-wallet', label: 'keys-wallet', public_ref: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), created_at: expect.any(String) });
  });

  test('the variant without name and expires_at returns api_key, key_id, status; wallet_id may be a number', async () => {
    const res = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId, roles: ['admin'] } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'key_id', 'status']);
  });

  test('names are unique per wallet (409), but the same name may exist in another wallet', async () => {
    const body = { wallet_id: String(walletId), roles: ['admin'], name: 'deploy' };
    expect((await api.call('POST', '/api/apikey/create', { key: api.baseKey, body })).status).toBe(200);
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body }), 409, 'api_key_name_taken');
    const other = await api.newWallet();
    const res = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { ...body, wallet_id: other.walletId } });
    expect(res.status).toBe(200);
  });

  test('bad input: unknown wallet 404, unknown role, missing roles, past or malformed expiry 400', async () => {
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: '987654', roles: ['admin'] } }), 404, 'wallet_not_found');
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId, roles: ['root'] } }), 400, 'validation_failed');
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId, roles: [] } }), 400, 'validation_failed');
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId } }), 400, 'validation_failed');
    expectError(
      await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId, roles: ['admin'], expires_at: '2001-01-01T00:00:00Z' } }),
      400,
      'expires_at_in_past',
    );
    expectError(
      await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: walletId, roles: ['admin'], expires_at: 'tomorrow' } }),
      400,
      'validation_failed',
    );
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: 'w1', roles: ['admin'] } }), 400, 'validation_failed');
    expectError(await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: -3, roles: ['admin'] } }), 400, 'validation_failed');
  });

  test('a key created with expires_at stops working when it expires (401)', async () => {
    // 3 s ahead: the create and the first GET must both land before it, on a loaded machine too.
    const expiresAt = Date.now() + 3000;
    const res = await api.call('POST', '/api/apikey/create', {
      key: api.baseKey,
      body: { wallet_id: walletId, roles: ['admin'], name: 'short', expires_at: new Date(expiresAt).toISOString() },
    });
    expect((await api.call('GET', '/api/v1/wallet', { key: res.body.api_key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, expiresAt - Date.now() + 200));
    expectError(await api.call('GET', '/api/v1/wallet', { key: res.body.api_key }), 401, 'unauthorized');
    const keys = await api.call('GET', '/api/v1/apikeys', { key: (await api.newWallet()).apiKey });
    expect(keys.status).toBe(200);
  });

  test('revoke by key_id + wallet_id marks the key revoked: 401 afterwards, idempotent, still listed as revoked', async () => {
    const w = await api.newWallet();
    const res = await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: String(w.walletId), key_id: w.keyId } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: expect.any(String) });
    expectError(await api.call('GET', '/api/v1/wallet', { key: w.apiKey }), 401, 'unauthorized');
    expect((await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, key_id: w.keyId } })).status).toBe(200);
    const viaToken = await api.call('GET', `/api/v1/apikeys/${w.keyId}`, { key: w.token });
    expect(viaToken.body).toEqual(expect.objectContaining({ key_id: w.keyId, status: 'revoked', revoked_at: expect.any(String) }));
  });

  test('revoke by wallet_id + name deletes the key and frees the name', async () => {
    const w = await api.newWallet();
    const named = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['admin'], name: 'temp' } });
    const res = await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, name: 'temp' } });
    expect(res.status).toBe(200);
    expectError(await api.call('GET', '/api/v1/wallet', { key: named.body.api_key }), 401, 'unauthorized');
    expectError(await api.call('GET', `/api/v1/apikeys/${named.body.key_id}`, { key: w.apiKey }), 404, 'api_key_not_found');
    const again = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['admin'], name: 'temp' } });
    expect(again.status).toBe(200);
  });

  test('revoke: unknown key or name 404; neither or both selectors 400', async () => {
    const w = await api.newWallet();
    expectError(await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, name: 'nope' } }), 404, 'api_key_not_found');
    expectError(await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, key_id: 'nope' } }), 404, 'api_key_not_found');
    expectError(await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId } }), 400, 'validation_failed');
    expectError(
      await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: w.walletId, name: 'a', key_id: w.keyId } }),
      400,
      'validation_failed',
    );
    expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  });

  test("a key of wallet A named in a revoke for wallet B is not found, and keeps working", async () => {
    const a = await api.newWallet();
    const b = await api.newWallet();
    expectError(await api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: b.walletId, key_id: a.keyId } }), 404, 'api_key_not_found');
    expect((await api.call('GET', '/api/v1/wallet', { key: a.apiKey })).status).toBe(200);
  });
});

describe('authentication and roles', () => {
  test('missing, unknown, malformed and checksum-broken keys are 401 with the error shape', async () => {
    expectError(await api.call('GET', '/api/subwallets'), 401, 'unauthorized');
    expectError(await api.call('GET', '/api/v1/wallet'), 401, 'unauthorized');
    expectError(await api.call('GET', '/api/subwallets', { key: 'nonsense' }), 401, 'unauthorized');
    const w = await api.newWallet();
    const typo = w.apiKey.slice(0, 10) + (w.apiKey[10] === 'a' ? 'b' : 'a') + w.apiKey.slice(11);
    expectError(await api.call('GET', '/api/v1/wallet', { key: typo }), 401, 'unauthorized');
    expectError(await api.call('GET', '/api/v1/wallet', { key: 'x'.repeat(40) }), 401, 'unauthorized');
  });

  test('a wallet key on super-admin routes is a 403 and changes nothing', async () => {
    const w = await api.newWallet();
    expectError(await api.call('GET', '/api/subwallets', { key: w.apiKey }), 403, 'forbidden');
    expectError(await api.call('POST', '/api/subwallet/create', { key: w.apiKey, body: { wallet_name: 'by-wallet-key' } }), 403, 'forbidden');
    expectError(await api.call('POST', '/api/apikey/create', { key: w.apiKey, body: { wallet_id: w.walletId, roles: ['admin'] } }), 403, 'forbidden');
    expectError(await api.call('POST', '/api/apikey/revoke', { key: w.apiKey, body: { wallet_id: w.walletId, key_id: w.keyId } }), 403, 'forbidden');
    const list = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    expect(list.body.some((x: any) => x.label === 'by-wallet-key')).toBe(false);
    expect((await api.call('GET', '/api/v1/wallet', { key: w.apiKey })).status).toBe(200);
  });

  test('the base key does not act as a wallet (403 on /api/v1)', async () => {
    expectError(await api.call('GET', '/api/v1/wallet', { key: api.baseKey }), 403, 'forbidden');
  });

  test('the subwallet token acts for its wallet only, and a tampered token is a 401', async () => {
    const w = await api.newWallet();
    const me = await api.call('GET', '/api/v1/wallet', { key: w.token });
    expect(me.status).toBe(200);
    expect(me.body.wallet_id).toBe(w.walletId);
    const listed = await api.call('GET', `/api/subwallets/${w.walletId}`, { key: api.baseKey });
    expect((await api.call('GET', '/api/v1/wallet', { key: listed.body.token })).body.wallet_id).toBe(w.walletId);
    expectError(await api.call('GET', '/api/subwallets', { key: w.token }), 403, 'forbidden');
    const [h, p, s] = w.token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), wallet_id: '1' })).toString('base64url');
    expectError(await api.call('GET', '/api/v1/wallet', { key: `${h}.${forged}.${s}` }), 401, 'unauthorized');
  });
});

describe('tenant isolation', () => {
  test("wallet A can never read or change wallet B's keys: 404, not 403", async () => {
    const a = await api.newWallet();
    const b = await api.newWallet();
    expectError(await api.call('GET', `/api/v1/apikeys/${b.keyId}`, { key: a.apiKey }), 404, 'api_key_not_found');
    expectError(await api.call('POST', `/api/v1/apikeys/${b.keyId}/revoke`, { key: a.apiKey }), 404, 'api_key_not_found');
    expect((await api.call('GET', '/api/v1/wallet', { key: b.apiKey })).status).toBe(200);
    const listA = await api.call('GET', '/api/v1/apikeys', { key: a.apiKey });
    expect(listA.body.map((k: any) => k.key_id)).toEqual([a.keyId]);
    // A wallet id smuggled in the query or body is ignored: the scope comes from the key.
    const me = await api.call('GET', `/api/v1/wallet?wallet_id=${b.walletId}`, { key: a.apiKey });
    expect(me.body.wallet_id).toBe(a.walletId);
  });

  test('a wallet can list, read and revoke its own keys, and never sees secrets', async () => {
    const w = await api.newWallet();
    const second = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['admin'], name: 'second' } });
    const list = await api.call('GET', '/api/v1/apikeys', { key: w.apiKey });
    expect(list.body).toHaveLength(2);
    for (const k of list.body) expect(Object.keys(k).sort()).toEqual(['created_at', 'expires_at', 'key_id', 'name', 'revoked_at', 'roles', 'status']);
    expect(JSON.stringify(list.body)).not.toContain('cisk_');
    const revoked = await api.call('POST', `/api/v1/apikeys/${second.body.key_id}/revoke`, { key: w.apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expectError(await api.call('GET', '/api/v1/wallet', { key: second.body.api_key }), 401, 'unauthorized');
  });
});

describe('HTTP edges', () => {
  test('malformed JSON is a 400 and creates nothing', async () => {
    const res = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, rawBody: '{"wallet_name": "half' });
    expectError(res, 400, 'malformed_json');
  });

  test('a body over the route limit is a 413; over the gateway cap too', async () => {
    const big = JSON.stringify({ wallet_name: 'big', label: 'x'.repeat(70 * 1024) });
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey, rawBody: big }), 413, 'payload_too_large');
    const huge = Buffer.alloc(10 * 1024 * 1024 + 1, 'a');
    expectError(await api.call('POST', '/api/subwallet/create', { key: api.baseKey, rawBody: huge }), 413, 'payload_too_large');
  });

  test('an unknown route or method is a 404 in the error shape', async () => {
    expectError(await api.call('GET', '/api/v1/nothing-here', { key: api.baseKey }), 404, 'route_not_found');
    expectError(await api.call('DELETE', '/api/subwallets', { key: api.baseKey }), 404, 'route_not_found');
  });

  test('responses are JSON, not cacheable', async () => {
    const res = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('OpenAPI', () => {
  test('GET /openapi.json needs no key and describes every route', async () => {
    const { ROUTES } = await import('../../lib/service/routes');
    const res = await api.call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const r of ROUTES) {
      const op = res.body.paths[r.path]?.[r.method.toLowerCase()];
      expect(op?.operationId).toBe(r.operationId);
      expect(op.security).toEqual(r.auth === 'public' ? [] : [{ apiKey: [] }]);
    }
  });
});

describe('cursor paging (the body stays a bare array)', () => {
  async function allPages(path: string, key: string, limit: number) {
    const seen: unknown[][] = [];
    let url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;
    for (;;) {
      const res = await api.call('GET', url, { key });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeLessThanOrEqual(limit);
      seen.push(res.body);
      const next = res.headers.get('x-next-cursor');
      if (!next) {
        expect(res.headers.get('link')).toBeNull();
        return seen;
      }
      const link = res.headers.get('link')!;
      expect(link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/.*[?&]cursor=.*>; rel="next"$/);
      const target = new URL(link.slice(1, link.indexOf('>')));
      url = `${target.pathname}${target.search}`;
    }
  }

  test('subwallets: following the cursors gives exactly the full list, in order; without paging the whole list as before', async () => {
    for (let i = 0; i < 5; i++) await api.newWallet();
    const full = await api.call('GET', '/api/subwallets', { key: api.baseKey });
    expect(full.headers.get('x-next-cursor')).toBeNull();
    const pages = await allPages('/api/subwallets', api.baseKey, 2);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.flat().map((w: any) => w.wallet_id)).toEqual(full.body.map((w: any) => w.wallet_id));
  });

  test("DIDs: pages of this wallet's DIDs; another wallet's cursor, a forged or a garbled one is a 400", async () => {
    const a = await api.newWallet();
    const b = await api.newWallet();
    for (let i = 0; i < 3; i++) {
      expect((await api.call('POST', '/api/v1/create-did', { key: a.apiKey, body: { method: 'key' } })).status).toBe(200);
      expect((await api.call('POST', '/api/v1/create-did', { key: b.apiKey, body: { method: 'jwk' } })).status).toBe(200);
    }
    const pages = await allPages('/api/v1/dids', a.apiKey, 2);
    expect(pages.flat().map((d: any) => d.method)).toEqual(['key', 'key', 'key']);
    const bCursor = (await api.call('GET', '/api/v1/dids?limit=1', { key: b.apiKey })).headers.get('x-next-cursor')!;
    expectError(await api.call('GET', `/api/v1/dids?limit=1&cursor=${bCursor}`, { key: a.apiKey }), 400, 'invalid_cursor');
    const forged = Buffer.from(JSON.stringify({ PK: `W#${b.walletId}`, SK: 'DID#x' })).toString('base64url');
    expectError(await api.call('GET', `/api/v1/dids?cursor=${forged}`, { key: a.apiKey }), 400, 'invalid_cursor');
    expectError(await api.call('GET', '/api/v1/dids?cursor=%%%', { key: a.apiKey }), 400, 'invalid_cursor');
    expectError(await api.call('GET', '/api/v1/dids?limit=0', { key: a.apiKey }), 400, 'validation_failed');
    expectError(await api.call('GET', `/api/subwallets?cursor=${bCursor}`, { key: api.baseKey }), 400, 'invalid_cursor');
  });
});

describe('name and reference reservations below the code (issue 27)', () => {
  const tenancyDeps = () => buildDeps('tenancy', { secrets: macSecrets, sessions: walletSessions, registry: registrySessions });
  const denied = { name: 'AccessDeniedException' };

  test("wallet creation puts the reservation, the reference lookup and the record in the new wallet's registry session; no wallet session writes either", async () => {
    const decisions: GuardDecision[] = [];
    const stop = observeGuardDecisions((d) => decisions.push(d));
    let created;
    try {
      created = await api.call('POST', '/api/subwallet/create', { key: api.baseKey, body: { wallet_name: 'registry-probe' } });
    } finally {
      stop();
    }
    expect(created.status).toBe(200);
    const id = String(created.body.wallet_id);
    const tenancy = decisions.filter((d) => d.principal.fn === 'tenancy' && d.request.service === 'dynamodb');
    const writes = tenancy.filter((d) => d.request.service === 'dynamodb' && d.request.action !== 'GetItem' && d.request.action !== 'Query');
    expect(writes.map((d) => ({ ...d, request: { ...d.request, partition: (d.request as { partition: string }).partition.replace(/^SYS#PUBREF#.*/, 'SYS#PUBREF#<ref>') } }))).toEqual([
      { principal: { fn: 'tenancy', wallet: null }, request: { service: 'dynamodb', action: 'UpdateItem', on: 'table', partition: 'SYS#COUNTER' }, allowed: true },
      ...['SYS#WNAME#registry-probe', 'SYS#PUBREF#<ref>', `W#${id}`].map((partition) => ({
        principal: { fn: 'tenancy', wallet: id, registry: true },
        request: { service: 'dynamodb', action: 'PutItem', on: 'table', partition },
        allowed: true,
      })),
    ]);
    // The wallet works: its key, its record, and its public reference resolving to it.
    const k = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: id, roles: ['admin'] } });
    const me = await api.call('GET', '/api/v1/wallet', { key: k.body.api_key });
    expect(me.body).toMatchObject({ wallet_id: Number(id), wallet_name: 'registry-probe' });
    const publicRefs = new PublicRefs(buildDeps('status-lists-public', { sessions: walletSessions }).store);
    expect((await publicRefs.resolve(me.body.public_ref))?.walletId).toBe(id);
  });

  test("a wallet session of tenancy cannot put, update or delete another wallet's reservation or reference lookup; both stay as they were", async () => {
    const a = await api.newWallet('reservations-a');
    const b = await api.newWallet('reservations-b');
    const deps = tenancyDeps();
    const scopeA = tenantScope(String(a.walletId));
    const attacks: WriteOp[] = [keys.walletName('reservations-b'), keys.publicRef(b.publicRef)].flatMap((key) => [
      { type: 'put', item: { ...key, wallet_id: String(a.walletId) } },
      { type: 'update', key, set: { wallet_id: String(a.walletId) } },
      { type: 'delete', key },
    ]);
    for (const op of attacks) {
      await expect(inSession(scopeA, () => deps.store.write([op]))).rejects.toMatchObject(denied);
      // The same from the session of the wallet the item names, and a fresh name: no wallet session writes reservations.
      await expect(inSession(tenantScope(String(b.walletId)), () => deps.store.write([op]))).rejects.toMatchObject(denied);
    }
    await expect(inSession(scopeA, () => deps.store.write([{ type: 'put', condition: 'not_exists', item: { ...keys.walletName('never-reserved'), wallet_id: String(a.walletId) } }]))).rejects.toMatchObject(denied);
    // A's registry session reaches no other wallet's record, and no item of its own beyond the record partition.
    await expect(inRegistrySession(scopeA, () => deps.store.write([{ type: 'put', item: { ...keys.wallet(tenantScope(String(b.walletId))), wallet_id: String(a.walletId) } }]))).rejects.toMatchObject(denied);
    await expect(inRegistrySession(scopeA, () => deps.store.get(keys.walletName('reservations-b')))).rejects.toMatchObject(denied);
    await expect(inRegistrySession(scopeA, () => deps.store.write([{ type: 'put', item: { ...keys.inFlight(scopeA, 'x'), n: 1 } }]))).rejects.toMatchObject(denied);

    expect(await deps.store.get(keys.walletName('reservations-b'))).toMatchObject({ wallet_id: String(b.walletId) });
    expect(await deps.store.get(keys.walletName('never-reserved'))).toBeUndefined();
    const publicRefs = new PublicRefs(buildDeps('status-lists-public', { sessions: walletSessions }).store);
    expect((await publicRefs.resolve(b.publicRef))?.walletId).toBe(String(b.walletId));
  });

  test('a name taken between the check and the transaction is refused by the registry session\'s condition: 409, the reservation untouched', async () => {
    const owner = await api.newWallet('raced-name');
    const deps = tenancyDeps();
    // The pre-check misses the name (as when two creations race): the transaction's condition decides.
    const store = deps.store;
    const racing: ItemStore = {
      get: async (key, opts) => (key.PK === keys.walletName('raced-name').PK ? undefined : store.get(key, opts)),
      getMany: (k, o) => store.getMany(k, o),
      query: (pk, o) => store.query(pk, o),
      queryPage: (pk, o) => store.queryPage(pk, o),
      write: (ops) => store.write(ops),
      increment: (k, a, c, b) => store.increment(k, a, c, b),
    };
    const service = new TenancyService({ ...deps, store: racing, usage: { register: async () => undefined } });
    await expect(service.createSubwallet({ wallet_name: 'raced-name' })).rejects.toMatchObject({ status: 409, code: 'wallet_name_taken' });
    expect(await deps.store.get(keys.walletName('raced-name'))).toMatchObject({ wallet_id: String(owner.walletId) });
  });
});
