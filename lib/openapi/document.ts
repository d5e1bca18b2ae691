import * as z from 'zod';
import { ROUTES, type Route } from '../service/routes';
import type { OperationContract, OperationContracts } from '../http/contract';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad input: validation failure (with details), malformed JSON',
  401: 'Missing, invalid, expired or revoked API key',
  403: 'The key is valid but may not call this route',
  404: 'Not found in this wallet',
  409: 'Conflicts with the current state (a duplicate name, a quota reached, a state change under way)',
  410: 'Gone: the resource was deactivated',
  413: 'Request body too large',
  422: 'Understood but cannot be processed (e.g. a message too large to sign)',
  429: 'Throttled (stage, per-tenant or per-route limit); retry later, after Retry-After when given',
  500: 'Internal error (never with internal details)',
  503: 'A dependency (the key service) is temporarily unavailable; retry',
};

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'Human-readable message' },
    code: { type: 'string', description: 'Machine-readable code' },
    details: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function parameters(route: Route, contract: OperationContract) {
  const params: unknown[] = [];
  const pathSchema = contract.params ? jsonSchema(contract.params, 'input') : undefined;
  for (const [, name] of route.path.matchAll(/\{([^}]+)\}/g)) {
    const props = (pathSchema?.properties ?? {}) as Record<string, unknown>;
    params.push({ name, in: 'path', required: true, schema: props[name!] ?? { type: 'string' } });
  }
  if (contract.query) {
    const q = jsonSchema(contract.query, 'input');
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, unknown>)) {
      params.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return params;
}

function operation(route: Route, contract: OperationContract) {
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
      content: Object.fromEntries((contract.mediaTypes ?? ['application/json']).map((type) => [type, { schema: jsonSchema(contract.response, 'output') }])),
    },
  };
  const errors = new Set<number>([...contract.errors, 500]);
  if (contract.body) errors.add(400).add(413);
  if (route.auth !== 'public') errors.add(401).add(403).add(429);
  for (const status of [...errors].sort()) {
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth === 'public' ? [] : [{ apiKey: [] }],
    'x-auth-kind': route.auth,
    parameters: parameters(route, contract),
    ...(contract.body
      ? { requestBody: { required: !contract.bodyOptional, content: { 'application/json': { schema: jsonSchema(contract.body, 'input') } } } }
      : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of every route in the route table, from the contracts beside each feature. */
export function buildOpenApiDocument(contracts: OperationContracts) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const contract = contracts[route.operationId];
    if (!contract) throw new Error(`no contract for operation ${route.operationId}`);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, contract);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Credential issuance and verification service',
      version: '1.0.0',
      description:
        'Multi-tenant API for issuing and verifying credentials. Admin routes take an x-api-key: the base (super-admin) key for subwallets and API keys, a wallet key or subwallet token for /api/v1.',
    },
    servers: [{ url: '.' }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
