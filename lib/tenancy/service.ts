import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { decodeCursor, encodeCursor } from '../http/paging';
import { gsi1, keys, tenantScope, type TenantScope } from '../store/keys';
import { inRegistrySession, inSession } from '../store/session';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../store/port';
import type { SecretDeriver } from '../secrets/port';
import type { EventPublisher } from '../events/publisher';
import { generateApiKey, macApiKey } from './api-key-format';
import { SubwalletTokens } from './subwallet-token';
import type { UsageKeys } from '../service/usage-keys';
import { apiKeyFromItem, apiKeyView, walletFromItem, type ApiKeyRecord, type WalletRecord } from './records';
import { newPublicRef } from './public-refs';

export interface TenancyDeps {
  readonly store: ItemStore;
  readonly secrets: SecretDeriver;
  readonly events: EventPublisher;
  /** Per-tenant throttling buckets (API Gateway usage-plan keys). */
  readonly usage: UsageKeys;
  readonly now?: () => Date;
}

/**
 * Use cases of subwallets and API keys. Super-admin ones take the target wallet id and do their work
 * inside that wallet's session (lib/store/session.ts); wallet ones run in the caller's session already.
 */
export class TenancyService {
  private readonly store: ItemStore;
  private readonly secrets: SecretDeriver;
  private readonly events: EventPublisher;
  private readonly usage: UsageKeys;
  private readonly now: () => Date;
  readonly tokens: SubwalletTokens;

  constructor(deps: TenancyDeps) {
    this.store = deps.store;
    this.usage = deps.usage;
    this.secrets = deps.secrets;
    this.events = deps.events;
    this.now = deps.now ?? (() => new Date());
    this.tokens = new SubwalletTokens(this.secrets, this.now);
  }

  async createSubwallet(input: { wallet_name: string; label?: string | undefined }) {
    // Checked first so that a taken name spends no wallet id and no usage-plan key; the transaction
    // below still decides a race for the same name.
    if (await this.store.get(keys.walletName(input.wallet_name))) throw nameTaken(input.wallet_name);
    // Ids come from an atomic counter; a failed create only leaves a gap.
    const walletId = String(await this.store.increment(keys.walletCounter, 'value'));
    const scope = tenantScope(walletId);
    const createdAt = this.now().toISOString();
    const publicRef = newPublicRef();
    // Before the wallet exists: a wallet without its throttling bucket would be refused at the gateway.
    await this.usage.register(walletId);
    try {
      // In the new wallet's registry session, the only principal that may put reservations (no wallet
      // session can): it reaches the reservation items and this wallet's record, and the code gives it
      // this one transaction, whose conditions keep every existing reservation as it is.
      await inRegistrySession(scope, () => this.store.write([
        { type: 'put', condition: 'not_exists', item: { ...keys.walletName(input.wallet_name), wallet_id: walletId } },
        // The public reference and its lookup item (holding only {wallet_id}) come with the wallet.
        { type: 'put', condition: 'not_exists', item: { ...keys.publicRef(publicRef), wallet_id: walletId } },
        {
          type: 'put',
          condition: 'not_exists',
          item: {
            ...keys.wallet(scope),
            ...gsi1.walletList(walletId),
            type: 'wallet',
            wallet_id: walletId,
            wallet_name: input.wallet_name,
            label: input.label ?? input.wallet_name,
            public_ref: publicRef,
            created_at: createdAt,
          },
        },
      ]));
    } catch (err) {
      if (err instanceof ConditionFailedError && err.failedIndexes.includes(0)) throw nameTaken(input.wallet_name);
      throw err;
    }
    return { wallet_id: Number(walletId), token: await this.tokens.mint(walletId) };
  }

  async listSubwallets() {
    const items = await this.store.query(gsi1.walletListPk, { index: 'GSI1' });
    return Promise.all(items.map((item) => this.subwalletView(walletFromItem(item))));
  }

