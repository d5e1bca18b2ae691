import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { createGroupHandler } from '../../lib/http/router';
import { policyResourceMatches, wholeStageResource } from '../../lib/http/caller';
import { ConflictError } from '../../lib/http/errors';
import { tenancyContracts } from '../../lib/tenancy/contract';
import { RawRepresentation, type OperationImpls } from '../../lib/http/contract';

const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
const context = { getRemainingTimeInMillis: () => 10000, awsRequestId: 'r', functionName: 'f' } as unknown as Context;

function event(method: string, resource: string, opts: { body?: string; auth?: Record<string, string>; params?: Record<string, string> } = {}) {
  return {
    httpMethod: method,
    resource,
    path: resource,
    body: opts.body ?? null,
    isBase64Encoded: false,
    headers: {},
    pathParameters: opts.params ?? null,
    queryStringParameters: null,
    requestContext: { authorizer: opts.auth ?? null },
  } as unknown as APIGatewayProxyEvent;
}

const SUPER = { principal: 'superadmin', key_id: 'base' };
const WALLET = { principal: 'wallet', wallet_id: '7', key_id: 'k', via: 'api_key', roles: 'admin' };

function handlerWith(overrides: Partial<OperationImpls<typeof tenancyContracts>>) {
  const fail = async () => {
    throw new Error('not under test');
  };
  const impls = Object.fromEntries(Object.keys(tenancyContracts).map((k) => [k, fail])) as unknown as OperationImpls<typeof tenancyContracts>;
  return createGroupHandler({ group: 'tenancy', contracts: tenancyContracts, impls: { ...impls, ...overrides }, logger });
}

const parse = (r: { body: string }) => JSON.parse(r.body);

