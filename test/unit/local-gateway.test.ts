import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { LocalUsageKeyRegistry } from '../../lib/adapters/local-usage-keys';
import { RESERVED_CONCURRENCY, SOURCE_LIMITS } from '../../lib/service/api-settings';
import { GATEWAY_ERRORS, SOURCE_LIMITED } from '../../lib/service/gateway-responses';
import type { RouteGroup } from '../../lib/service/routes';
import { createGateway, DEFAULT_THROTTLES, SourceLimiter, type GroupHandler, type LocalThrottles, type SourceLimits } from '../../infra/local/gateway';

/**
 * The local API Gateway answers what API Gateway answers: a throttled or timed-out request keeps its
 * own status (429, 504, a Lambda error's 502) with the service's body — no DEFAULT_* status overrides it.
 */
const ok: GroupHandler = async () => ({ statusCode: 200, body: '{}' });

interface GatewayTestOptions {
  throttles?: Partial<LocalThrottles>;
  handler?: GroupHandler;
  /** The OID4VP verifier's handler (default: answers 200). */
  verifier?: GroupHandler;
  integrationTimeoutMs?: number;
  usage?: string;
  sourceLimits?: SourceLimits;
  reservedConcurrency?: Record<string, number>;
}

async function gateway(opts: GatewayTestOptions = {}) {
  const registry = new LocalUsageKeyRegistry();
  registry.add('usage-wallet-1', 'tenants');
  registry.add('usage-wallet-2', 'tenants');
  let authorizerRuns = 0;
  const server: Server = createGateway({
    // x-api-key "wallet-<n>" is wallet n with usage key "usage-wallet-<n>" (or the one the test names).
    authorizer: async (e) => {
      authorizerRuns++;
      return {
        principalId: e.authorizationToken,
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
        context: { principal: 'wallet', wallet_id: e.authorizationToken.replace(/\D/g, '') },
        usageIdentifierKey: opts.usage ?? `usage-${e.authorizationToken.slice(0, 8)}`,
      };
    },
    groups: new Map<RouteGroup, GroupHandler>([
      ['tenancy', opts.handler ?? ok],
      ['meta', ok],
      ['oid4vci-issuer', ok],
      ['oid4vp-verifier', opts.verifier ?? ok],
    ]),
    authorizerCacheTtlSeconds: 0,
    throttles: { ...DEFAULT_THROTTLES, ...opts.throttles },
    usageKeys: registry,
    ...(opts.integrationTimeoutMs ? { integrationTimeoutMs: opts.integrationTimeoutMs } : {}),
    ...(opts.sourceLimits ? { sourceLimits: opts.sourceLimits } : {}),
    ...(opts.reservedConcurrency ? { reservedConcurrency: opts.reservedConcurrency } : {}),
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const call = async (path: string, key?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: key ? { 'x-api-key': key.padEnd(40, 'x') } : {} });
    return { status: res.status, body: (await res.json()) as { code: string; error: string } };
  };
  /** A GET from the given loopback address (the client socket's local address). */
  const callFrom = (localAddress: string, path: string, key?: string) =>
    new Promise<{ status: number; body: { code: string; error: string } }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, localAddress, agent: false, headers: key ? { 'x-api-key': key.padEnd(40, 'x') } : {} }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject).end();
    });
  return { call, callFrom, authorizerRuns: () => authorizerRuns, close: () => new Promise<void>((r) => server.close(() => r())) };
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

const sourceLimited = { status: SOURCE_LIMITED.status, body: { error: SOURCE_LIMITED.error, code: SOURCE_LIMITED.code } };

