/**
 * API stage defaults, shared by the stack and the local gateway. Override at deploy time with CDK
 * context (`cdk deploy -c authorizerCacheTtlSeconds=0`) and locally with the runtime's options.
 */
export const API_DEFAULTS = {
  /** An authorizer decision is reused for this long per key: a revoked key works at most this long. */
  authorizerCacheTtlSeconds: 30,
  /**
   * The stage's default method limit (requests/s, burst): API Gateway applies it to each method on its
   * own, every caller together — what one route may send to its function.
   */
  throttleRateLimit: 500,
  throttleBurstLimit: 1000,
  /** Each wallet, all its keys and tokens together (usage plan "tenants"): no tenant can take the stage. */
  tenantThrottleRateLimit: 50,
  tenantThrottleBurstLimit: 100,
  /** The base (super-admin) key (usage plan "platform"). */
  platformThrottleRateLimit: 50,
  platformThrottleBurstLimit: 100,
  /**
   * Each public route, every anonymous caller together: the ceiling behind the per-source limits below
   * (SOURCE_LIMITS), kept under what an authenticated method gets. Its burst is well above one source's
   * allowance, so that one address spending all of it leaves the route to everyone else.
   */
  publicThrottleRateLimit: 200,
  publicThrottleBurstLimit: 800,
  /**
   * Each public protocol route (the OID4VCI token, nonce, credential… endpoints), every tenant's holder
   * wallets together: a credential costs a wallet 3 to 5 such calls, so these routes get more than the
   * other public ones while staying below an authenticated method.
   */
  protocolThrottleRateLimit: 300,
  protocolThrottleBurstLimit: 800,
  /**
   * API Gateway's default account-level limit in a region (not ours to set: a quota), shared by every
   * method and API of the account; the local gateway emulates it.
   */
  accountThrottleRateLimit: 10_000,
  accountThrottleBurstLimit: 5_000,
  /** Active (not deactivated) DIDs per wallet: each holds a KMS key at about 1 USD a month. */
  maxDidsPerWallet: 100,
  /** DIDs a wallet may create per minute: KMS CreateKey has a small per-account rate that all tenants share. */
  maxDidCreationsPerMinute: 10,
} as const;

export interface ThrottleLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** The method limit of a route that has its own (public routes), or null for the stage's default. */
export function routeThrottle<T>(route: { readonly auth: string; readonly protocol?: true }, limits: { readonly publicRoute: T; readonly protocolRoute: T }): T | null {
  if (route.auth !== 'public') return null;
  return route.protocol ? limits.protocolRoute : limits.publicRoute;
}

/**
 * Per client source (IP address) limits: one declaration for the stage's AWS WAF rate-based rules and
 * the local gateway, which applies the same counts per socket address. Counted over a trailing window of
 * `windowSeconds` (WAF's evaluation window); a source over a limit is refused with 429 `rate_limited`
 * until its count in the window drops. The route throttles above stay as the ceiling for all sources
 * together (WAF needs some seconds to notice a source; the route bucket bounds what passes meanwhile).
 */
export const SOURCE_LIMITS = {
  windowSeconds: 60,
  /** Every request from one address, authenticated or not (tenants are also held by their usage plan). */
  allRequests: 6_000,
  /** Requests from one address to the public routes (no API key: DID documents, status lists, OID4VCI/OID4VP endpoints, /docs). */
  publicRequests: 300,
} as const;

/**
 * Functions whose concurrency is reserved (and so capped): a flood of slow requests to a public endpoint
 * takes at most this many of the account's Lambda instances, never the admin API's. The stack sets it as
 * reserved concurrency; the local gateway caps in-flight invocations of the function at the same count.
 */
export const RESERVED_CONCURRENCY: Readonly<Record<string, number>> = {
  // The OpenID4VP verifier: a response may wait on other parties' servers for seconds.
  'oid4vp-verifier': 20,
};