describe('group router', () => {
  test('an unexpected error is a plain 500 that leaks nothing', async () => {
    const h = handlerWith({
      listSubwallets: async () => {
        throw new Error('connect ECONNREFUSED 10.1.2.3:443 table=prod-secret');
      },
    });
    const res = await h(event('GET', '/api/subwallets', { auth: SUPER }), context);
    expect(res.statusCode).toBe(500);
    expect(parse(res)).toEqual({ error: 'Internal server error', code: 'internal_error' });
    expect(res.body).not.toMatch(/ECONNREFUSED|secret|stack/);
  });

  test('AppErrors keep their status, code and message', async () => {
    const h = handlerWith({
      createSubwallet: async () => {
        throw new ConflictError('taken', 'wallet_name_taken');
      },
    });
    const res = await h(event('POST', '/api/subwallet/create', { auth: SUPER, body: '{"wallet_name":"a"}' }), context);
    expect(res.statusCode).toBe(409);
    expect(parse(res)).toEqual({ error: 'taken', code: 'wallet_name_taken' });
  });

  test('the wallet a handler acts for is the authorizer context, whatever the body says', async () => {
    let seen: string | undefined;
    const h = handlerWith({
      getOwnWallet: async ({ caller }) => {
        seen = caller.kind === 'wallet' ? caller.scope.walletId : undefined;
        return { wallet_id: 7, wallet_name: 'w', label: 'w', public_ref: 'R7R7R7R7R7R7R7R7R7R7R7', created_at: new Date().toISOString() };
      },
    });
    await h(event('GET', '/api/v1/wallet', { auth: WALLET, body: '{"wallet_id":"8"}' }), context);
    expect(seen).toBe('7');
  });

  test('roles: a valid credential on the wrong kind of route gets 403', async () => {
    const h = handlerWith({});
    expect((await h(event('GET', '/api/subwallets', { auth: WALLET }), context)).statusCode).toBe(403);
    expect((await h(event('GET', '/api/v1/wallet', { auth: SUPER }), context)).statusCode).toBe(403);
    const unexpired = { ...WALLET, expires_at: new Date(Date.now() + 60_000).toISOString() };
    expect(parse(await h(event('GET', '/api/subwallets', { auth: unexpired }), context))).toEqual({ error: 'This route needs the base (super-admin) API key', code: 'forbidden' });
  });

  test('authentication before authorization: no caller, or an expired one, is a 401 on any route', async () => {
    const h = handlerWith({});
    // No (or an unreadable) authorizer context: not authenticated.
    for (const auth of [undefined, { principal: 'wallet', wallet_id: '../x' }]) {
      for (const route of ['/api/subwallets', '/api/v1/wallet']) {
        const res = await h(event('GET', route, auth ? { auth } : {}), context);
        expect(res.statusCode).toBe(401);
        expect(parse(res).code).toBe('unauthorized');
      }
    }
    // Past expires_at (an API key) or exp (a subwallet token), while the gateway's cached decision lives:
    // 401 on its own routes and on the ones its role may not call alike.
    const expiresAt = new Date(Date.now() - 1000).toISOString();
    for (const via of ['api_key', 'token']) {
      const expired = { ...WALLET, via, expires_at: expiresAt };
      for (const route of ['/api/subwallets', '/api/v1/wallet']) {
        const res = await h(event('GET', route, { auth: expired }), context);
        expect(res.statusCode).toBe(401);
        expect(parse(res)).toEqual({ error: `This credential expired at ${expiresAt}`, code: 'unauthorized' });
      }
    }
  });

  test('malformed JSON, oversized and base64 bodies', async () => {
    let got: unknown;
    const h = handlerWith({
      createSubwallet: async ({ body }) => {
        got = body;
        return { wallet_id: 1, token: 't' };
      },
    });
    const bad = await h(event('POST', '/api/subwallet/create', { auth: SUPER, body: '{' }), context);
    expect(bad.statusCode).toBe(400);
    expect(parse(bad).code).toBe('malformed_json');
    const big = await h(event('POST', '/api/subwallet/create', { auth: SUPER, body: `{"wallet_name":"${'a'.repeat(70000)}"}` }), context);
    expect(big.statusCode).toBe(413);
    const b64 = { ...event('POST', '/api/subwallet/create', { auth: SUPER }), body: Buffer.from('{"wallet_name":"b"}').toString('base64'), isBase64Encoded: true };
    expect((await h(b64, context)).statusCode).toBe(200);
    expect(got).toEqual({ wallet_name: 'b' });
  });

  test('a raw representation is sent as it is, with its media type and headers over the defaults', async () => {
    const h = handlerWith({
      listSubwallets: async () => new RawRepresentation('<p>"not JSON"</p>', 'text/html; charset=utf-8', { 'cache-control': 'max-age=60' }),
      getSubwallet: async () => ({ wallet_id: 1, token: 't', label: 'l' }),
    });
    const raw = await h(event('GET', '/api/subwallets', { auth: SUPER }), context);
    expect(raw.body).toBe('<p>"not JSON"</p>');
    expect(raw.headers).toEqual({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'max-age=60', 'x-content-type-options': 'nosniff' });
    const json = await h(event('GET', '/api/subwallets/{wallet_id}', { auth: SUPER, params: { wallet_id: '1' } }), context);
    expect(parse(json)).toEqual({ wallet_id: 1, token: 't', label: 'l' });
    expect(json.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  });

  test('a route of another group is a 404', async () => {
    const res = await handlerWith({})(event('GET', '/openapi.json'), context);
    expect(res.statusCode).toBe(404);
    expect(parse(res).code).toBe('route_not_found');
  });

  test('a group without an implementation for one of its routes fails at load, not at request time', () => {
    const { createSubwallet: _omit, ...partial } = Object.fromEntries(Object.keys(tenancyContracts).map((k) => [k, async () => ({})])) as any;
    expect(() => createGroupHandler({ group: 'tenancy', contracts: tenancyContracts, impls: partial, logger })).toThrow(/createSubwallet/);
  });
});

describe('authorizer policy resource', () => {
  const arn = (method: string, path: string) => `arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/${method}${path}`;

  test('one decision covers every method and path of the same API and stage, and nothing else', () => {
    const resource = wholeStageResource(arn('GET', '/api/subwallets'));
    expect(resource).toBe('arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*/*');
    expect(policyResourceMatches(resource, arn('POST', '/api/apikey/create'))).toBe(true);
    expect(policyResourceMatches(resource, arn('GET', '/api/subwallets/7'))).toBe(true);
    expect(policyResourceMatches(resource, 'arn:aws:execute-api:eu-west-1:123456789012:abc123/test/GET/api/subwallets')).toBe(false);
    expect(policyResourceMatches(resource, 'arn:aws:execute-api:eu-west-1:123456789012:other/prod/GET/api/subwallets')).toBe(false);
    expect(() => wholeStageResource('nonsense')).toThrow();
  });
});