describe('per-source limits (the stage\'s WAF rate-based rules)', () => {
  test('a source over its public allowance gets 429 rate_limited; another source is served, and refused requests took no route token', async () => {
    const g = await gateway({
      sourceLimits: { windowSeconds: 60, allRequests: 100, publicRequests: 3 },
      throttles: { publicRoute: { rateLimit: 0.001, burstLimit: 5 } },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await g.callFrom('127.0.0.2', '/openapi.json')).status).toBe(200);
      for (let i = 0; i < 5; i++) expect(await g.callFrom('127.0.0.2', '/openapi.json')).toEqual(sourceLimited);
      // The route's bucket (5) lost only the 3 requests that passed: the other source gets the last 2.
      expect((await g.callFrom('127.0.0.3', '/openapi.json')).status).toBe(200);
      expect((await g.callFrom('127.0.0.3', '/openapi.json')).status).toBe(200);
      expect(await g.callFrom('127.0.0.3', '/openapi.json')).toEqual({ status: 429, body: gw('THROTTLED') }); // the route's ceiling
      // The public allowance is for public routes: the same source still calls the admin API.
      expect((await g.callFrom('127.0.0.2', '/api/v1/wallet', 'wallet-1')).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  test('every request of a source counts toward its overall allowance, and a refused one runs no authorizer', async () => {
    const g = await gateway({ sourceLimits: { windowSeconds: 60, allRequests: 4, publicRequests: 100 } });
    try {
      expect((await g.callFrom('127.0.0.2', '/openapi.json')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await g.callFrom('127.0.0.2', '/api/v1/wallet', 'wallet-1')).status).toBe(200);
      const runs = g.authorizerRuns();
      expect(await g.callFrom('127.0.0.2', '/api/v1/wallet', 'wallet-1')).toEqual(sourceLimited);
      expect(await g.callFrom('127.0.0.2', '/no/such/route')).toEqual(sourceLimited);
      expect(g.authorizerRuns()).toBe(runs);
      expect((await g.callFrom('127.0.0.3', '/api/v1/wallet', 'wallet-1')).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  test("a path counts as public by the WAF rule's own patterns: an unknown path under a public prefix does, one under /api does not", async () => {
    const g = await gateway({ sourceLimits: { windowSeconds: 60, allRequests: 100, publicRequests: 2 } });
    try {
      // No route matches either path (404), yet one is under the public /dids prefix.
      expect((await g.callFrom('127.0.0.2', '/dids/nope/extra/did.json')).status).toBe(404);
      expect((await g.callFrom('127.0.0.2', '/dids/nope/extra/did.json')).status).toBe(404);
      expect(await g.callFrom('127.0.0.2', '/dids/nope/extra/did.json')).toEqual(sourceLimited);
      expect(await g.callFrom('127.0.0.2', '/openapi.json')).toEqual(sourceLimited);
      // Unknown admin paths count only toward the overall allowance.
      for (let i = 0; i < 3; i++) expect((await g.callFrom('127.0.0.3', '/api/v1/no-such-route')).status).toBe(404);
    } finally {
      await g.close();
    }
  });

  test('the gateway applies SOURCE_LIMITS by default', async () => {
    const g = await gateway();
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= SOURCE_LIMITS.publicRequests; i++) statuses.push((await g.callFrom('127.0.0.2', '/openapi.json')).status);
      expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
      expect(statuses.at(-1)).toBe(429);
      expect(await g.callFrom('127.0.0.2', '/openapi.json')).toEqual(sourceLimited);
    } finally {
      await g.close();
    }
  });

  test('the count is over a trailing window: a source is served again once its requests leave it', () => {
    const limiter = new SourceLimiter({ windowSeconds: 60, allRequests: 100, publicRequests: 2 });
    const t0 = 1_700_000_000_000;
    expect(limiter.admit('a', true, t0)).toBe(true);
    expect(limiter.admit('a', true, t0 + 1000)).toBe(true);
    expect(limiter.admit('a', true, t0 + 2000)).toBe(false);
    // Refused requests count too (as in WAF): still over at 30 s, with 4 in the window.
    expect(limiter.admit('a', true, t0 + 30_000)).toBe(false);
    expect(limiter.admit('a', true, t0 + 50_000)).toBe(false);
    // At 70 s the first three have left the window, the ones at 30 s and 50 s have not.
    expect(limiter.admit('a', true, t0 + 70_000)).toBe(false);
    // At 120 s only the one at 70 s is left: this one makes two.
    expect(limiter.admit('a', true, t0 + 120_000)).toBe(true);
    expect(limiter.admit('b', true, t0 + 120_000)).toBe(true);
  });

  test('memory stays bounded: past the tracked maximum the source seen longest ago is forgotten', () => {
    const limiter = new SourceLimiter({ windowSeconds: 60, allRequests: 1, publicRequests: 1 }, 3);
    const t0 = 1_700_000_000_000;
    for (const s of ['a', 'b', 'c']) expect(limiter.admit(s, true, t0)).toBe(true);
    expect(limiter.admit('a', true, t0)).toBe(false); // a is now the most recent
    expect(limiter.admit('d', true, t0)).toBe(true); // evicts b
    expect(limiter.tracked).toBe(3);
    expect(limiter.admit('c', true, t0)).toBe(false);
    expect(limiter.admit('b', true, t0)).toBe(true); // forgotten: counted afresh
    for (let i = 0; i < 1000; i++) limiter.admit(`10.0.${i >> 8}.${i & 255}`, true, t0);
    expect(limiter.tracked).toBe(3);
  });
});

describe("a function's reserved concurrency", () => {
  /** A handler whose invocations wait until released. */
  function gated() {
    const waiting: (() => void)[] = [];
    const handler: GroupHandler = () => new Promise((r) => waiting.push(() => r({ statusCode: 200, body: '{}' })));
    return { handler, waiting, releaseAll: () => waiting.splice(0).forEach((f) => f()) };
  }
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(cond()).toBe(true);
  };

  test("past the cap an invocation is refused as API Gateway answers Lambda's throttle: 500 with the DEFAULT_5XX body; other functions are not held", async () => {
    const gate = gated();
    const g = await gateway({ handler: gate.handler, reservedConcurrency: { tenancy: 1 } });
    try {
      const first = g.call('/api/v1/wallet', 'wallet-1');
      await until(() => gate.waiting.length === 1);
      expect(await g.call('/api/v1/wallet', 'wallet-2')).toEqual({ status: 500, body: gw('DEFAULT_5XX') });
      expect((await g.call('/openapi.json')).status).toBe(200); // meta: no cap
      gate.releaseAll();
      expect((await first).status).toBe(200);
      const again = g.call('/api/v1/wallet', 'wallet-2');
      await until(() => gate.waiting.length === 1);
      gate.releaseAll();
      expect((await again).status).toBe(200);
    } finally {
      gate.releaseAll();
      await g.close();
    }
  });

  test('an invocation past the integration timeout keeps its instance until the function returns', async () => {
    let finish: (() => void) | undefined;
    const slow: GroupHandler = () => new Promise((r) => (finish = () => r({ statusCode: 200, body: '{}' })));
    const g = await gateway({ handler: slow, reservedConcurrency: { tenancy: 1 }, integrationTimeoutMs: 50 });
    try {
      expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 504, body: gw('INTEGRATION_TIMEOUT') });
      expect(await g.call('/api/v1/wallet', 'wallet-1')).toEqual({ status: 500, body: gw('DEFAULT_5XX') });
      finish!();
      await new Promise((r) => setImmediate(r));
      expect((await g.call('/api/v1/wallet', 'wallet-1')).status).toBe(504); // admitted again (and slow again)
    } finally {
      finish?.();
      await g.close();
    }
  });

  test('by default the verifier is capped at RESERVED_CONCURRENCY', async () => {
    const cap = RESERVED_CONCURRENCY['oid4vp-verifier']!;
    const gate = gated();
    const g = await gateway({ verifier: gate.handler });
    try {
      const held = Array.from({ length: cap }, (_, i) => g.call(`/oid4vp/1/request/p${i}`));
      await until(() => gate.waiting.length === cap);
      expect(await g.call('/oid4vp/1/request/one-more')).toEqual({ status: 500, body: gw('DEFAULT_5XX') });
      gate.releaseAll();
      expect((await Promise.all(held)).every((r) => r.status === 200)).toBe(true);
    } finally {
      gate.releaseAll();
      await g.close();
    }
  });
});
