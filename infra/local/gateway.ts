import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { localUsageKeys, type LocalUsageKeyRegistry } from '../../lib/adapters/local-usage-keys';
import { policyResourceMatches } from '../../lib/http/caller';
import { API_DEFAULTS, RESERVED_CONCURRENCY, routeThrottle, SOURCE_LIMITS, type ThrottleLimits } from '../../lib/service/api-settings';
import {
  GATEWAY_ERRORS,
  GATEWAY_INTEGRATION_TIMEOUT_MS,
  GATEWAY_MAX_PAYLOAD_BYTES,
  gatewayStatus,
  SOURCE_LIMITED,
  type GatewayError,
} from '../../lib/service/gateway-responses';
import { publicPathPatterns } from '../../lib/service/public-paths';
import { ROUTES, type Route, type RouteGroup } from '../../lib/service/routes';
import { lambdaContext, LOCAL_ACCOUNT } from './lambda-context';

export type GroupHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

export interface GatewayOptions {
  readonly authorizer: AuthorizerHandler;
  readonly groups: ReadonlyMap<RouteGroup, GroupHandler>;
  readonly stage?: string;
  /** Like the deployed TOKEN authorizer's result cache: Allow decisions are reused per key this long. */
  readonly authorizerCacheTtlSeconds: number;
  /** As the stack sets them (default: the stack's defaults). */
  readonly throttles?: LocalThrottles;
  /** API Gateway's API keys: the usage identifiers it knows, and their plans. */
  readonly usageKeys?: LocalUsageKeyRegistry;
  /** How long a function may take before the gateway answers 504 (API Gateway: 29 s). */
  readonly integrationTimeoutMs?: number;
  /** The stage's per-source (WAF) limits (default: SOURCE_LIMITS). */
  readonly sourceLimits?: SourceLimits;
  /** In-flight invocations allowed per function, as Lambda's reserved concurrency (default: RESERVED_CONCURRENCY). */
  readonly reservedConcurrency?: Readonly<Record<string, number>>;
  readonly onError?: (err: unknown) => void;
}

export interface SourceLimits {
  readonly windowSeconds: number;
  readonly allRequests: number;
  readonly publicRequests: number;
}

export interface LocalThrottles {
  /** The stage's default method limit: each method its own bucket (API Gateway's "default method throttling"). */
  readonly stage: ThrottleLimits;
  readonly tenant: ThrottleLimits;
  readonly platform: ThrottleLimits;
  /** Each public route's own method limit. */
  readonly publicRoute: ThrottleLimits;
  /** Each public protocol route's own method limit (OID4VCI). */
  readonly protocolRoute: ThrottleLimits;
  /** The account's regional limit, shared by every method and every API of the account. */
  readonly account: ThrottleLimits;
}

export const DEFAULT_THROTTLES: LocalThrottles = {
  stage: { rateLimit: API_DEFAULTS.throttleRateLimit, burstLimit: API_DEFAULTS.throttleBurstLimit },
  tenant: { rateLimit: API_DEFAULTS.tenantThrottleRateLimit, burstLimit: API_DEFAULTS.tenantThrottleBurstLimit },
  platform: { rateLimit: API_DEFAULTS.platformThrottleRateLimit, burstLimit: API_DEFAULTS.platformThrottleBurstLimit },
  publicRoute: { rateLimit: API_DEFAULTS.publicThrottleRateLimit, burstLimit: API_DEFAULTS.publicThrottleBurstLimit },
  protocolRoute: { rateLimit: API_DEFAULTS.protocolThrottleRateLimit, burstLimit: API_DEFAULTS.protocolThrottleBurstLimit },
  account: { rateLimit: API_DEFAULTS.accountThrottleRateLimit, burstLimit: API_DEFAULTS.accountThrottleBurstLimit },
};

/** API Gateway's throttle: a token bucket of `burstLimit` tokens refilled at `rateLimit` per second. */
class TokenBucket {
  private tokens: number;
  private at = Date.now();

  constructor(private readonly limits: ThrottleLimits) {
    this.tokens = limits.burstLimit;
  }

  /** Whether a request would pass now (tokens refilled for the time since the last look). */
  ready(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.limits.burstLimit, this.tokens + ((now - this.at) / 1000) * this.limits.rateLimit);
    this.at = now;
    return this.tokens >= 1;
  }

  take(): void {
    this.tokens -= 1;
  }
}

class IntegrationTimeout extends Error {}

/** Sources tracked at once; past it the one seen longest ago is forgotten, so memory stays bounded. */
const MAX_TRACKED_SOURCES = 10_000;
/** The window is counted in this many slots: a fixed amount of memory per source, however fast it sends. */
const WINDOW_SLOTS = 12;

