import * as z from 'zod';
import { ROUTES, type Route } from '../service/routes';
import { ErrorBodySchema, type OperationContract, type OperationContracts } from '../http/contract';
import { commonErrorCodes, ERROR_CODES, OPERATION_ERROR_CODES, type ErrorCode } from './error-codes';
import { OPERATION_EXAMPLES } from './examples';
import { TAGS } from './tags';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad input: validation failure (with details), malformed JSON',
  401: 'Missing, invalid, expired or revoked API key',
  403: 'The key is valid but may not call this route',
  404: 'Not found (on wallet routes: not in this wallet)',
  409: 'Conflicts with the current state (a duplicate name, a quota reached, a state change under way)',
  410: 'Gone: the resource was deactivated',
  413: 'Request body too large',
  422: 'Understood but cannot be processed (e.g. a message too large to sign)',
  429: 'Throttled (stage, per-tenant or per-route limit); retry later, after Retry-After when given',
  500: 'Internal error (never with internal details)',
  501: 'Not implemented',
  503: 'A dependency (the key service) is temporarily unavailable; retry',
};

type Schemas = Record<string, unknown>;

/** `#/$defs/X` -> `#/components/schemas/X`, everywhere in a schema. */
function componentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(componentRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : componentRefs(v)]),
  );
}