  /** One page of the subwallets, after the wallet a cursor names. */
  async listSubwalletsPage(page: { limit: number; cursor: string | undefined }) {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, SUBWALLET_CURSOR);
    const out = await this.store.queryPage(gsi1.walletListPk, { index: 'GSI1', limit: page.limit, ...(after ? { after } : {}) });
    const items = await Promise.all(out.items.map((item) => this.subwalletView(walletFromItem(item))));
    return { items, next: out.next ? encodeCursor(out.next) : null };
  }

  async getSubwallet(walletId: string) {
    const scope = tenantScope(walletId);
    return this.subwalletView(await inSession(scope, () => this.requireWallet(scope)));
  }

  async getOwnWallet(scope: TenantScope) {
    const w = await this.requireWallet(scope);
    return { wallet_id: Number(w.walletId), wallet_name: w.walletName, label: w.label, public_ref: w.publicRef, created_at: w.createdAt };
  }

  async createApiKey(input: { wallet_id: string; roles: readonly string[]; name?: string | undefined; expires_at?: string | null | undefined }) {
    const scope = tenantScope(input.wallet_id);
    return inSession(scope, () => this.createApiKeyIn(scope, input));
  }

  private async createApiKeyIn(scope: TenantScope, input: { wallet_id: string; roles: readonly string[]; name?: string | undefined; expires_at?: string | null | undefined }) {
    const now = this.now();
    const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= now.getTime()) {
      throw new BadRequestError('expires_at must be in the future', 'expires_at_in_past', [{ path: 'expires_at', message: 'must be in the future' }]);
    }
    const apiKey = generateApiKey();
    const mac = macApiKey(await this.secrets.derive('api-key-mac/v1'), apiKey);
    const keyId = randomUUID();
    const name = input.name ?? null;
    const keyItem: Item = {
      ...keys.apiKey(scope, keyId),
      ...gsi1.apiKeyByMac(mac),
      type: 'api_key',
      wallet_id: input.wallet_id,
      key_id: keyId,
      name: name ?? undefined,
      roles: [...new Set(input.roles)],
      mac,
      status: 'active',
      created_at: now.toISOString(),
      expires_at: expiresAt?.toISOString(),
    };
    const ops: WriteOp[] = [
      { type: 'check', key: keys.wallet(scope), condition: 'exists' },
      { type: 'put', condition: 'not_exists', item: keyItem },
      ...(name === null ? [] : [{ type: 'put', condition: 'not_exists', item: { ...keys.apiKeyName(scope, name), key_id: keyId } } as const]),
      this.events.stage(scope, 'api_key.created', apiKeyView(apiKeyFromItem(keyItem), now)).op,
    ];
    try {
      await this.store.write(ops);
    } catch (err) {
      if (err instanceof ConditionFailedError) {
        if (err.failedIndexes.includes(0)) throw walletNotFound(input.wallet_id);
        if (err.failedIndexes.includes(2)) throw new ConflictError(`This wallet already has a key named "${name}"`, 'api_key_name_taken');
      }
      throw err;
    }
    const simple = input.name === undefined && input.expires_at === undefined;
    return simple
      ? { api_key: apiKey, key_id: keyId, status: 'API key created' }
      : { api_key: apiKey, key_id: keyId, name, status: 'API key created', expires_at: expiresAt?.toISOString() ?? null };
  }

  /** Contract variant 1: wallet_id + name deletes the key (and frees the name). */
  async deleteApiKeyByName(walletId: string, name: string) {
    const scope = tenantScope(walletId);
    return inSession(scope, () => this.deleteApiKeyByNameIn(scope, name));
  }

  private async deleteApiKeyByNameIn(scope: TenantScope, name: string) {
    const nameItem = await this.store.get(keys.apiKeyName(scope, name));
    if (!nameItem) throw keyNotFound();
    const key = await this.requireKey(scope, String(nameItem.key_id));
    const now = this.now();
    const deleted = { ...apiKeyView({ ...key, revoked: true, revokedAt: now.toISOString() }, now), deleted: true };
    try {
      await this.store.write([
        { type: 'delete', key: keys.apiKeyName(scope, name), condition: 'exists' },
        { type: 'delete', key: keys.apiKey(scope, String(nameItem.key_id)), condition: 'exists' },
        this.events.stage(scope, 'api_key.revoked', deleted).op,
      ]);
    } catch (err) {
      // Deleted concurrently: the outcome the caller asked for, but report what we found.
      if (err instanceof ConditionFailedError) throw keyNotFound();
      throw err;
    }
    return { status: 'API key deleted' };
  }

  /** Contract variant 2: key_id + wallet_id marks the key revoked (kept for audit; idempotent). */
  async revokeApiKey(scope: TenantScope, keyId: string): Promise<ApiKeyRecord> {
    return inSession(scope, () => this.revokeApiKeyIn(scope, keyId));
  }

  private async revokeApiKeyIn(scope: TenantScope, keyId: string): Promise<ApiKeyRecord> {
    const now = this.now().toISOString();
    const existing = await this.requireKey(scope, keyId);
    if (existing.revoked) return existing;
    const revoked: ApiKeyRecord = { ...existing, revoked: true, revokedAt: now };
    try {
      await this.store.write([
        // Conditional on the state read, so two concurrent revokes publish one event.
        { type: 'update', key: keys.apiKey(scope, keyId), condition: { equals: { status: 'active' } }, set: { status: 'revoked', revoked_at: now } },
        this.events.stage(scope, 'api_key.revoked', { ...apiKeyView(revoked, this.now()), deleted: false }).op,
      ]);
    } catch (err) {
      if (err instanceof ConditionFailedError) return this.requireKey(scope, keyId);
      throw err;
    }
    return revoked;
  }

  async listOwnKeys(scope: TenantScope) {
    const items = await this.store.query(keys.walletPartition(scope), { skBeginsWith: keys.apiKeyPrefix });
    const now = this.now();
    return items.map((i) => apiKeyView(apiKeyFromItem(i), now));
  }

  async getOwnKey(scope: TenantScope, keyId: string) {
    return apiKeyView(await this.requireKey(scope, keyId), this.now());
  }

  async revokeOwnKey(scope: TenantScope, keyId: string) {
    return apiKeyView(await this.revokeApiKey(scope, keyId), this.now());
  }

  private async requireKey(scope: TenantScope, keyId: string): Promise<ApiKeyRecord> {
    const item = await this.store.get(keys.apiKey(scope, keyId));
    if (!item) throw keyNotFound();
    return apiKeyFromItem(item);
  }

  private async requireWallet(scope: TenantScope): Promise<WalletRecord> {
    const item: Item | undefined = await this.store.get(keys.wallet(scope));
    if (!item) throw walletNotFound(scope.walletId);
    return walletFromItem(item);
  }

  private async subwalletView(w: WalletRecord) {
    return { wallet_id: Number(w.walletId), token: await this.tokens.mint(w.walletId), label: w.label };
  }
}

/** A subwallet listing's cursor: a wallet item's keys, in the listing's partition. */
const SUBWALLET_CURSOR = {
  PK: (v: string) => /^W#[1-9][0-9]{0,15}$/.test(v),
  SK: (v: string) => v === 'WALLET',
  GSI1PK: (v: string) => v === gsi1.walletListPk,
  GSI1SK: (v: string) => /^W#[0-9]{16}$/.test(v),
};

function nameTaken(name: string) {
  return new ConflictError(`A subwallet named "${name}" already exists`, 'wallet_name_taken');
}

function walletNotFound(walletId: string) {
  return new NotFoundError(`No subwallet with id ${walletId}`, 'wallet_not_found');
}

function keyNotFound() {
  return new NotFoundError('No such API key in this wallet', 'api_key_not_found');
}
