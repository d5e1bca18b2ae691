import middy from '@middy/core';
import type { MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod';
import { DEFAULT_MAX_BODY_BYTES, routeKey, routesOf, type Route, type RouteGroup } from '../service/routes';
import { inSession } from '../store/session';
import { Paged } from './paging';
import { callerFromContext } from './caller';
import { BinaryRepresentation, JsonReply, RawRepresentation, Representation, type Caller, type OperationContract, type OperationContracts, type OperationImpls } from './contract';
import {
  AppError,
  BadRequestError,
  ForbiddenError,
  INTERNAL_ERROR_BODY,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  ValidationError,
  errorBody,
  errorDescription,
  type ErrorDetail,
} from './errors';

const BASE_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode: status, headers: { ...BASE_HEADERS, ...headers }, body: JSON.stringify(body) };
}

function issuesToDetails(issues: readonly z.core.$ZodIssue[], prefix: string): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const at = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => ({ path: [at, k].filter(Boolean).join('.'), message: 'unknown field' }));
    }
    return [{ path: at || '(body)', message: issue.message }];
  });
}

function validate(schema: z.ZodType | undefined, value: unknown, prefix: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(issuesToDetails(result.error.issues, prefix));
  return result.data;
}

function parseBody(event: APIGatewayProxyEvent, route: Route): unknown {
  if (event.body === null || event.body === undefined || event.body === '') return {};
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (Buffer.byteLength(raw, 'utf8') > limit) {
    if (route.tooLargeIsBadRequest) throw new BadRequestError(`Request body exceeds ${limit} bytes`, 'payload_too_large');
    throw new PayloadTooLargeError(limit);
  }
  if (route.form) {
    const contentType = headerOf(event, 'content-type').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/x-www-form-urlencoded') throw new BadRequestError('Request body must be application/x-www-form-urlencoded', 'unsupported_media_type');
    const fields: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(raw)) {
      // RFC 6749 §3.2: parameters must not be included more than once.
      if (k in fields) throw new BadRequestError(`Parameter ${k} is repeated`, 'invalid_request');
      fields[k] = v;
    }
    return fields;
  }
  try {
    return JSON.parse(raw);
  } catch {
    throw new BadRequestError('Request body is not valid JSON', 'malformed_json');
  }
}

function headerOf(event: APIGatewayProxyEvent, name: string): string {
  return Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1] ?? '';
}

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

/**
 * Authentication before authorization: a missing or expired credential is a 401 whatever the route,
 * and only a credential that holds is told it may not call this one (403).
 */
function authorize(route: Route, caller: Caller, now: number): void {
  if (route.auth !== 'public' && caller.kind === 'anonymous') {
    throw new UnauthorizedError('Missing, invalid, expired or revoked API key (x-api-key header)');
  }
  // The gateway may reuse an authorizer decision for its cache TTL; expiry is exact all the same.
  if (caller.kind === 'wallet' && caller.expiresAt !== null && !(now < caller.expiresAt)) {
    throw new UnauthorizedError(`This credential expired at ${new Date(caller.expiresAt).toISOString()}`);
  }
  if (route.auth === 'superadmin' && caller.kind !== 'superadmin') {
    throw new ForbiddenError('This route needs the base (super-admin) API key');
  }
  if (route.auth === 'wallet' && caller.kind !== 'wallet') {
    throw new ForbiddenError('This route needs a wallet API key or subwallet token; the base key does not act as a wallet');
  }
}

/** Maps errors to responses by class: only AppErrors speak to the caller; the rest is a logged 500. */
function errorMapper(
  logger: Logger,
  headersFor: (event: APIGatewayProxyEvent) => Record<string, string>,
  routeOf: (event: APIGatewayProxyEvent) => Route | undefined,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const err = request.error;
      if (err instanceof AppError) {
        if (err.status >= 500) logger.error('request failed', { error: err });
        // A protocol endpoint's malformed request gets the protocol's error shape (RFC 6749 §5.2).
        const oauth = routeOf(request.event)?.invalidRequest;
        const body = err.body ?? (oauth && (err.status === 400 || err.status === 413) ? { error: oauth, error_description: errorDescription(err.details ? `${err.message}: ${err.details.map((d) => `${d.path} ${d.message}`).join('; ')}` : err.message) } : errorBody(err));
        request.response = json(err.status, body, { ...headersFor(request.event), ...err.headers });
        return;
      }
      logger.error('unhandled error', { error: err as Error });
      request.response = json(500, INTERNAL_ERROR_BODY, headersFor(request.event));
    },
  };
}

