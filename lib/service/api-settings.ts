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
  /** Each public route, every anonymous caller together: well under what an authenticated method gets. */
  publicThrottleRateLimit: 20,
  publicThrottleBurstLimit: 40,
  /**
   * Each public protocol route (the OID4VCI token, nonce, credential… endpoints), every tenant's holder
   * wallets together: a credential costs a wallet 3 to 5 such calls, so these routes get more than the
   * other public ones while staying below an authenticated method.
   */
  protocolThrottleRateLimit: 200,
  protocolThrottleBurstLimit: 400,
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
