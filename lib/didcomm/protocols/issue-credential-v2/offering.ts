import { randomUUID } from 'node:crypto';
import type { EventPublisher } from '../../../events/publisher';
import { BadRequestError, ConflictError, NotFoundError } from '../../../http/errors';
import { prefixPage } from '../../../http/paging';
import { keys, type TenantScope } from '../../../store/keys';
import type { ItemStore, WriteOp } from '../../../store/port';
import { outboundJobWrites, OutboundTooLargeError } from '../../outbound';
import { didcommKeys, storedConnectionFromItem, type StoredConnection } from '../../records';
import type { InvitationService } from '../out-of-band/invitations';
import type { CredentialFormat } from './formats';
import { toHolder } from './handlers';
import { offerMessage, type PreviewAttribute } from './messages';
import { EXCHANGE_EVENTS, exchangeItem, exchangeKeys, exchangeView, MAX_TIMEOUT_SECONDS, storedExchangeFromItem, type ExchangeRecord, type StoredExchange } from './records';

/**
 * Offering a credential, whatever its format (contract 4.2: `POST /api/v1/credentials/json-ld`,
 * `POST /api/v1/credentials`): where the offer goes (a contact, the connection of an invitation, or,
 * connectionless, a new out-of-band invitation carrying it), the exchange and its event written with
 * the delivery in one transaction, and the `timeout` wait. The format prepares the offer's attachment; this part never looks inside it.
 */

/** Exchanges per page of GET /api/v1/credentials when no limit is given. */
export const DEFAULT_EXCHANGE_PAGE = 100;
const POLL_MS = 500;

/** Where an offer goes (`invitation`: connectionless, through a new invitation). Resolved (and refused with a 4xx) before the format does any work. */
export type OfferTarget = { kind: 'connection'; connection: StoredConnection } | { kind: 'pending'; invitationId: number } | { kind: 'invitation' };

/** What the format hands over: the offer's attachment and what to keep with the exchange. */
export interface PreparedOffer {
  readonly format: Pick<CredentialFormat, 'name' | 'offerFormat'>;
  /** Allocated by the caller: a format may need it before the offer exists (a status entry names it). */
  readonly exchangeId: string;
  /** The offer attachment's data. */
  readonly detail: unknown;
  readonly formatOptions: Record<string, unknown>;
  readonly revocationDefId: string | null;
  /** The format's own writes, committed with the offer (or not at all). */
  readonly ops?: readonly WriteOp[];
  readonly comment?: string | null | undefined;
  /** The RFC 0453 credential preview sent with the offer (AnonCreds: the attribute values). */
  readonly preview?: readonly PreviewAttribute[] | undefined;
}

