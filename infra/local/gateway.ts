import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { GATEWAY_ERRORS, GATEWAY_MAX_PAYLOAD_BYTES, type GatewayError } from '../../lib/service/gateway-responses';
import { ROUTES, type Route, type RouteGroup } from '../../lib/service/routes';
import { policyResourceMatches } from '../../lib/http/caller';
import { lambdaContext, LOCAL_ACCOUNT } from './lambda-context';

export type GroupHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

export interface GatewayOptions {
  readonly authorizer: AuthorizerHandler;
  readonly groups: ReadonlyMap<RouteGroup, GroupHandler>;
  readonly stage?: string;
  /** Like the deployed TOKEN authorizer's result cache: Allow decisions are reused per key this long. */
  readonly authorizerCacheTtlSeconds: number;
  readonly onError?: (err: unknown) => void;
}

const API_ID = 'local';

interface CompiledRoute {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

function send(res: ServerResponse, status: number, headers: Record<string, string | number | boolean>, body: string | Buffer): void {
  res.writeHead(status, { ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])), 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendGatewayError(res: ServerResponse, e: GatewayError): void {
  send(res, e.status, { 'content-type': 'application/json' }, JSON.stringify({ error: e.error, code: e.code }));
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > GATEWAY_MAX_PAYLOAD_BYTES) return 'too_large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function singleValued(multi: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v[v.length - 1]!]));
}

/**
 * A small stand-in for API Gateway (REST API, Lambda proxy integration): matches the route table,
 * runs the TOKEN authorizer on x-api-key for non-public routes, builds the same proxy event the
 * deployed functions receive and answers gateway-level errors with the stack's gateway responses.
 * Allow decisions are cached per key for the same TTL as the deployed stage, so a revoked key keeps
 * working locally exactly as long as it would in AWS.
 */
export function createGateway(opts: GatewayOptions): Server {
  const stage = opts.stage ?? 'local';
  const compiled = ROUTES.map(compile);
  const ttlMs = opts.authorizerCacheTtlSeconds * 1000;
  const cache = new Map<string, { decision: APIGatewayAuthorizerResult; until: number }>();
  const authorize = async (token: string, methodArn: string): Promise<APIGatewayAuthorizerResult> => {
    const hit = cache.get(token);
    if (hit && hit.until > Date.now()) return hit.decision;
    const decision = await opts.authorizer({ type: 'TOKEN', authorizationToken: token, methodArn });
    if (ttlMs > 0 && decision.policyDocument.Statement.some((s) => s.Effect === 'Allow')) {
      if (cache.size > 10000) cache.clear();
      cache.set(token, { decision, until: Date.now() + ttlMs });
    }
    return decision;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const body = await readBody(req);
    if (body === 'too_large') {
      sendGatewayError(res, GATEWAY_ERRORS.REQUEST_TOO_LARGE);
      req.destroy();
      return;
    }
    let match: { c: CompiledRoute; values: string[] } | undefined;
    for (const c of compiled) {
      if (c.route.method !== method) continue;
      const m = c.pattern.exec(url.pathname);
      if (m) {
        match = { c, values: m.slice(1) };
        break;
      }
    }
    if (!match) return sendGatewayError(res, GATEWAY_ERRORS.MISSING_AUTHENTICATION_TOKEN);
    const { route } = match.c;
    let pathParameters: Record<string, string>;
    try {
      pathParameters = Object.fromEntries(match.c.names.map((n, i) => [n, decodeURIComponent(match.values[i]!)]));
    } catch {
      return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_4XX);
    }

    const multiHeaders: Record<string, string[]> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) (multiHeaders[req.rawHeaders[i]!.toLowerCase()] ??= []).push(req.rawHeaders[i + 1]!);
    const headers = singleValued(multiHeaders);

    let authorizer: Record<string, unknown> | null = null;
    if (route.auth !== 'public') {
      const token = headers['x-api-key'];
      if (!token) return sendGatewayError(res, GATEWAY_ERRORS.UNAUTHORIZED);
      const methodArn = `arn:aws:execute-api:local:${LOCAL_ACCOUNT}:${API_ID}/${stage}/${method}${url.pathname}`;
      let decision: APIGatewayAuthorizerResult;
      try {
        decision = await authorize(token, methodArn);
      } catch (err) {
        if (err instanceof Error && err.message === 'Unauthorized') return sendGatewayError(res, GATEWAY_ERRORS.UNAUTHORIZED);
        opts.onError?.(err);
        return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX);
      }
      // Like API Gateway, evaluate the (possibly cached) policy against this request's method ARN.
      const covers = (st: (typeof decision.policyDocument.Statement)[number]) =>
        'Resource' in st && [st.Resource].flat().some((r) => policyResourceMatches(String(r), methodArn));
      const statements = decision.policyDocument.Statement;
      const allowed = statements.some((st) => st.Effect === 'Allow' && covers(st)) && !statements.some((st) => st.Effect === 'Deny' && covers(st));
      if (!allowed) return sendGatewayError(res, GATEWAY_ERRORS.ACCESS_DENIED);
      authorizer = { principalId: decision.principalId, ...decision.context };
    }

    const multiQuery: Record<string, string[]> = {};
    for (const [k, v] of url.searchParams) (multiQuery[k] ??= []).push(v);
    const requestId = randomUUID();
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders: multiHeaders,
      queryStringParameters: Object.keys(multiQuery).length ? singleValued(multiQuery) : null,
      multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
      pathParameters: match.c.names.length ? pathParameters : null,
      stageVariables: null,
      body: body.length ? body.toString('utf8') : null,
      isBase64Encoded: false,
      requestContext: {
        accountId: LOCAL_ACCOUNT,
        apiId: API_ID,
        authorizer,
        protocol: 'HTTP/1.1',
        httpMethod: method,
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
        path: `/${stage}${url.pathname}`,
        stage,
        requestId,
        requestTimeEpoch: Date.now(),
        resourceId: route.operationId,
        resourcePath: route.path,
      },
    };
    const handler = opts.groups.get(route.group);
    if (!handler) throw new Error(`no handler loaded for group ${route.group}`);
    const result = await handler(event, lambdaContext(`local-${route.group}`, 29000));
    const outHeaders: Record<string, string | number | boolean> = { ...(result.headers ?? {}) };
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) outHeaders[k] = v.join(', ');
    outHeaders['x-amzn-requestid'] = requestId;
    send(res, result.statusCode, outHeaders, result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
  };

  return createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.onError?.(err);
      if (!res.headersSent) sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX);
      else res.destroy();
    });
  });
}
