import type { EventPublisher } from '../../../events/publisher';
import type { EntryRecord } from '../../../status-lists/records';
import type { TenantScope } from '../../../store/keys';
import type { ItemStore, WriteOp } from '../../../store/port';
import { transition } from './handlers';
import { exchangeKeys, storedExchangeFromItem, type StoredExchange } from './records';

/**
 * `credential-revoked` for exchanges whose credential carries a status-list entry (JSON-LD,
 * `revocation_def_id`; docs/jsonld.md, "States"). Wired into the status-list service as its
 * `onStatusChange` hook (functions/status-lists/handler.ts), so the exchange's state and its
 * `credential.revoked` event are written in the transaction that sets the entry.
 *
 * Only a revocation-purpose entry being set (0 → non-zero) moves the exchange, and only the entry of
 * the exchange's own `revocation_def_id`; revocation is final (the service refuses to clear a revoked
 * entry), so nothing moves an exchange back. Suspension and message statuses never change the state
 * (ACA-Py has no suspended state; a JSON-LD exchange's entry is a revocation entry anyway). OID4VCI
 * exchanges are other records (`OX#…`): their entries find no DIDComm exchange and nothing is added.
 */

/**
 * Whether revoking moves the exchange: every live state (revoking before issuance ends the exchange:
 * the issuing worker and the holder's request then find it no longer waiting), and an abandoned one
 * only when its credential had been issued (the holder reported a problem after receiving it).
 */
export function revocationMoves(x: StoredExchange): boolean {
  switch (x.state) {
    case 'offer-sent':
    case 'request-received':
    case 'credential-issued':
    case 'done':
      return true;
    case 'abandoned':
      return x.credential !== null;
    case 'credential-revoked':
      return false;
  }
}

/** Whether the exchange's credential was issued (credential-issued, done, or abandoned after issuance): what can be revoked. */
export function credentialIssued(x: StoredExchange): boolean {
  return x.state === 'credential-issued' || x.state === 'done' || (x.state === 'abandoned' && x.credential !== null);
}

/** The status-list hook: the exchange's transition (conditioned on the version read) when the change revokes its credential. */
export function exchangeRevocationHook(store: ItemStore, events: EventPublisher) {
  return async (scope: TenantScope, before: EntryRecord, after: EntryRecord, at: Date): Promise<readonly WriteOp[]> => {
    if (after.status_purpose !== 'revocation' || before.status !== 0 || after.status === 0) return [];
    const item = await store.get(exchangeKeys.exchange(scope, after.exchange_id), { consistent: true });
    if (!item) return [];
    const x = storedExchangeFromItem(item);
    if (x.revocation_def_id !== after.definition_id || !revocationMoves(x)) return [];
    return transition(events, scope, x, 'credential-revoked', at).writes;
  };
}
