import { randomBytes, randomUUID } from 'node:crypto';
import { signingIdentity } from '../dids/signing';
import type { StatusEntrySource } from './protocol/formats';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, NotFoundError, ValidationError, type ErrorDetail } from '../http/errors';
import { prefixPage } from '../http/paging';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../store/port';
import { lostRace } from '../store/retry';
import type { WalletRefs } from '../tenancy/public-refs';
import { issuerUrl, oid4vciKeys, PRE_AUTHORIZED_GRANT, SK, type ExchangeRecord, type ExchangeState, type ExchangeTransitionState } from './records';
import { configurationFromItem, supportedNotFound, unstorable, validateSubject } from './supported';

/**
 * Exchanges and their credential offers (contract 4.4 issue, exchanges): the admin side of the
 * pre-authorized code flow. The public protocol endpoints redeem what is stored here.
 */

/** Code lifetime in seconds: default and bounds of `expires_in`. */
export const CODE_LIFETIME = { default: 600, min: 60, max: 30 * 86400 } as const;
/** Code and offer-ref items outlive the code by a day (DynamoDB TTL), so a late redemption still reads as expired, not unknown. */
const LOOKUP_GRACE_SECONDS = 86400;
export const PIN = /^[0-9A-Za-z]{1,16}$/;
const TX_CODE_DESCRIPTION = 'Enter the transaction code the issuer sent you separately';
const OFFER_SCHEME = 'openid-credential-offer://';

