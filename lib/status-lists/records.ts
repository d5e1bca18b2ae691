import { walletPartitionKey } from '../service/resources';
import type { TenantScope } from '../store/keys';
import type { Item, ItemKey } from '../store/port';
import type { StatusSize } from './encoding';
import type { StatusPurpose } from './tokens';

/**
 * The status-list data model (docs/status-lists.md). A definition's lists are implicit: its counter
 * numbers every entry it ever assigns, entry n lives in list ⌊n / list_size⌋ at a keyed permutation of
 * n mod list_size. So a list needs nothing created before it is used, and the next one (the spare) is
 * already served — issuance never waits on list creation.
 *
 * Items, all under the wallet's prefix:
 * - `W#<w>` / `SLD#<def>`: the definition; `SLB#<supported_cred_id>#<def>`: its binding to a configuration
 *   (a copy of what allocation needs, so issuance reads one query); `SLE#<def>#<exchange>`: an entry.
 * - `W#<w>#SLA#<def>` / `N`: the allocation counter, on its own partition.
 * - `W#<w>#SLS#<def>#<list>#<shard>` / `S`: one shard's non-zero statuses, attribute `s<offset>` each,
 *   on its own partition: shards are the unit of concurrent update, so a busy list never throttles its tenant.
 * - `W#<w>#SLP#<def>#<list>` / `<format>`: the signed publication a verifier fetches, on its own partition.
 */

export const LIST_TYPES = ['ietf', 'w3c'] as const;
export type ListType = (typeof LIST_TYPES)[number];

export interface StatusMessage {
  readonly status: string;
  readonly message: string;
}

export interface DefinitionRecord {
  readonly id: string;
  readonly wallet_id: string;
  readonly supported_cred_id: string | null;
  readonly status_purpose: StatusPurpose;
  readonly status_size: StatusSize;
  readonly status_message: readonly StatusMessage[] | null;
  readonly shard_size: number;
  readonly list_size: number;
  readonly list_type: ListType;
  /** The signer of the published lists (fully qualified DID) and its DID URL; PUT publish may change them. */
  readonly issuer_did: string;
  readonly verification_method: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The API's public base URL when the definition was created: its lists' URLs, in credentials and tokens alike. */
  readonly base_url: string;
  /** Key of the index permutation (base64url, 32 bytes). Never shown. */
  readonly perm_secret: string;
}

/** Where one credential's statuses sit in one definition: all its batch's indexes share the status. */
export interface EntryRecord {
  readonly definition_id: string;
  readonly exchange_id: string;
  readonly list: number;
  /** One index per credential of the exchange (a batch gets several, so its copies stay unlinkable). */
  readonly indexes: readonly number[];
  /** Lists of the indexes (a batch may straddle two lists), same order. */
  readonly lists: readonly number[];
  readonly status: number;
  readonly status_purpose: StatusPurpose;
  readonly status_size: StatusSize;
  readonly created_at: string;
  readonly updated_at: string;
}

const pk = (s: TenantScope) => walletPartitionKey(s.walletId);

export const SL = { definition: 'SLD#', binding: 'SLB#', entry: 'SLE#' } as const;

export const statusKeys = {
  /** The wallet's own partition: definitions, bindings and entries. */
  partition: (s: TenantScope): string => pk(s),
  definition: (s: TenantScope, id: string): ItemKey => ({ PK: pk(s), SK: `${SL.definition}${id}` }),
  binding: (s: TenantScope, supportedCredId: string, id: string): ItemKey => ({ PK: pk(s), SK: `${SL.binding}${supportedCredId}#${id}` }),
  bindingPrefix: (supportedCredId: string) => `${SL.binding}${supportedCredId}#`,
  entry: (s: TenantScope, defId: string, exchangeId: string): ItemKey => ({ PK: pk(s), SK: `${SL.entry}${defId}#${exchangeId}` }),
  entryPrefix: (defId: string) => `${SL.entry}${defId}#`,
  counter: (s: TenantScope, defId: string): ItemKey => ({ PK: `${pk(s)}#SLA#${defId}`, SK: 'N' }),
  shard: (s: TenantScope, defId: string, list: number, shard: number): ItemKey => ({ PK: `${pk(s)}#SLS#${defId}#${list}#${shard}`, SK: 'S' }),
  publication: (s: TenantScope, defId: string, list: number, format: ListType): ItemKey => ({ PK: `${pk(s)}#SLP#${defId}#${list}`, SK: format }),
  /** Who is re-publishing the list now, and whether more changes came meanwhile (lib/status-lists/jobs.ts). */
  publishLease: (s: TenantScope, defId: string, list: number): ItemKey => ({ PK: `${pk(s)}#SLP#${defId}#${list}`, SK: 'LEASE' }),
} as const;

/** The attribute of a shard item holding the status at `offset` within the shard. */
export const statusAttribute = (offset: number) => `s${offset}`;
export const STATUS_ATTRIBUTE = /^s(0|[1-9][0-9]*)$/;

export function definitionFromItem(item: Item): DefinitionRecord {
  const { PK: _pk, SK: _sk, type: _type, ...rest } = item;
  return rest as unknown as DefinitionRecord;
}

export function entryFromItem(item: Item): EntryRecord {
  const { PK: _pk, SK: _sk, type: _type, ...rest } = item;
  return rest as unknown as EntryRecord;
}

/** Where a definition's list is published: `<base>/status-lists/<public_ref>/<def>/<list>/<format>` (the wallet's public reference, never its id). */
export function publicationUrl(baseUrl: string, publicRef: string, defId: string, list: number, format: ListType): string {
  return `${baseUrl.replace(/\/+$/, '')}/status-lists/${publicRef}/${defId}/${list}/${format}`;
}

/** A status as the API shows it: `status_size` binary digits ("0", "01", "00000011"). */
export function statusBits(value: number, size: StatusSize): string {
  return value.toString(2).padStart(size, '0');
}

/** Contract 2.7, plus the definition and every index of the exchange's batch. */
export function entryView(e: EntryRecord) {
  return {
    list: e.list,
    index: e.indexes[0]!,
    status: statusBits(e.status, e.status_size),
    assigned: true,
    definition_id: e.definition_id,
    credential_exchange_id: e.exchange_id,
    status_purpose: e.status_purpose,
    indexes: e.indexes.map((index, i) => ({ list: e.lists[i]!, index })),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function definitionView(d: DefinitionRecord) {
  return {
    id: d.id,
    wallet_id: d.wallet_id,
    supported_cred_id: d.supported_cred_id,
    status_purpose: d.status_purpose,
    status_size: d.status_size,
    status_message: d.status_message ? d.status_message.map((m) => ({ status: m.status, message: m.message })) : null,
    shard_size: d.shard_size,
    list_size: d.list_size,
    list_type: d.list_type,
    issuer_did: d.issuer_did,
    verification_method: d.verification_method,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}
