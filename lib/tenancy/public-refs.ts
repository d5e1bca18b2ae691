import { randomBytes } from 'node:crypto';
import { isWalletId, keys, tenantScope, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';

/**
 * A wallet's public reference: 128 random bits, base64url (22 characters). It names the wallet in every
 * public URL (credential issuer, status lists, verifier), so nobody can list tenants by counting; the
 * sequential wallet id stays in the admin API. Assigned when the wallet is created, in the same
 * transaction, and never changed: URLs with it end up inside issued credentials.
 */
export const PUBLIC_REF = /^[A-Za-z0-9_-]{22}$/;

export function newPublicRef(): string {
  return randomBytes(16).toString('base64url');
}

/** What builds a wallet's public URLs needs: its reference (admin routes and workers, in the wallet's session). */
export interface WalletRefs {
  of(scope: TenantScope): Promise<string>;
}

/** Never issued (outside the alphabet): what a reference of any other form is looked up as. */
const UNISSUED = '~';

export interface PublicRefsOptions {
  /** Mappings kept per direction, least recently used out (they never change, so they never go stale). */
  readonly maxEntries?: number;
  /** Unknown references remembered, and for how long: short, so a wallet created meanwhile is found soon. */
  readonly maxMisses?: number;
  readonly missTtlMs?: number;
  readonly now?: () => number;
}

/**
 * Both directions of the reference ↔ wallet id mapping, cached in memory (it is immutable).
 *
 * - {@link resolve} (public routes, with the function's own role, before any session): reads
 *   `SYS#PUBREF#<ref>`, the only item that role may read. A reference of any other form (an old
 *   sequential id, junk) is looked up as one that was never issued, so it is answered exactly like an
 *   unknown one — same answer, same work, whether or not a wallet with that id exists.
 * - {@link of} (admin routes and workers, inside the wallet's session): reads the wallet's own record.
 */
export class PublicRefs implements WalletRefs {
  private readonly byRef = new Map<string, string>();
  private readonly byWallet = new Map<string, string>();
  private readonly misses = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly maxMisses: number;
  private readonly missTtlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ItemStore,
    opts: PublicRefsOptions = {},
  ) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxMisses = opts.maxMisses ?? 1_000;
    this.missTtlMs = opts.missTtlMs ?? 5_000;
    this.now = opts.now ?? Date.now;
  }

  /** The wallet a reference names, or null for any reference that names none. */
  async resolve(ref: string): Promise<TenantScope | null> {
    const key = PUBLIC_REF.test(ref) ? ref : UNISSUED;
    const known = touch(this.byRef, key);
    if (known !== undefined) return tenantScope(known);
    const missUntil = this.misses.get(key);
    if (missUntil !== undefined && missUntil > this.now()) return null;
    // Strongly consistent: a wallet's issuer answers from the moment its creation returned.
    const item = await this.store.get(keys.publicRef(key), { consistent: true });
    const walletId = key !== UNISSUED && typeof item?.wallet_id === 'string' && isWalletId(item.wallet_id) ? item.wallet_id : null;
    if (walletId === null) {
      this.misses.delete(key);
      this.misses.set(key, this.now() + this.missTtlMs);
      if (this.misses.size > this.maxMisses) this.misses.delete(this.misses.keys().next().value!);
      return null;
    }
    this.misses.delete(key);
    this.remember(key, walletId);
    return tenantScope(walletId);
  }

  /** The wallet's reference, from its record (read in its session when not cached). */
  async of(scope: TenantScope): Promise<string> {
    const known = touch(this.byWallet, scope.walletId);
    if (known !== undefined) return known;
    const ref = (await this.store.get(keys.wallet(scope)))?.public_ref;
    // Every wallet gets one at creation (the local runtime backfills older data folders at start).
    if (typeof ref !== 'string' || !PUBLIC_REF.test(ref)) throw new Error(`wallet ${scope.walletId} has no public reference`);
    this.remember(ref, scope.walletId);
    return ref;
  }

  private remember(ref: string, walletId: string): void {
    put(this.byRef, ref, walletId, this.maxEntries);
    put(this.byWallet, walletId, ref, this.maxEntries);
  }
}

function touch(map: Map<string, string>, key: string): string | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function put(map: Map<string, string>, key: string, value: string, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