/**
 * The stage's AWS WAF rate-based rules (SOURCE_LIMITS), per socket address. Differences from WAF: this
 * counts exactly, in slots of windowSeconds/12 (a request leaves the count up to one slot after the
 * window), and refuses from the first request over a limit; WAF estimates the rate, checks it every few
 * seconds and needs up to tens of seconds to start and stop refusing a source (the route throttles
 * bound what passes meanwhile). Refused requests still count, as WAF counts every request its rule
 * matches: a source that keeps sending stays refused until it slows down.
 */
export class SourceLimiter {
  /** Per source: the slot last written, then [all, public] counts per slot. Map order is recency. */
  private readonly sources = new Map<string, { slot: number; counts: Uint32Array }>();
  private readonly slotMs: number;

  constructor(
    private readonly limits: SourceLimits,
    private readonly maxSources = MAX_TRACKED_SOURCES,
  ) {
    this.slotMs = (limits.windowSeconds * 1000) / WINDOW_SLOTS;
  }

  /** Counts a request from `source`; false when the source is now over a limit that applies to it. */
  admit(source: string, isPublic: boolean, now = Date.now()): boolean {
    const slot = Math.floor(now / this.slotMs);
    let entry = this.sources.get(source);
    if (entry) this.sources.delete(source);
    else {
      if (this.sources.size >= this.maxSources) this.sources.delete(this.sources.keys().next().value!);
      entry = { slot, counts: new Uint32Array(WINDOW_SLOTS * 2) };
    }
    this.sources.set(source, entry);
    // Clear the slots passed since the last request (all of them after a whole window).
    for (let s = Math.max(entry.slot + 1, slot - WINDOW_SLOTS + 1); s <= slot; s++) {
      const i = (s % WINDOW_SLOTS) * 2;
      entry.counts[i] = 0;
      entry.counts[i + 1] = 0;
    }
    entry.slot = slot;
    const i = (slot % WINDOW_SLOTS) * 2;
    entry.counts[i]! += 1;
    if (isPublic) entry.counts[i + 1]! += 1;
    let all = 0;
    let pub = 0;
    for (let k = 0; k < WINDOW_SLOTS; k++) {
      all += entry.counts[k * 2]!;
      pub += entry.counts[k * 2 + 1]!;
    }
    // The public limit is a rule scoped to public routes: it refuses only requests to them.
    return all <= this.limits.allRequests && (!isPublic || pub <= this.limits.publicRequests);
  }

  get tracked(): number {
    return this.sources.size;
  }
}

/** The address a socket's peer has, IPv4-mapped IPv6 written as IPv4 (one source, one count). */
function sourceAddress(req: IncomingMessage): string {
  const a = req.socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
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
  // API Gateway's REST API routes `/a/b/` to the resource `/a/b` too (the contract's `GET /context/`).
  return { route, pattern: new RegExp(`^${source}/?$`), names };
}

function send(res: ServerResponse, status: number, headers: Record<string, string | number | boolean>, body: string | Buffer): void {
  res.writeHead(status, { ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])), 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A gateway response: the type's status (or the situation's, for the DEFAULT_* types) and the stack's body. */
