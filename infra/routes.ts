/**
 * The route table: the single source of truth for the API's surface. The CDK stack, the local
 * runtime, the OpenAPI document, the group routers and the route tests all read it.
 *
 * auth:
 * - `superadmin`: authorizer runs; only the base key (role super-admin) may call (403 otherwise).
 * - `wallet`: authorizer runs; a wallet credential (API key or subwallet token) is required, and the
 *   wallet the handler acts for comes only from the authorizer's context.
 * - `public`: no authorizer; protected by the protocol's own means or serving public data.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type AuthKind = 'superadmin' | 'wallet' | 'public';
export type RouteGroup = 'tenancy' | 'meta';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway resource path, with `{param}` segments. */
  readonly path: string;
  readonly group: RouteGroup;
  readonly auth: AuthKind;
  /** Unique id: names the operation in the group's router and in the OpenAPI document. */
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** Largest accepted request body in bytes (default {@link DEFAULT_MAX_BODY_BYTES}). */
  readonly maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

export const ROUTES: readonly Route[] = [
  // Contract 4.6: subwallets and API keys (super-admin, no version segment).
  { method: 'POST', path: '/api/subwallet/create', group: 'tenancy', auth: 'superadmin', operationId: 'createSubwallet', tag: 'Subwallets', summary: 'Create a subwallet (tenant)' },
  { method: 'GET', path: '/api/subwallets', group: 'tenancy', auth: 'superadmin', operationId: 'listSubwallets', tag: 'Subwallets', summary: 'List subwallets' },
  { method: 'GET', path: '/api/subwallets/{wallet_id}', group: 'tenancy', auth: 'superadmin', operationId: 'getSubwallet', tag: 'Subwallets', summary: 'Read one subwallet' },
  { method: 'POST', path: '/api/apikey/create', group: 'tenancy', auth: 'superadmin', operationId: 'createApiKey', tag: 'API keys', summary: 'Create an API key for a subwallet (shown once)' },
  { method: 'POST', path: '/api/apikey/revoke', group: 'tenancy', auth: 'superadmin', operationId: 'revokeApiKey', tag: 'API keys', summary: 'Delete a key by wallet_id+name, or mark it revoked by key_id+wallet_id' },
  // Not in the contract: a wallet's view of itself and of its own keys (see README, "Decisions").
  { method: 'GET', path: '/api/v1/wallet', group: 'tenancy', auth: 'wallet', operationId: 'getOwnWallet', tag: 'Wallet', summary: 'The calling wallet' },
  { method: 'GET', path: '/api/v1/apikeys', group: 'tenancy', auth: 'wallet', operationId: 'listOwnApiKeys', tag: 'Wallet', summary: "List this wallet's API keys (never the secrets)" },
  { method: 'GET', path: '/api/v1/apikeys/{key_id}', group: 'tenancy', auth: 'wallet', operationId: 'getOwnApiKey', tag: 'Wallet', summary: "Read one of this wallet's API keys" },
  { method: 'POST', path: '/api/v1/apikeys/{key_id}/revoke', group: 'tenancy', auth: 'wallet', operationId: 'revokeOwnApiKey', tag: 'Wallet', summary: "Revoke one of this wallet's API keys" },
  // Public.
  { method: 'GET', path: '/openapi.json', group: 'meta', auth: 'public', operationId: 'getOpenApi', tag: 'Meta', summary: 'This API as an OpenAPI 3.1 document' },
];

export const ROUTE_GROUPS: readonly RouteGroup[] = [...new Set(ROUTES.map((r) => r.group))];

export function routesOf(group: RouteGroup): Route[] {
  return ROUTES.filter((r) => r.group === group);
}

export function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}
