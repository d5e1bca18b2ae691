import type { EventPublisher } from '../events/publisher';
import { StatusDefinitionGoneError, StatusIssuerMismatchError, type CredentialStatusClaims, type StatusAllocation, type StatusEntrySource } from '../oid4vci/protocol/formats';
import type { IssuableConfiguration } from '../oid4vci/records';
import { isSdJwt } from '../oid4vci/supported';
import type { TenantScope } from '../store/keys';
import type { WalletRefs } from '../tenancy/public-refs';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../store/port';
import { definitionFromItem, entryView, publicationUrl, statusKeys, type DefinitionRecord, type EntryRecord } from './records';
import { slotOf } from './slots';
import { ietfStatusClaim, w3cStatusEntry } from './tokens';

// Kept apart (slots.ts) so that JSON-LD issuance (lib/jsonld/status.ts) allocates without bundling OID4VCI.
export { slotOf, type Slot } from './slots';

/**
 * Status entries at issuance, for the configurations bound to definitions. One counter per definition
 * is incremented (an atomic add, while the counter exists: every value is handed out once), and the permutation
 * makes the index unique and unpredictable: no two credentials share one, and an index says nothing
 * about when it was issued. The entry records, a check that each definition still exists and the
 * `status_list.entry.assigned` events go into the issuing transaction, so an entry exists if and only if
 * its credential was issued. Values reserved by a request that then fails are never used again (their
 * bits stay 0): a gap, never a collision.
 */
export class StatusAllocator implements StatusEntrySource {
  private readonly now: () => Date;

  /** `refs`: the wallet's public reference, which names it in the lists' URLs the credentials carry. */
  constructor(private readonly deps: { readonly store: ItemStore; readonly events: EventPublisher; readonly refs: WalletRefs; readonly now?: () => Date }) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The definitions bound to a configuration (the binding items carry what allocation needs). */
  async definitionsFor(scope: TenantScope, supportedCredId: string): Promise<DefinitionRecord[]> {
    const items = await this.deps.store.query(statusKeys.partition(scope), { skBeginsWith: statusKeys.bindingPrefix(supportedCredId), consistent: true });
    return items.map((i) => definitionFromItem(i.definition as Item));
  }

  /**
   * Verifiers check a status list with the credential issuer's key (SD-JWT VC libraries such as
   * @sd-jwt/sd-jwt-vc and Credo for Token Status Lists; this service's verifier for Bitstring lists
   * too), so a list must be signed by the DID that issues the credential.
   */
  private conflict(defs: readonly DefinitionRecord[], issuerDid: string): string | null {
    const other = defs.find((d) => d.issuer_did !== issuerDid);
    return other
      ? `Credentials of this configuration point to status list definition ${other.id}, signed by ${other.issuer_did}; verifiers check the list with the credential issuer's key, so issue them from ${other.issuer_did}`
      : null;
  }

  /** The configuration's definitions; none without a query when its record says none was ever bound. */
  private bound(scope: TenantScope, config: IssuableConfiguration): Promise<DefinitionRecord[]> {
    return config.statusListsBound === false ? Promise.resolve([]) : this.definitionsFor(scope, config.supportedCredId);
  }

  async issuerConflict(scope: TenantScope, config: IssuableConfiguration, issuerDid: string): Promise<string | null> {
    return this.conflict(await this.bound(scope, config), issuerDid);
  }

  async allocate(scope: TenantScope, config: IssuableConfiguration, exchangeId: string, count: number, issuerDid: string): Promise<StatusAllocation> {
    const defs = await this.bound(scope, config);
    if (defs.length === 0) return { claims: Array.from({ length: count }, () => null), ops: [] };
    const conflict = this.conflict(defs, issuerDid);
    if (conflict) throw new StatusIssuerMismatchError(conflict);
    const at = this.now().toISOString();
    const publicRef = await this.deps.refs.of(scope);
    const assigned = await Promise.all(
      defs.map(async (def) => {
        let last: number;
        try {
          last = await this.deps.store.increment(statusKeys.counter(scope, def.id), 'next', 'exists', count);
        } catch (e) {
          if (e instanceof ConditionFailedError) throw new StatusDefinitionGoneError(def.id);
          throw e;
        }
        const slots = Array.from({ length: count }, (_, i) => slotOf(def, last - count + i));
        const entry: EntryRecord = {
          definition_id: def.id,
          exchange_id: exchangeId,
          list: slots[0]!.list,
          indexes: slots.map((s) => s.index),
          lists: slots.map((s) => s.list),
          status: 0,
          status_purpose: def.status_purpose,
          status_size: def.status_size,
          created_at: at,
          updated_at: at,
        };
        return { def, slots, entry };
      }),
    );
    const ops: WriteOp[] = assigned.flatMap(({ def, entry }) => [
      { type: 'put', item: { ...statusKeys.entry(scope, def.id, exchangeId), type: 'status_entry', ...entry }, condition: 'not_exists' } as WriteOp,
      { type: 'check', key: statusKeys.definition(scope, def.id), condition: 'exists' } as WriteOp,
      this.deps.events.stage(scope, 'status_list.entry.assigned', entryView(entry)).op,
    ]);
    const claims: CredentialStatusClaims[] = Array.from({ length: count }, (_, i) => {
      const at = ({ def, slots }: (typeof assigned)[number], format: 'ietf' | 'w3c') => ({ url: publicationUrl(def.base_url, publicRef, def.id, slots[i]!.list, format), index: slots[i]!.index });
      if (isSdJwt(config.format)) {
        // SD-JWT VC has room for one status list (creation allows one definition per SD-JWT configuration).
        const { url, index } = at(assigned[0]!, 'ietf');
        return { sdJwt: ietfStatusClaim(url, index) };
      }
      const entries = assigned.map((a) => {
        const { url, index } = at(a, 'w3c');
        return w3cStatusEntry({ url, index, purpose: a.def.status_purpose, statusSize: a.def.status_size, ...(a.def.status_message ? { statusMessage: a.def.status_message } : {}) });
      });
      return { w3c: entries.length === 1 ? entries[0]! : entries };
    });
    return { claims, ops };
  }
}
