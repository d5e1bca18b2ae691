/**
 * API stage defaults, shared by the stack and the local gateway. Override at deploy time with CDK
 * context (`cdk deploy -c authorizerCacheTtlSeconds=0`) and locally with the runtime's options.
 */
export const API_DEFAULTS = {
  /** An authorizer decision is reused for this long per key: a revoked key works at most this long. */
  authorizerCacheTtlSeconds: 30,
  /** The whole stage, every caller together (requests/s, burst): what protects the functions and the table. */
  throttleRateLimit: 500,
  throttleBurstLimit: 1000,
  /** Each wallet, all its keys and tokens together (usage plan "tenants"): no tenant can take the stage. */
  tenantThrottleRateLimit: 50,
  tenantThrottleBurstLimit: 100,
  /** The base (super-admin) key (usage plan "platform"). */
  platformThrottleRateLimit: 50,
  platformThrottleBurstLimit: 100,
  /** Each public route, every anonymous caller together: together they stay well under the stage limit. */
  publicThrottleRateLimit: 20,
  publicThrottleBurstLimit: 40,
  /** Active (not deactivated) DIDs per wallet: each holds a KMS key at about 1 USD a month. */
  maxDidsPerWallet: 100,
  /** DIDs a wallet may create per minute: KMS CreateKey has a small per-account rate that all tenants share. */
  maxDidCreationsPerMinute: 10,
} as const;

export interface ThrottleLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}
