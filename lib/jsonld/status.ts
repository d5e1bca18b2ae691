import type { EventPublisher } from '../events/publisher';
import { BadRequestError, NotFoundError } from '../http/errors';
import { slotOf } from '../status-lists/slots';
import { definitionFromItem, entryFromItem, entryView, publicationUrl, statusKeys, type EntryRecord } from '../status-lists/records';
import { w3cStatusEntry } from '../status-lists/tokens';
import type { TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore, type WriteOp } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import { CONTEXT_URLS } from './contexts';
import type { JsonObject } from './loader';

/**
 * `revocation_def_id` for JSON-LD credentials (docs/jsonld.md, "Revocation"): an index in a wallet's
 * W3C status-list definition (lib/status-lists), allocated as OID4VCI issuance allocates one
 * (lib/status-lists/allocation.ts): one atomic add to the definition's counter, the keyed permutation
 * of the value as the index. The entry record is keyed by the exchange id, so the status-list API
 * (`PATCH /api/v1/status-list/entries/revoke/{credential_exchange_id}`) revokes the credential and the
 * status worker re-publishes the W3C list its `credentialStatus` points to.
 */

/** What the exchange keeps of its status entry (with the exchange id, all the status-list API needs). */
export interface JsonLdStatusRecord {
  readonly revocation_def_id: string;
  /** The list number (0-based) of the definition, and the index in it. */
  readonly status_list: number;
  readonly status_list_index: number;
  /** The public URL of the W3C list (`statusListCredential`). */
  readonly status_list_credential: string;
}

export interface JsonLdCredentialStatus {
  /** The W3C BitstringStatusListEntry to put in the credential as `credentialStatus` (see {@link withCredentialStatus}). */
  readonly credentialStatus: Record<string, unknown>;
  /** What the exchange record stores. */
  readonly record: JsonLdStatusRecord;
  /** The DID that signs the list (the definition's `issuer_did`); it may differ from the credential's issuer (Bitstring Status List §2.1). */
  readonly listIssuer: string;
  /**
   * The entry record, a check that the definition still exists and the `status_list.entry.assigned`
   * event: write them in the transaction that records the credential as issued, so an entry exists if
   * and only if its credential was issued. Empty when the exchange already had its entry (a retry).
   */
  readonly ops: readonly WriteOp[];
}

export interface JsonLdStatusDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  /** The wallet's public reference names it in the lists' URLs. */
  readonly refs: WalletRefs;
  readonly now?: () => Date;
}

/** Status-list definition ids are UUIDs (lib/status-lists/service.ts); anything else names none. */
const DEFINITION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Exchange ids come from the issuing service, not the caller: the status-list API's path takes at most 128 characters. */
const EXCHANGE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const notFound = (id: string) => new NotFoundError(`No status list definition ${id} in this wallet`, 'status_list_definition_not_found');

/** What JSON-LD issuance depends on (implemented by {@link JsonLdStatusSource}; tests may pass their own). */
export interface CredentialStatusSource {
  credentialStatusFor(scope: TenantScope, revocationDefId: string, exchangeId: string): Promise<JsonLdCredentialStatus>;
  revoked(scope: TenantScope, revocationDefId: string, exchangeId: string): Promise<boolean | null>;
}

export class JsonLdStatusSource implements CredentialStatusSource {
  private readonly now: () => Date;

