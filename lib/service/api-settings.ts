/**
 * API stage defaults, shared by the stack and the local gateway. Override at deploy time with CDK
 * context (`cdk deploy -c authorizerCacheTtlSeconds=0`) and locally with AUTHORIZER_CACHE_TTL_SECONDS.
 */
export const API_DEFAULTS = {
  /** An authorizer decision is reused for this long per key: a revoked key works at most this long. */
  authorizerCacheTtlSeconds: 30,
  /** Stage-wide steady rate (requests/s) and burst; per-tenant limits come with usage plans if needed. */
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
} as const;
