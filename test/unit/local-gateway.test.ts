import { once } from 'node:events';
import type { Server } from 'node:http';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { LocalUsageKeyRegistry } from '../../lib/adapters/local-usage-keys';
import { GATEWAY_ERRORS } from '../../lib/service/gateway-responses';
import type { RouteGroup } from '../../lib/service/routes';
import { createGateway, DEFAULT_THROTTLES, type GroupHandler, type LocalThrottles } from '../../infra/local/gateway';

/**
 * The local API Gateway answers what API Gateway answers: a throttled or timed-out request keeps its
 * own status (429, 504, a Lambda error's 502) with the service's body — no DEFAULT_* status overrides it.
 */
const ok: GroupHandler = async () => ({ statusCode: 200, body: '{}' });

async function gateway(opts: { throttles?: Partial<LocalThrottles>; handler?: GroupHandler; integrationTimeoutMs?: number; usage?: string } = {}) {
  const registry = new LocalUsageKeyRegistry();
  registry.add('usage-wallet-1', 'tenants');
  registry.add('usage-wallet-2', 'tenants');
  const server: Server = createGateway({
    // x-api-key "wallet-<n>" is wallet n with usage key "usage-wallet-<n>" (or the one the test names).
    authorizer: async (e) => ({
      principalId: e.authorizationToken,
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
      context: { principal: 'wallet', wallet_id: e.authorizationToken.replace(/\D/g, '') },
      usageIdentifierKey: opts.usage ?? `usage-${e.authorizationToken.slice(0, 8)}`,
    }),
    groups: new Map<RouteGroup, GroupHandler>([
      ['tenancy', opts.handler ?? ok],
      ['meta', ok],
      ['oid4vci-issuer', ok],
    ]),
    authorizerCacheTtlSeconds: 0,
    throttles: { ...DEFAULT_THROTTLES, ...opts.throttles },
    usageKeys: registry,
    ...(opts.integrationTimeoutMs ? { integrationTimeoutMs: opts.integrationTimeoutMs } : {}),
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const call = async (path: string, key?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: key ? { 'x-api-key': key.padEnd(40, 'x') } : {} });
    return { status: res.status, body: (await res.json()) as { code: string; error: string } };
  };
  return { call, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const gw = (type: keyof typeof GATEWAY_ERRORS) => ({ error: GATEWAY_ERRORS[type].error, code: GATEWAY_ERRORS[type].code });

test("a wallet over its usage plan's limit gets 429, and another wallet is not affected", async () => {
  const g = await gateway({ throttles: { tenant: { rateLimit: 0.001, burstLimit: 2 } } });
  try {
    expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(200);
    expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(200);
    expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 429, body: gw('THROTTLED') });
    expect((await g.call('/api/v1/wallet', 'wallet-2')).status).toBe(200);
  } finally {
    await g.close();
  }
});

test("anonymous traffic is throttled at its public route; a tenant's method keeps its own limit", async () => {
  const g = await gateway({ throttles: { publicRoute: { rateLimit: 0.001, burstLimit: 1 } } });
  try {
    expect((await g.call('/openapi.json')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect(await g.call('/openapi.json')).toEqual({ status: 429, body: gw('THROTTLED') });
    for (let i = 0; i < 5; i++) expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(200);
  } finally {
    await g.close();
  }
});

test('a public protocol route (OID4VCI) has its own limit, not the other public routes\' one', async () => {
  const g = await gateway({ throttles: { publicRoute: { rateLimit: 0.001, burstLimit: 1 }, protocolRoute: { rateLimit: 0.001, burstLimit: 3 } } });
  try {
    expect((await g.call('/openapi.json')).status).toBe(200);
    expect((await g.call('/openapi.json')).status).toBe(429);
    const metadata = '/.well-known/openid-credential-issuer/oid4vci/1';
    for (let i = 0; i < 3; i++) expect((await g.call(metadata)).status).toBe(200);
    expect(await g.call(metadata)).toEqual({ status: 429, body: gw('THROTTLED') });
  } finally {
    await g.close();
  }
});

test("the stage's default limit is per method (API Gateway's default method throttling), not one bucket for the stage", async () => {
  const g = await gateway({ throttles: { stage: { rateLimit: 0.001, burstLimit: 2 } } });
  try {
    expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(200);
    expect((await g.call('/api/v1/wallet', 'wallet-2')).status).toBe(200);
    expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 429, body: gw('THROTTLED') }); // this method's bucket, every caller together
    expect((await g.call('/api/v1/apikeys', 'wallet-1')).status).toBe(200); // another method: its own bucket
  } finally {
    await g.close();
  }
});

test('the account limit is shared by all methods, and a refused request uses up no other bucket', async () => {
  const g = await gateway({ throttles: { account: { rateLimit: 0.001, burstLimit: 3 }, tenant: { rateLimit: 0.001, burstLimit: 3 } } });
  try {
    expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(200);
    expect((await g.call('/openapi.json')).status).toBe(200);
    expect((await g.call('/api/v1/apikeys', 'wallet-2')).status).toBe(200);
    expect((await g.call('/api/v1/apikeys', 'wallet-1')).status).toBe(429); // the account's third token is gone
  } finally {
    await g.close();
  }
});

test('a function slower than the integration timeout is a 504, not the DEFAULT_5XX status', async () => {
  const slow: GroupHandler = () => new Promise<APIGatewayProxyResult>((r) => setTimeout(() => r({ statusCode: 200, body: '{}' }), 300));
  const g = await gateway({ handler: slow, integrationTimeoutMs: 50 });
  try {
    expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 504, body: gw('INTEGRATION_TIMEOUT') });
  } finally {
    await g.close();
  }
});

test("a function that fails is API Gateway's 502 with the DEFAULT_5XX body", async () => {
  const g = await gateway({ handler: async () => Promise.reject(new Error('crash')) });
  try {
    expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 502, body: gw('DEFAULT_5XX') });
  } finally {
    await g.close();
  }
});

test('a usage identifier API Gateway does not know is refused (403) before any function runs; an unknown route is a 404', async () => {
  let ran = false;
  const g = await gateway({ usage: 'usage-never-registered', handler: async () => ((ran = true), { statusCode: 200, body: '{}' }) });
  try {
    expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 403, body: gw('INVALID_API_KEY') });
    expect(ran).toBe(false);
    expect(await g.call('/no/such/route', 'wallet-1')).toEqual({ status: 404, body: gw('MISSING_AUTHENTICATION_TOKEN') });
  } finally {
    await g.close();
  }
});
