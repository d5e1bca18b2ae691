import { randomBytes, randomUUID } from 'node:crypto';
import { signingIdentity } from '../dids/signing';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { oid4vciKeys } from '../oid4vci/records';
import { isSdJwt, STATUS_BOUND, supportedFromItem } from '../oid4vci/supported';
import type { TenantScope } from '../store/keys';
import { ConditionFailedError, WriteConflictError, type ItemStore, type WriteOp } from '../store/port';
import { retryingConflicts } from '../store/retry';
import type { StatusSize } from './encoding';
import { ietfView, SignerUnavailableError, type StatusListPublisher } from './publication';
import {
  definitionFromItem,
  definitionView,
  entryFromItem,
  entryView,
  SL,
  statusAttribute,
  statusKeys,
  type DefinitionRecord,
  type EntryRecord,
  type ListType,
  type StatusMessage,
} from './records';
import type { StatusPurpose } from './tokens';

/** Limits of a definition (docs/status-lists.md, "Definitions"): each keeps one item, and one signed list, within DynamoDB's 400 KB. */
export const LIMITS = {
  minListSize: 131072,
  /**
   * list_size × status_size: even a list of random statuses, compressed and base64url-encoded twice
   * (in `lst` or `encodedList`, then in the JWS), fits one 400 KB item (about 233 KB at this bound).
   */
  maxListBits: 2 ** 20,
  /** Shards per list: publishing reads them all. */
  maxShards: 1024,
  /** Entries per shard: a shard holds one attribute per non-zero status. */
  maxShardSize: 16384,
  defaultListSize: 131072,
  defaultShardSize: 1024,
} as const;

const bad = (message: string, code: string, path: string) => new BadRequestError(message, code, [{ path, message }]);

export interface CreateDefinitionInput {
  readonly status_purpose?: StatusPurpose | undefined;
  readonly status_size?: number | undefined;
  readonly shard_size?: number | undefined;
  readonly list_size?: number | undefined;
  readonly status_message?: readonly StatusMessage[] | null | undefined;
  readonly supported_cred_id?: string | null | undefined;
  readonly list_type?: ListType | undefined;
  readonly issuer_did?: string | undefined;
  readonly verification_method?: string | undefined;
}

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

/** `0x…` as the W3C text writes a status, normalised (lower case, no leading zeros). */
export function hexStatus(value: number): string {
  return `0x${value.toString(16)}`;
}

function checkShape(input: CreateDefinitionInput): { purpose: StatusPurpose; statusSize: StatusSize; listSize: number; shardSize: number; messages: StatusMessage[] | null } {
  const purpose = input.status_purpose ?? 'revocation';
  const statusSize = (input.status_size ?? 1) as StatusSize;
  if (statusSize !== 1 && purpose !== 'message') throw bad(`status_size above 1 is only for status_purpose message (${purpose} is set or unset)`, 'invalid_status_size', 'status_size');
  const listSize = input.list_size ?? LIMITS.defaultListSize;
  if (!isPowerOfTwo(listSize) || listSize < LIMITS.minListSize) throw bad(`list_size must be a power of two, at least ${LIMITS.minListSize}`, 'invalid_list_size', 'list_size');
  if (listSize * statusSize > LIMITS.maxListBits) {
    throw bad(`list_size × status_size must be at most ${LIMITS.maxListBits} bits (${LIMITS.maxListBits / statusSize} entries at ${statusSize} bit${statusSize > 1 ? 's' : ''})`, 'invalid_list_size', 'list_size');
  }
  const shardSize = input.shard_size ?? Math.max(LIMITS.defaultShardSize, listSize / LIMITS.maxShards);
  if (shardSize > listSize) throw bad('shard_size must be from 1 to list_size', 'invalid_shard_size', 'shard_size');
  if (shardSize > LIMITS.maxShardSize) throw bad(`shard_size must be at most ${LIMITS.maxShardSize}`, 'invalid_shard_size', 'shard_size');
  if (Math.ceil(listSize / shardSize) > LIMITS.maxShards) throw bad(`a list has at most ${LIMITS.maxShards} shards: shard_size must be at least ${listSize / LIMITS.maxShards} for this list_size`, 'invalid_shard_size', 'shard_size');
  const messages = input.status_message ?? null;
  if (purpose === 'message' && !messages) throw bad('status_purpose message needs status_message: one {status, message} per status value', 'status_message_required', 'status_message');
  if (messages) {
    // W3C Bitstring Status List §2.1: exactly one message per possible value, `status` in hex.
    const expected = 2 ** statusSize;
    if (messages.length !== expected) throw bad(`status_message must have ${expected} entries, one per value of a ${statusSize}-bit status`, 'invalid_status_message', 'status_message');
    const seen = new Set<number>();
    const normalised = messages.map((m, i) => {
      const value = /^0x[0-9a-f]{1,2}$/i.test(m.status) ? parseInt(m.status.slice(2), 16) : NaN;
      if (!(value < expected) || seen.has(value)) throw bad(`status_message[${i}].status must be a distinct value 0x0–${hexStatus(expected - 1)}`, 'invalid_status_message', `status_message.${i}.status`);
      seen.add(value);
      return { status: hexStatus(value), message: m.message };
    });
    return { purpose, statusSize, listSize, shardSize, messages: normalised.sort((a, b) => parseInt(a.status, 16) - parseInt(b.status, 16)) };
  }
  return { purpose, statusSize, listSize, shardSize, messages: null };
}