  constructor(private readonly deps: JsonLdStatusDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * A `BitstringStatusListEntry` (statusPurpose revocation) in the wallet's definition
   * `revocationDefId` for the credential of `exchangeId`. Refused before anything is allocated: a
   * definition that is not this wallet's (404, the same answer whether it is unknown or another
   * wallet's), one whose `list_type` is not `w3c` or whose `status_purpose` is not `revocation` (400).
   * Lists never fill up: past `list_size` entries the next list of the definition is used.
   */
  async credentialStatusFor(scope: TenantScope, revocationDefId: string, exchangeId: string): Promise<JsonLdCredentialStatus> {
    if (!EXCHANGE_ID.test(exchangeId)) throw new TypeError(`exchange id ${JSON.stringify(exchangeId)} cannot name a status-list entry`);
    if (typeof revocationDefId !== 'string' || !DEFINITION_ID.test(revocationDefId)) throw notFound(String(revocationDefId).slice(0, 64));
    const { store } = this.deps;
    // Two reads rather than one BatchGetItem: the issuing function then needs GetItem only.
    const [defItem, existingItem] = await Promise.all([store.get(statusKeys.definition(scope, revocationDefId), { consistent: true }), store.get(statusKeys.entry(scope, revocationDefId, exchangeId), { consistent: true })]);
    if (!defItem) throw notFound(revocationDefId);
    const def = definitionFromItem(defItem);
    if (def.list_type !== 'w3c') {
      throw new BadRequestError(`Status list definition ${def.id} publishes IETF Token Status Lists (list_type ${def.list_type}); a JSON-LD credential carries a W3C BitstringStatusListEntry: use a definition with list_type w3c`, 'list_type_mismatch', [{ path: 'revocation_def_id', message: 'list_type must be w3c' }]);
    }
    if (def.status_purpose !== 'revocation') {
      throw new BadRequestError(`Status list definition ${def.id} has status_purpose ${def.status_purpose}; revocation_def_id needs a revocation definition`, 'status_purpose_mismatch', [{ path: 'revocation_def_id', message: 'status_purpose must be revocation' }]);
    }
    const publicRef = await this.deps.refs.of(scope);
    const result = (entry: EntryRecord, ops: readonly WriteOp[]): JsonLdCredentialStatus => {
      const url = publicationUrl(def.base_url, publicRef, def.id, entry.list, 'w3c');
      const index = entry.indexes[0]!;
      return {
        credentialStatus: w3cStatusEntry({ url, index, purpose: def.status_purpose, statusSize: def.status_size }),
        record: { revocation_def_id: def.id, status_list: entry.list, status_list_index: index, status_list_credential: url },
        listIssuer: def.issuer_did,
        ops,
      };
    };
    // A retried issuance of the same exchange keeps the index it was given (the entry exists only once its credential was issued).
    if (existingItem) return result(entryFromItem(existingItem), []);

    let last: number;
    try {
      last = await store.increment(statusKeys.counter(scope, def.id), 'next', 'exists', 1);
    } catch (e) {
      // The definition was deleted meanwhile (its counter goes with it).
      if (e instanceof ConditionFailedError) throw notFound(def.id);
      throw e;
    }
    const slot = slotOf(def, last - 1);
    const at = this.now().toISOString();
    const entry: EntryRecord = {
      definition_id: def.id,
      exchange_id: exchangeId,
      list: slot.list,
      indexes: [slot.index],
      lists: [slot.list],
      status: 0,
      status_purpose: def.status_purpose,
      status_size: def.status_size,
      created_at: at,
      updated_at: at,
    };
    return result(entry, [
      { type: 'put', item: { ...statusKeys.entry(scope, def.id, exchangeId), type: 'status_entry', ...entry }, condition: 'not_exists' },
      { type: 'check', key: statusKeys.definition(scope, def.id), condition: 'exists' },
      this.deps.events.stage(scope, 'status_list.entry.assigned', entryView(entry)).op,
    ]);
  }

  /**
   * Whether the exchange's credential is revoked (its entry's status is not 0; revoking it also moves
   * the exchange to `credential-revoked`: lib/didcomm/protocols/issue-credential-v2/revocation.ts);
   * null when the exchange has no entry in the definition (never issued, or the definition was deleted
   * with its entries).
   */
  async revoked(scope: TenantScope, revocationDefId: string, exchangeId: string): Promise<boolean | null> {
    if (!DEFINITION_ID.test(revocationDefId) || !EXCHANGE_ID.test(exchangeId)) return null;
    const item = await this.deps.store.get(statusKeys.entry(scope, revocationDefId, exchangeId), { consistent: true });
    return item ? entryFromItem(item).status !== 0 : null;
  }
}

/**
 * The credential with its `credentialStatus`. A credential on the W3C credentials v1 context gets the
 * Bitstring Status List context (`https://www.w3.org/ns/credentials/status/v1`) appended, which defines
 * the entry's terms (v2 defines them itself): without it safe mode refuses the credential. A credential
 * that already carries a `credentialStatus` is refused: the service does not sign a status it did not assign.
 */
export function withCredentialStatus(credential: JsonObject, credentialStatus: Record<string, unknown>): JsonObject {
  if (credential.credentialStatus !== undefined) {
    throw new BadRequestError('The credential already has a credentialStatus: leave it out when revocation_def_id is given (the service assigns the entry)', 'credential_status_conflict', [{ path: 'credential.credentialStatus', message: 'not allowed with revocation_def_id' }]);
  }
  const raw = credential['@context'];
  const contexts = Array.isArray(raw) ? [...(raw as unknown[])] : raw === undefined ? [] : [raw];
  if (contexts[0] === CONTEXT_URLS.credentialsV1 && !contexts.includes(CONTEXT_URLS.statusList)) contexts.push(CONTEXT_URLS.statusList);
  return { ...credential, '@context': contexts, credentialStatus };
}
