/**
 * Bodies API Gateway itself returns (before any function runs), in the service's error shape.
 * The stack installs them as gateway responses; the local gateway returns the same.
 */
export interface GatewayError {
  readonly status: number;
  readonly code: string;
  readonly error: string;
}

export const GATEWAY_ERRORS = {
  UNAUTHORIZED: { status: 401, code: 'unauthorized', error: 'Missing, invalid, expired or revoked API key (x-api-key header)' },
  ACCESS_DENIED: { status: 403, code: 'forbidden', error: 'This key may not call this route' },
  MISSING_AUTHENTICATION_TOKEN: { status: 404, code: 'route_not_found', error: 'No such route' },
  REQUEST_TOO_LARGE: { status: 413, code: 'payload_too_large', error: 'Request body too large' },
  THROTTLED: { status: 429, code: 'throttled', error: 'Too many requests; retry later' },
  DEFAULT_4XX: { status: 400, code: 'bad_request', error: 'Bad request' },
  DEFAULT_5XX: { status: 500, code: 'internal_error', error: 'Internal server error' },
} as const satisfies Record<string, GatewayError>;

/** API Gateway's hard cap on a request payload (REST API: 10 MB). */
export const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