/** Which binding slot a definition takes: SD-JWT VC carries one status list, jwt_vc_json one per purpose. */
const bindingSlot = (sdJwt: boolean, purpose: StatusPurpose) => (sdJwt ? 'status' : purpose);

/**
 * A port for records that follow an entry's status (a DIDComm exchange whose credential carries the
 * entry: lib/didcomm/protocols/issue-credential-v2/revocation.ts): the writes it returns go into the
 * status change's own transaction, so both change together or not at all. Their conditions may fail
 * like the entry's: the change is then read and decided again.
 */
export type EntryStatusHook = (scope: TenantScope, before: EntryRecord, after: EntryRecord, at: Date) => Promise<readonly WriteOp[]>;

export interface StatusListServiceDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly publisher: StatusListPublisher;
  readonly onStatusChange?: EntryStatusHook;
  readonly now?: () => Date;
}

export class StatusListService {
  private readonly now: () => Date;

  constructor(private readonly deps: StatusListServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(scope: TenantScope, input: CreateDefinitionInput, baseUrl: string) {
    const shape = checkShape(input);
    let listType: ListType = input.list_type ?? 'w3c';
    let slot: string | null = null;
    if (input.supported_cred_id) {
      const item = await this.deps.store.get(oid4vciKeys.supported(scope, input.supported_cred_id));
      if (!item) throw bad(`No supported credential ${input.supported_cred_id} in this wallet`, 'unknown_supported_credential', 'supported_cred_id');
      const sdJwt = isSdJwt(supportedFromItem(item).format);
      const fits: ListType = sdJwt ? 'ietf' : 'w3c';
      if (input.list_type && input.list_type !== fits) {
        throw bad(`${supportedFromItem(item).format} credentials carry ${fits === 'ietf' ? 'an IETF Token Status List entry' : 'a W3C BitstringStatusListEntry'}: list_type must be ${fits}`, 'list_type_mismatch', 'list_type');
      }
      listType = fits;
      slot = bindingSlot(sdJwt, shape.purpose);
    }
    if (listType === 'ietf' && !ietfView({ status_purpose: shape.purpose })) {
      throw bad(`An IETF Token Status List (list_type ietf, SD-JWT VC) has fixed values (valid, invalid, suspended): status_purpose must be revocation or suspension`, 'list_type_mismatch', 'status_purpose');
    }
    const { did, verificationMethod } = await signingIdentity(this.deps.store, scope, { did: input.issuer_did, verificationMethod: input.verification_method }, { did: 'issuer_did', verificationMethod: 'verification_method' });
    const at = this.now().toISOString();
    const def: DefinitionRecord = {
      id: randomUUID(),
      wallet_id: scope.walletId,
      supported_cred_id: input.supported_cred_id ?? null,
      status_purpose: shape.purpose,
      status_size: shape.statusSize,
      status_message: shape.messages,
      shard_size: shape.shardSize,
      list_size: shape.listSize,
      list_type: listType,
      issuer_did: did.qualified,
      verification_method: verificationMethod,
      created_at: at,
      updated_at: at,
      base_url: baseUrl,
      perm_secret: randomBytes(32).toString('base64url'),
    };
    const ops: WriteOp[] = [
      { type: 'put', item: { ...statusKeys.definition(scope, def.id), type: 'status_definition', ...def }, condition: 'not_exists' },
      // Allocation adds to this counter only while it exists: once the definition is cleaned up, a late issuance cannot recreate it.
      { type: 'put', item: { ...statusKeys.counter(scope, def.id), next: 0 }, condition: 'not_exists' },
      this.deps.events.stage(scope, 'status_list.definition.created', definitionView(def)).op,
    ];
    const flagAt = ops.length + 1;
    if (slot) {
      ops.push(
        { type: 'put', item: { ...statusKeys.binding(scope, def.supported_cred_id!, slot), definition_id: def.id, definition: def }, condition: 'not_exists' },
        // The configuration's record says it has status lists from now on (issuance looks for bindings only then).
        { type: 'update', key: oid4vciKeys.supported(scope, def.supported_cred_id!), set: { [STATUS_BOUND]: true }, condition: 'exists' },
      );
    }
    try {
      await this.deps.store.write(ops);
    } catch (e) {
      if (e instanceof ConditionFailedError) {
        if (slot && e.failedIndexes.includes(flagAt)) throw bad(`No supported credential ${input.supported_cred_id} in this wallet`, 'unknown_supported_credential', 'supported_cred_id');
        throw new ConflictError(
          slot === 'status'
            ? `Supported credential ${def.supported_cred_id} already has a status list definition (an SD-JWT VC carries one status list)`
            : `Supported credential ${def.supported_cred_id} already has a ${def.status_purpose} status list definition`,
          'supported_credential_bound',
        );
      }
      throw e;
    }
    return definitionView(def);
  }

  private async definition(scope: TenantScope, id: string): Promise<DefinitionRecord> {
    const item = await this.deps.store.get(statusKeys.definition(scope, id));
    if (!item) throw new NotFoundError(`No status list definition ${id} in this wallet`, 'status_list_definition_not_found');
    return definitionFromItem(item);
  }

  private matches(d: DefinitionRecord, filter: { status_purpose?: string | undefined; supported_cred_id?: string | undefined }) {
    return (!filter.status_purpose || d.status_purpose === filter.status_purpose) && (!filter.supported_cred_id || d.supported_cred_id === filter.supported_cred_id);
  }

  async list(scope: TenantScope, filter: { status_purpose?: string | undefined; supported_cred_id?: string | undefined }) {
    const items = await this.deps.store.query(statusKeys.partition(scope), { skBeginsWith: SL.definition });
    return items.map(definitionFromItem).filter((d) => this.matches(d, filter)).map(definitionView);
  }

  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }, filter: { status_purpose?: string | undefined; supported_cred_id?: string | undefined }) {
    const out = await prefixPage(this.deps.store, statusKeys.partition(scope), SL.definition, page);
    return { items: out.items.map(definitionFromItem).filter((d) => this.matches(d, filter)).map(definitionView), next: out.next };
  }

  /** The definition with where its lists are: those in use and the spare, in its list_type's format. */
  async get(scope: TenantScope, id: string) {
    const def = await this.definition(scope, id);
    const assigned = await this.deps.publisher.entriesAssigned(scope, def);
    const inUse = Math.ceil(assigned / def.list_size);
    return {
      ...definitionView(def),
      entries_assigned: assigned,
      status_lists: await Promise.all(Array.from({ length: inUse + 1 }, (_, list) => this.deps.publisher.url(scope, def, list, def.list_type))),
    };
  }

  /**
   * Deletes the definition and its binding at once (no credential gets a new entry afterwards); the
   * `status_list.definition.deleted` event then has its lists, shards, publications and entries
   * removed in the background (the status worker), so a large definition never times a request out.
   */
  async delete(scope: TenantScope, id: string, recursive: boolean) {
    const def = await this.definition(scope, id);
    const inUse = await this.deps.publisher.listsInUse(scope, def);
    if (inUse > 0 && !recursive) {
      throw new ConflictError(`Status list definition ${id} has ${inUse} list${inUse > 1 ? 's' : ''} with entries: delete with recursive_delete true to delete them and their entries too`, 'definition_in_use');
    }
    const inUseError = () =>
      new ConflictError(`Status list definition ${id} has lists with entries: delete with recursive_delete true to delete them and their entries too`, 'definition_in_use');
    const ops: WriteOp[] = [
      { type: 'delete', key: statusKeys.definition(scope, id), condition: 'exists' },
      this.deps.events.stage(scope, 'status_list.definition.deleted', { ...definitionView(def), recursive_delete: recursive, lists: inUse + 1 }).op,
      // Without recursive_delete: only while no entry was handed out, also by an issuance racing this delete.
      ...(recursive ? [] : [{ type: 'check', key: statusKeys.counter(scope, id), condition: { below: { next: 1 } } } as WriteOp]),
    ];
    if (def.supported_cred_id) {
      const slot = await this.deps.store.query(statusKeys.partition(scope), { skBeginsWith: statusKeys.bindingPrefix(def.supported_cred_id), consistent: true });
      for (const b of slot.filter((i) => i.definition_id === id)) ops.push({ type: 'delete', key: { PK: b.PK, SK: b.SK } });
    }
    try {
      await this.deps.store.write(ops);
    } catch (e) {
      if (e instanceof ConditionFailedError) {
        if (e.failedIndexes.includes(0)) throw new NotFoundError(`No status list definition ${id} in this wallet`, 'status_list_definition_not_found');
        throw inUseError();
      }
      throw e;
    }
    return [definitionView(def)];
  }

  /**
   * The exchange's entry in one definition: the one named, else its only one, else its revocation
   * entry. Found through the wallet's definitions, not the exchange record: a credential stays
   * revocable after its exchange record is deleted.
   */
  private async entry(scope: TenantScope, exchangeId: string, definitionId: string | undefined): Promise<EntryRecord> {
    const defIds = definitionId !== undefined ? [definitionId] : (await this.deps.store.query(statusKeys.partition(scope), { skBeginsWith: SL.definition })).map((i) => String(i.id));
    const entries: EntryRecord[] = [];
    let exchangeKnown = false;
    for (let i = 0; i < Math.max(defIds.length, 1); i += 99) {
      const ids = defIds.slice(i, i + 99);
      const [ex, ...found] = await this.deps.store.getMany([oid4vciKeys.exchange(scope, exchangeId), ...ids.map((id) => statusKeys.entry(scope, id, exchangeId))], { consistent: true });
      exchangeKnown ||= ex !== undefined;
      entries.push(...found.filter((f) => f !== undefined).map(entryFromItem));
    }
    if (entries.length === 0) {
      if (!exchangeKnown) throw new NotFoundError(`No credential exchange ${exchangeId} in this wallet`, 'exchange_not_found');
      throw new NotFoundError(
        definitionId === undefined
          ? `Exchange ${exchangeId} has no status list entry: no credential was issued yet, or its configuration has no status list definition`
          : `Exchange ${exchangeId} has no entry in status list definition ${definitionId}`,
        'status_entry_not_found',
      );
    }
    if (entries.length === 1) return entries[0]!;
    const revocation = entries.find((e) => e.status_purpose === 'revocation');
    if (revocation) return revocation;
    throw bad(`Exchange ${exchangeId} has entries in ${entries.length} definitions: name one with definition_id (${entries.map((e) => e.definition_id).join(', ')})`, 'definition_required', 'definition_id');
  }

  async getEntry(scope: TenantScope, exchangeId: string, definitionId?: string) {
    return entryView(await this.entry(scope, exchangeId, definitionId));
  }

  /**
   * Sets an entry's status (all indexes of its batch): the entry, each touched shard and the
   * `status_changed` event in one transaction, conditional on the status read (a concurrent change
   * makes this one re-read and decide again). The event has the list re-published in the background.
   * The `onStatusChange` hook's writes (a DIDComm exchange moving to credential-revoked) join it.
   */
  async setStatus(scope: TenantScope, exchangeId: string, definitionId: string | undefined, status: string | undefined) {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.entry(scope, exchangeId, definitionId);
      const value = this.parseStatus(status, entry);
      if (value === entry.status) return entryView(entry);
      if (entry.status_purpose === 'revocation' && entry.status !== 0) throw bad('A revoked credential stays revoked (use a suspension definition for statuses that can be lifted)', 'revocation_final', 'status');
      const def = await this.definition(scope, entry.definition_id).catch(() => {
        throw new NotFoundError(`The status list definition of exchange ${exchangeId} was deleted`, 'status_entry_not_found');
      });
      const at = this.now();
      const updated: EntryRecord = { ...entry, status: value, updated_at: at.toISOString() };
      const shards = new Map<string, { list: number; shard: number; offsets: number[] }>();
      entry.indexes.forEach((index, i) => {
        const list = entry.lists[i]!;
        const shard = Math.floor(index / def.shard_size);
        const key = `${list}#${shard}`;
        const s = shards.get(key) ?? { list, shard, offsets: [] };
        s.offsets.push(index % def.shard_size);
        shards.set(key, s);
      });
      const shardOps: WriteOp[] = [...shards.values()].map(({ list, shard, offsets }) => ({
        type: 'update',
        key: statusKeys.shard(scope, def.id, list, shard),
        set: value === 0 ? {} : Object.fromEntries(offsets.map((o) => [statusAttribute(o), value])),
        ...(value === 0 ? { remove: offsets.map(statusAttribute) } : {}),
        add: { version: 1 },
      }));
      const ops: WriteOp[] = [
        { type: 'update', key: statusKeys.entry(scope, def.id, exchangeId), set: { status: value, updated_at: updated.updated_at }, condition: { equals: { status: entry.status } } },
        ...shardOps,
        { type: 'check', key: statusKeys.definition(scope, def.id), condition: 'exists' },
        this.deps.events.stage(scope, 'status_list.entry.status_changed', { ...entryView(updated), previous_status: entryView(entry).status, lists: [...new Set(entry.lists)] }).op,
        ...((await this.deps.onStatusChange?.(scope, entry, updated, at)) ?? []),
      ];
      try {
        // Revocations of a burst contend for shards: a lost transaction is tried again as it is.
        await retryingConflicts(() => this.deps.store.write(ops), 8);
        return entryView(updated);
      } catch (e) {
        const busy = () => new ConflictError('The entry or its shard kept changing concurrently; send the request again', 'status_change_conflict');
        if (e instanceof WriteConflictError) throw busy();
        // The entry changed meanwhile: read it again and decide again.
        if (!(e instanceof ConditionFailedError)) throw e;
        if (attempt >= 4) throw busy();
      }
    }
  }

  /** A status as given (binary digits, at most status_size of them), or the purpose's "set" value 1. */
  private parseStatus(status: string | undefined, entry: EntryRecord): number {
    if (status === undefined) return 1;
    if (!/^[01]+$/.test(status)) throw bad('status must be a bitstring: binary digits 0 and 1', 'invalid_status', 'status');
    if (status.length > entry.status_size) throw bad(`status must fit status_size ${entry.status_size}: at most ${entry.status_size} binary digit${entry.status_size > 1 ? 's' : ''}`, 'invalid_status', 'status');
    return parseInt(status, 2);
  }

  /**
   * PUT publish: signs every list of the definition now, in `status_type` (default its list_type),
   * with the signer given (which becomes the definition's signer) or its own.
   */
  async publish(scope: TenantScope, id: string, input: { did?: string | undefined; verification_method?: string | undefined; status_type?: ListType | undefined }) {
    let def = await this.definition(scope, id);
    if (input.did !== undefined || input.verification_method !== undefined) {
      const { did, verificationMethod } = await signingIdentity(this.deps.store, scope, { did: input.did ?? def.issuer_did, verificationMethod: input.verification_method }, { did: 'did', verificationMethod: 'verification_method' });
      if (did.qualified !== def.issuer_did && def.supported_cred_id) {
        // Its credentials name their issuer, and verifiers check the list with that issuer's key.
        throw bad(`The lists of definition ${id} are checked with the key of the credentials' issuer ${def.issuer_did}: they cannot be signed by another DID`, 'status_list_issuer_fixed', 'did');
      }
      if (did.qualified !== def.issuer_did || verificationMethod !== def.verification_method) {
        const updated_at = this.now().toISOString();
        await this.deps.store.write([{ type: 'update', key: statusKeys.definition(scope, id), set: { issuer_did: did.qualified, verification_method: verificationMethod, updated_at }, condition: 'exists' }]);
        def = { ...def, issuer_did: did.qualified, verification_method: verificationMethod, updated_at };
      }
    }
    const format = input.status_type ?? def.list_type;
    if (format === 'ietf' && !ietfView(def)) throw bad(`A ${def.status_purpose} list has no IETF Token Status List form (its values mean valid, invalid, suspended): publish it as w3c`, 'unsupported_status_type', 'status_type');
    const lists = (await this.deps.publisher.listsInUse(scope, def)) + 1;
    const urls: string[] = [];
    try {
      for (let list = 0; list < lists; list++) urls.push((await this.deps.publisher.publish(scope, def, list, format, { force: true })).publication.url);
      return { published: true, error: '', definition_id: id, status_lists: urls };
    } catch (e) {
      if (!(e instanceof SignerUnavailableError)) throw e;
      return { published: false, error: e.message, definition_id: id, status_lists: urls };
    }
  }
}