export interface CredentialOfferingDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly invitations: Pick<InvitationService, 'create'>;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class CredentialOffering {
  private readonly now: () => Date;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: CredentialOfferingDeps) {
    this.now = deps.now ?? (() => new Date());
    this.sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** The connection to offer on: the contact, the one connection of the invitation, the invitation's next one, or none (connectionless). */
  async target(scope: TenantScope, input: { contact_id?: string | null | undefined; invitation_id?: number | null | undefined }): Promise<OfferTarget> {
    const { store } = this.deps;
    if (input.contact_id != null && input.invitation_id != null) throw new BadRequestError('Send contact_id or invitation_id, not both', 'target_ambiguous');
    if (input.contact_id != null) {
      const item = await store.get(didcommKeys.connection(scope, input.contact_id), { consistent: true });
      if (!item) throw new NotFoundError('No such contact', 'contact_not_found');
      const c = storedConnectionFromItem(item);
      if (c.state !== 'active' || !c.peer) throw new ConflictError(`The connection is ${c.state}, not active: credentials are offered on active connections`, 'connection_not_active');
      return { kind: 'connection', connection: c };
    }
    if (input.invitation_id != null) {
      const id = input.invitation_id;
      const [invitation, links] = await Promise.all([
        store.get(didcommKeys.invitation(scope, id), { consistent: true }),
        store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.invitationConnectionPrefix(id), limit: 2, consistent: true }),
      ]);
      if (!invitation) throw new NotFoundError('No such invitation', 'invitation_not_found');
      // It makes no connection (no handshake): an offer waiting for one would wait for good.
      if (typeof invitation.exchange_id === 'string') throw new ConflictError("The invitation is a connectionless offer's and makes no connection: offer on another invitation or contact", 'invitation_connectionless');
      if (links.length > 1) throw new ConflictError('The invitation produced more than one connection (multi-use): offer with contact_id', 'invitation_ambiguous');
      if (links.length === 0) return { kind: 'pending', invitationId: id };
      const item = await store.get(didcommKeys.connection(scope, String(links[0]!.connection_id)), { consistent: true });
      const c = item ? storedConnectionFromItem(item) : null;
      if (c && c.state === 'active' && c.peer) return { kind: 'connection', connection: c };
      if (c && (c.state === 'request' || c.state === 'response')) return { kind: 'pending', invitationId: id };
      throw new ConflictError("The invitation's connection is not active: offer on another invitation or contact", 'connection_not_active');
    }
    return { kind: 'invitation' };
  }

  /** Records the exchange (`offer-sent`) with its delivery, then waits up to `timeoutSeconds` for it to be issued or end. */
  async offer(scope: TenantScope, target: OfferTarget, p: PreparedOffer, timeoutSeconds: number, baseUrl: string): Promise<ExchangeRecord> {
    const threadId = randomUUID();
    const message = offerMessage({ id: threadId, format: p.format.offerFormat, attachId: p.format.name, data: p.detail, comment: p.comment, preview: p.preview });
    const at = this.now().toISOString();
    const base: StoredExchange = {
      credential_exchange_id: p.exchangeId,
      connection_id: null,
      invitation_id: null,
      invitation_url: null,
      thread_id: threadId,
      parent_thread_id: null,
      role: 'issuer',
      initiator: 'self',
      state: 'offer-sent',
      format: p.format.name,
      revocation_def_id: p.revocationDefId,
      error_msg: null,
      created_at: at,
      updated_at: at,
      offer: p.detail,
      request: null,
      credential: null,
      offer_message: null,
      format_options: p.formatOptions,
      format_record: null,
      connectionless: null,
    };
    const writesFor = (x: StoredExchange): WriteOp[] => [
      { type: 'put', item: exchangeItem(scope, x), condition: 'not_exists' },
      { type: 'put', item: { ...exchangeKeys.thread(scope, threadId), type: 'credential_thread', exchange_id: p.exchangeId }, condition: 'not_exists' },
      this.deps.events.stage(scope, EXCHANGE_EVENTS['offer-sent'], { ...exchangeView(x) }).op,
      ...(p.ops ?? []),
    ];
    let made: StoredExchange;
    try {
      if (target.kind === 'connection') {
        const c = target.connection;
        made = { ...base, connection_id: c.connection_id, invitation_id: c.invitation_id };
        await this.deps.store.write([
          ...writesFor(made),
          { type: 'check', key: didcommKeys.connection(scope, c.connection_id), condition: { equals: { state: 'active' } } },
          ...outboundJobWrites(scope, [toHolder(c, message)], this.now()),
        ]);
      } else if (target.kind === 'pending') {
        made = { ...base, invitation_id: target.invitationId, offer_message: message };
        await this.deps.store.write([...writesFor(made), { type: 'put', item: { ...exchangeKeys.pending(scope, target.invitationId, p.exchangeId), type: 'credential_pending', exchange_id: p.exchangeId } }]);
      } else {
        // Connectionless (RFC 0434 without handshake_protocols): a new single-use invitation carries the
        // offer with our ~service (the invitation's key); the holder answers there with its own ~service.
        let carried: StoredExchange = base;
        await this.deps.invitations.create(
          scope,
          {
            connectionless: { exchangeId: p.exchangeId, requests: [message] },
            goal_code: 'issue-vc',
            goal: 'To issue a credential',
            also: (inv) => {
              carried = { ...base, invitation_id: inv.invitation_id, invitation_url: inv.invitation_url, parent_thread_id: inv.invitation_msg_id, connectionless: { service: inv.service, holder: null } };
              return writesFor(carried);
            },
          },
          baseUrl,
        );
        made = carried;
      }
    } catch (err) {
      if (err instanceof OutboundTooLargeError) throw new BadRequestError('The offer is too large to send', 'credential_too_large');
      if ((err as Error).name === 'ConditionFailedError') throw new ConflictError('The connection is no longer active', 'connection_not_active');
      throw err;
    }
    return exchangeView(await this.waitFor(scope, made, Math.min(MAX_TIMEOUT_SECONDS, Math.max(0, timeoutSeconds))));
  }

  /** Reads the exchange until it has been issued (or ended) or the time is up. */
  private async waitFor(scope: TenantScope, x: StoredExchange, seconds: number): Promise<StoredExchange> {
    const deadline = Date.now() + seconds * 1000;
    let current = x;
    while (Date.now() < deadline && (current.state === 'offer-sent' || current.state === 'request-received')) {
      await this.sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
      const item = await this.deps.store.get(exchangeKeys.exchange(scope, x.credential_exchange_id), { consistent: true });
      if (item) current = storedExchangeFromItem(item);
    }
    return current;
  }
}

/** The exchanges of a wallet (every format), oldest first; one page. */
export async function listExchanges(store: ItemStore, scope: TenantScope, page: { limit: number; cursor: string | undefined }): Promise<{ items: ExchangeRecord[]; next: string | null }> {
  const out = await prefixPage(store, keys.walletPartition(scope), exchangeKeys.exchangePrefix, page);
  return { items: out.items.map(exchangeView), next: out.next };
}

export async function readExchange(store: ItemStore, scope: TenantScope, id: string): Promise<StoredExchange> {
  const item = await store.get(exchangeKeys.exchange(scope, id));
  if (!item) throw new NotFoundError('No such credential exchange', 'credential_exchange_not_found');
  return storedExchangeFromItem(item);
}

/** Each format's record as `GET /api/v1/credential-records/{id}` shows it, by the exchange's `format`. */
export type FormatRecordViews = Readonly<Record<string, (x: StoredExchange) => Record<string, unknown>>>;

/** `GET /api/v1/credential-records/{id}`: the exchange and its format-specific record (ACA-Py's `{cred_ex_record, ld_proof}`, `{cred_ex_record, anoncreds}`). */
export async function credentialRecord(store: ItemStore, scope: TenantScope, id: string, views: FormatRecordViews): Promise<Record<string, unknown>> {
  const x = await readExchange(store, scope, id);
  const view = views[x.format];
  return { cred_ex_record: exchangeView(x), [x.format]: view ? view(x) : null };
}
