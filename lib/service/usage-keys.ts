/**
 * Per-tenant throttling: API Gateway applies a usage plan's rate and burst to each API key of the
 * plan. Callers never see these keys: the authorizer returns the caller's key value as
 * `usageIdentifierKey` (the API's key source is AUTHORIZER), so one wallet's requests — whichever of
 * its API keys or tokens they carry — share one bucket. The values identify buckets, they grant
 * nothing (the authorizer decides who gets in), so they are derived, not secret.
 */
export interface UsageKeys {
  /** Makes sure the wallet's key exists in the tenants' usage plan (idempotent). */
  register(walletId: string): Promise<void>;
}

/** At least 20 characters (API Gateway's minimum) whatever the prefix: `-wallet-` and 12 digits are 20. */
export function walletUsageKey(prefix: string, walletId: string): string {
  return `${prefix}-wallet-${walletId.padStart(12, '0')}`;
}

/** The base key's bucket, in the platform plan the stack creates (`-platform-usage-key` is 19 + the prefix). */
export function platformUsageKey(prefix: string): string {
  return `${prefix}-platform-usage-key`;
}