/** Contract 2.2: the exchange as the API shows it. */
export function exchangeView(r: ExchangeRecord, state: ExchangeState = r.state) {
  return {
    exchange_id: r.exchange_id,
    supported_cred_id: r.supported_cred_id,
    wallet_id: r.wallet_id,
    state,
    pin: r.pin,
    credential_subject: r.credential_subject,
    verification_method: r.verification_method,
    issuer_id: r.issuer_id,
    code: r.code,
    nonce: r.nonce,
    token: r.token,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Event data: the view without the pre-authorized code and the PIN, which together redeem the credential. */
function exchangeEventData(r: ExchangeRecord): Record<string, unknown> {
  const { code: _code, pin, ...rest } = exchangeView(r);
  return { ...rest, pin_required: pin !== null };
}

/**
 * A state change of an exchange and its event, conditional on the state it leaves: the operations of
 * one transaction (with `extra` ones, such as spending a code or a nonce). Every state change goes
 * through here, so each publishes exactly one event.
 */
export function exchangeTransition(
  events: EventPublisher,
  scope: TenantScope,
  ex: ExchangeRecord,
  to: ExchangeTransitionState,
  at: Date,
  set: Readonly<Record<string, unknown>> = {},
  extra: readonly WriteOp[] = [],
): { ops: WriteOp[]; next: ExchangeRecord } {
  const updated_at = at.toISOString();
  const next = { ...ex, ...set, state: to, updated_at } as ExchangeRecord;
  const data = {
    ...exchangeEventData(next),
    ...(to === 'failed' ? { failure_reason: next.failure_reason ?? null } : {}),
    ...(to === 'issued' ? { issued_count: next.issued_count ?? 0 } : {}),
  };
  return {
    next,
    ops: [
      { type: 'update', key: oid4vciKeys.exchange(scope, ex.exchange_id), set: { ...set, state: to, updated_at }, condition: { equals: { state: ex.state } } },
      ...extra,
      events.stage(scope, `oid4vci.exchange.${to}`, data).op,
    ],
  };
}

/** Whether an exchange outlived what it waited for: its code (`offer`) or its access token (`redeemed`). */
function isStale(r: ExchangeRecord, nowMs: number): boolean {
  if (r.state === 'offer') return nowMs > r.code_expires_at;
  // A few seconds' grace: the token's `exp` is checked in whole seconds.
  if (r.state === 'redeemed') return r.token_expires_at !== undefined && nowMs > r.token_expires_at + 5000;
  return false;
}

/**
 * A stale exchange becomes `expired` when noticed (read through the API, or its code or token
 * presented): the conditional update and its event commit together, so concurrent readers record
 * and announce it once. Returns the exchange as it now is (null when it was deleted meanwhile).
 */
export async function settleExpired(deps: { store: ItemStore; events: EventPublisher }, scope: TenantScope, r: ExchangeRecord, now: Date): Promise<ExchangeRecord | null> {
  if (!isStale(r, now.getTime())) return r;
  const { ops, next } = exchangeTransition(deps.events, scope, r, 'expired', now);
  try {
    await deps.store.write(ops);
    return next;
  } catch (err) {
    if (!lostRace(err)) throw err;
    // Another request moved it (expired it, redeemed it just in time, or deleted it): read what it left.
    const again = await deps.store.get(oid4vciKeys.exchange(scope, r.exchange_id), { consistent: true });
    return again ? exchangeFromItem(again) : null;
  }
}

export function exchangeFromItem(item: Item): ExchangeRecord {
  const { PK: _pk, SK: _sk, type: _type, ...rest } = item;
  return rest as unknown as ExchangeRecord;
}

export interface IssueInput {
  readonly supported_cred_id: string;
  readonly credential_subject?: Record<string, unknown> | undefined;
  readonly did?: string | undefined;
  readonly verification_method?: string | undefined;
  readonly pin?: string | undefined;
  readonly expires_in?: number | undefined;
}

export interface ExchangeFilters {
  readonly exchange_id?: string | undefined;
  readonly state?: ExchangeState | undefined;
  readonly supported_cred_id?: string | undefined;
}

export interface ExchangeServiceDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  /** The wallet's public reference: the offer's `credential_issuer` names the wallet by it. */
  readonly refs: WalletRefs;
  /** Status lists the configuration's credentials get entries in (an offer must be issuable with them). */
  readonly status?: Pick<StatusEntrySource, 'issuerConflict'>;
  readonly now?: () => Date;
}

const exchangeNotFound = (id: string) => new NotFoundError(`No exchange ${id} in this wallet`, 'exchange_not_found');

function matches(r: ExchangeRecord, f: ExchangeFilters): boolean {
  return (
    (f.exchange_id === undefined || r.exchange_id === f.exchange_id) &&
    (f.state === undefined || r.state === f.state) &&
    (f.supported_cred_id === undefined || r.supported_cred_id === f.supported_cred_id)
  );
}

export class ExchangeService {
  private readonly now: () => Date;

  constructor(private readonly deps: ExchangeServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** A new exchange in state `offer`, its code and offer, and the `created` event: one transaction. */
  async issue(scope: TenantScope, input: IssueInput, baseUrl: string) {
    const item = await this.deps.store.get(oid4vciKeys.supported(scope, input.supported_cred_id));
    if (!item) throw supportedNotFound(input.supported_cred_id);
    const config = configurationFromItem(item);
    const subject = input.credential_subject ?? {};
    const unfit = unstorable(subject, 'credential_subject');
    if (unfit.length) throw new ValidationError(unfit);
    // Sorted: stored claim trees come back from DynamoDB in no particular key order.
    const problems: ErrorDetail[] = validateSubject(config, subject)
      .map((d) => ({ path: `credential_subject${d.path}`, message: d.message }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    if (problems.length) throw new BadRequestError(`credential_subject does not fit supported credential ${config.id}`, 'invalid_credential_subject', problems);
    const { did, verificationMethod } = await signingIdentity(this.deps.store, scope, { did: input.did, verificationMethod: input.verification_method });
    const conflict = this.deps.status ? await this.deps.status.issuerConflict(scope, config, did.qualified) : null;
    if (conflict) throw new BadRequestError(conflict, 'status_list_issuer_mismatch', [{ path: 'did', message: conflict }]);

    const now = this.now();
    const at = now.toISOString();
    const expiresAt = now.getTime() + (input.expires_in ?? CODE_LIFETIME.default) * 1000;
    const code = randomBytes(32).toString('base64url');
    const offerRef = randomBytes(32).toString('base64url');
    const record: ExchangeRecord = {
      exchange_id: randomUUID(),
      supported_cred_id: input.supported_cred_id,
      wallet_id: scope.walletId,
      state: 'offer',
      pin: input.pin ?? null,
      credential_subject: subject,
      verification_method: verificationMethod,
      issuer_id: did.qualified,
      code,
      nonce: null,
      token: null,
      created_at: at,
      updated_at: at,
      code_expires_at: expiresAt,
      offer_ref: offerRef,
    };
    const issuer = issuerUrl(baseUrl, await this.deps.refs.of(scope));
    const pin = input.pin;
    const offer = {
      credential_issuer: issuer,
      // `credentials` and `user_pin_required` are the contract's (draft 11); wallets today read the 1.0 names.
      credentials: [config.id],
      credential_configuration_ids: [config.id],
      grants: {
        [PRE_AUTHORIZED_GRANT]: {
          'pre-authorized_code': code,
          user_pin_required: pin !== undefined,
          ...(pin !== undefined ? { tx_code: { input_mode: /^[0-9]+$/.test(pin) ? ('numeric' as const) : ('text' as const), length: pin.length, description: TX_CODE_DESCRIPTION } } : {}),
        },
      },
    };
    const ttl = Math.floor(expiresAt / 1000) + LOOKUP_GRACE_SECONDS;
    await this.deps.store.write([
      { type: 'put', item: { ...oid4vciKeys.exchange(scope, record.exchange_id), type: 'oid4vci_exchange', ...record }, condition: 'not_exists' },
      { type: 'put', item: { ...oid4vciKeys.code(scope, code), type: 'oid4vci_code', exchange_id: record.exchange_id, ttl }, condition: 'not_exists' },
      { type: 'put', item: { ...oid4vciKeys.offerRef(scope, offerRef), type: 'oid4vci_offer', exchange_id: record.exchange_id, offer, ttl }, condition: 'not_exists' },
      this.deps.events.stage(scope, 'oid4vci.exchange.created', exchangeEventData(record)).op,
    ]);
    return {
      offer,
      credential_offer: `${OFFER_SCHEME}?credential_offer=${encodeURIComponent(JSON.stringify(offer))}`,
      credential_offer_uri: `${OFFER_SCHEME}?credential_offer_uri=${encodeURIComponent(`${issuer}/offers/${offerRef}`)}`,
      exchange: exchangeView(record, 'created'),
    };
  }

  private settle(scope: TenantScope, r: ExchangeRecord): Promise<ExchangeRecord | null> {
    return settleExpired(this.deps, scope, r, this.now());
  }

  async get(scope: TenantScope, id: string): Promise<ExchangeRecord> {
    const item = await this.deps.store.get(oid4vciKeys.exchange(scope, id));
    const record = item ? await this.settle(scope, exchangeFromItem(item)) : null;
    if (!record) throw exchangeNotFound(id);
    return record;
  }

  /**
   * A list records the expiries it finds, ten writes at a time; one that cannot be written now still
   * lists as `expired` (derived), and is recorded by a later read. A listing never fails on it.
   */
  private async settleAll(scope: TenantScope, items: Item[], filters: ExchangeFilters): Promise<ExchangeRecord[]> {
    const settled: (ExchangeRecord | null)[] = [];
    for (let i = 0; i < items.length; i += 10) {
      const batch = items.slice(i, i + 10).map((item) => exchangeFromItem(item));
      // settle writes only for a stale exchange, so a failure here is one that is expired.
      settled.push(...(await Promise.all(batch.map((r) => this.settle(scope, r).catch((): ExchangeRecord => ({ ...r, state: 'expired' }))))));
    }
    return settled.filter((r): r is ExchangeRecord => r !== null && matches(r, filters));
  }

  async list(scope: TenantScope, filters: ExchangeFilters = {}): Promise<ExchangeRecord[]> {
    if (filters.exchange_id !== undefined) {
      const item = await this.deps.store.get(oid4vciKeys.exchange(scope, filters.exchange_id));
      return this.settleAll(scope, item ? [item] : [], filters);
    }
    return this.settleAll(scope, await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: SK.exchange }), filters);
  }

  /** One page; with filters a page may hold fewer than `limit` (follow `next`). */
  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }, filters: ExchangeFilters = {}) {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), SK.exchange, page);
    return { items: await this.settleAll(scope, out.items, filters), next: out.next };
  }

  /** Deletes the exchange with its code and offer: the offer stops working at once. */
  async delete(scope: TenantScope, id: string): Promise<void> {
    const item = await this.deps.store.get(oid4vciKeys.exchange(scope, id), { consistent: true });
    if (!item) throw exchangeNotFound(id);
    const r = exchangeFromItem(item);
    const ops: WriteOp[] = [
      // Unchanged since read, so the event reports the state it was deleted in.
      { type: 'delete', key: oid4vciKeys.exchange(scope, id), condition: { equals: { updated_at: r.updated_at, state: r.state } } },
      { type: 'delete', key: oid4vciKeys.code(scope, r.code) },
      { type: 'delete', key: oid4vciKeys.offerRef(scope, r.offer_ref) },
      this.deps.events.stage(scope, 'oid4vci.exchange.removed', exchangeEventData(r)).op,
    ];
    try {
      await this.deps.store.write(ops);
    } catch (err) {
      if (!lostRace(err)) throw err;
      // Changed meanwhile: once more from a fresh read (or 404 when it is gone).
      const again = await this.deps.store.get(oid4vciKeys.exchange(scope, id), { consistent: true });
      if (!again) throw exchangeNotFound(id);
      const fresh = exchangeFromItem(again);
      await this.deps.store.write([
        { type: 'delete', key: oid4vciKeys.exchange(scope, id), condition: 'exists' },
        ops[1]!,
        ops[2]!,
        this.deps.events.stage(scope, 'oid4vci.exchange.removed', exchangeEventData(fresh)).op,
      ]).catch((e: unknown) => {
        throw e instanceof ConditionFailedError ? exchangeNotFound(id) : e;
      });
    }
  }
}
