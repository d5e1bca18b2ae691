import type { Item } from '../store/port';

/** Stored shapes of the tenancy items and their codecs. */
export interface WalletRecord {
  readonly walletId: string;
  readonly walletName: string;
  readonly label: string;
  /** Names the wallet in public URLs (lib/tenancy/public-refs.ts). */
  readonly publicRef: string;
  readonly createdAt: string;
}

export interface ApiKeyRecord {
  readonly walletId: string;
  readonly keyId: string;
  readonly name: string | null;
  readonly roles: readonly string[];
  readonly mac: string;
  readonly revoked: boolean;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

export function walletFromItem(item: Item): WalletRecord {
  return {
    walletId: String(item.wallet_id),
    walletName: String(item.wallet_name),
    label: String(item.label),
    publicRef: String(item.public_ref),
    createdAt: String(item.created_at),
  };
}

export function apiKeyFromItem(item: Item): ApiKeyRecord {
  return {
    walletId: String(item.wallet_id),
    keyId: String(item.key_id),
    name: typeof item.name === 'string' ? item.name : null,
    roles: Array.isArray(item.roles) ? item.roles.map(String) : [],
    mac: String(item.mac),
    revoked: item.status === 'revoked',
    createdAt: String(item.created_at),
    expiresAt: typeof item.expires_at === 'string' ? item.expires_at : null,
    revokedAt: typeof item.revoked_at === 'string' ? item.revoked_at : null,
  };
}

export function keyStatus(key: ApiKeyRecord, now: Date): 'active' | 'revoked' | 'expired' {
  if (key.revoked) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now.getTime()) return 'expired';
  return 'active';
}

export function apiKeyView(key: ApiKeyRecord, now: Date) {
  return {
    key_id: key.keyId,
    name: key.name,
    roles: [...key.roles],
    status: keyStatus(key, now),
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
  };
}