/** X-Next-Cursor and the RFC 8288 `Link` to the next page: the same query with the new cursor. */
function nextPageHeaders(baseUrl: string, event: APIGatewayProxyEvent, next: string | null): Record<string, string> {
  if (next === null) return {};
  const query = new URLSearchParams(Object.entries(event.queryStringParameters ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
  query.set('cursor', next);
  return { 'x-next-cursor': next, link: `<${baseUrl}${event.path}?${query}>; rel="next"` };
}

const CORS_HEADERS = { 'access-control-allow-origin': '*' } as const;

export interface GroupHandlerOptions<Cs extends OperationContracts> {
  readonly group: RouteGroup;
  readonly contracts: Cs;
  readonly impls: OperationImpls<Cs>;
  readonly logger: Logger;
  /** Overrides the base URL derived from each request (custom domains, the local runtime). */
  readonly publicBaseUrl?: string | undefined;
}

/** One Lambda per endpoint group: a middy stack around a router over the group's rows of the route table. */
export function createGroupHandler<Cs extends OperationContracts>(opts: GroupHandlerOptions<Cs>) {
  const table = new Map<string, { route: Route; contract: OperationContract; impl: (input: never) => Promise<unknown> }>();
  for (const route of routesOf(opts.group)) {
    const contract = opts.contracts[route.operationId];
    const impl = opts.impls[route.operationId as keyof Cs];
    if (!contract || !impl) throw new Error(`route ${route.operationId} has no contract or implementation in group ${opts.group}`);
    table.set(routeKey(route.method, route.path), { route, contract, impl: impl as (input: never) => Promise<unknown> });
  }
  const { logger } = opts;

  const core = async (event: APIGatewayProxyEvent, _context: Context): Promise<APIGatewayProxyResult> => {
    const entry = table.get(routeKey(event.httpMethod, event.resource));
    if (!entry) throw new NotFoundError(`No route for ${event.httpMethod} ${event.path}`, 'route_not_found');
    const { route, contract, impl } = entry;
    const caller = callerFromContext(event.requestContext?.authorizer);
    logger.appendKeys({ api_request_id: event.requestContext?.requestId, operation: route.operationId });
    if (caller.kind === 'wallet') logger.appendKeys({ wallet_id: caller.scope.walletId });
    authorize(route, caller, Date.now());
    const params = validate(contract.params, event.pathParameters ?? {}, 'path');
    const query = validate(contract.query, event.queryStringParameters ?? {}, 'query');
    const body = contract.body ? validate(contract.body, parseBody(event, route), '') : undefined;
    const baseUrl = (opts.publicBaseUrl ?? `https://${event.requestContext.domainName}/${event.requestContext.stage}`).replace(/\/+$/, '');
    const accept = headerOf(event, 'accept');
    const request = { method: event.httpMethod, url: `${baseUrl}${event.path}`, headers: lowerCaseHeaders(event) };
    const run = () => impl({ body, query, params, caller, baseUrl, accept, request } as never);
    // A wallet route runs entirely in the caller's session: its data and key calls carry credentials
    // that reach only this wallet, whatever keys the code builds.
    const result = caller.kind === 'wallet' ? await inSession(caller.scope, run) : await run();
    if (result instanceof RawRepresentation) {
      const binary = result instanceof BinaryRepresentation ? { isBase64Encoded: true } : {};
      return { statusCode: contract.status ?? 200, headers: { ...BASE_HEADERS, ...headersFor(event), 'content-type': result.mediaType, ...result.headers }, body: result.body, ...binary };
    }
    if (result instanceof Representation) return json(contract.status ?? 200, result.body, { ...headersFor(event), 'content-type': result.mediaType });
    if (result instanceof JsonReply) {
      const status = result.opts.status ?? contract.status ?? 200;
      const headers = { ...BASE_HEADERS, ...headersFor(event), ...result.opts.headers };
      if (status === 204 || result.body === undefined) {
        const { 'content-type': _none, ...withoutType } = headers;
        return { statusCode: status, headers: withoutType, body: '' };
      }
      return json(status, result.body, headers);
    }
    if (result instanceof Paged) return json(contract.status ?? 200, result.items, { ...headersFor(event), ...nextPageHeaders(baseUrl, event, result.next) });
    return json(contract.status ?? 200, result, headersFor(event));
  };
  const headersFor = (event: APIGatewayProxyEvent): Record<string, string> =>
    table.get(routeKey(event.httpMethod, event.resource))?.route.cors ? CORS_HEADERS : {};

  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(errorMapper(logger, headersFor, (event) => table.get(routeKey(event.httpMethod, event.resource))?.route))
    .handler(core);
}
