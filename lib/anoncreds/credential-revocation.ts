// `POST /api/v1/credentials/anoncreds/revoke` (contract 4.2; docs/anoncreds.md, "Revoking a
// credential"): an issued AnonCreds credential's revocation index revoked in its registry (accumulator
// and status list, RevocationRegistryStore.revoke), and in the same transaction its exchange moved to
// credential-revoked with its event and, when `connection_id` is given, the holder's revocation
// notification (Aries RFC 0721 v2) as a DIDComm outbox job.
import { randomUUID } from 'node:crypto';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { outboundJobWrites } from '../didcomm/outbound';
import { toHolder, transition } from '../didcomm/protocols/issue-credential-v2/handlers';
import { exchangeKeys, storedExchangeFromItem, type StoredExchange } from '../didcomm/protocols/issue-credential-v2/records';
import { credentialIssued } from '../didcomm/protocols/issue-credential-v2/revocation';
import { didcommKeys, storedConnectionFromItem, type StoredConnection } from '../didcomm/records';
import type { TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore, type WriteOp } from '../store/port';
import { parseObjectId } from './identifiers';
import { RevocationRegistryStore } from './revocation-registry';
import type { CredDefKeySealer } from './sealed-keys';

/** The exchange formats that carry an AnonCreds credential (`indy`: the legacy hlindy attachments). */
export const ANONCREDS_EXCHANGE_FORMATS: readonly string[] = ['anoncreds', 'indy'];

/** Aries RFC 0721, Revocation Notification 2.0. */
export const REVOCATION_NOTIFICATION_TYPE = 'https://didcomm.org/revocation_notification/2.0/revoke';

/** What an issued AnonCreds exchange keeps in `format_record` (ACA-Py's names; `cred_rev_id` a decimal string). */
export interface AnonCredsFormatRecord {
  readonly schema_id: string;
  readonly cred_def_id: string;
  readonly rev_reg_id: string | null;
  readonly cred_rev_id: string | null;
}

export interface RevokeInput {
  readonly credential_exchange_id?: string | null | undefined;
  readonly connection_id?: string | null | undefined;
}

/** How often the decision is read and made again when the exchange or the connection changed under it. */
const DECIDE_ATTEMPTS = 4;
const CRED_REV_ID = /^[1-9][0-9]{0,9}$/;

/** The RFC 0721 v2 message for one credential: `credential_id` is `<rev_reg_id>::<cred_rev_id>` (format `anoncreds`). */
export function revocationNotification(revRegId: string, credRevId: string, comment: string): Record<string, unknown> {
  return { '@type': REVOCATION_NOTIFICATION_TYPE, '@id': randomUUID(), revocation_format: 'anoncreds', credential_id: `${revRegId}::${credRevId}`, comment };
}

export class AnonCredsCredentialRevocation {
  private readonly registries: RevocationRegistryStore;
  private readonly now: () => Date;

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly events: EventPublisher;
      readonly sealer: CredDefKeySealer;
      readonly now?: () => Date;
    },
  ) {
    this.now = deps.now ?? (() => new Date());
    this.registries = new RevocationRegistryStore(deps.store, this.now);
  }

  async revoke(scope: TenantScope, input: RevokeInput): Promise<{ message: string }> {
    const id = input.credential_exchange_id;
    if (id === undefined || id === null || id === '') {
      throw new BadRequestError('credential_exchange_id is required: the AnonCreds exchange whose credential to revoke', 'credential_exchange_id_required', [{ path: 'credential_exchange_id', message: 'required' }]);
    }
    for (let attempt = 0; attempt < DECIDE_ATTEMPTS; attempt++) {
      const x = await this.exchange(scope, id);
      if (input.connection_id != null && input.connection_id !== x.connection_id) {
        throw new BadRequestError(`connection_id is not the connection exchange ${id} was issued on: the notification goes only to the credential's holder`, 'connection_mismatch', [{ path: 'connection_id', message: "not the exchange's connection" }]);
      }
      if (x.state === 'credential-revoked') return { message: `Credential ${id} was already revoked: nothing changed` };
      if (!credentialIssued(x)) throw new ConflictError(`The credential of exchange ${id} is not issued (state ${x.state}): nothing to revoke`, 'credential_not_issued');
      const record = (x.format_record ?? {}) as Partial<AnonCredsFormatRecord>;
      if (typeof record.rev_reg_id !== 'string' || typeof record.cred_rev_id !== 'string') {
        throw new ConflictError(`The credential of exchange ${id} was issued without a revocation registry (its credential definition does not support revocation)`, 'credential_not_revocable');
      }
      const rid = parseObjectId(record.rev_reg_id, 'revRegDef')?.resourceId;
      if (!rid) throw new NotFoundError('No such revocation registry in this wallet', 'rev_reg_not_found');
      if (!CRED_REV_ID.test(record.cred_rev_id)) throw new NotFoundError(`Revocation index ${record.cred_rev_id.slice(0, 20)} was never allocated in this registry`, 'rev_index_not_found');
      const connection = input.connection_id != null ? await this.activeConnection(scope, input.connection_id) : null;

      const at = this.now();
      const also: WriteOp[] = [...transition(this.deps.events, scope, x, 'credential-revoked', at).writes];
      if (connection) {
        const message = revocationNotification(record.rev_reg_id, record.cred_rev_id, `The credential issued in thread ${x.thread_id} was revoked`);
        also.push(
          { type: 'check', key: didcommKeys.connection(scope, connection.connection_id), condition: { equals: { state: 'active' } } },
          ...outboundJobWrites(scope, [toHolder(connection, message)], at),
        );
      }
      let result;
      try {
        result = await this.registries.revoke(scope, this.deps.sealer, rid, [Number(record.cred_rev_id)], also);
      } catch (err) {
        // The exchange or the connection changed meanwhile (a concurrent revocation, an ack, a closed connection): decide again.
        if (err instanceof ConditionFailedError) continue;
        throw err;
      }
      // The index was revoked already (nothing written): say so rather than pretend.
      if (result.revoked.length === 0) return { message: `Credential ${id} was already revoked: nothing changed` };
      return { message: connection ? `Credential ${id} revoked; the holder is notified on connection ${connection.connection_id}` : `Credential ${id} revoked` };
    }
    throw new ConflictError('The exchange or its registry kept changing concurrently; send the request again', 'rev_reg_busy');
  }

  private async exchange(scope: TenantScope, id: string): Promise<StoredExchange> {
    const item = id.length <= 128 ? await this.deps.store.get(exchangeKeys.exchange(scope, id), { consistent: true }) : undefined;
    if (!item) throw new NotFoundError('No such credential exchange', 'credential_exchange_not_found');
    const x = storedExchangeFromItem(item);
    if (!ANONCREDS_EXCHANGE_FORMATS.includes(x.format)) {
      throw new ConflictError(`Exchange ${id} issued a ${x.format} credential, not an AnonCreds one: revoke it through its status-list entry (PATCH /api/v1/status-list/entries/revoke/${id})`, 'not_anoncreds_exchange');
    }
    return x;
  }

  /** The exchange's own connection (checked by the caller: the notification names the credential, so it goes to no one else), active. */
  private async activeConnection(scope: TenantScope, connectionId: string): Promise<StoredConnection> {
    const item = await this.deps.store.get(didcommKeys.connection(scope, connectionId), { consistent: true });
    const c = item ? storedConnectionFromItem(item) : null;
    if (!c || c.state !== 'active' || !c.peer) throw new ConflictError(`The connection is ${c?.state ?? 'gone'}, not active: revoke without connection_id to revoke without notifying`, 'connection_not_active');
    return c;
  }
}
