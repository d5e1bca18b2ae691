import { readFileSync, writeFileSync } from 'node:fs';
import type { UsageKeys } from '../service/usage-keys';
import { walletUsageKey } from '../service/usage-keys';

/**
 * The local runtime's stand-in for API Gateway's key registry: the keys the local gateway accepts as
 * usage identifiers. One per process (the gateway and the functions share it), kept in a file of the
 * data folder so that wallets of an earlier `npm start` keep working.
 */
export type UsagePlan = 'tenants' | 'platform';

export class LocalUsageKeyRegistry {
  private readonly keys = new Map<string, UsagePlan>();
  private file: string | null = null;

  open(file: string | null): void {
    this.keys.clear();
    this.file = file;
    if (!file) return;
    try {
      for (const [k, plan] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, UsagePlan>)) this.keys.set(k, plan);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  add(value: string, plan: UsagePlan): void {
    if (this.keys.get(value) === plan) return;
    this.keys.set(value, plan);
    if (this.file) writeFileSync(this.file, JSON.stringify(Object.fromEntries(this.keys)), { mode: 0o600 });
  }

  /** The plan a key belongs to, or null when API Gateway would not know the key (a 403). */
  planOf(value: string): UsagePlan | null {
    return this.keys.get(value) ?? null;
  }
}

export const localUsageKeys = new LocalUsageKeyRegistry();

export class LocalUsageKeys implements UsageKeys {
  constructor(
    private readonly prefix: string,
    private readonly registry: LocalUsageKeyRegistry = localUsageKeys,
  ) {}

  async register(walletId: string): Promise<void> {
    this.registry.add(walletUsageKey(this.prefix, walletId), 'tenants');
  }
}
