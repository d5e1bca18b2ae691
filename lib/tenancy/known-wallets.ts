import { NotFoundError } from '../http/errors';
import { keys } from '../store/keys';
import type { ItemStore } from '../store/port';

/**
 * Wallet ids are sequential: one above the service's counter names no wallet, and public routes
 * refuse it before anything is done in its name (no role session, no key derivation). The counter
 * is read with the function's own role (a grant on that one item) and cached for a minute.
 */
export class KnownWallets {
  private counter: { value: number; at: number } | null = null;

  constructor(
    private readonly store: ItemStore,
    private readonly notFound: () => Error = () => new NotFoundError('No such wallet', 'wallet_not_found'),
    private readonly now: () => Date = () => new Date(),
  ) {}

  async check(walletId: string): Promise<void> {
    const id = Number(walletId);
    const fresh = this.counter && this.now().getTime() - this.counter.at < 60_000 ? this.counter.value : -1;
    if (id <= fresh) return;
    const item = await this.store.get(keys.walletCounter);
    const value = typeof item?.value === 'number' ? item.value : 0;
    this.counter = { value, at: this.now().getTime() };
    if (id > value) throw this.notFound();
  }
}
