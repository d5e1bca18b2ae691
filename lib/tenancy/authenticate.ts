import { gsi1 } from '../store/keys';
import type { ItemStore } from '../store/port';
import type { SecretDeriver } from '../secrets/port';
import { isLookupCandidate, macApiKey, macEquals } from './api-key-format';
import { keyStatus, apiKeyFromItem } from './records';
import { JWT_SHAPE, SubwalletTokens } from './subwallet-token';

export const SUPERADMIN_ROLE = 'super-admin';

/** Who presented a credential: what the authorizer hands to the functions as its context. */
export type Principal =
  | { readonly kind: 'superadmin'; readonly keyId: string }
  | {
      readonly kind: 'wallet';
      readonly walletId: string;
      readonly keyId: string | null;
      readonly via: 'api_key' | 'token';
      readonly roles: readonly string[];
      /** When the credential stops working (ISO 8601); checked on every request, not only when the decision is made. */
      readonly expiresAt: string | null;
    };

/**
 * Decides who an x-api-key value belongs to, or null (→ 401). Malformed values are refused before any
 * I/O; well-formed keys are looked up by their HMAC and the stored HMAC is compared in constant time.
 */
export class Authenticator {
  private readonly tokens: SubwalletTokens;
  private readonly now: () => Date;

  constructor(
    private readonly store: ItemStore,
    private readonly secrets: SecretDeriver,
    now?: () => Date,
  ) {
    this.now = now ?? (() => new Date());
    this.tokens = new SubwalletTokens(secrets, this.now);
  }

  async authenticate(presented: string | undefined): Promise<Principal | null> {
    if (!presented) return null;
    const value = presented.trim();
    if (JWT_SHAPE.test(value)) {
      const token = await this.tokens.verify(value);
      return token === null ? null : { kind: 'wallet', walletId: token.walletId, keyId: null, via: 'token', roles: ['admin'], expiresAt: token.expiresAt };
    }
    return isLookupCandidate(value) ? this.byApiKey(value) : null;
  }

  private async byApiKey(apiKey: string): Promise<Principal | null> {
    const mac = macApiKey(await this.secrets.derive('api-key-mac/v1'), apiKey);
    const [item] = await this.store.query(gsi1.apiKeyPk(mac), { index: 'GSI1', limit: 1 });
    if (!item || typeof item.mac !== 'string' || !macEquals(item.mac, mac)) return null;
    if (item.type === 'base_key') return { kind: 'superadmin', keyId: String(item.key_id) };
    if (item.type !== 'api_key') return null;
    const key = apiKeyFromItem(item);
    if (keyStatus(key, this.now()) !== 'active') return null;
    return { kind: 'wallet', walletId: key.walletId, keyId: key.keyId, via: 'api_key', roles: key.roles, expiresAt: key.expiresAt };
  }
}
