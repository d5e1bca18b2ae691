/**
 * Bodies API Gateway itself returns (before or instead of a function), in the service's error shape.
 * The stack installs them as gateway responses; the local gateway answers with the same.
 *
 * `status` is set only where we change API Gateway's status on purpose (an unknown route is a 404, not
 * its default 403). Everywhere else the gateway's own status stands: `defaultStatus` is that status for
 * the typed responses, and the two DEFAULT_* fallbacks carry none at all — a status there would
 * rewrite every untyped 4xx/5xx (WAF's 403, 415, a Lambda error's 502, a timeout's 504) to one code.
 */
export interface GatewayError {
  readonly code: string;
  readonly error: string;
  /** API Gateway's status for this type (AWS "Gateway response types"); absent for DEFAULT_*. */
  readonly defaultStatus?: number;
  /** Our override of that status. */
  readonly status?: number;
}

export const GATEWAY_ERRORS = {
  UNAUTHORIZED: { defaultStatus: 401, code: 'unauthorized', error: 'Missing, invalid, expired or revoked API key (x-api-key header)' },
  ACCESS_DENIED: { defaultStatus: 403, code: 'forbidden', error: 'This key may not call this route' },
  MISSING_AUTHENTICATION_TOKEN: { defaultStatus: 403, status: 404, code: 'route_not_found', error: 'No such route' },
  INVALID_API_KEY: { defaultStatus: 403, code: 'usage_plan_missing', error: 'This credential has no throttling plan; the operator must register it' },
  WAF_FILTERED: { defaultStatus: 403, code: 'forbidden', error: 'Refused by the web application firewall' },
  REQUEST_TOO_LARGE: { defaultStatus: 413, code: 'payload_too_large', error: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { defaultStatus: 415, code: 'unsupported_media_type', error: 'Unsupported media type' },
  THROTTLED: { defaultStatus: 429, code: 'throttled', error: 'Too many requests; retry later' },
  QUOTA_EXCEEDED: { defaultStatus: 429, code: 'quota_exceeded', error: 'Request quota exceeded; retry later' },
  INTEGRATION_TIMEOUT: { defaultStatus: 504, code: 'timeout', error: 'The service did not answer in time; retry' },
  DEFAULT_4XX: { code: 'bad_request', error: 'Bad request' },
  DEFAULT_5XX: { code: 'internal_error', error: 'Internal server error' },
} as const satisfies Record<string, GatewayError>;

export type GatewayResponseType = keyof typeof GATEWAY_ERRORS;

/**
 * The status API Gateway answers with: our override, else the type's own; for the DEFAULT_* types the
 * status of the situation itself (`situation`: e.g. 502 for a failed Lambda), which they never change.
 */
export function gatewayStatus(e: GatewayError, situation?: number): number {
  const status = 'status' in e ? e.status : undefined;
  const own = 'defaultStatus' in e ? e.defaultStatus : undefined;
  const result = status ?? own ?? situation;
  if (result === undefined) throw new Error(`gateway response ${e.code} needs the situation's status`);
  return result;
}

/** API Gateway's hard cap on a request payload (REST API: 10 MB). */
export const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** API Gateway's integration timeout for a REST API (the default, and the most without a quota raise). */
export const GATEWAY_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * What a client source (IP address) over its SOURCE_LIMITS gets: the stage's WAF answers with it (a
 * custom response of its rate-based rules) and the local gateway with the same status and body.
 */
export const SOURCE_LIMITED = { status: 429, code: 'rate_limited', error: 'Too many requests from this address; retry later' } as const;