/**
 * A zod schema as JSON Schema. Schemas with a `.meta({ id })` become components: zod writes them as
 * `$defs` of the one schema with `#/$defs/...` refs, which inside the document would point at its root.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', components: Schemas): Record<string, unknown> {
  const { $schema: _s, $defs, ...out } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  for (const [name, def] of Object.entries(($defs ?? {}) as Schemas)) {
    const component = componentRefs(def);
    if (name in components && JSON.stringify(components[name]) !== JSON.stringify(component)) {
      throw new Error(`two different schemas are named ${name} (the same id used for input and output?)`);
    }
    components[name] = component;
  }
  return componentRefs(out) as Record<string, unknown>;
}

function parameters(route: Route, contract: OperationContract, components: Schemas) {
  const params: unknown[] = [];
  const pathSchema = contract.params ? jsonSchema(contract.params, 'input', components) : undefined;
  for (const [, name] of route.path.matchAll(/\{([^}]+)\}/g)) {
    const props = (pathSchema?.properties ?? {}) as Record<string, unknown>;
    params.push({ name, in: 'path', required: true, schema: props[name!] ?? { type: 'string' } });
  }
  if (contract.query) {
    const q = jsonSchema(contract.query, 'input', components);
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, unknown>)) {
      params.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return params;
}

function operation(route: Route, contract: OperationContract, components: Schemas) {
  const responses: Record<string, unknown> = {
    [String(contract.status ?? 200)]: {
      description: 'Success',
      ...(contract.paged
        ? {
            headers: {
              'X-Next-Cursor': { description: 'Cursor of the next page (absent on the last page)', schema: { type: 'string' } },
              Link: { description: 'RFC 8288 link to the next page, rel="next" (absent on the last page)', schema: { type: 'string' } },
            },
          }
        : {}),
      // 204 No Content, and a success declared without a body (z.undefined(): 202 Accepted), have no media type.
      ...(contract.status === 204 || isUndefined(contract.response) ? {} : { content: Object.fromEntries([
        ...(contract.mediaTypes ?? ['application/json']).map((type) => [type, { schema: jsonSchema(contract.response, 'output', components) }]),
        ...Object.entries(contract.negotiated ?? {}).map(([type, schema]) => [type, { schema: jsonSchema(schema, 'output', components) }]),
      ]) }),
    },
  };
  if (contract.conditional) {
    (responses['200'] as Record<string, unknown>).headers = {
      ETag: { description: 'Send it back in If-None-Match to get a 304 while it is current', schema: { type: 'string' } },
      'Cache-Control': { description: 'How long the answer may be cached', schema: { type: 'string' } },
    };
    responses['304'] = { description: 'Not Modified: If-None-Match names the current ETag (no body)' };
  }
  // 429: the gateway throttles every route, public ones too (stage and per-route limits).
  const errors = new Set<number>([...contract.errors, 429, 500]);
  if (contract.body) errors.add(400).add(413);
  // The router validates path and query parameters (and the gateway refuses a malformed %-escape).
  if (contract.params || contract.query) errors.add(400);
  if (route.auth !== 'public') errors.add(401).add(403);
  const common = commonErrorCodes({ auth: route.auth, body: Boolean(contract.body), form: Boolean(route.form), params: Boolean(contract.params || contract.query), paged: Boolean(contract.paged) });
  const own = OPERATION_ERROR_CODES[route.operationId] ?? {};
  for (const status of [...errors].sort()) {
    const protocolBody = contract.errorBodies?.[status];
    if (protocolBody) {
      responses[String(status)] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: jsonSchema(protocolBody, 'output', components) } } };
      continue;
    }
    const codes = [...new Set<ErrorCode>([...(common[status] ?? []), ...(own[status] ?? [])])];
    responses[String(status)] = {
      description: [STATUS_TEXT[status] ?? 'Error', ...codes.map((c) => `- \`${c}\`: ${ERROR_CODES[c]}`)].join('\n\n'),
      content: {
        'application/json': {
          // The codes this operation answers with: the response-schema test refuses any other.
          schema: codes.length > 0 ? { $ref: '#/components/schemas/Error', type: 'object', properties: { code: { type: 'string', enum: codes } } } : jsonSchema(ErrorBodySchema, 'output', components),
          ...(codes.length > 0 ? { example: { error: ERROR_CODES[codes[0]!], code: codes[0] } } : {}),
        },
      },
    };
  }
  const example = OPERATION_EXAMPLES[route.operationId];
  if (example?.response !== undefined && contract.status !== 204 && !isUndefined(contract.response)) {
    const success = responses[String(contract.status ?? 200)] as { content: Record<string, Record<string, unknown>> };
    const [first] = Object.keys(success.content);
    success.content[first!]!.example = example.response;
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth === 'public' ? [] : [{ apiKey: [] }],
    'x-auth-kind': route.auth,
    parameters: parameters(route, contract, components),
    ...(contract.body
      ? {
          requestBody: {
            required: !contract.bodyOptional,
            content: Object.fromEntries(
              (contract.requestMediaTypes ?? [route.form ? 'application/x-www-form-urlencoded' : 'application/json']).map((type) => [
                type,
                { schema: jsonSchema(contract.body!, 'input', components), ...(example?.request !== undefined ? { example: example.request } : {}) },
              ]),
            ),
          },
        }
      : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of every route in the route table, from the contracts beside each feature.
 * `serverUrl`: the API's base URL as the caller reached it (the meta function passes the request's),
 * so that /docs' Servers box and "Try it out" name this deployment, locally and on a stage alike.
 */
export function buildOpenApiDocument(contracts: OperationContracts, serverUrl = '/') {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Schemas = {};
  // The service's error body is a component every error response refers to.
  jsonSchema(ErrorBodySchema, 'output', schemas);
  for (const route of ROUTES) {
    const contract = contracts[route.operationId];
    if (!contract) throw new Error(`no contract for operation ${route.operationId}`);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, contract, schemas);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Credential issuance and verification service',
      version: '1.0.0',
      description:
        'Multi-tenant API for issuing and verifying credentials. Admin routes take an x-api-key: the base (super-admin) key for subwallets and API keys, a wallet key or subwallet token for /api/v1. The groups below are in the order a new tenant calls them: subwallet, API key, DID made public, supported credential and offer, status list, presentation request. Every error body is {error, code}; each response lists the codes it can carry.',
    },
    servers: [{ url: serverUrl, description: serverUrl === '/' ? 'The host serving this document' : 'This deployment (the URL this document was fetched from)' }],
    tags: TAGS,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas,
    },
    paths,
  };
}

function isUndefined(schema: z.ZodType): boolean {
  return (schema as unknown as { _zod: { def: { type: string } } })._zod.def.type === 'undefined';
}