function sendGatewayError(res: ServerResponse, e: GatewayError, situation?: number): void {
  send(res, gatewayStatus(e, situation), { 'content-type': 'application/json' }, JSON.stringify({ error: e.error, code: e.code }));
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
  const throttles = opts.throttles ?? DEFAULT_THROTTLES;
  const usageKeys = opts.usageKeys ?? localUsageKeys;
  const timeoutMs = opts.integrationTimeoutMs ?? GATEWAY_INTEGRATION_TIMEOUT_MS;
  const accountBucket = new TokenBucket(throttles.account);
  const methodBuckets = new Map<Route, TokenBucket>();
  const planBuckets = new Map<string, TokenBucket>();
  // API Gateway's order: the usage plan's limit for the caller, the method's (a public route's own, else
  // the stage's default, per method), then the account's. A refused request takes no token anywhere.
  const throttled = (route: Route, usageKey: string | null, plan: 'tenants' | 'platform' | null): boolean => {
    const buckets: TokenBucket[] = [];
    if (usageKey !== null && plan !== null) {
      let b = planBuckets.get(usageKey);
      if (!b) planBuckets.set(usageKey, (b = new TokenBucket(plan === 'platform' ? throttles.platform : throttles.tenant)));
      buckets.push(b);
    }
    let m = methodBuckets.get(route);
    if (!m) methodBuckets.set(route, (m = new TokenBucket(routeThrottle(route, throttles) ?? throttles.stage)));
    buckets.push(m, accountBucket);
    if (!buckets.every((b) => b.ready())) return true;
    for (const b of buckets) b.take();
    return false;
  };
  const sources = new SourceLimiter(opts.sourceLimits ?? SOURCE_LIMITS);
  // The WAF rule's own scope-down: a request counts as public by its path (an unknown DID's 404 too).
  const publicPaths = publicPathPatterns(ROUTES, stage).map((p) => new RegExp(p));
  const isPublicPath = (pathname: string) => {
    let path = pathname;
    try {
      path = decodeURIComponent(pathname); // WAF matches after URL_DECODE
    } catch {
      // not valid percent-encoding: matched as sent
    }
    return publicPaths.some((re) => re.test(path));
  };
  const reserved = opts.reservedConcurrency ?? RESERVED_CONCURRENCY;
  const inFlight = new Map<string, number>();
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
    let match: { c: CompiledRoute; values: string[] } | undefined;
    for (const c of compiled) {
      if (c.route.method !== method) continue;
      const m = c.pattern.exec(url.pathname);
      if (m) {
        match = { c, values: m.slice(1) };
        break;
      }
    }
    // The web ACL comes before API Gateway: a refused request takes no throttle token and runs no authorizer.
    if (!sources.admit(sourceAddress(req), isPublicPath(url.pathname))) {
      req.resume();
      return send(res, SOURCE_LIMITED.status, { 'content-type': 'application/json' }, JSON.stringify({ error: SOURCE_LIMITED.error, code: SOURCE_LIMITED.code }));
    }
    const body = await readBody(req);
    if (body === 'too_large') {
      sendGatewayError(res, GATEWAY_ERRORS.REQUEST_TOO_LARGE);
      req.destroy();
      return;
    }
    if (!match) return sendGatewayError(res, GATEWAY_ERRORS.MISSING_AUTHENTICATION_TOKEN);
    const { route } = match.c;
    let pathParameters: Record<string, string>;
    try {
      pathParameters = Object.fromEntries(match.c.names.map((n, i) => [n, decodeURIComponent(match.values[i]!)]));
    } catch {
      return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_4XX, 400);
    }

    const multiHeaders: Record<string, string[]> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) (multiHeaders[req.rawHeaders[i]!.toLowerCase()] ??= []).push(req.rawHeaders[i + 1]!);
    const headers = singleValued(multiHeaders);

    let authorizer: Record<string, unknown> | null = null;
    let usageKey: string | null = null;
    let plan: 'tenants' | 'platform' | null = null;
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
        return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX, 500); // AUTHORIZER_FAILURE
      }
      // Like API Gateway, evaluate the (possibly cached) policy against this request's method ARN.
      const covers = (st: (typeof decision.policyDocument.Statement)[number]) =>
        'Resource' in st && [st.Resource].flat().some((r) => policyResourceMatches(String(r), methodArn));
      const statements = decision.policyDocument.Statement;
      const allowed = statements.some((st) => st.Effect === 'Allow' && covers(st)) && !statements.some((st) => st.Effect === 'Deny' && covers(st));
      if (!allowed) return sendGatewayError(res, GATEWAY_ERRORS.ACCESS_DENIED);
      authorizer = { principalId: decision.principalId, ...decision.context };
      // Authenticated methods require an API key, here the usage identifier the authorizer names.
      usageKey = typeof decision.usageIdentifierKey === 'string' ? decision.usageIdentifierKey : null;
      plan = usageKey === null ? null : usageKeys.planOf(usageKey);
      if (plan === null) return sendGatewayError(res, GATEWAY_ERRORS.INVALID_API_KEY);
    }
    if (throttled(route, usageKey, plan)) return sendGatewayError(res, GATEWAY_ERRORS.THROTTLED);

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
        domainName: headers.host ?? `127.0.0.1`,
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
    // Lambda refuses an invocation past the function's reserved concurrency, and API Gateway answers
    // that with a 500 and the DEFAULT_5XX body (AWS: "If the Lambda API rejects the invocation request,
    // API Gateway returns a 500"). An instance stays taken until the function returns, even after a 504.
    const cap = reserved[route.group];
    const running = inFlight.get(route.group) ?? 0;
    if (cap !== undefined && running >= cap) return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX, 500);
    inFlight.set(route.group, running + 1);
    const invocation = Promise.resolve()
      .then(() => handler(event, lambdaContext(`local-${route.group}`, timeoutMs)))
      .finally(() => inFlight.set(route.group, inFlight.get(route.group)! - 1));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new IntegrationTimeout()), timeoutMs);
    });
    let result: APIGatewayProxyResult;
    try {
      result = await Promise.race([invocation, deadline]);
    } catch (err) {
      if (err instanceof IntegrationTimeout) return sendGatewayError(res, GATEWAY_ERRORS.INTEGRATION_TIMEOUT);
      // A function that throws instead of answering: API Gateway's 502 with the DEFAULT_5XX body.
      opts.onError?.(err);
      return sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX, 502);
    } finally {
      clearTimeout(timer);
    }
    const outHeaders: Record<string, string | number | boolean> = { ...(result.headers ?? {}) };
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) outHeaders[k] = v.join(', ');
    outHeaders['x-amzn-requestid'] = requestId;
    send(res, result.statusCode, outHeaders, result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
  };

  return createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.onError?.(err);
      if (!res.headersSent) sendGatewayError(res, GATEWAY_ERRORS.DEFAULT_5XX, 500);
      else res.destroy();
    });
  });
}
